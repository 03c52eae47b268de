// The library entry: the program for host CLIs plus the storage core and the commands' core functions.
export { createProgram, type CreateProgramOptions } from "./cli/program.js";
export { runCli, type RunCliOptions } from "./cli/run-cli.js";
export { createCaptureOutput, createOutput, type Output, type Progress, type Choice } from "./cli/output.js";
export * from "./core/errors.js";
export { toolVersion } from "./core/version.js";
export { resolveStatePaths, agentDbPath, expandUserPath, type StatePaths, type ResolveStatePathsOptions } from "./state/paths.js";
export { normalizeAgentId, tryNormalizeAgentId } from "./state/agent-id.js";
export { openDatabase, isSqliteFile, StateDatabase, BUSY_TIMEOUT_MS, type OpenDatabaseOptions, type DbRole } from "./state/database.js";
export {
  openGlobalDatabase,
  openAgentDatabase,
  discoverAgentDirs,
  knownAgentIds,
  type GlobalDatabase,
  type AgentDatabase,
} from "./state/state-databases.js";
export { acquireMaintenanceLease, listLeases, type MaintenanceLease, type LeaseInfo } from "./state/lease.js";
export { SCHEMA_VERSION } from "./state/generated/ddl.js";
export type { GlobalDB } from "./state/generated/global-db.js";
export type { AgentDB } from "./state/generated/agent-db.js";
export { runDoctor, type DoctorOptions, type DoctorResult } from "./doctor/run-doctor.js";
export type { Finding, Severity, DoctorCheck, Repair } from "./doctor/types.js";
export { inspectState, type InspectOptions, type InspectResult } from "./inspect/inspect-state.js";
export {
  readTranscriptEvents,
  TRANSCRIPT_DEFAULT_MAX_BYTES,
  TRANSCRIPT_DEFAULT_MAX_EVENTS,
  TRANSCRIPT_MAX_BYTES_CAP,
  TRANSCRIPT_MAX_EVENTS_CAP,
  type ReadTranscriptEventsOptions,
  type TranscriptReadResult,
  type TranscriptPage,
  type TranscriptReset,
  type TranscriptResetReason,
  type TranscriptMissing,
  type TranscriptEvent,
} from "./state/transcript-reader.js";
export {
  listSessions,
  openSessionList,
  DEFAULT_SESSION_LIST_LIMIT,
  type ListSessionsOptions,
  type ListSessionsResult,
  type SessionList,
  type SessionListHeader,
  type SessionStoreInfo,
} from "./sessions/list-sessions.js";
export { showSession, type ShowSessionOptions, type ShowSessionResult } from "./sessions/show-session.js";
export { exportTranscript, type ExportTranscriptOptions, type ExportTranscriptResult } from "./sessions/export-transcript.js";
export { deriveSessionKind, SESSION_KINDS, type SessionKind, type SessionKindInput } from "./sessions/session-kind.js";
export type { SessionSummary, SessionRouteState } from "./sessions/session-row.js";
export type { AgentSessionStats } from "./sessions/session-stats.js";
export { createBackup, type CreateBackupOptions, type CreateBackupResult } from "./backup/create-backup.js";
export { verifyBackup, type VerifyBackupOptions, type VerifyBackupResult } from "./backup/verify-archive.js";
export { restoreBackup, type RestoreBackupOptions, type RestoreBackupResult, type RestoredDatabase } from "./backup/restore-backup.js";
export type { RestorePlan, RestorePlanItem, WorkspaceDestination } from "./backup/restore-plan.js";
export { listBackups, type ListBackupsOptions, type ListBackupsResult, type BackupListItem } from "./backup/list-backups.js";
export { pruneBackups, type PruneBackupsOptions, type PruneBackupsResult } from "./backup/prune-backups.js";
export type { RetentionPolicy } from "./backup/retention.js";
export type { Compression } from "./backup/compression.js";
export type { CheckedDatabase } from "./backup/db-check.js";
export type {
  BackupManifest,
  BackupAsset,
  BackupProgressEvent,
  ManifestDatabase,
  ManifestFile,
  SkippedItem,
} from "./backup/types.js";
export { parseJson5, Json5SyntaxError } from "./core/json5-text.js";
/** @deprecated The hand-written reader is gone: this is `parseJson5` (the json5 package), kept for existing callers. */
export { parseJson5 as parseTolerantJson } from "./core/json5-text.js";
export { redactSecrets, isSecretKey, collectSecretValues, SecretScrubber, describeParseError, REDACTED } from "./core/redact.js";
export {
  runReset,
  type ResetOptions,
  type ResetResult,
  type ResetDecision,
  type ResetEvent,
  type ResetRemoved,
  type ResetFailure,
  type ResetBackupInfo,
} from "./reset/apply-reset.js";
export {
  planReset,
  parseResetScope,
  RESET_SCOPES,
  RESET_SCOPE_HINTS,
  type ResetScope,
  type ResetPlan,
  type ResetTarget,
  type ResetKind,
  type ResetNote,
  type PlanResetInput,
} from "./reset/plan-reset.js";
export { planMigration, type PlanMigrationOptions } from "./migration/plan-migration.js";
export { applyMigration, type ApplyMigrationOptions } from "./migration/apply-migration.js";
export { migrationHistory, type MigrationHistoryOptions, type MigrationHistoryResult, type MigrationHistoryRun } from "./migration/migration-history.js";
export { canonicalizeSessionKey, orphanSessionKey } from "./migration/importers/session-keys.js";
export type {
  MigrationPlan,
  PlannedSource,
  PlanAction,
  SourceKind,
  MigrationRunResult,
  SourceOutcome,
  SourceImporter,
  AgentSourceImporter,
  GlobalSourceImporter,
  TargetDatabase,
  KindLabel,
  MigrationProgress,
  RunStatus,
} from "./migration/types.js";
