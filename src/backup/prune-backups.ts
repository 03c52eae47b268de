// `backup prune`: retention rules (restic `forget` semantics) over the archives this tool wrote for this state dir.
//
// Which archives count is decided by identity (archive-identity.ts), never by name or file time: the manifest says
// it is ours, for this state dir, under the name it was written with, and a backup_runs row or a verify pass
// confirms it. Its time is the manifest's createdAt; one dated in the future is kept and never counted. Never
// deleted: everything that is not ours (listed with the reason), archives of another state dir, config-only ones
// (their own group, as restic groups by paths) only by their own group's rules, and pre-migration archives
// (by their manifest or a migration run; unless includeMigrationBackups). Each deletion goes through
// checkOwnedPath with the backup dir as root. Afterwards the backup_runs rows of archives that are gone are
// forgotten, so `backup list` does not grow forever.
import fs from "node:fs";
import path from "node:path";
import { describeError, UsageError } from "../core/errors.js";
import { checkOwnedPath, UnsafeOwnedPathError } from "../state/owned-path.js";
import { expandUserPath, type StatePaths } from "../state/paths.js";
import { fsyncDir } from "../state/private-fs.js";
import { identifyArchives, readLedgerView } from "./archive-identity.js";
import { scanBackupDir } from "./list-backups.js";
import { applyRetention, FUTURE_REASON, hasRule, parseRetentionDuration, type RetentionPolicy } from "./retention.js";

export interface PruneBackupsOptions {
  paths: StatePaths;
  policy: RetentionPolicy;
  dir?: string;
  dryRun?: boolean;
  /** Also let the rules remove pre-migration archives (by their manifest or a migration run; kept otherwise). */
  includeMigrationBackups?: boolean;
  /** Asked once with the archives to delete; false ends with status "declined". */
  confirm?: (remove: readonly PruneCandidate[]) => Promise<boolean>;
  /** The clock archives are compared with (tests); default Date.now(). */
  now?: number;
}

export interface PruneCandidate {
  archivePath: string;
  createdAt: number;
  sizeBytes: number;
  runId: string | null;
  /** How it was proven ours: a completed backup_runs row with its run id and path, or a verify pass. */
  identity: "backup_runs" | "verified";
  /**
   * Why it stays ("last", "daily", "weekly", "monthly", "within 30d", "dated in the future", "pre-migration backup
   * (by its manifest)", "migration run <id>"); empty when removed.
   */
  reasons: string[];
  /** Migration runs whose report names this archive as their backup. */
  migrationRuns: string[];
  /** A pre-migration archive (by its manifest or a migration run): kept whatever the rules say. */
  preMigration: boolean;
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
  /** Not ours, kept: foreign files, renamed copies, stubs, another state dir's archives, each with the reason. */
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

export async function pruneBackups(options: PruneBackupsOptions): Promise<PruneBackupsResult> {
  validatePolicy(options.policy);
  const { paths } = options;
  const now = options.now ?? Date.now();
  const backupDir = path.resolve(options.dir ? expandUserPath(options.dir, paths.homeDir) : paths.backupDir);
  const found = await scanBackupDir(backupDir);
  const ledger = await readLedgerView(paths);
  const warnings = [...ledger.warnings];
  const { ours, notOurs } = await identifyArchives(found, paths, ledger);
  const ignored: PruneBackupsResult["ignored"] = notOurs.map((n) => ({ path: n.path, reason: n.reason }));
  const groups = new Map<string, PruneCandidate[]>();
  for (const o of ours) {
    const candidate: PruneCandidate = {
      archivePath: o.found.archivePath,
      createdAt: o.createdAt,
      sizeBytes: o.found.sizeBytes,
      runId: o.runId,
      identity: o.identity,
      reasons: [],
      migrationRuns: o.migrationRuns,
      preMigration: o.preMigration.length > 0,
    };
    const key = o.found.onlyConfig ? "config-only" : "full";
    groups.set(key, [...(groups.get(key) ?? []), candidate]);
  }

  const protection = new Map(ours.map((o) => [o.found.archivePath, o.preMigration]));
  const kept: PruneCandidate[] = [];
  const remove: PruneCandidate[] = [];
  for (const group of groups.values()) {
    for (const { item, reasons } of applyRetention(group, options.policy, now)) {
      if (reasons.includes(FUTURE_REASON)) {
        warnings.push(`${item.archivePath} is dated ${new Date(item.createdAt).toISOString()}, in the future: it was kept and not counted as the newest archive. Check the clock of the host that wrote it.`);
      }
      const protectedBy = options.includeMigrationBackups ? [] : (protection.get(item.archivePath) ?? []);
      item.reasons = [...reasons, ...protectedBy];
      (item.reasons.length > 0 ? kept : remove).push(item);
    }
  }
  const byTime = (x: PruneCandidate, y: PruneCandidate): number => y.createdAt - x.createdAt || (x.archivePath < y.archivePath ? 1 : -1);
  kept.sort(byTime);
  remove.sort(byTime);

  const result: PruneBackupsResult = { status: "dry-run", backupDir, policy: options.policy, kept, removed: remove, ignored, forgotten: [], warnings };
  const { forgetRuns, staleRuns } = await import("./backup-runs.js");
  const ledgerReadable = ledger.runs !== null;
  if (options.dryRun) return { ...result, forgotten: ledgerReadable ? staleRuns(paths, backupDir, remove.map((r) => r.archivePath)) : [] };
  if (remove.length > 0 && options.confirm && !(await options.confirm(remove))) return { ...result, status: "declined", removed: [] };
  const removed: PruneCandidate[] = [];
  for (const candidate of remove) {
    try {
      // The boundary check right before the unlink: a link or FIFO swapped in since the scan is refused, not followed.
      const owned = checkOwnedPath(backupDir, candidate.archivePath, { action: "delete", expect: "file" });
      fs.unlinkSync(owned.path);
      removed.push(candidate);
    } catch (error) {
      warnings.push(error instanceof UnsafeOwnedPathError ? error.message : `Could not delete ${candidate.archivePath} (${describeError(error)}).`);
      kept.push({ ...candidate, reasons: ["could not be deleted (see warnings)"] });
    }
  }
  if (removed.length > 0) fsyncDir(backupDir);
  if (!ledgerReadable) return { ...result, status: "pruned", removed };
  const stale = staleRuns(paths, backupDir, []);
  const forgetWarning = forgetRuns(paths, stale.map((r) => r.runId));
  if (forgetWarning) warnings.push(forgetWarning);
  return { ...result, status: "pruned", removed, forgotten: forgetWarning ? [] : stale };
}
