// `backup verify -` / `backup restore -`: the archive on stdin is spooled to a private temp file, then read as a file.
//
// Why a file and not a one-pass stream: restore reads the manifest before it plans, asks and checks room, then reads the
// archive again while it extracts; verify holds entries to a manifest that must come first. Spooling keeps every one
// of those checks exactly as they are for a file: nothing is restored that was not verified from the spooled bytes.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { describeError, OperationError } from "../core/errors.js";
import { createPrivateStaging, privateTempParent } from "./private-temp.js";

/** Free space left in the temp dir's file system, at least, while spooling (the rest of the machine needs some too). */
export const SPOOL_RESERVE_BYTES = 64 * 1024 * 1024;
/** How often (bytes written) the free space is checked again. */
const CHECK_EVERY = 16 * 1024 * 1024;

export interface SpooledArchive {
  /** The private copy (0600, in a 0700 staging dir). */
  file: string;
  bytes: number;
  /** sha256 of the bytes read from the input: compare with the producer's (`backup create --output -` prints it). */
  sha256: string;
}

export interface SpoolOptions {
  /** Parent of the staging dir (default: the OS temp dir, `TMPDIR`). */
  tempDir?: string;
  /** Free bytes the spool never eats into (default SPOOL_RESERVE_BYTES). */
  reserveBytes?: number;
}

function freeBytes(dir: string): number | null {
  try {
    const st = fs.statfsSync(dir);
    return Number(st.bavail) * Number(st.bsize);
  } catch {
    return null;
  }
}

function noRoom(parent: string, bytes: number, reserve: number): OperationError {
  return new OperationError(
    "insufficient_space",
    `Not enough room in ${parent} to hold the archive read from stdin (${bytes} bytes so far; ${reserve} bytes are kept free); set TMPDIR to a directory on a file system with room, or save the archive to a file first. Nothing was restored.`,
    { path: parent },
  );
}

/**
 * Copies `input` into a private temp file and runs `fn` on it; the temp dir is removed on every exit path (return,
 * throw, SIGINT/SIGTERM/SIGHUP). An empty input is refused: no archive arrived (the command before the pipe failed?).
 */
export async function withSpooledArchive<T>(input: Readable, fn: (spool: SpooledArchive) => Promise<T>, options: SpoolOptions = {}): Promise<T> {
  const parent = options.tempDir ?? privateTempParent();
  const reserve = options.reserveBytes ?? SPOOL_RESERVE_BYTES;
  const staging = createPrivateStaging(parent);
  try {
    const file = path.join(staging.dir, "stdin-archive");
    const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
    const hash = crypto.createHash("sha256");
    let bytes = 0;
    let nextCheck = 0;
    try {
      for await (const chunk of input as AsyncIterable<Buffer | string>) {
        const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
        if (bytes + buf.length >= nextCheck) {
          const free = freeBytes(staging.dir);
          if (free !== null && free - buf.length < reserve) throw noRoom(parent, bytes, reserve);
          nextCheck = bytes + Math.min(CHECK_EVERY, Math.max(0, (free ?? Infinity) - reserve) / 2);
        }
        for (let off = 0; off < buf.length; ) off += fs.writeSync(fd, buf, off, buf.length - off);
        hash.update(buf);
        bytes += buf.length;
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOSPC") throw noRoom(parent, bytes, reserve);
      if (error instanceof OperationError) throw error;
      throw new OperationError("archive_unreadable", `Cannot read the archive from stdin (${describeError(error)}); nothing was changed.`, { cause: error });
    } finally {
      fs.closeSync(fd);
    }
    if (bytes === 0) {
      throw new OperationError("archive_invalid", "No archive arrived on stdin (0 bytes): the command before the pipe wrote nothing (did it fail?); nothing was changed.", {});
    }
    return await fn({ file, bytes, sha256: hash.digest("hex") });
  } finally {
    staging.dispose();
  }
}
