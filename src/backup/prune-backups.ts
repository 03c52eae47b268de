// `backup prune`: retention rules (restic `forget` semantics) over the archives this tool wrote for this state dir.
//
// Never deleted: files that are not our archives, archives of another state dir (or config-only ones, which form
// their own group, as restic groups by paths), and archives a migration run references as its pre-migration
// backup (unless includeMigrationBackups). After deleting, the backup_runs rows of archives that are gone are
// forgotten, so `backup list` does not grow forever.
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError, UsageError } from "../core/errors.js";
import { expandUserPath, type StatePaths } from "../state/paths.js";
import { fsyncDir } from "../state/private-fs.js";
import { scanBackupDir, type FoundArchive } from "./list-backups.js";
import { applyRetention, hasRule, parseRetentionDuration, type RetentionPolicy } from "./retention.js";

export interface PruneBackupsOptions {
  paths: StatePaths;
  policy: RetentionPolicy;
  dir?: string;
  dryRun?: boolean;
  /** Also let the rules remove archives that a migration run references (they are kept otherwise). */
  includeMigrationBackups?: boolean;
  /** Asked once with the archives to delete; false ends with status "declined". */
  confirm?: (remove: readonly PruneCandidate[]) => Promise<boolean>;
}

export interface PruneCandidate {
  archivePath: string;
  createdAt: number;
  sizeBytes: number;
  runId: string | null;
  /** Why it stays ("last", "daily", "weekly", "monthly", "within 30d", "migration run <id>"); empty when removed. */
  reasons: string[];
  /** Migration runs whose report names this archive as their backup. */
  migrationRuns: string[];
}

export interface ForgottenRun {
  runId: string;
  archivePath: string | null;
  status: string;
  reason: string;
}

export interface PruneBackupsResult {
  status: "pruned" | "dry-run" | "declined";
  backupDir: string;
  policy: RetentionPolicy;
  kept: PruneCandidate[];
  removed: PruneCandidate[];
  /** Files left alone: not our archives, unreadable here, or another state dir's. */
  ignored: Array<{ path: string; reason: string }>;
  /** backup_runs rows dropped (or, in a dry run, that would be): their archive is gone. */
  forgotten: ForgottenRun[];
  warnings: string[];
}

/** Checks the rules before anything is read: at least one, each count ≥ 1, a valid duration. */
export function validatePolicy(policy: RetentionPolicy): void {
  for (const rule of ["last", "daily", "weekly", "monthly"] as const) {
    const n = policy[rule];
    if (n !== undefined && (!Number.isSafeInteger(n) || n < 1)) {
      throw new UsageError(`--keep-${rule} must be a whole number of at least 1 (got ${String(n)}); for example --keep-${rule} 7.`, "invalid_option");
    }
  }
  if (policy.within !== undefined) parseRetentionDuration(policy.within);
  if (!hasRule(policy)) {
    throw new UsageError("backup prune needs a retention rule: --keep-last N, --keep-daily N, --keep-weekly N, --keep-monthly N or --keep-within <duration> (prune never deletes every archive).", "missing_rule");
  }
}

function canonical(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Archive path (canonical) → ids of the migration runs that name it as their backup. */
async function migrationBackups(paths: StatePaths): Promise<Map<string, string[]>> {
  const refs = new Map<string, string[]>();
  if (!fs.existsSync(paths.globalDbPath)) return refs;
  const { readMigrationBackupPaths } = await import("./backup-runs.js");
  let rows: Array<{ runId: string; backupPath: string }>;
  try {
    rows = readMigrationBackupPaths(paths);
  } catch (error) {
    // Without the ledger we cannot tell which archive a rollback needs: delete nothing.
    throw new OperationError("ledger_unreadable", `Cannot read migration_runs from ${paths.globalDbPath} (${describeError(error)}), so prune cannot tell which archives migration runs need; nothing was deleted. Run \`openclaw-state doctor\`.`, { path: paths.globalDbPath });
  }
  for (const row of rows) {
    const key = canonical(row.backupPath);
    refs.set(key, [...(refs.get(key) ?? []), row.runId]);
  }
  return refs;
}

function ignoredReason(a: FoundArchive, stateDir: string): string | null {
  if (!a.manifestOk) {
    if (a.problemCode === "zstd_unsupported") return "a zstd archive this Node cannot read (needs Node.js 22.15 or newer); left alone";
    return `not an openclaw-state archive (${a.problem ?? "no manifest"})`;
  }
  if (a.stateDir !== null && canonical(a.stateDir) !== stateDir) return `an archive of another state dir (${a.stateDir})`;
  return null;
}

export async function pruneBackups(options: PruneBackupsOptions): Promise<PruneBackupsResult> {
  validatePolicy(options.policy);
  const { paths } = options;
  const backupDir = options.dir ? expandUserPath(options.dir, paths.homeDir) : paths.backupDir;
  const stateDir = canonical(paths.stateDir);
  const found = await scanBackupDir(backupDir);
  const refs = await migrationBackups(paths);
  const ignored: PruneBackupsResult["ignored"] = [];
  const groups = new Map<string, PruneCandidate[]>();
  for (const a of found) {
    const reason = ignoredReason(a, stateDir);
    if (reason) {
      ignored.push({ path: a.archivePath, reason });
      continue;
    }
    const candidate: PruneCandidate = { archivePath: a.archivePath, createdAt: a.createdAt ?? a.mtimeMs, sizeBytes: a.sizeBytes, runId: a.runId, reasons: [], migrationRuns: refs.get(canonical(a.archivePath)) ?? [] };
    const key = a.onlyConfig ? "config-only" : "full";
    groups.set(key, [...(groups.get(key) ?? []), candidate]);
  }

  const kept: PruneCandidate[] = [];
  const remove: PruneCandidate[] = [];
  for (const group of groups.values()) {
    for (const { item, reasons } of applyRetention(group, options.policy)) {
      const protectedBy = options.includeMigrationBackups ? [] : item.migrationRuns.map((id) => `migration run ${id}`);
      item.reasons = [...reasons, ...protectedBy];
      (item.reasons.length > 0 ? kept : remove).push(item);
    }
  }
  const byTime = (x: PruneCandidate, y: PruneCandidate): number => y.createdAt - x.createdAt || (x.archivePath < y.archivePath ? 1 : -1);
  kept.sort(byTime);
  remove.sort(byTime);

  const result: PruneBackupsResult = { status: "dry-run", backupDir, policy: options.policy, kept, removed: remove, ignored, forgotten: [], warnings: [] };
  const { forgetRuns, staleRuns } = await import("./backup-runs.js");
  if (options.dryRun) return { ...result, forgotten: staleRuns(paths, backupDir, remove.map((r) => r.archivePath)) };
  if (remove.length > 0 && options.confirm && !(await options.confirm(remove))) return { ...result, status: "declined", removed: [] };
  const removed: PruneCandidate[] = [];
  for (const candidate of remove) {
    try {
      fs.unlinkSync(candidate.archivePath);
      removed.push(candidate);
    } catch (error) {
      result.warnings.push(`Could not delete ${candidate.archivePath} (${describeError(error)}).`);
    }
  }
  if (removed.length > 0) fsyncDir(path.resolve(backupDir));
  const stale = staleRuns(paths, backupDir, []);
  const forgetWarning = forgetRuns(paths, stale.map((r) => r.runId));
  if (forgetWarning) result.warnings.push(forgetWarning);
  return { ...result, status: "pruned", removed, forgotten: forgetWarning ? [] : stale };
}
