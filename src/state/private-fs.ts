// File-system helpers that create with private modes (0700 dirs, 0600 files) instead of create-then-chmod.
import fs from "node:fs";
import path from "node:path";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** mkdir -p with 0700 for every directory it creates; existing directories are left as they are. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates an empty 0600 file if missing (so SQLite inherits the mode for the db and its sidecars). */
export function ensurePrivateFile(file: string): boolean {
  ensurePrivateDir(path.dirname(file));
  try {
    // O_EXCL already refuses an existing link; O_NOFOLLOW says so for every platform.
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0), PRIVATE_FILE_MODE));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** fsync a directory so a rename inside it is durable. */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, "r");
    fs.fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on directories; durability then rests on the file fsync.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function fileSize(file: string): number | null {
  try {
    return fs.statSync(file).size;
  } catch {
    return null;
  }
}

export function pathExists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** lstat without throwing: null when nothing is there. */
export function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch {
    return null;
  }
}

/**
 * The first symlink met walking from `root` (not itself checked) down to `target` (inclusive), component by
 * component without following anything; null when there is none (the walk stops at the first missing name).
 */
export function symlinkOnPath(root: string, target: string): string | null {
  const rel = path.relative(root, target);
  if (rel === "" || rel.startsWith(`..${path.sep}`) || rel === ".." || path.isAbsolute(rel)) return null;
  let current = root;
  for (const name of rel.split(path.sep)) {
    current = path.join(current, name);
    const st = lstatOrNull(current);
    if (!st) return null;
    if (st.isSymbolicLink()) return current;
  }
  return null;
}

/** Thrown when a write would go through a symlink or a non-directory inside a tree we own. */
export class UnsafePathError extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

/**
 * mkdir -p below `root` that never follows a link: each missing component is created 0700 on its own, and an
 * existing one must be a real directory (a symlink is refused, even one pointing back inside). `root` itself
 * is created with ensurePrivateDir when missing.
 */
export function ensurePrivateDirBelow(root: string, dir: string): void {
  const rel = path.relative(root, dir);
  if (rel.startsWith(`..${path.sep}`) || rel === ".." || path.isAbsolute(rel)) throw new UnsafePathError(dir, `${dir} is not inside ${root}`);
  ensurePrivateDir(root);
  if (rel === "") return;
  let current = root;
  for (const name of rel.split(path.sep)) {
    current = path.join(current, name);
    try {
      fs.mkdirSync(current, { mode: PRIVATE_DIR_MODE });
      continue;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const st = fs.lstatSync(current);
    if (st.isSymbolicLink()) throw new UnsafePathError(current, `${current} is a symbolic link; openclaw-state never writes through a link inside ${root}`);
    if (!st.isDirectory()) throw new UnsafePathError(current, `${current} is not a directory`);
  }
}
