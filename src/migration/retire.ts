// Retiring an imported source: moved under <stateDir>/migrated/<runId>/<relative path>, or deleted.
import fs from "node:fs";
import path from "node:path";
import { OperationError } from "../core/errors.js";
import { ensurePrivateDir, fsyncDir, pathExists } from "../state/private-fs.js";

export const MIGRATED_DIR = "migrated";

export function retiredPath(stateDir: string, runId: string, relativePath: string): string {
  return path.join(stateDir, MIGRATED_DIR, runId, ...relativePath.split("/"));
}

/** Moves (same file system: a rename) or deletes `file`, then fsyncs the directories involved. */
export function retireFile(file: string, destination: string | null): void {
  if (destination === null) {
    fs.rmSync(file, { force: true });
    fsyncDir(path.dirname(file));
    return;
  }
  if (pathExists(destination)) {
    throw new OperationError("retire_conflict", `Cannot retire ${file}: ${destination} already exists; the source was left in place.`, { path: destination });
  }
  ensurePrivateDir(path.dirname(destination));
  fs.renameSync(file, destination);
  fsyncDir(path.dirname(destination));
  fsyncDir(path.dirname(file));
}

/** Removes a legacy sessions dir once the migration emptied it (never a non-empty one). */
export function removeDirIfEmpty(dir: string): boolean {
  try {
    if (fs.readdirSync(dir).length > 0) return false;
    fs.rmdirSync(dir);
    fsyncDir(path.dirname(dir));
    return true;
  } catch {
    return false;
  }
}
