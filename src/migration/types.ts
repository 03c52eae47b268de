// The migration's vocabulary: legacy sources, the read-only plan, the importer interface and the run result.
import type { StatePaths } from "../state/paths.js";
import type { ConfigPlan } from "./legacy-config.js";
import type { LegacyInventory } from "./legacy-inventory.js";
import type { AgentDatabase, GlobalDatabase } from "../state/state-databases.js";
import type { PreparedTranscript } from "./importers/transcript-parse.js";

/** One kind per importer module under src/migration/importers/. */
export type SourceKind =
  // Agent databases (data plane).
  | "sessions-index"
  | "transcript"
  | "trajectory"
  | "acp-stream"
  // Global database (control plane).
  | "cron-jobs"
  | "cron-state"
  | "cron-runs"
  | "auth-profiles"
  | "auth-state"
  | "auth-json"
  | "oauth-credentials"
  | "exec-approvals"
  | "delivery-queue"
  | "subagent-runs"
  // Issue 5, second half.
  | "conversation-bindings"
  | "model-catalog"
  | "device-identity"
  | "device-auth"
  | "device-pairing"
  | "node-pairing"
  | "sandbox-registry"
  | "update-check"
  | "config-health"
  | "tui-last-session"
  | "commitments"
  | "gateway-instance-id"
  | "tts-settings"
  | "config-audit"
  | "audit-log"
  | "plugin-installs"
  | "workspace-state"
  // Issue 13 item 2 (importers/channel-pairing.ts, node-and-push.ts, gateway-settings.ts, acp-ledger.ts, media.ts, sqlite-sidecars.ts).
  | "channel-allow-from"
  | "channel-pairing"
  | "node-host-config"
  | "web-push-subscriptions"
  | "web-push-vapid-keys"
  | "apns-registrations"
  | "voicewake-triggers"
  | "voicewake-routing"
  | "plugin-binding-approvals"
  | "restart-sentinel"
  | "acpx-process-leases"
  | "acp-event-ledger"
  | "media"
  | "sqlite-sidecar";

/** Which database an importer writes: the source's agent database, or the global (control-plane) one. */
export type TargetDatabase = "agent" | "global";

export type PlanAction = "import" | "already-imported" | "changed-since-import" | "skip";

/** An agent directory the inventory found: `agents/<id>/` with a valid id (its `agent/` subdir may be absent). */
export interface AgentDir {
  agentId: string;
  /** `<root>/agents/<id>`. */
  dir: string;
  /** `<root>/agents/<id>/agent`: where auth profiles, models.json and the agent database live. */
  agentDir: string;
}

/** A sessions directory the inventory found: `agents/<id>/sessions/` or the old root `sessions/` (agent main). */
export interface SessionsDir {
  agentId: string;
  dir: string;
  /** The pre-multi-agent root `<stateDir>/sessions/` store. */
  legacyRoot: boolean;
  /** Regular file names in the directory, sorted. */
  files: string[];
}

export interface DetectContext {
  paths: StatePaths;
  /** Where the legacy tree is read from: the state dir, or a legacy `~/.clawdbot`-style dir about to move there. */
  root: string;
  sessionsDirs: SessionsDir[];
  /** Every `agents/<id>/` dir with a valid id, sorted by id. */
  agentDirs: AgentDir[];
  /** `session.mainKey` from the config (lower-case; default "main"). */
  mainKey: string;
  /** The parsed `openclaw.json` (JSON5-tolerant), or null when absent or unreadable. */
  config: Record<string, unknown> | null;
  /** Decide conditional destinations from the file itself where that costs a second read (PlanMigrationOptions.reach). */
  reach?: boolean;
}

export interface DetectedSource {
  kind: SourceKind;
  /** The agent the source belongs to; null for control-plane sources that belong to no agent (cron, queues). */
  agentId: string | null;
  path: string;
  /** Relative to the root, with "/" separators: the stable name used in the ledger and under migrated/. */
  relativePath: string;
  legacyRoot: boolean;
}

export interface SourceInspection {
  sha256: string;
  sizeBytes: number;
  /** Records found by the read-only pass (index entries, non-blank transcript lines). */
  records: number;
  notes: string[];
  /** When set, the planner skips the source with this reason (e.g. an empty file). */
  skipReason?: string;
  /** Transcripts: the session id (header id, else file name). */
  sessionId?: string;
  /** Session indexes: the session ids they reference (used to flag orphan transcripts). */
  referencedSessionIds?: string[];
  /** Session indexes: the store holds the agent's main key (after canonicalization). */
  hasMainKey?: boolean;
  /** Session indexes: agent id → the session ids of keys naming that other agent (filed in its database). */
  routedSessionIds?: Record<string, string[]>;
  /** What the read-only pass decided about the file's conditional destinations (see SourceReach). */
  reach?: SourceReach;
}

/**
 * Per staging table whose destinations only some files reach (a trailing `(if …)`, or an optional table): whether
 * this file's rows reach them, decided by the same parse its import does. A table left out stays `(if …)`; `unknown`
 * says why the file could not decide it (too large to read a second time, …).
 */
export interface SourceReach {
  tables: Readonly<Record<string, boolean>>;
  unknown?: string;
}

export interface PlannedSource {
  kind: SourceKind;
  agentId: string | null;
  path: string;
  relativePath: string;
  legacyRoot: boolean;
  sizeBytes: number;
  mtimeMs: number;
  sha256: string | null;
  records: number | null;
  /** The (staging) table named in the idempotency key. */
  targetTable: string;
  /**
   * Where its rows end up in OpenClaw 2026.9.6's format (tables, `config_machine_state (<key>)` rows, written-back
   * file patterns), after the upgrade of the staging tables the importer writes (src/state/upgrade/openclaw-destinations.ts).
   */
  openclawTables: readonly string[];
  /** Idempotency key: sha256 over (kind, relative path, target table, sha256, size); null when unreadable. */
  sourceKey: string | null;
  /** The database its rows go to (`agent`: the agent's own; `global`: the control-plane DB). */
  targetDatabase: TargetDatabase;
  action: PlanAction;
  reason?: string;
  /** A skip that needs a human (conflicting duplicate, unreadable file), as opposed to e.g. an empty file. */
  attention?: boolean;
  notes: string[];
  sessionId?: string;
  /** Session indexes: another index of the same agent holds the main key, so this one must not seed it. */
  mainKeyElsewhere?: boolean;
  /**
   * Session indexes: the other agents its keys name (`agent:<other>:…`); their rows go to those agents' databases
   * in the same transaction (when more than MAX_ROUTED_AGENTS: in groups, the last with the store's own rows).
   * Transcripts: unset (a routed transcript's agentId is its target agent).
   */
  routedAgents?: string[];
  /** Which conditional destinations the file reaches (unset: not decided, e.g. the file could not be read). */
  reach?: SourceReach;
  /** The ledger row this source matched (same key, or same path with another sha256). */
  previous?: { runId: string; status: string; importedAt: number | null; sha256: string | null };
  /** The read-only pass already knows the import will fail (missing header, bad line, wrong shape): why. */
  willFail?: string;
  /** A retry of a failed import of this exact content: the earlier run's verified archive (still on disk) holds it. */
  coveredByBackup?: string;
}

export interface LayoutItem {
  kind: "legacy-state-dir" | "legacy-agent-dir";
  path: string;
  target: string;
  /** `move` happens with --fix; `report` is left to the operator. */
  action: "move" | "report";
  reason: string;
}

export interface LeftoverItem {
  path: string;
  relativePath: string;
  sizeBytes: number;
  /** Which archived pattern matched: `*.jsonl.reset.<ts>`, `*.jsonl.deleted.<ts>`, `sessions.json.bak.*`. */
  pattern: "reset" | "deleted" | "bak";
}

export interface KindSummary {
  files: number;
  bytes: number;
  records: number;
  byAction: Record<PlanAction, number>;
}

export interface MigrationPlan {
  stateDir: string;
  /** Where the sources were read (differs from stateDir when a legacy state dir is about to be moved). */
  root: string;
  plannedAt: number;
  sources: PlannedSource[];
  layout: LayoutItem[];
  leftovers: LeftoverItem[];
  /** Things the inventory ignored and why (e.g. agent directories with invalid ids). */
  notes: string[];
  /** Every file of the state dir by class: what will not be imported is listed with its reason. */
  inventory: LegacyInventory;
  /** Retired config keys (`session.idleMinutes`, …) and whether `--fix` can rewrite them. */
  config: ConfigPlan;
  /** Per registered kind (kinds with no sources included, all zero). */
  summary: Partial<Record<SourceKind, KindSummary>>;
  /** True when `doctor --fix` has something to do (imports, retirements or layout moves). */
  pending: boolean;
  /** Hash of every source's (path, kind, sha256, size, action) and the layout: equal plans, equal fingerprints. */
  fingerprint: string;
}

export interface ImportContext {
  /** The source's agent (null for sources of no agent). */
  agentId: string | null;
  mainKey: string;
  runId: string;
  paths: StatePaths;
  /** The transcript parsed ahead on the worker, when this source is one (see importers/transcript-prepare.ts). */
  prepared?: PreparedTranscript | null;
}

/** Agent-target imports always have an agent. */
export interface AgentImportContext extends ImportContext {
  agentId: string;
  /**
   * The databases of the other agents the source files rows under (PlannedSource.routedAgents), attached to the
   * source agent's connection for its transaction: agent id → schema name.
   */
  routes?: ReadonlyMap<string, string>;
  /**
   * Set when those agents are more than one connection attaches (agent-routes.ts RouteGroups): they are imported a
   * group per pass, each pass its own transaction, and this pass writes and verifies only the keys of the agents in
   * `routes`, plus the store's own keys when `own` (the last pass, whose transaction commits the ledger row).
   */
  routedPass?: { own: boolean };
}

/** What one import committed; stored in the ledger row's report and used by verification. */
export interface ImportCounts {
  /** Records parsed from the file. */
  records: number;
  /** Rows written per table. */
  rows: Record<string, number>;
  /** Records skipped on purpose (entries without sessionId, a truncated final line, older-than-DB rows kept). */
  skipped: number;
  /** Problems worth the operator's attention (the source ends as `warning`). */
  warnings: string[];
  /** Informational facts (duplicate keys resolved, orphan placeholder rows, rows kept because newer). */
  notes: string[];
  /** Importer-specific expectations re-checked after commit (e.g. transcript event and identity counts). */
  expect: Record<string, number | string>;
}

/** How the doctor names a kind in findings: "3 legacy transcripts: …, 12 lines". */
export interface KindLabel {
  one: string;
  many: string;
  /** What `records` counts (entries, lines, jobs, …). */
  records: string;
}

/**
 * One module per source kind. `detect` and `inspect` are read-only; `import` runs inside the caller's
 * transaction and must be idempotent (upserts on natural keys). `target` picks the database:
 * - `agent`: one BEGIN IMMEDIATE on the source's agent DB, global DB attached for the ledger row;
 * - `global`: one BEGIN IMMEDIATE on the global DB holding both the rows and the ledger row.
 * Plan, backup, verify, retire, ledger, idempotency and failure isolation are the same for both.
 */
interface SourceImporterBase {
  readonly kind: SourceKind;
  readonly label: KindLabel;
  readonly targetTable: string;
  readonly targetTables: readonly string[];
  /** Of targetTables, those only some files of the kind fill (the plan marks where they end as conditional). */
  readonly optionalTables?: readonly string[];
  detect(ctx: DetectContext): DetectedSource[];
  inspect(source: DetectedSource, ctx: DetectContext): SourceInspection;
  /** Cross-source rules once every source is inspected (duplicate session ids, orphan notes). */
  finalize?(own: PlannedSource[], facts: PlanFacts): void;
  /**
   * `delete-after-backup`: once imported, the source is deleted rather than moved under migrated/<run>/ when the
   * run took its verified backup (the archive keeps the copy); without a backup it is moved as usual.
   */
  readonly retire?: "delete-after-backup";
}

export interface AgentSourceImporter extends SourceImporterBase {
  readonly target: "agent";
  import(db: AgentDatabase, source: PlannedSource, ctx: AgentImportContext): ImportCounts;
  /** After commit: null when the committed rows match `expected`, else what is missing. */
  verify(db: AgentDatabase, source: PlannedSource, expected: ImportCounts, ctx: AgentImportContext): string | null;
}

export interface GlobalSourceImporter extends SourceImporterBase {
  readonly target: "global";
  import(db: GlobalDatabase, source: PlannedSource, ctx: ImportContext): ImportCounts;
  /** After commit: null when the committed rows match `expected`, else what is missing. */
  verify(db: GlobalDatabase, source: PlannedSource, expected: ImportCounts, ctx: ImportContext): string | null;
}

export type SourceImporter = AgentSourceImporter | GlobalSourceImporter;

export interface PlanFacts {
  /** agentId → session ids referenced by that agent's session indexes. */
  referencedSessionIds: Map<string, Set<string>>;
  /** agentId → relative paths of that agent's session indexes holding its main key. */
  indexesWithMainKey: Map<string, Set<string>>;
  /** agentId → (session id → the other agent its store's keys file it under): transcripts follow their session. */
  routedSessions: Map<string, Map<string, string>>;
}

export type SourceStatus = "imported" | "warning" | "already-imported" | "failed" | "skipped";

export interface SourceOutcome {
  kind: SourceKind;
  agentId: string | null;
  path: string;
  relativePath: string;
  sizeBytes: number;
  mtimeMs: number;
  sha256: string | null;
  targetTable: string;
  action: PlanAction;
  status: SourceStatus;
  reason?: string;
  recordsParsed?: number;
  rows?: Record<string, number>;
  warnings: string[];
  /** Informational: duplicate keys resolved, orphan placeholders, rows kept because the DB is newer. */
  notes: string[];
  retired: "moved" | "deleted" | null;
  retiredTo?: string;
}

export type RunStatus = "completed" | "warning" | "failed";

export interface MigrationRunResult {
  runId: string;
  status: RunStatus;
  stateDir: string;
  startedAt: number;
  finishedAt: number;
  backupPath: string | null;
  /** --no-backup: no archive was written and none can be used to roll back. */
  backupSkipped: boolean;
  /** The plan changed between `doctor` and `--fix` (or was computed afresh) and was re-made under the lease. */
  replanned: boolean;
  sources: SourceOutcome[];
  changes: string[];
  warnings: string[];
  totals: RunTotals;
  /**
   * Agent databases that could not be read (corrupt, unreadable): left byte-identical, not in the backup archive (its
   * manifest names each as skipped), their legacy sources left in place. Absent when there were none.
   */
  skippedDatabases?: SkippedDatabase[];
  /** Run-level failure (backup failed, database not writable): nothing was imported. */
  error?: string;
}

export interface SkippedDatabase {
  agentId: string;
  path: string;
  relativePath: string;
  reason: string;
  /** The next step, with commands that exist. */
  remedy: string;
}

export interface RunTotals {
  sources: number;
  imported: number;
  alreadyImported: number;
  failed: number;
  skipped: number;
  retired: number;
  records: number;
  bytes: number;
}

export type MigrationPhase = "plan" | "backup" | "config" | "layout" | "import" | "retire" | "record" | "upgrade" | "merge";

/** Progress for a TTY spinner: core code reports, the CLI renders. */
export interface MigrationProgress {
  phase: MigrationPhase;
  done: number;
  total: number;
  bytesDone: number;
  bytesTotal: number;
  current?: string;
  /** The backup's own step (snapshot, archive, verify): its byte counts are per step. */
  step?: string;
}
