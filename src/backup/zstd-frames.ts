// Walks a zstd stream frame by frame in front of the decoder: drops skippable frames and bounds each frame's window.
//
// libzstd allocates a frame's whole declared window (`zstd --long=31` from a pipe declares 2 GiB) and refuses any
// window over its windowLogMax. Real archives are often made with a large declared window and little data, so the
// decoder is opened with the largest window zstd defines and this walker enforces what a frame really needs instead:
// min(declared window, declared content size, what its blocks can hold so far), refused past MAX_ZSTD_WINDOW.
import { Transform, type TransformCallback } from "node:stream";
import { OperationError } from "../core/errors.js";
import { formatBytes } from "../core/format-bytes.js";

/** The most window memory a frame may need: 128 MiB, what `zstd -d` itself accepts without --long / --memory. */
export const MAX_ZSTD_WINDOW_LOG = 27;
export const MAX_ZSTD_WINDOW = 2 ** MAX_ZSTD_WINDOW_LOG;
/** The largest window log zstd defines (64-bit): what the decoder is opened with. */
export const ZSTD_WINDOW_LOG_LIMIT = 31;

const FRAME_MAGIC = 0xfd2fb528;
/** Skippable frames: magic 0x184D2A50..0x184D2A5F (what pzstd writes first), then a 4-byte size, then that many bytes. */
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const BLOCK_MAX = 128 * 1024;

export function isSkippableMagic(magic: number): boolean {
  return ((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_MAGIC;
}

/** The four first bytes start a zstd frame or a skippable frame. */
export function isZstdMagic(bytes: Buffer): boolean {
  if (bytes.length < 4) return false;
  const magic = bytes.readUInt32LE(0);
  return magic === FRAME_MAGIC || isSkippableMagic(magic);
}

/** Damaged framing (bad magic, reserved bits, truncation): the message says "corrupt" so callers classify it so. */
export class ZstdFramingError extends Error {
  readonly code = "ZSTD_error_corruption_detected";
}

/** A frame whose data needs more window than we accept: not damage, a limit, with the flag that would be needed. */
export class ZstdWindowError extends OperationError {}

function windowLogFor(bytes: number): number {
  return Math.max(10, Math.ceil(Math.log2(bytes)));
}

interface FrameInfo {
  /** Byte offset of the frame in the stream this walker saw. */
  offset: number;
  window: number;
  contentSize: number | null;
  checksum: boolean;
}

type State =
  | { at: "magic" }
  | { at: "skip-size"; offset: number }
  | { at: "skipping"; left: number }
  | { at: "frame-header"; offset: number }
  | { at: "block-header"; frame: FrameInfo; bound: number }
  | { at: "block-body"; frame: FrameInfo; bound: number; left: number; last: boolean }
  | { at: "checksum"; left: number };

/**
 * A pass-through Transform for a zstd stream: frames go on unchanged, skippable frames anywhere between frames are
 * dropped, and a frame is refused (ZstdWindowError) before the decoder is fed more of it than MAX_ZSTD_WINDOW of
 * window can hold. `label` names the archive in the message.
 */
export class ZstdFrameWalker extends Transform {
  private state: State = { at: "magic" };
  private carry = Buffer.alloc(0);
  private seen = 0;
  /** Set when the current chunk had bytes of a skippable frame (dropped, not forwarded). */
  private dropped = false;

  constructor(private readonly label: string) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.walk(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    if (this.state.at === "magic" && this.carry.length === 0) callback();
    else callback(new ZstdFramingError(`corrupt zstd stream: it ends inside a frame at byte ${this.seen} (truncated)`));
  }

  /** Takes exactly `n` header bytes from carry + chunk, or keeps what there is for the next chunk. */
  private need(n: number, chunk: Buffer, pos: number): { bytes: Buffer; pos: number } | null {
    const have = this.carry.length + (chunk.length - pos);
    if (have < n) {
      this.carry = Buffer.concat([this.carry, chunk.subarray(pos)]);
      return null;
    }
    const take = n - this.carry.length;
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk.subarray(pos, pos + take)]) : chunk.subarray(pos, pos + take);
    this.carry = Buffer.alloc(0);
    return { bytes, pos: pos + take };
  }

  private walk(chunk: Buffer): void {
    // What this chunk forwards, handed on as one write: each write to the decoder is a round trip to the libuv pool.
    const out: Buffer[] = [];
    const carriedIn = this.carry.length;
    this.dropped = false;
    let whole = false;
    try {
      this.walkInto(chunk, out);
      // Nothing carried in or held back and nothing dropped: the pieces are the chunk itself, in order, so it goes on
      // as it is. Joining them copied every byte of the archive into a fresh buffer per chunk (on Node 24, a restore
      // of 243 MiB of databases spent ~0.3 s of the main thread in that Buffer.concat).
      whole = carriedIn === 0 && this.carry.length === 0 && !this.dropped && chunk.length > 0;
    } finally {
      if (whole) this.push(chunk);
      else if (out.length === 1) this.push(out[0]);
      else if (out.length > 1) this.push(Buffer.concat(out));
    }
  }

  private walkInto(chunk: Buffer, out: Buffer[]): void {
    let pos = 0;
    while (pos < chunk.length) {
      const s = this.state;
      const start = this.seen + pos - this.carry.length;
      if (s.at === "magic") {
        const got = this.need(4, chunk, pos);
        if (!got) break;
        const magic = got.bytes.readUInt32LE(0);
        if (isSkippableMagic(magic)) {
          this.dropped = true;
          this.state = { at: "skip-size", offset: start };
          pos = got.pos;
        } else if (magic === FRAME_MAGIC) {
          // The header is re-read whole (magic included) so it is forwarded as one piece.
          this.carry = Buffer.from(got.bytes);
          this.state = { at: "frame-header", offset: start };
          pos = got.pos;
        } else {
          throw new ZstdFramingError(`corrupt zstd stream: no frame starts at byte ${start} (magic 0x${magic.toString(16).padStart(8, "0")})`);
        }
      } else if (s.at === "skip-size") {
        this.dropped = true;
        const got = this.need(4, chunk, pos);
        if (!got) break;
        const left = got.bytes.readUInt32LE(0);
        this.state = left === 0 ? { at: "magic" } : { at: "skipping", left };
        pos = got.pos;
      } else if (s.at === "skipping") {
        this.dropped = true;
        const n = Math.min(s.left, chunk.length - pos);
        pos += n;
        s.left -= n;
        if (s.left === 0) this.state = { at: "magic" };
      } else if (s.at === "frame-header") {
        // The descriptor (byte 4) says how long the header is; the header is then taken whole.
        const fhdAt = 4 - this.carry.length;
        let fhd: number;
        if (fhdAt < 0) fhd = this.carry[4]!;
        else if (pos + fhdAt < chunk.length) fhd = chunk[pos + fhdAt]!;
        else {
          this.carry = Buffer.concat([this.carry, chunk.subarray(pos)]);
          break;
        }
        const got = this.need(headerSize(fhd), chunk, pos);
        if (!got) break;
        const frame = parseFrameHeader(got.bytes, s.offset);
        this.checkNeed(frame, frame.contentSize ?? 0);
        out.push(Buffer.from(got.bytes));
        this.state = { at: "block-header", frame, bound: 0 };
        pos = got.pos;
      } else if (s.at === "block-header") {
        const got = this.need(3, chunk, pos);
        if (!got) break;
        const { last, type, size } = parseBlockHeader(got.bytes, 0);
        if (type === 3) throw new ZstdFramingError(`corrupt zstd stream: a block of the reserved type in the frame at byte ${s.frame.offset}`);
        // What the block can add to the frame's output: raw and RLE say it exactly, a compressed block at most 128 KiB.
        const bound = s.bound + (type === 2 ? Math.min(BLOCK_MAX, s.frame.window) : size);
        this.checkNeed(s.frame, bound);
        out.push(Buffer.from(got.bytes));
        const body = type === 1 ? 1 : size;
        this.state = body > 0 ? { at: "block-body", frame: s.frame, bound, left: body, last } : afterBlock(s.frame, bound, last);
        pos = got.pos;
      } else if (s.at === "block-body") {
        const n = Math.min(s.left, chunk.length - pos);
        out.push(chunk.subarray(pos, pos + n));
        pos += n;
        s.left -= n;
        if (s.left === 0) this.state = afterBlock(s.frame, s.bound, s.last);
      } else {
        const n = Math.min(s.left, chunk.length - pos);
        out.push(chunk.subarray(pos, pos + n));
        pos += n;
        s.left -= n;
        if (s.left === 0) this.state = { at: "magic" };
      }
    }
    this.seen += chunk.length;
  }

  /** Refuses the frame once the window it needs — never more than its declared window or content — passes the limit. */
  private checkNeed(frame: FrameInfo, output: number): void {
    const need = Math.min(frame.window, frame.contentSize ?? Infinity, Math.max(output, frame.contentSize ?? 0));
    if (need <= MAX_ZSTD_WINDOW) return;
    const log = windowLogFor(frame.window);
    throw new ZstdWindowError(
      "zstd_window_too_large",
      `the zstd frame at byte ${frame.offset} declares a ${formatBytes(frame.window)} window (window log ${log}) and its data needs more than the ${formatBytes(MAX_ZSTD_WINDOW)} (window log ${MAX_ZSTD_WINDOW_LOG}) openclaw-state accepts; recompress it with a smaller window: \`zstd -d --long=${log} < ${this.label} | zstd -o <new>.tar.zst\``,
    );
  }
}

function afterBlock(frame: FrameInfo, bound: number, last: boolean): State {
  if (!last) return { at: "block-header", frame, bound };
  return frame.checksum ? { at: "checksum", left: 4 } : { at: "magic" };
}

/** A block's 3-byte header at `at`: last-block flag, type (0 raw, 1 RLE, 2 compressed, 3 reserved) and size field. */
function parseBlockHeader(bytes: Buffer, at: number): { last: boolean; type: number; size: number } {
  const h = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
  return { last: (h & 1) === 1, type: (h >> 1) & 3, size: h >>> 3 };
}

/** Frame header size (magic included) from its descriptor byte. */
function headerSize(fhd: number): number {
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const dictSize = [0, 1, 2, 4][fhd & 3]!;
  const fcsSize = [single ? 1 : 0, 2, 4, 8][fcsFlag]!;
  return 4 + 1 + (single ? 0 : 1) + dictSize + fcsSize;
}

function parseFrameHeader(h: Buffer, offset: number): FrameInfo {
  const fhd = h[4]!;
  if (fhd & 0x08) throw new ZstdFramingError(`corrupt zstd stream: the frame at byte ${offset} sets a reserved header bit`);
  const single = (fhd >> 5) & 1;
  const fcsFlag = fhd >> 6;
  let p = 5;
  let window = 0;
  if (!single) {
    const wd = h[p++]!;
    const base = 2 ** (10 + (wd >> 3));
    window = base + (base / 8) * (wd & 7);
  }
  p += [0, 1, 2, 4][fhd & 3]!;
  const fcsSize = [single ? 1 : 0, 2, 4, 8][fcsFlag]!;
  let contentSize: number | null = null;
  if (fcsSize === 1) contentSize = h[p]!;
  else if (fcsSize === 2) contentSize = h.readUInt16LE(p) + 256;
  else if (fcsSize === 4) contentSize = h.readUInt32LE(p);
  else if (fcsSize === 8) contentSize = Number(h.readBigUInt64LE(p));
  // A single-segment frame's window is its content.
  if (single) window = contentSize!;
  return { offset, window, contentSize, checksum: ((fhd >> 2) & 1) === 1 };
}

/**
 * Whether `bytes` is one or more whole zstd frames and nothing else (no skippable frame, no trailing bytes): the
 * framing only, walked by header sizes; the decoder checks the content. For blocks this tool just compressed.
 */
export function isWholeZstdFrames(bytes: Buffer): boolean {
  let pos = 0;
  try {
    while (pos < bytes.length) {
      if (pos + 5 > bytes.length || bytes.readUInt32LE(pos) !== FRAME_MAGIC) return false;
      const size = headerSize(bytes[pos + 4]!);
      if (pos + size > bytes.length) return false;
      const frame = parseFrameHeader(bytes.subarray(pos, pos + size), pos);
      pos += size;
      for (let last = false; !last; ) {
        if (pos + 3 > bytes.length) return false;
        const block = parseBlockHeader(bytes, pos);
        if (block.type === 3) return false;
        last = block.last;
        pos += 3 + (block.type === 1 ? 1 : block.size);
      }
      pos += frame.checksum ? 4 : 0;
    }
  } catch {
    return false; // A reserved header bit.
  }
  return pos === bytes.length && bytes.length > 0;
}
