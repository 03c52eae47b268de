// Reading a file that must be a regular file without ever blocking: a FIFO, socket, device or directory at
// the path is named and refused, never opened for a blocking read.
import fs from "node:fs";
import { OperationError } from "./errors.js";

export type FileKind = "file" | "directory" | "symlink" | "fifo" | "socket" | "character-device" | "block-device" | "unknown";

export function fileKindOf(st: fs.Stats): FileKind {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFIFO()) return "fifo";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character-device";
  if (st.isBlockDevice()) return "block-device";
  return "unknown";
}

const KIND_TEXT: Record<FileKind, string> = {
  file: "a regular file",
  directory: "a directory",
  symlink: "a symlink",
  fifo: "a FIFO (named pipe)",
  socket: "a socket",
  "character-device": "a character device",
  "block-device": "a block device",
  unknown: "a special file",
};

/** "a regular file", "a FIFO (named pipe)", … for messages. */
export function describeFileKind(kind: FileKind): string {
  return KIND_TEXT[kind];
}

export interface PathKind {
  /** null when nothing is there (a dangling symlink has kind "symlink" and target null). */
  kind: FileKind | null;
  /** For a symlink: what it points at (null when dangling). */
  target: FileKind | null;
}

/** What is at `p` (lstat), and through a final symlink what it leads to (stat); never opens it. */
export function pathKind(p: string): PathKind {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return { kind: null, target: null };
  }
  const kind = fileKindOf(st);
  if (kind !== "symlink") return { kind, target: kind };
  try {
    return { kind, target: fileKindOf(fs.statSync(p)) };
  } catch {
    return { kind, target: null };
  }
}

/** "a FIFO (named pipe)", "a symlink to a regular file", "a dangling symlink". */
export function describePathKind(k: PathKind): string {
  if (k.kind === null) return "missing";
  if (k.kind !== "symlink") return describeFileKind(k.kind);
  return k.target === null ? "a dangling symlink" : `a symlink to ${describeFileKind(k.target)}`;
}

/** A path that should be a regular file is something else: `kind` says what (`--json` error code `not_a_regular_file`). */
export class NotRegularFileError extends OperationError {
  readonly kind: PathKind;
  constructor(file: string, kind: PathKind, what = "file") {
    super("not_a_regular_file", `The ${what} ${file} is ${describePathKind(kind)}, not a regular file; it was not read.`, { path: file });
    this.kind = kind;
  }
}

export interface SafeReadOptions {
  /** Follow a final symlink (to a regular file only). Default true: configs are often dotfile links. */
  followSymlinks?: boolean;
  /** Refuse files bigger than this (bytes). */
  maxBytes?: number;
  /** Names the file in messages ("config file", "legacy source"). */
  what?: string;
}

/**
 * Reads a regular file, never blocking: it checks the type first (no open at all for a FIFO or device),
 * then opens with O_NONBLOCK (| O_NOFOLLOW when not following) and checks the opened descriptor again,
 * so a file swapped for a FIFO in between is refused too. Throws NotRegularFileError, or the fs error
 * (ENOENT, EACCES…) as is.
 */
export function readRegularFileSync(file: string, options: SafeReadOptions = {}): Buffer {
  const follow = options.followSymlinks ?? true;
  const what = options.what ?? "file";
  const before = pathKind(file);
  if (before.kind === null) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: "ENOENT", path: file });
  const effective = before.kind === "symlink" && follow ? before.target : before.kind;
  if (effective !== "file") throw new NotRegularFileError(file, before, what);
  const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (follow ? 0 : fs.constants.O_NOFOLLOW);
  const fd = fs.openSync(file, flags);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new NotRegularFileError(file, { kind: fileKindOf(st), target: fileKindOf(st) }, what);
    if (options.maxBytes !== undefined && st.size > options.maxBytes) {
      throw new OperationError("file_too_large", `The ${what} ${file} is ${st.size} bytes, above the ${options.maxBytes}-byte limit; it was not read.`, { path: file });
    }
    return readAll(fd, st.size, options.maxBytes);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads to EOF (the size may change while reading), bounded by maxBytes when given. */
function readAll(fd: number, sizeHint: number, maxBytes: number | undefined): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let chunk = Buffer.allocUnsafe(Math.max(4096, Math.min(sizeHint + 1, 1 << 20)));
  for (;;) {
    const n = fs.readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    total += n;
    if (maxBytes !== undefined && total > maxBytes) throw new OperationError("file_too_large", `The file grew past the ${maxBytes}-byte limit while being read; it was not read.`);
    chunks.push(Buffer.from(chunk.subarray(0, n)));
    if (n === chunk.length) chunk = Buffer.allocUnsafe(Math.min(chunk.length * 2, 1 << 24));
  }
  return Buffer.concat(chunks, total);
}

/** readRegularFileSync as UTF-8 text. */
export function readRegularTextSync(file: string, options: SafeReadOptions = {}): string {
  return readRegularFileSync(file, options).toString("utf8");
}

/**
 * Up to `n` leading bytes of a regular file, opened without following a final link and without blocking (a FIFO
 * or device swapped in is refused by fstat after the open); null when it is not a regular file or cannot be read.
 */
export function readLeadingBytes(file: string, n: number): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(n);
    return buf.subarray(0, fs.readSync(fd, buf, 0, n, 0));
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
