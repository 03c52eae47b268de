// Reset's own safety rules around the shared boundary check: refuse dangerous roots, never take the state dir or backups along.
import fs from "node:fs";
import path from "node:path";
import { OperationError } from "../core/errors.js";
import { checkOwnedPath, UnsafeOwnedPathError, type OwnedPath } from "../state/owned-path.js";
import { isPathInside, type StatePaths } from "../state/paths.js";

export type EntryType = "file" | "dir" | "symlink" | "other";

/** What is at `p` without following a final symlink; null when nothing is there. */
export function entryType(p: string): EntryType | null {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return null;
  }
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "dir";
  if (st.isFile()) return "file";
  return "other";
}

/** realpath of the deepest existing ancestor with the missing rest appended: where `p` really lands. */
export function realpathDeep(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync.native(abs);
  } catch {
    const parent = path.dirname(abs);
    if (parent === abs) return abs;
    return path.join(realpathDeep(parent), path.basename(abs));
  }
}

/** Where removing `p` acts: its parent resolved through links, its own last component not followed. */
export function removalLocation(p: string): string {
  const abs = path.resolve(p);
  const parent = path.dirname(abs);
  return parent === abs ? abs : path.join(realpathDeep(parent), path.basename(abs));
}

function unsafe(message: string, p: string): OperationError {
  return new OperationError("reset_unsafe_path", message, { path: p });
}

function isFilesystemRoot(p: string): boolean {
  return path.parse(p).root === p;
}

/** `/`, the home dir, or anything containing the home dir: never a reset root or target, lexically or via links. */
function assertNotProtected(p: string, label: string, paths: StatePaths): void {
  const abs = path.resolve(p);
  const candidates = [abs, removalLocation(abs)];
  const homes = [path.resolve(paths.homeDir), realpathDeep(paths.homeDir)];
  for (const c of candidates) {
    if (isFilesystemRoot(c)) throw unsafe(`Refusing to reset: the ${label} ${p} is the filesystem root; set it to the real OpenClaw location and retry.`, p);
    for (const home of homes) {
      if (isPathInside(c, home)) {
        throw unsafe(`Refusing to reset: the ${label} ${p} is (or contains) the home directory ${paths.homeDir}; point it at the real OpenClaw location and retry.`, p);
      }
    }
  }
}

export interface RootCheckOptions {
  /** A directory root (the state dir) must not itself be a symlink: everything under it would resolve elsewhere. */
  noSymlink?: boolean;
}

/** Checks a resolved location (state dir, or a config/credentials path outside it) before anything is planned in it. */
export function assertSafeRoot(root: string, label: string, paths: StatePaths, options: RootCheckOptions = {}): void {
  assertNotProtected(root, label, paths);
  if (options.noSymlink && entryType(root) === "symlink") {
    let target = "";
    try {
      target = realpathDeep(root);
    } catch {
      // A dangling link: the message still names the link.
    }
    throw unsafe(
      `Refusing to reset: the ${label} ${root} is a symlink${target ? ` to ${target}` : ""} and reset never works through links; run it with --state-dir ${target || "<the real directory>"} if that is the state to reset.`,
      root,
    );
  }
}

export interface TargetCheck {
  path: string;
  /** The location the path must stay inside: the state dir, or the config/credentials path itself. */
  root: string;
  /** The state dir itself may be a target (scope full); nothing else may contain it. */
  isStateDir?: boolean;
}

/** The boundary checkOwnedPath walks from: the root, or its parent when the target is the root itself (state dir, outside config). */
function boundaryOf(target: TargetCheck): string {
  const p = path.resolve(target.path);
  const root = path.resolve(target.root);
  return p === root ? path.dirname(root) : root;
}

/**
 * Refuses a planned removal: a protected path (`/`, home), anything checkOwnedPath refuses (outside its root,
 * a symlinked parent, a FIFO or device), or a path that would take the state dir or the backup dir with it.
 * Returns what is there now (kind "missing" when it is already gone).
 */
export function assertSafeTarget(target: TargetCheck, paths: StatePaths): OwnedPath {
  const p = path.resolve(target.path);
  assertNotProtected(p, "path", paths);
  let owned: OwnedPath;
  try {
    // The one boundary check (each component lstat'ed, no link followed); a final link is removed as a link.
    owned = checkOwnedPath(boundaryOf(target), p, { action: "remove", allowSymlink: true, allowMissing: true });
  } catch (error) {
    if (error instanceof UnsafeOwnedPathError) {
      throw new OperationError("reset_unsafe_path", `Refusing to remove ${p}: ${error.reason}; nothing was removed — fix or remove that path by hand, then retry.`, { path: p, cause: error });
    }
    throw error;
  }
  // Reset-specific: what the removal would take with it, lexically and through links in the root's own parents.
  const real = removalLocation(p);
  if (!target.isStateDir && (isPathInside(p, paths.stateDir) || isPathInside(real, realpathDeep(paths.stateDir)))) {
    throw unsafe(`Refusing to remove ${p}: it contains the state dir ${paths.stateDir}; check OPENCLAW_CONFIG_PATH / OPENCLAW_OAUTH_DIR.`, p);
  }
  if (isPathInside(p, paths.backupDir) || isPathInside(real, realpathDeep(paths.backupDir))) {
    throw unsafe(`Refusing to remove ${p}: it contains the backup dir ${paths.backupDir}, which reset never removes.`, p);
  }
  return owned;
}

export type RemoveOutcome = "removed" | "missing";

/**
 * Removes one path without following links: a symlink is unlinked, a directory removed with its contents (links
 * inside unlinked). `emptyOnly` (the state dir itself): rmdir, so whatever reset kept inside can never go with it.
 */
export function removeNoFollow(p: string, options: { emptyOnly?: boolean } = {}): RemoveOutcome {
  const type = entryType(p);
  if (type === null) return "missing";
  if (type === "dir") {
    if (options.emptyOnly) fs.rmdirSync(p);
    else fs.rmSync(p, { recursive: true, force: false });
  } else fs.unlinkSync(p);
  return "removed";
}
