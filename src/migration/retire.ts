// Retiring an imported source: moved under <stateDir>/migrated/<runId>/<relative path>, or deleted — both checked against the boundary first.
import fs from "node:fs";
import path from "node:path";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { checkOwnedPath, prepareOwnedDestination, type OwnedPath } from "../state/owned-path.js";
import { fsyncDir } from "../state/private-fs.js";

export const MIGRATED_DIR = "migrated";

export function retiredPath(stateDir: string, runId: string, relativePath: string): string {
  return path.join(stateDir, MIGRATED_DIR, runId, ...relativePath.split("/"));
}

export type Retirement = { retired: "deleted" } | { retired: "moved"; retiredTo: string };

/**
 * Where a source goes once its import committed — one rule for the run and its dry run. Deleted only inside the
 * state dir (a source elsewhere, e.g. a configured cron store, is not in the backup) and only under
 * --remove-sources or for a kind deleted once a verified backup holds it; otherwise moved under migrated/<run id>/.
 */
export function retirementOf(source: { path: string; relativePath: string }, rule: { stateDir: string; runId: string; removeSources: boolean; deleteAfterBackup: boolean; backedUp: boolean }): Retirement {
  const deletable = (rule.removeSources || (rule.deleteAfterBackup && rule.backedUp)) && isPathInside(rule.stateDir, source.path);
  return deletable ? { retired: "deleted" } : { retired: "moved", retiredTo: retiredPath(rule.stateDir, rule.runId, source.relativePath) };
}

/**
 * The boundary a legacy source is checked against: the state dir (or the legacy root the plan read), the
 * credentials dir when it lives elsewhere, else — a file the config names outside both (a cron store, say) —
 * its own directory, so only the file itself is judged (it must be a regular file, not a link or a FIFO).
 */
export function sourceBoundary(paths: Pick<StatePaths, "stateDir" | "credentialsDir">, file: string, roots: readonly string[] = []): string {
  // A root itself is its own boundary too: checkOwnedPath then refuses it (the state dir is never moved whole).
  for (const root of [...roots, paths.stateDir, paths.credentialsDir]) {
    if (isPathInside(path.resolve(root), path.resolve(file))) return path.resolve(root);
  }
  return path.dirname(path.resolve(file));
}

/** checkOwnedPath for a source about to be retired: a regular file (or gone), reached through real directories only. */
export function checkRetirableSource(paths: Pick<StatePaths, "stateDir" | "credentialsDir">, file: string): OwnedPath {
  return checkOwnedPath(sourceBoundary(paths, file), file, { action: "retire", expect: "file", allowMissing: true });
}

/**
 * Directories touched by retirements, fsynced once per batch rather than twice per file: the ledger already
 * records each retirement, so a rename lost to a power cut only brings back an already-imported file.
 */
export class RetireBatch {
  private readonly made = new Set<string>();
  private readonly dirty = new Set<string>();

  /** `stateDir`: the boundary every destination under migrated/ is checked against. */
  constructor(readonly stateDir: string) {}

  /** Creates the destination's parents below the state dir without following links; nothing may be there yet. */
  prepare(destination: string): void {
    prepareOwnedDestination(this.stateDir, destination, "retire into", this.made);
  }

  touched(dir: string): void {
    this.dirty.add(dir);
  }

  sync(): void {
    for (const dir of this.dirty) fsyncDir(dir);
    this.dirty.clear();
  }
}

/**
 * Moves (same file system: a rename) or deletes `file`, which the caller checked with checkRetirableSource;
 * the destination is checked here. Directories are fsynced by the batch.
 */
export function retireFile(file: string, destination: string | null, batch: RetireBatch): void {
  if (destination === null) {
    fs.rmSync(file, { force: true });
    batch.touched(path.dirname(file));
    return;
  }
  batch.prepare(destination);
  fs.renameSync(file, destination);
  batch.touched(path.dirname(destination));
  batch.touched(path.dirname(file));
}

/** Removes a legacy directory below `root` once the migration emptied it (never a non-empty one, never a link). */
export function removeDirIfEmpty(root: string, dir: string): boolean {
  try {
    checkOwnedPath(root, dir, { action: "remove", expect: "dir" });
    if (fs.readdirSync(dir).length > 0) return false;
    fs.rmdirSync(dir);
    fsyncDir(path.dirname(dir));
    return true;
  } catch {
    return false;
  }
}
