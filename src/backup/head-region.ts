// The reserved head region in front of an archive's payload: how much room the manifest gets, what fills the rest, and the move when it outgrows it.
import fs from "node:fs";
import { OperationError } from "../core/errors.js";
import type { Compression } from "./compression.js";
import { writeFully } from "./file-writer.js";
import { PLAIN_SEGMENT_MIN } from "./file-reuse.js";
import type { WalkEntry } from "./walk-assets.js";

const READ_CHUNK = 1024 * 1024;

/** Below this much data the payload is simply moved behind the manifest: the copy costs less than the padding. */
const RESERVE_FROM_BYTES = 16 * 1024 * 1024;

/** Room kept in front of the payload for the compressed manifest entry: generous for the entries to come. */
export function headReserve(entries: readonly WalkEntry[]): number {
  const bytes = entries.reduce((n, e) => n + (e.type === "file" ? e.size : 0), 0);
  if (bytes < RESERVE_FROM_BYTES) return 0;
  const databases = entries.filter((e) => e.type === "file" && e.database).length;
  // A plain file with a body of its own also records the body and its stamp (~80 compressed bytes).
  const bodies = entries.filter((e) => e.type === "file" && !e.database && e.size >= PLAIN_SEGMENT_MIN).length;
  return 16 * 1024 + entries.length * 160 + databases * 1024 + bodies * 120;
}

const ZSTD_SKIPPABLE_MAGIC = 0x184d2a50;
/** A gzip member with an empty body and an `extra` field: 22 bytes plus the field. */
const GZIP_FILLER_MIN = 22;
const GZIP_EXTRA_MAX = 0xffff;

/**
 * Exactly `size` bytes that decompress to nothing, to fill the reserved head region behind the manifest: a zstd
 * skippable frame, or empty gzip members whose header carries an `extra` field (RFC 1952 FEXTRA). gzip, zstd,
 * GNU tar and Node skip both. Null when `size` cannot be filled (then the payload is moved instead).
 */
export function headFiller(compression: Compression, size: number): Buffer | null {
  // A plain tar has no bytes that read as nothing: the payload is moved behind the manifest instead.
  if (compression === "none") return null;
  if (compression === "zstd") {
    if (size < 8) return null;
    const frame = Buffer.alloc(size);
    frame.writeUInt32LE(ZSTD_SKIPPABLE_MAGIC, 0);
    frame.writeUInt32LE(size - 8, 4);
    return frame;
  }
  if (size < GZIP_FILLER_MIN) return null;
  const members: Buffer[] = [];
  let left = size;
  while (left > 0) {
    // Leave either nothing or a whole minimal member for the next round.
    let take = Math.min(left, GZIP_FILLER_MIN + GZIP_EXTRA_MAX);
    if (left - take > 0 && left - take < GZIP_FILLER_MIN) take -= GZIP_FILLER_MIN;
    const xlen = take - GZIP_FILLER_MIN;
    const member = Buffer.alloc(take);
    member.set([0x1f, 0x8b, 8, 0x04, 0, 0, 0, 0, 0, 0xff], 0);
    member.writeUInt16LE(xlen, 10);
    if (xlen >= 4) {
      // One subfield ("OC", zero bytes) filling the field.
      member.set([0x4f, 0x43], 12);
      member.writeUInt16LE(xlen - 4, 14);
    }
    member.set([0x03, 0x00], 12 + xlen);
    members.push(member);
    left -= take;
  }
  return Buffer.concat(members);
}

/** Copies `length` bytes at `from` to `to` within one file (overlapping ranges: in the safe direction). */
export async function moveRange(handle: fs.promises.FileHandle, from: number, length: number, to: number): Promise<void> {
  const buf = Buffer.allocUnsafeSlow(READ_CHUNK);
  const chunks = Math.ceil(length / READ_CHUNK);
  for (let k = 0; k < chunks; k += 1) {
    // Moving towards the start: front to back; towards the end: back to front.
    const i = to < from ? k : chunks - 1 - k;
    const offset = i * READ_CHUNK;
    const n = Math.min(READ_CHUNK, length - offset);
    const { bytesRead } = await handle.read(buf, 0, n, from + offset);
    if (bytesRead !== n) throw new OperationError("archive_short_read", "The temp archive ended early while it was finished; the disk may be failing.", {});
    await writeFully(handle, buf.subarray(0, n), to + offset);
  }
}
