// Retiring an imported source: moved under <stateDir>/migrated/<runId>/<relative path>, or deleted.
import fs from "node:fs";
import path from "node:path";
import { ensurePrivateDir, fsyncDir } from "../state/private-fs.js";

export const MIGRATED_DIR = "migrated";

export function retiredPath(stateDir: string, runId: string, relativePath: string): string {
  return path.join(stateDir, MIGRATED_DIR, runId, ...relativePath.split("/"));
}

/**
 * Directories touched by retirements, fsynced once per batch rather than twice per file: the ledger already
 * records each retirement, so a rename lost to a power cut only brings back an already-imported file.
 */
export class RetireBatch {
  private readonly made = new Set<string>();
  private readonly dirty = new Set<string>();

  ensureDir(dir: string): void {
    if (this.made.has(dir)) return;
    ensurePrivateDir(dir);
    this.made.add(dir);
  }

  touched(dir: string): void {
    this.dirty.add(dir);
  }

  sync(): void {
    for (const dir of this.dirty) fsyncDir(dir);
    this.dirty.clear();
  }
}

/** Moves (same file system: a rename) or deletes `file`; directories are fsynced by the batch. */
export function retireFile(file: string, destination: string | null, batch: RetireBatch): void {
  if (destination === null) {
    fs.rmSync(file, { force: true });
    batch.touched(path.dirname(file));
    return;
  }
  // No existence check: migrated/<runId>/ is new for each run and relative paths are unique within it.
  batch.ensureDir(path.dirname(destination));
  fs.renameSync(file, destination);
  batch.touched(path.dirname(destination));
  batch.touched(path.dirname(file));
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
