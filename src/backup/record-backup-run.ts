// Writes a create's backup_runs row (completed or failed) without loading the Kysely-backed storage core.
import fs from "node:fs";
import { describeError, isOpenclawStateError } from "../core/errors.js";
import { appendBackupRun } from "../state/append-backup-run.js";
import { defaultBusyTimeoutMs } from "../state/busy-timeout.js";
import type { StatePaths } from "../state/paths.js";
import { databasePathProblem } from "../state/owned-path.js";
import { lstatOrNull } from "../state/private-fs.js";
import type { ManifestSummary } from "./manifest.js";
import type { ReuseRecord } from "./snapshot-reuse.js";

export interface RecordRunInput {
  runId: string;
  createdAt: Date;
  /** Null when the run failed before its archive path was known, or streamed its archive. */
  archivePath: string | null;
  status: "completed" | "failed";
  manifest?: ManifestSummary;
  /** Snapshots the next run may copy (verified runs only). */
  reuse?: ReuseRecord;
  error?: unknown;
}

/**
 * Records a run when the global DB exists; never creates it (a backup must not create state). Returns a
 * warning instead of throwing: a finished archive is not undone because its ledger row could not be written.
 */
export function recordBackupRun(paths: StatePaths, input: RecordRunInput): string | null {
  if (!fs.existsSync(paths.globalDbPath)) {
    return `No global database at ${paths.globalDbPath}, so this run was not recorded in backup_runs.`;
  }
  const unsafe = ledgerPathProblem(paths);
  if (unsafe) return `${paths.globalDbPath} ${unsafe}, so this run was not recorded in backup_runs.`;
  try {
    const error = input.error === undefined ? undefined : { code: isOpenclawStateError(input.error) ? input.error.code : "internal_error", message: describeError(input.error) };
    const payload = input.manifest ? { ...input.manifest, ...(input.reuse ? { reuse: input.reuse } : {}) } : error ? { error } : null;
    appendBackupRun(paths.globalDbPath, { id: input.runId, createdAt: input.createdAt.getTime(), archivePath: input.archivePath, status: input.status, manifestJson: payload === null ? null : JSON.stringify(payload) }, defaultBusyTimeoutMs());
    return null;
  } catch (error) {
    return `Could not record this run in backup_runs of ${paths.globalDbPath} (${describeError(error)}).`;
  }
}

/**
 * Why the global DB is not a ledger create may read or write (a symlink, or a link on the way to it, which could lead
 * out of the state dir; a FIFO or device), or null. The walk refuses to archive such a file for the same reasons.
 */
export function ledgerPathProblem(paths: StatePaths): string | null {
  if (!lstatOrNull(paths.globalDbPath)) return "is missing";
  const problem = databasePathProblem(paths.stateDir, paths.globalDbPath);
  return problem ? `cannot be used: ${problem}` : null;
}
