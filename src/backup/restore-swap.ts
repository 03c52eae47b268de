// Swaps staged assets into place one by one (old copy kept as <path>.pre-restore-<ts>), with rollback on failure.
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import { ensurePrivateDir, ensurePrivateDirBelow, fsyncDir, lstatOrNull, pathExists, symlinkOnPath } from "../state/private-fs.js";
import type { RestorePlanItem } from "./restore-plan.js";

export interface StagedItem {
  item: RestorePlanItem;
  /** The staged tree (dir asset) or file (file asset) that replaces the destination. */
  staged: string;
  /** The private sibling directory holding `staged` (removed after the swap). */
  stagingRoot: string;
}

export interface SwapDone {
  item: RestorePlanItem;
  staged: string;
  preRestore: string | null;
}

const STAGING_NAME = /^\.(.+)\.restore-(\d{8}T\d{6}Z)-(?:(\d+)-)?[A-Za-z0-9]{6}$/;

/**
 * The mkdtemp prefix of the staging sibling of `destination`: `.<name>.restore-<stamp>-<pid>-` (mkdtemp adds
 * six characters). The pid tells `doctor` whether the restore that made it is still running.
 */
export function stagingPrefix(destination: string, stamp: string): string {
  return path.join(path.dirname(destination), `.${path.basename(destination)}.restore-${stamp}-${process.pid}-`);
}

/** A staging sibling's parts, or null when `name` is not one (names without a pid come from older versions). */
export function parseStagingName(name: string): { base: string; stamp: string; pid: number | null } | null {
  const m = STAGING_NAME.exec(name);
  return m ? { base: m[1]!, stamp: m[2]!, pid: m[3] === undefined ? null : Number(m[3]) } : null;
}

/** A compact UTC stamp for sibling names: 20250102T030405Z. */
export function compactStamp(date = new Date()): string {
  return date.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}

function freeName(base: string): string {
  let candidate = base;
  for (let i = 1; pathExists(candidate); i += 1) candidate = `${base}-${i}`;
  return candidate;
}

/**
 * Renames each destination aside and the staged copy in. On any failure every completed swap is undone
 * in reverse; if undoing fails too, the error names where the previous copies are.
 */
export function swapIntoPlace(staged: readonly StagedItem[], stamp: string, failAfterSwaps?: number): SwapDone[] {
  const done: SwapDone[] = [];
  try {
    for (const s of staged) {
      if (failAfterSwaps !== undefined && done.length >= failAfterSwaps) throw new Error("injected failure (test hook)");
      const dest = s.item.destination;
      ensurePrivateDir(path.dirname(dest));
      const preRestore = pathExists(dest) ? freeName(`${dest}.pre-restore-${stamp}`) : null;
      if (preRestore) fs.renameSync(dest, preRestore);
      try {
        fs.renameSync(s.staged, dest);
      } catch (error) {
        if (preRestore) fs.renameSync(preRestore, dest);
        throw error;
      }
      done.push({ item: s.item, staged: s.staged, preRestore });
      fsyncDir(path.dirname(dest));
    }
    return done;
  } catch (error) {
    const stuck: string[] = [];
    for (const d of [...done].reverse()) {
      try {
        fs.renameSync(d.item.destination, d.staged);
        if (d.preRestore) fs.renameSync(d.preRestore, d.item.destination);
        fsyncDir(path.dirname(d.item.destination));
      } catch (undoError) {
        stuck.push(`${d.item.destination} (previous copy at ${d.preRestore ?? "none"}: ${describeError(undoError)})`);
      }
    }
    if (stuck.length > 0) {
      throw new OperationError("restore_rollback_failed", `Restore failed (${describeError(error)}) and could not be rolled back for ${stuck.join("; ")}; move the previous copies back by hand.`, { cause: error });
    }
    throw new OperationError("restore_failed", `Restore failed while swapping files into place (${describeError(error)}); every path was rolled back to its previous state.`, { cause: error });
  }
}

/**
 * Moves kept sub-paths (backup dirs the archive left out) from the previous copy into the restored tree.
 * Returns warnings; a previous copy that still holds something is then not deleted.
 */
export function carryKeptPaths(done: readonly SwapDone[]): { warnings: string[]; keepPrevious: Set<string> } {
  const warnings: string[] = [];
  const keepPrevious = new Set<string>();
  for (const d of done) {
    if (!d.preRestore || d.item.type !== "dir") continue;
    for (const rel of d.item.keep) {
      const from = path.join(d.preRestore, ...rel.split("/"));
      const to = path.join(d.item.destination, ...rel.split("/"));
      if (!pathExists(from)) continue;
      try {
        // Neither tree is walked through a link: `from` through one would pull in data from outside, `to` through
        // one (the archive's) would move the kept data out of the state.
        const linkFrom = symlinkOnPath(d.preRestore, path.dirname(from));
        if (linkFrom) throw new Error(`${linkFrom} in the previous copy is a symbolic link`);
        ensurePrivateDirBelow(d.item.destination, path.dirname(to));
        // An empty folder of the same name (archives made before the dir was excluded) gives way.
        const there = lstatOrNull(to);
        if (there) {
          if (!there.isDirectory() || fs.readdirSync(to).length > 0) throw new Error(`${to} exists in the restored tree`);
          fs.rmdirSync(to);
        }
        fs.renameSync(from, to);
      } catch (error) {
        keepPrevious.add(d.preRestore);
        warnings.push(`Could not carry ${from} into the restored state (${describeError(error)}); the previous copy ${d.preRestore} was kept.`);
      }
    }
  }
  return { warnings, keepPrevious };
}
