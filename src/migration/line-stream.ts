// Streaming reads for legacy files: fixed-size chunks via fs.readSync, our own line splitter, hashing in the same pass.
import crypto from "node:crypto";
import fs from "node:fs";
import { OperationError } from "../core/errors.js";

/** Read size: large enough to amortize syscalls, small enough to keep memory flat. */
export const CHUNK_BYTES = 1024 * 1024;
/** A single line longer than this fails the file (SPEC §11 "huge line"): memory stays bounded. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Receives each line as a view into a buffer that is reused afterwards: consume it synchronously.
 * `end` excludes the newline and a trailing CR; `terminated` is false only for a final line without "\n".
 */
export type LineHandler = (buf: Buffer, start: number, end: number, lineNo: number, terminated: boolean) => void;

export interface StreamLinesOptions {
  chunkBytes?: number;
  maxLineBytes?: number;
  /** Every chunk as read (before splitting), e.g. to hash the file in the same pass. */
  onChunk?: (chunk: Buffer) => void;
  /** Read into this buffer (its length is the chunk size): a caller that keeps the bytes owns them. */
  buffer?: Buffer;
}

export interface StreamLinesResult {
  bytes: number;
  lines: number;
}

export class LineTooLongError extends OperationError {
  constructor(file: string, lineNo: number, maxBytes: number) {
    super("line_too_long", `${file}:${lineNo}: line is longer than ${Math.round(maxBytes / 1048576)} MiB; the file was left in place.`, { path: file });
  }
}

let shared: Buffer | null = null;

/**
 * One read buffer for every file (reads are synchronous and never nested): allocating a fresh 1 MiB
 * buffer per file made the garbage collector a measurable share of a many-small-files import.
 */
function chunkBuffer(size: number): Buffer {
  if (size !== CHUNK_BYTES) return Buffer.allocUnsafe(size);
  shared ??= Buffer.allocUnsafe(CHUNK_BYTES);
  return shared;
}

/** Splits an open file into lines with bounded memory: one chunk buffer plus the carry of one partial line. */
export function streamLines(fd: number, file: string, onLine: LineHandler, options: StreamLinesOptions = {}): StreamLinesResult {
  const chunkBytes = options.buffer?.length ?? options.chunkBytes ?? CHUNK_BYTES;
  const maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
  const buf = options.buffer ?? chunkBuffer(chunkBytes);
  let carry: Buffer[] = [];
  let carryLen = 0;
  let lineNo = 0;
  let bytes = 0;
  for (;;) {
    const n = fs.readSync(fd, buf, 0, chunkBytes, null);
    if (n === 0) break;
    bytes += n;
    const view = n === chunkBytes ? buf : buf.subarray(0, n);
    options.onChunk?.(view);
    let pos = 0;
    while (pos < n) {
      const nl = view.indexOf(NEWLINE, pos);
      if (nl === -1) {
        // Copy: `buf` is overwritten by the next read.
        carry.push(Buffer.from(view.subarray(pos, n)));
        carryLen += n - pos;
        if (carryLen > maxLine) throw new LineTooLongError(file, lineNo + 1, maxLine);
        break;
      }
      lineNo += 1;
      if (carryLen > 0) {
        carry.push(view.subarray(pos, nl));
        const whole = Buffer.concat(carry, carryLen + nl - pos);
        carry = [];
        carryLen = 0;
        if (whole.length > maxLine) throw new LineTooLongError(file, lineNo, maxLine);
        onLine(whole, 0, trimCr(whole, 0, whole.length), lineNo, true);
      } else {
        onLine(view, pos, trimCr(view, pos, nl), lineNo, true);
      }
      pos = nl + 1;
    }
  }
  if (carryLen > 0) {
    lineNo += 1;
    const whole = Buffer.concat(carry, carryLen);
    onLine(whole, 0, trimCr(whole, 0, whole.length), lineNo, false);
  }
  return { bytes, lines: lineNo };
}

function trimCr(buf: Buffer, start: number, end: number): number {
  return end > start && buf[end - 1] === CR ? end - 1 : end;
}

/** Where line 1's text starts: past a UTF-8 byte-order mark (some editors write one; JSON.parse rejects it). */
export function skipBom(buf: Buffer, start: number, end: number, lineNo: number): number {
  return lineNo === 1 && end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf ? start + 3 : start;
}

/** True when the line holds only spaces/tabs (or nothing): such lines carry no record. */
export function isBlankLine(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i += 1) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09) return false;
  }
  return true;
}

export interface FileDigest {
  sha256: string;
  sizeBytes: number;
}

/** Opens `file`, runs `use` with the fd, always closes it. */
export function withOpenFile<T>(file: string, use: (fd: number) => T): T {
  const fd = fs.openSync(file, "r");
  try {
    return use(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** sha256 and size of a whole file, streamed in chunks. */
export function hashFile(file: string, chunkBytes = CHUNK_BYTES): FileDigest {
  return withOpenFile(file, (fd) => {
    const hash = crypto.createHash("sha256");
    const buf = chunkBuffer(chunkBytes);
    let size = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, 0, chunkBytes, null);
      if (n === 0) break;
      size += n;
      hash.update(n === chunkBytes ? buf : buf.subarray(0, n));
    }
    return { sha256: hash.digest("hex"), sizeBytes: size };
  });
}
