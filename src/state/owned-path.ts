// The one boundary check for every path we move or delete: resolved once, each component lstat'ed from a root we own.
import fs from "node:fs";
import path from "node:path";
import { OperationError } from "../core/errors.js";
import { ensurePrivateDirBelow, UnsafePathError } from "./private-fs.js";

export type OwnedKind = "file" | "dir" | "symlink" | "missing";

export interface OwnedPath {
  /** The absolute, normalized path (never realpath'ed: the walk below proved no component is a link). */
  path: string;
  kind: OwnedKind;
  /** lstat of the final component; null when it is missing. */
  stat: fs.Stats | null;
}

export interface OwnedPathOptions {
  /** What the caller is about to do, for the message ("move", "delete", "retire" …). */
  action: string;
  /** The final component may be a symlink (it is then acted on as a link, never followed). Default false. */
  allowSymlink?: boolean;
  /** Nothing there is fine (kind "missing"); default false (refused with the reason). */
  allowMissing?: boolean;
  /** The kind the caller needs: "file" refuses a dir and vice versa; default "any" (file or dir). */
  expect?: "file" | "dir" | "any";
  /** The operator's next step, appended to the refusal ("remove the link, then run it again"). */
  next?: string;
}

/** A path that failed the boundary check: code `unsafe_path`, exit 1; the message names the path, the reason and that nothing was touched. */
export class UnsafeOwnedPathError extends OperationError {
  readonly reason: string;
  constructor(target: string, reason: string, action: string, next?: string) {
    super("unsafe_path", `Refusing to ${action} ${target}: ${reason}; nothing was touched there${next ? `. ${next}` : "."}`, { path: target });
    this.reason = reason;
  }
}

function describeKind(st: fs.Stats): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a regular file or directory";
}

/**
 * Checks `target` against the boundary `root` without following any link: `target` must be inside `root`
 * (lexically), and every component from `root` down to its parent must be a real directory (a symlinked parent,
 * even one pointing back inside, is refused: what it points at is not ours to decide). The final component must be
 * a regular file or directory (or a link, when allowed); FIFOs, sockets and devices are refused. `root` itself is
 * the caller's own boundary and is not checked here (it may be a link the operator chose, e.g. a state dir on
 * another disk). Returns what is there; throws UnsafeOwnedPathError otherwise.
 */
export function checkOwnedPath(root: string, target: string, options: OwnedPathOptions): OwnedPath {
  const base = path.resolve(root);
  const abs = path.resolve(target);
  const rel = path.relative(base, abs);
  if (rel === "") throw new UnsafeOwnedPathError(abs, `it is the boundary ${base} itself`, options.action, options.next);
  if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
    throw new UnsafeOwnedPathError(abs, `it is not inside ${base}`, options.action, options.next);
  }
  const names = rel.split(path.sep);
  let current = base;
  for (let i = 0; i < names.length - 1; i += 1) {
    current = path.join(current, names[i]!);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && options.allowMissing) return { path: abs, kind: "missing", stat: null };
      throw new UnsafeOwnedPathError(abs, `its parent ${current} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, options.action, options.next);
    }
    if (st.isSymbolicLink()) throw new UnsafeOwnedPathError(abs, `its parent ${current} is a symbolic link (never followed out of ${base})`, options.action, options.next);
    if (!st.isDirectory()) throw new UnsafeOwnedPathError(abs, `its parent ${current} is not a directory`, options.action, options.next);
  }
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      if (options.allowMissing) return { path: abs, kind: "missing", stat: null };
      throw new UnsafeOwnedPathError(abs, "nothing is there", options.action, options.next);
    }
    throw new UnsafeOwnedPathError(abs, `it cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, options.action, options.next);
  }
  const expect = options.expect ?? "any";
  if (st.isSymbolicLink()) {
    if (!options.allowSymlink) throw new UnsafeOwnedPathError(abs, "it is a symbolic link (never followed)", options.action, options.next);
    return { path: abs, kind: "symlink", stat: st };
  }
  if (st.isFile()) {
    if (expect === "dir") throw new UnsafeOwnedPathError(abs, "it is a file, not a directory", options.action, options.next);
    return { path: abs, kind: "file", stat: st };
  }
  if (st.isDirectory()) {
    if (expect === "file") throw new UnsafeOwnedPathError(abs, "it is a directory, not a file", options.action, options.next);
    return { path: abs, kind: "dir", stat: st };
  }
  throw new UnsafeOwnedPathError(abs, `it is ${describeKind(st)}`, options.action, options.next);
}

/** checkOwnedPath for callers that report instead of throwing: the reason, or null when the path passes. */
export function ownedPathProblem(root: string, target: string, options: OwnedPathOptions): string | null {
  try {
    checkOwnedPath(root, target, options);
    return null;
  } catch (error) {
    if (error instanceof UnsafeOwnedPathError) return error.reason;
    throw error;
  }
}

/**
 * Readies `destination` for a rename into it: its missing parents are created 0700 below `root` one by one
 * (never through a link), every component is then checked, and nothing may be at `destination` itself (a rename
 * would replace it). `made` caches directories already created by this caller (a batch of moves).
 */
export function prepareOwnedDestination(root: string, destination: string, action: string, made?: Set<string>): string {
  const dir = path.dirname(path.resolve(destination));
  if (!made?.has(dir)) {
    try {
      ensurePrivateDirBelow(path.resolve(root), dir);
    } catch (error) {
      if (error instanceof UnsafePathError) throw new UnsafeOwnedPathError(path.resolve(destination), error.message, action);
      throw error;
    }
    made?.add(dir);
  }
  // The cache only skips the mkdir: every component is lstat'ed again for every move.
  const owned = checkOwnedPath(root, destination, { action, allowMissing: true, allowSymlink: true });
  if (owned.kind !== "missing") throw new UnsafeOwnedPathError(owned.path, `something is already there (${owned.kind})`, action);
  return owned.path;
}

/**
 * Removes a file we own below `root` (a temp file, a retired source): checked first, never followed; a missing
 * file is fine. Returns the reason it was left in place, or null when it is gone. Never throws for a refused
 * path, so it can run in cleanup code without hiding the error being handled.
 */
export function removeOwnedFile(root: string, file: string, action = "delete"): string | null {
  const problem = ownedPathProblem(root, file, { action, allowMissing: true, expect: "file" });
  if (problem !== null) return problem;
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return `it could not be removed (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  return null;
}

/**
 * Why an existing database at `file` must not be opened, or null (also when nothing is there): below `root`, the file
 * and its -wal/-shm must be regular files reached without a link (SQLite writes the sidecars and checkpoints wherever
 * a link points); elsewhere (no `root`, or a path outside it) what the path reaches must be a regular file. A FIFO or
 * device is refused everywhere: an open or first read would block. Reasons read "it is …", "its parent … is …" or
 * "its sidecar …: it is …". The one check the storage core's open, the raw lease handle and create's ledger share.
 */
export function databasePathProblem(root: string | undefined, file: string): string | null {
  const rel = root === undefined ? ".." : path.relative(root, file);
  const inside = rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
  for (const candidate of [file, `${file}-wal`, `${file}-shm`]) {
    let problem: string | null;
    if (inside) problem = ownedPathProblem(root!, candidate, { action: "open", expect: "file", allowMissing: true });
    else {
      const st = fs.statSync(candidate, { throwIfNoEntry: false });
      problem = !st || st.isFile() ? null : `it is ${describeKind(st)}`;
    }
    if (problem) return candidate === file ? problem : `its sidecar ${candidate}: ${problem}`;
  }
  return null;
}
