// `backup prune --keep N`: deletes all but the N newest archives this tool wrote in the backup directory.
import fs from "node:fs";
import path from "node:path";
import { describeError, UsageError } from "../core/errors.js";
import { expandUserPath, type StatePaths } from "../state/paths.js";
import { fsyncDir } from "../state/private-fs.js";
import { scanBackupDir } from "./list-backups.js";

export interface PruneBackupsOptions {
  paths: StatePaths;
  keep: number;
  dir?: string;
  dryRun?: boolean;
  /** Asked once with the archives to delete; false ends with status "declined". */
  confirm?: (remove: readonly PruneCandidate[]) => Promise<boolean>;
}

export interface PruneCandidate {
  archivePath: string;
  createdAt: number;
  sizeBytes: number;
}

export interface PruneBackupsResult {
  status: "pruned" | "dry-run" | "declined";
  backupDir: string;
  keep: number;
  kept: PruneCandidate[];
  removed: PruneCandidate[];
  /** Files left alone because they are not archives written by this tool. */
  ignored: Array<{ path: string; reason: string }>;
  warnings: string[];
}

export async function pruneBackups(options: PruneBackupsOptions): Promise<PruneBackupsResult> {
  if (!Number.isSafeInteger(options.keep) || options.keep < 1) {
    throw new UsageError(`--keep must be a whole number of at least 1 (got ${options.keep}); prune never deletes every archive.`, "invalid_keep");
  }
  const backupDir = options.dir ? expandUserPath(options.dir, options.paths.homeDir) : options.paths.backupDir;
  const found = await scanBackupDir(backupDir);
  const ignored = found.filter((a) => !a.manifestOk).map((a) => ({ path: a.archivePath, reason: `not an openclaw-state archive (${a.problem ?? "no manifest"})` }));
  // Only archives whose first entry is our manifest count: prune never touches anything it did not write.
  const ours: PruneCandidate[] = found
    .filter((a) => a.manifestOk)
    .map((a) => ({ archivePath: a.archivePath, createdAt: a.createdAt ?? a.mtimeMs, sizeBytes: a.sizeBytes }))
    .sort((x, y) => y.createdAt - x.createdAt || (x.archivePath < y.archivePath ? 1 : -1));
  const kept = ours.slice(0, options.keep);
  const remove = ours.slice(options.keep);
  const result: PruneBackupsResult = { status: "dry-run", backupDir, keep: options.keep, kept, removed: remove, ignored, warnings: [] };
  if (options.dryRun) return result;
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
  return { ...result, status: "pruned", removed };
}
