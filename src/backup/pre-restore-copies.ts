// The `<path>.pre-restore-<ts>` copies a restore keeps: found for `backup list`, removed by `backup prune --pre-restore`.
//
// Found with the restore check's own finder (one definition of the name), beside every path a restore replaces:
// the state dir, the config file, the credentials dir and the configured workspaces. Only a name carrying the
// stamp restore writes (`<path>.pre-restore-20250102T030405Z`, optionally `-N`) is ours; anything else with the
// marker is listed as not ours and kept. Every deletion goes through checkOwnedPath with the copy's parent as root.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import { checkOwnedPath, UnsafeOwnedPathError } from "../state/owned-path.js";
import type { StatePaths } from "../state/paths.js";
import { fsyncDir } from "../state/private-fs.js";
import { readConfiguredWorkspaces } from "./config-workspaces.js";
import { FUTURE_SKEW_MS, parseRetentionDuration, subtractDuration } from "./retention.js";

export const PRE_RESTORE_MARKER = ".pre-restore-";

/** Names beside `dest` (in its parent dir) that `keep` accepts, sorted, as full paths. */
export function siblings(dest: string, keep: (name: string) => boolean): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(dest));
  } catch {
    return [];
  }
  return names
    .filter(keep)
    .sort()
    .map((n) => path.join(path.dirname(dest), n));
}

/** Previous copies of `dest` kept by a restore, newest first (the stamp sorts as time). */
export function preRestoreCopies(dest: string): string[] {
  const base = `${path.basename(dest)}${PRE_RESTORE_MARKER}`;
  return siblings(dest, (n) => n.startsWith(base)).reverse();
}

export interface PreRestoreCopy {
  path: string;
  /** The live path it is the previous copy of. */
  of: string;
  kind: "dir" | "file";
  /** From the stamp in its name (the time of the restore that kept it), epoch ms. */
  createdAt: number;
  /** Bytes for a file; null for a directory (not walked). */
  sizeBytes: number | null;
}

export interface PreRestoreScan {
  copies: PreRestoreCopy[];
  /** Names carrying the marker that are not a restore's copy (or cannot be checked): kept, with the reason. */
  notOurs: Array<{ path: string; reason: string }>;
}

/** `20250102T030405Z`, optionally followed by `-N` (restore's free-name suffix). */
const STAMP = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z(?:-\d{1,6})?$/;

/** The restore time a copy's name carries, or null when the name is not one restore writes. */
export function preRestoreStamp(name: string, dest: string): number | null {
  const prefix = `${path.basename(dest)}${PRE_RESTORE_MARKER}`;
  if (!name.startsWith(prefix)) return null;
  const m = STAMP.exec(name.slice(prefix.length));
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const t = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(t);
  // Reject impossible dates (month 13, Feb 30) instead of letting Date roll them over.
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || back.getUTCHours() !== h) return null;
  return t;
}

/** Every path a restore replaces (and so may keep a copy of), duplicates removed. */
/**
 * Every path a restore may replace: the state dir, config and credentials, the configured
 * workspaces, and the real state dir when the state dir is a link (restore keeps the copy beside the real one).
 */
export function restoreDestinations(paths: StatePaths): string[] {
  // Config and credentials even inside the state dir: a restore of an archive holding them as their own assets
  // keeps their copies beside them there.
  const targets = [paths.stateDir, paths.configPath, paths.credentialsDir];
  for (const w of readConfiguredWorkspaces(paths).workspaces) targets.push(w.path);
  try {
    targets.push(fs.realpathSync(paths.stateDir));
  } catch {
    // Missing: nothing to resolve.
  }
  return [...new Set(targets.map((t) => path.resolve(t)))];
}

/** The copies restores kept, newest first; never follows a link (a copy that is a link or a FIFO is not ours). */
export function scanPreRestoreCopies(paths: StatePaths): PreRestoreScan {
  const scan: PreRestoreScan = { copies: [], notOurs: [] };
  const seen = new Set<string>();
  for (const dest of restoreDestinations(paths)) {
    for (const copy of preRestoreCopies(dest)) {
      if (seen.has(copy)) continue;
      seen.add(copy);
      const createdAt = preRestoreStamp(path.basename(copy), dest);
      if (createdAt === null) {
        scan.notOurs.push({ path: copy, reason: "its name does not carry the time stamp a restore writes" });
        continue;
      }
      try {
        const owned = checkOwnedPath(path.dirname(copy), copy, { action: "list", expect: "any" });
        scan.copies.push({ path: copy, of: dest, kind: owned.kind === "dir" ? "dir" : "file", createdAt, sizeBytes: owned.kind === "file" ? owned.stat!.size : null });
      } catch (error) {
        if (!(error instanceof UnsafeOwnedPathError)) throw error;
        scan.notOurs.push({ path: copy, reason: error.reason });
      }
    }
  }
  scan.copies.sort((a, b) => b.createdAt - a.createdAt || (a.path < b.path ? -1 : 1));
  return scan;
}

export interface PrunePreRestoreOptions {
  paths: StatePaths;
  /** Only copies older than this (restic duration form: `30d`, `1y6m`); every copy when absent. */
  olderThan?: string;
  dryRun?: boolean;
  now?: number;
  /** Asked once with the copies to delete; false ends with status "declined". */
  confirm?: (remove: readonly PreRestoreCopy[]) => Promise<boolean>;
}

export interface PrunePreRestoreResult {
  status: "pruned" | "dry-run" | "declined";
  olderThan: string | null;
  removed: PreRestoreCopy[];
  /** Copies left in place: newer than --older-than, dated in the future, or not ours (with the reason). */
  kept: Array<{ path: string; reason: string }>;
  warnings: string[];
}

/** `backup prune --pre-restore`: removes the copies restores kept (all, or those older than `olderThan`). */
export async function prunePreRestoreCopies(options: PrunePreRestoreOptions): Promise<PrunePreRestoreResult> {
  const now = options.now ?? Date.now();
  const cutoff = options.olderThan === undefined ? null : subtractDuration(now, parseRetentionDuration(options.olderThan, "--older-than"));
  const scan = scanPreRestoreCopies(options.paths);
  const result: PrunePreRestoreResult = { status: "dry-run", olderThan: options.olderThan ?? null, removed: [], kept: scan.notOurs.map((n) => ({ path: n.path, reason: `not ours, kept: ${n.reason}` })), warnings: [] };
  const remove: PreRestoreCopy[] = [];
  for (const copy of scan.copies) {
    if (copy.createdAt > now + FUTURE_SKEW_MS) {
      result.kept.push({ path: copy.path, reason: "dated in the future; kept" });
      result.warnings.push(`${copy.path} carries a restore time in the future (${new Date(copy.createdAt).toISOString()}); it was kept. Remove it by hand if it is not wanted.`);
    } else if (cutoff !== null && copy.createdAt >= cutoff) {
      result.kept.push({ path: copy.path, reason: `newer than ${options.olderThan}` });
    } else {
      remove.push(copy);
    }
  }
  if (options.dryRun) return { ...result, removed: remove };
  if (remove.length > 0 && options.confirm && !(await options.confirm(remove))) return { ...result, status: "declined" };
  for (const copy of remove) {
    try {
      // Checked again right before the delete: what is there now must still be the real file or directory listed.
      const owned = checkOwnedPath(path.dirname(copy.path), copy.path, { action: "delete", expect: copy.kind });
      fs.rmSync(owned.path, { recursive: owned.kind === "dir", force: false });
      fsyncDir(path.dirname(owned.path));
      result.removed.push(copy);
    } catch (error) {
      const reason = error instanceof UnsafeOwnedPathError ? error.message : `Could not delete ${copy.path} (${describeError(error)}).`;
      result.warnings.push(reason);
      result.kept.push({ path: copy.path, reason: "could not be deleted (see warnings)" });
    }
  }
  return { ...result, status: "pruned" };
}
