// Swaps staged assets into place one by one (old copy kept as <path>.pre-restore-<ts>), with rollback on failure.
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import { checkOwnedPath, ownedPathProblem } from "../state/owned-path.js";
import { ensurePrivateDir, ensurePrivateDirBelow, fsyncDir, pathExists } from "../state/private-fs.js";
import type { RestorePlan, RestorePlanItem } from "./restore-plan.js";

export interface StagedItem {
  item: RestorePlanItem;
  /** The staged tree (dir asset) or file (file asset) that replaces the destination. */
  staged: string;
  /** The private sibling directory holding `staged` (removed after the swap). */
  stagingRoot: string;
  /**
   * The boundary every move and delete of this item is checked against (checkOwnedPath): the --target dir, the
   * state dir for a destination inside it, else the destination's parent (only its last component is ours).
   */
  root: string;
  /** Unregisters the staging root as a Ctrl-C leftover (src/core/interrupt.ts) once it is gone. */
  release?: () => void;
}

/** A replaced path and where its previous content now is. */
export interface KeptCopy {
  kind: RestorePlanItem["kind"];
  /** The path the restore replaced. */
  path: string;
  /** Where its previous content now is. */
  keptAt: string;
}

export interface SwapDone {
  item: RestorePlanItem;
  staged: string;
  root: string;
  /** Where the replaced copy now is (`<destination>.pre-restore-<ts>`); null when nothing was there. */
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

/** Where the current copy of `destination` is kept by a restore stamped `stamp`: the first free `<destination>.pre-restore-<stamp>[-n]`. */
export function preRestorePath(destination: string, stamp: string): string {
  return freeName(`${destination}.pre-restore-${stamp}`);
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
      // Checked again right before the renames: a link or FIFO put there while the archive was extracted is refused.
      const there = checkOwnedPath(s.root, dest, { action: "move aside", allowMissing: true, expect: s.item.type });
      checkOwnedPath(s.root, s.staged, { action: "move into place", expect: s.item.type });
      let preRestore: string | null = null;
      if (there.kind !== "missing") {
        // The name the plan showed, unless something took it since.
        preRestore = s.item.keptAt && !pathExists(s.item.keptAt) ? s.item.keptAt : preRestorePath(dest, stamp);
        checkOwnedPath(s.root, preRestore, { action: "keep the previous copy at", allowMissing: true });
        fs.renameSync(dest, preRestore);
      }
      try {
        fs.renameSync(s.staged, dest);
      } catch (error) {
        if (preRestore) fs.renameSync(preRestore, dest);
        throw error;
      }
      done.push({ item: s.item, staged: s.staged, root: s.root, preRestore });
      fsyncDir(path.dirname(dest));
    }
    return done;
  } catch (error) {
    const stuck: string[] = [];
    for (const d of [...done].reverse()) {
      try {
        const problem =
          ownedPathProblem(d.root, d.item.destination, { action: "move back", expect: d.item.type }) ??
          (d.preRestore ? ownedPathProblem(d.root, d.preRestore, { action: "move back", expect: d.item.type }) : null);
        if (problem) throw new Error(problem);
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
    if (error instanceof OperationError) {
      throw new OperationError(error.code, `${error.message.replace(/\.$/, "")} (restore stopped; every path was rolled back to its previous state).`, { cause: error, path: error.path });
    }
    throw new OperationError("restore_failed", `Restore failed while swapping files into place (${describeError(error)}); every path was rolled back to its previous state.`, { cause: error });
  }
}

/**
 * Moves kept sub-paths (backup dirs the archive left out) from the previous copy into the restored tree.
 * Returns warnings; what cannot be carried stays in the previous copy (which is kept in any case).
 */
export function carryKeptPaths(done: readonly SwapDone[]): string[] {
  const warnings: string[] = [];
  for (const d of done) {
    if (!d.preRestore || d.item.type !== "dir") continue;
    for (const rel of d.item.keep) {
      const from = path.join(d.preRestore, ...rel.split("/"));
      const to = path.join(d.item.destination, ...rel.split("/"));
      if (!pathExists(from)) continue;
      try {
        // Neither tree is walked through a link: `from` through one would pull in data from outside, `to` through
        // one (the archive's) would move the kept data out of the state. A kept path that is itself a link moves as a link.
        checkOwnedPath(d.preRestore, from, { action: "carry over", allowSymlink: true });
        ensurePrivateDirBelow(d.item.destination, path.dirname(to));
        // An empty folder of the same name (archives made before the dir was excluded) gives way.
        const there = checkOwnedPath(d.item.destination, to, { action: "carry over into", allowMissing: true });
        if (there.kind !== "missing") {
          if (there.kind !== "dir" || fs.readdirSync(to).length > 0) throw new Error(`${to} exists in the restored tree`);
          fs.rmdirSync(to);
        }
        fs.renameSync(from, to);
      } catch (error) {
        warnings.push(`Could not carry ${from} into the restored state (${describeError(error)}); it stays in the previous copy ${d.preRestore}.`);
      }
    }
  }
  return warnings;
}

/**
 * Removes the staging dirs this restore made, each after checking it is still the real directory beside its
 * destination. Never throws (it runs on failure paths too): returns a warning per dir left in place, which
 * `doctor` then reports as a stale staging copy.
 */
export function removeStaging(staged: ReadonlyArray<Pick<StagedItem, "root" | "stagingRoot" | "release">>): string[] {
  const warnings: string[] = [];
  for (const s of staged) {
    try {
      const found = checkOwnedPath(s.root, s.stagingRoot, { action: "remove the restore staging dir", allowMissing: true, expect: "dir" });
      if (found.kind !== "missing") fs.rmSync(s.stagingRoot, { recursive: true, force: true });
      s.release?.();
    } catch (error) {
      warnings.push(`Left the restore staging dir ${s.stagingRoot} in place (${describeError(error)}); \`doctor\` reports it.`);
    }
  }
  return warnings;
}

/** Where each replaced path now is: its own `.pre-restore-<ts>` copy, or (nested items) inside its outer item's copy. */
export function keptCopiesOf(done: readonly SwapDone[], plan: RestorePlan): KeptCopy[] {
  const kept: KeptCopy[] = [];
  for (const d of done) {
    if (!d.preRestore) continue;
    kept.push({ kind: d.item.kind, path: d.item.destination, keptAt: d.preRestore });
    for (const inner of plan.items.filter((i) => i.nestedIn === d.item.archivePath)) {
      const at = path.join(d.preRestore, path.relative(d.item.destination, inner.destination));
      if (pathExists(at)) kept.push({ kind: inner.kind, path: inner.destination, keptAt: at });
    }
  }
  return kept;
}
