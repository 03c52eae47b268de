// Archive compression (gzip or zstd): what this runtime supports, names, magic-byte detection, block codecs, decoders.
//
// zstd arrived in node:zlib in Node 22.15 / 23.8. The project still runs on Node 20, whose @types/node has no
// zstd declarations, so the zstd functions are looked up at run time and typed here. Where node:zlib has no zstd,
// zstd archives are read through the zstd CLI when there is one (zstd-child-decoder.ts); OPENCLAW_STATE_ZSTD_CLI=1
// also sends the long reads of verify / restore there on a Node with zstd (less wall, more CPU: measured).
import fs from "node:fs";
import stream, { type Duplex, type Transform } from "node:stream";
import zlib from "node:zlib";
import { NotFoundError, OperationError, UsageError } from "../core/errors.js";
import { ZstdChildDecoder, zstdCliMode } from "./zstd-child-decoder.js";
import { isZstdMagic, ZSTD_WINDOW_LOG_LIMIT, ZstdFrameWalker, ZstdWindowError } from "./zstd-frames.js";

/** "none": a plain tar (deduplicating stores such as restic chunk it by content; compressed data defeats that). */
export type Compression = "gzip" | "zstd" | "none";
export const COMPRESSIONS: readonly Compression[] = ["zstd", "gzip", "none"];

interface ZstdOptions {
  chunkSize?: number;
  maxOutputLength?: number;
  params?: Record<number, number>;
}
interface ZstdApi {
  zstdCompress(buf: Buffer, options: ZstdOptions, callback: (error: Error | null, result: Buffer) => void): void;
  zstdDecompress(buf: Buffer, options: ZstdOptions, callback: (error: Error | null, result: Buffer) => void): void;
  createZstdDecompress(options?: ZstdOptions): Transform;
  zstdDecompressSync?(buf: Buffer, options: ZstdOptions): Buffer;
}

/** Parameter ids from zstd.h (stable ABI); Node exposes them only on versions that have zstd. */
const ZSTD_C_COMPRESSION_LEVEL = 100;
const ZSTD_C_CHECKSUM_FLAG = 201;
const ZSTD_D_WINDOW_LOG_MAX = 100;
const ZSTD_LEVEL = 1;

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

function zstdApi(): ZstdApi | null {
  const z = zlib as unknown as Partial<ZstdApi>;
  return typeof z.zstdCompress === "function" && typeof z.zstdDecompress === "function" && typeof z.createZstdDecompress === "function" ? (z as ZstdApi) : null;
}

/** True when this Node has zstd in node:zlib (≥ 22.15). */
export function zstdSupported(): boolean {
  return zstdApi() !== null;
}

/** zstd where the runtime has it (smaller and several times faster), gzip otherwise. */
export function defaultCompression(): Compression {
  return zstdSupported() ? "zstd" : "gzip";
}

export const ARCHIVE_EXTENSIONS: Record<Compression, string> = { gzip: ".tar.gz", zstd: ".tar.zst", none: ".tar" };

/** Matches every archive file name we write or read (`.tar.gz`, `.tgz`, `.tar.zst`, `.tzst`, `.tar`). */
export const ARCHIVE_NAME_PATTERN = /\.(tar\.gz|tgz|tar\.zst|tzst|tar)$/i;

/** The compression a file name's extension promises, or null (used to name outputs, never to read). */
export function compressionForName(file: string): Compression | null {
  if (/\.(tar\.gz|tgz)$/i.test(file)) return "gzip";
  if (/\.(tar\.zst|tzst)$/i.test(file)) return "zstd";
  if (/\.tar$/i.test(file)) return "none";
  return null;
}

/** Node version requirement, phrased once for every message. */
export const ZSTD_REQUIREMENT = "Node.js 22.15 or newer";

/** The flag value as a Compression, or a usage error (also when this runtime lacks zstd). */
export function parseCompression(raw: string): Compression {
  const value = raw.trim().toLowerCase();
  if (value !== "zstd" && value !== "gzip" && value !== "none") {
    throw new UsageError(`Invalid --compression value ${JSON.stringify(raw)}: use zstd, gzip or none (for example --compression gzip).`, "invalid_option");
  }
  return value;
}

/** Refuses zstd on a runtime without it: one line with the requirement and the way out. */
export function checkCompressionAvailable(compression: Compression): void {
  if (compression === "zstd" && !zstdSupported()) {
    throw new UsageError(`zstd compression needs ${ZSTD_REQUIREMENT} (this is ${process.version}); use --compression gzip or a newer Node.`, "zstd_unsupported");
  }
}

/** Bytes a reader passes to compressionOfMagic: a plain tar is recognized by the ustar magic at offset 257. */
export const MAGIC_BYTES = 512;

/** The compression a file's first bytes announce ("none": a plain ustar/pax/GNU tar), or null when none of them. */
export function compressionOfMagic(magic: Buffer): Compression | null {
  if (magic.length >= 2 && magic.subarray(0, 2).equals(GZIP_MAGIC)) return "gzip";
  // A zstd frame, or a skippable frame (pzstd starts every file with one).
  if (isZstdMagic(magic)) return "zstd";
  if (magic.length >= 262 && magic.subarray(257, 262).toString("latin1") === "ustar") return "none";
  return null;
}

/**
 * The compression of `file` from its first bytes (never from its name); null when it is neither, or not a
 * regular file. Opened non-blocking, so a FIFO swapped in for the file cannot hang the caller.
 */
export function sniffCompression(file: string): Compression | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new NotFoundError(`Archive ${file} does not exist; check the path (\`openclaw-state backup list\` shows known archives).`, { path: file });
    throw error;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(MAGIC_BYTES);
    const n = fs.readSync(fd, buf, 0, MAGIC_BYTES, 0);
    return compressionOfMagic(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
}

/** How a decoder will be used. */
export interface DecodeOptions {
  /**
   * The caller reads many MiB (a whole verify / restore pass, a large range): with OPENCLAW_STATE_ZSTD_CLI=1, zstd
   * then goes through the zstd CLI (a process start is ~ms). Short reads (a manifest, one block) stay in-process,
   * except on a Node without zstd, where the CLI is the only decoder.
   */
  long?: boolean;
}

/** How the read path turns archive bytes into tar bytes. */
export interface Decompressor {
  name: Compression;
  /** A streaming decoder; throws the one-line zstd_unsupported error when there is no zstd decoder at all. */
  create(options?: DecodeOptions): Duplex;
  /** True when `error` means damaged or truncated compressed data (not an I/O failure). */
  isCorrupt(error: unknown): boolean;
}

/** The decoder for an archive whose first bytes are `magic` (detected, never guessed from the name), or null. */
export function decompressorFor(magic: Buffer, archivePath: string): Decompressor | null {
  const compression = compressionOfMagic(magic);
  return compression ? { name: compression, create: (options) => createDecompressor(compression, archivePath, options), isCorrupt: isCorruptStreamError } : null;
}

/**
 * A streaming decoder for `compression`; a zstd archive with neither node:zlib zstd nor the zstd CLI is one clear
 * error. zstd goes through the frame walker first: skippable frames are dropped and each frame's window is bounded by
 * what its data needs (ZstdWindowError past MAX_ZSTD_WINDOW), so the decoder behind it (node:zlib's, or the zstd CLI:
 * on a Node without zstd, or for a long read when asked) may accept any window zstd defines.
 */
export function createDecompressor(compression: Compression, archivePath: string, options: DecodeOptions = {}): Duplex {
  if (compression === "gzip") {
    const gunzip = zlib.createGunzip({ chunkSize: decodeChunk });
    ownBuffers.set(gunzip, decodeChunk);
    return gunzip;
  }
  if (compression === "none") return new stream.PassThrough({ highWaterMark: 1024 * 1024 });
  const api = zstdApi();
  const mode = zstdCliMode();
  const child = (options.long && mode === "on") || (!api && mode !== "off") ? ZstdChildDecoder.start() : null;
  if (!child && !api) {
    throw new OperationError(
      "zstd_unsupported",
      `${archivePath} is zstd-compressed and reading it needs ${ZSTD_REQUIREMENT} or the zstd command on PATH (this is ${process.version}); run the command with a newer Node, or unpack it by hand with \`zstd -d < ${archivePath} | tar x\`.`,
      { path: archivePath },
    );
  }
  const decoder = child ?? api!.createZstdDecompress({ chunkSize: decodeChunk, params: { [ZSTD_D_WINDOW_LOG_MAX]: ZSTD_WINDOW_LOG_LIMIT } });
  // stream.compose: experimental in Node 20 (there at run time), stable from 22; Node 20's typings lack it.
  const compose = (stream as unknown as { compose(...streams: Duplex[]): Duplex }).compose;
  const composed = compose(new ZstdFrameWalker(archivePath), decoder);
  if (!child) ownBuffers.set(composed, decodeChunk);
  return composed;
}

/**
 * A node:zlib zstd decoder for the blocks this tool compresses itself (ZstdBlockChecker), whose output chunks
 * releaseDecodedChunk may free; null when this Node's zlib has no zstd.
 */
export function createOwnZstdDecoder(): Duplex | null {
  const api = zstdApi();
  if (!api) return null;
  const decoder = api.createZstdDecompress({ chunkSize: decodeChunk });
  ownBuffers.set(decoder, decodeChunk);
  return decoder;
}

/** Output chunk of the streaming decoders: 1 MiB, each chunk one round trip to the libuv pool (setDecodeChunkForTests). */
let decodeChunk = 1024 * 1024;

/** Streams whose output chunks are slices of node:zlib's own output buffers (not the zstd CLI's, not a PassThrough's), with their size. */
const ownBuffers = new WeakMap<Duplex, number>();

const transfer = (ArrayBuffer.prototype as { transfer?: (this: ArrayBuffer, length?: number) => ArrayBuffer }).transfer;

/**
 * Frees the memory under `chunk` now rather than at V8's next full collection, when it is the last slice of one of
 * `decoder`'s output buffers and the caller is done with every slice of that buffer; returns whether it did.
 *
 * node:zlib decodes into a fresh buffer of the stream's chunkSize and hands out slices of it; once a slice reaches
 * the buffer's end it allocates the next one and never touches the old one again. Those buffers live outside V8's
 * heap and were freed only by its collections, so a pass over an archive faulted in fresh memory for every MiB and
 * kept V8 collecting (docs/performance.md, eleventh pass: decoding and hashing 168 MB took 0.74–0.84 CPU-s and peaked
 * at 116–126 MiB; with the buffers released, 0.46–0.48 CPU-s and 87–88 MiB). Detaching the buffer
 * (ArrayBuffer.prototype.transfer, Node 22+: a no-op before) frees it at once, so a caller must never release a
 * chunk while anything still holds a slice of it: whoever keeps decoded bytes past the next read copies them.
 */
export function releaseDecodedChunk(decoder: Duplex, chunk: Buffer): boolean {
  const size = ownBuffers.get(decoder);
  if (!transfer || size === undefined) return false;
  const buffer = chunk.buffer as ArrayBuffer;
  // Only a buffer of the decoder's own size can be one of its buffers; Buffer's shared pool is never released.
  if (buffer.byteLength !== size || buffer.byteLength === Buffer.poolSize || chunk.byteOffset + chunk.length !== buffer.byteLength) return false;
  transfer.call(buffer, 0);
  onRelease?.();
  return true;
}

/**
 * Frees a block codec's output (compressBlock, compressSmallBlock) once it has been written and hashed: node:zlib's
 * one-shot calls return a slice of their own output buffer, or a concatenation of such slices, which nothing else
 * holds once the call has returned. Buffer's shared pool (small outputs) is never released.
 */
export function releaseCodecOutput(output: Buffer): boolean {
  const buffer = output.buffer as ArrayBuffer;
  if (!transfer || buffer.byteLength === Buffer.poolSize || buffer.byteLength < Buffer.poolSize >>> 1) return false;
  transfer.call(buffer, 0);
  return true;
}

let onRelease: (() => void) | undefined;

/**
 * Tests: a small decoder chunk, so chunk boundaries (and releases) fall inside tar headers, file heads and the
 * manifest; `released` is told of each release. Returns the function that puts the defaults back.
 */
export function setDecodeChunkForTests(bytes: number, released?: () => void): () => void {
  const before = decodeChunk;
  decodeChunk = bytes;
  onRelease = released;
  return () => {
    decodeChunk = before;
    onRelease = undefined;
  };
}

/**
 * Decodes a few whole gzip members / zstd frames at once on the calling thread (the tar headers between pre-checked
 * bodies: a streaming decoder per gap cost more in set-up than the decode). Throws on anything unusual (damage, a
 * zstd window over the limit, output past `maxOutputLength`); callers then decode the range with the streaming path,
 * which reports it properly.
 */
export function decodeSmallSync(compression: Compression, bytes: Buffer, maxOutputLength: number): Buffer {
  if (compression === "none") return bytes;
  const stored = decodeStored(compression, bytes);
  if (stored && stored.length <= maxOutputLength) return stored;
  if (compression === "gzip") return zlib.gunzipSync(bytes, { maxOutputLength, chunkSize: 64 * 1024 });
  const decode = zstdApi()?.zstdDecompressSync;
  if (!decode) throw new Error("no synchronous zstd decoder");
  return decode(bytes, { maxOutputLength, chunkSize: 64 * 1024, params: { [ZSTD_D_WINDOW_LOG_MAX]: ZSTD_WINDOW_LOG_LIMIT } });
}

/** A decoder error caused by the archive's bytes (truncated or corrupt), as opposed to an I/O failure. */
export function isCorruptStreamError(error: unknown): boolean {
  // A window over our limit is a limit, reported as such (its message names the limit and the way out).
  if (error instanceof ZstdWindowError) return false;
  const code = String((error as NodeJS.ErrnoException | undefined)?.code ?? "");
  if (code.startsWith("Z_") || code.startsWith("ZSTD_error")) return true;
  return /unexpected end of file|incorrect header|invalid|too far back|checksum|corrupt|frame/i.test(String((error as Error | undefined)?.message ?? ""));
}

export interface BlockCodecOptions {
  /** gzip 1–9 (default 6), zstd 1–19 (default 1: on 2 cores it is what keeps a backup faster than restic; 3 saves ~1–4%). */
  level?: number;
}

/** Output buffer size for a block codec: 256 KiB, or about the block's size for a small block (a small file's body of its own). */
function outputChunk(blockBytes: number): number {
  return Math.min(256 * 1024, Math.max(16 * 1024, blockBytes + 1024));
}

/**
 * Compresses one block as a self-contained gzip member or zstd frame, on the libuv pool. Members and frames
 * concatenate into one valid stream (RFC 1952 §2.2; the zstd format), which gzip, zstd, GNU tar and Node
 * read as one, so blocks can be compressed in parallel and a block run can later be copied as it is.
 */
export function compressBlock(compression: Compression, block: Buffer, options: BlockCodecOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer): void => (error ? reject(error) : resolve(result));
    // A copy: the compressor reuses its block buffers once a block is handed on.
    if (compression === "none") return resolve(Buffer.from(block));
    if (compression === "gzip") {
      zlib.gzip(block, { level: options.level ?? zlib.constants.Z_DEFAULT_COMPRESSION, chunkSize: outputChunk(block.length) }, done);
      return;
    }
    const api = zstdApi();
    if (!api) {
      reject(new UsageError(`zstd compression needs ${ZSTD_REQUIREMENT} (this is ${process.version}); use --compression gzip.`, "zstd_unsupported"));
      return;
    }
    // The frame checksum makes a flipped byte a decoder error, before the sha256 check even runs.
    api.zstdCompress(block, { chunkSize: outputChunk(block.length), params: { [ZSTD_C_COMPRESSION_LEVEL]: options.level ?? ZSTD_LEVEL, [ZSTD_C_CHECKSUM_FLAG]: 1 } }, done);
  });
}

/**
 * compressBlock on the calling thread, for small blocks (a tar header, a small file's body): a pool job per block
 * cost more main-thread time than compressing it here. Same kind of member / frame as compressBlock's; the smallest
 * (a lone tar header) are stored uncompressed, with no codec call at all (storedBlock).
 */
export function compressSmallBlock(compression: Compression, block: Buffer, level?: number): Promise<Buffer> {
  try {
    if (compression === "none") return Promise.resolve(Buffer.from(block));
    const stored = storedBlock(compression, block);
    if (stored) return Promise.resolve(stored);
    // A smaller window for a 512-byte header was measured slower (1,500 headers: 172 vs 134 ms): zlib's defaults.
    if (compression === "gzip") return Promise.resolve(zlib.gzipSync(block, { level: level ?? zlib.constants.Z_DEFAULT_COMPRESSION, chunkSize: outputChunk(block.length) }));
    const api = zstdApi() as (ZstdApi & { zstdCompressSync?(buf: Buffer, options: ZstdOptions): Buffer }) | null;
    if (!api?.zstdCompressSync) return compressBlock(compression, block, { level });
    return Promise.resolve(api.zstdCompressSync(block, { chunkSize: outputChunk(block.length), params: { [ZSTD_C_COMPRESSION_LEVEL]: level ?? ZSTD_LEVEL, [ZSTD_C_CHECKSUM_FLAG]: 1 } }));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A gzip member's header as storedBlock writes it: deflate, no flags, no mtime, unknown OS. */
const GZIP_STORED_HEAD = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
const ZSTD_FRAME_MAGIC = 0xfd2fb528;
/**
 * Blocks from 256 bytes up to this size (in practice the lone tar header in front of each plain file's body of its own,
 * or the end-of-archive marker) are stored, not compressed: a one-shot codec call per 512-byte header holds native
 * memory until a GC (on Node 24, 1,500 of them were 20–30 MiB of an unchanged create's peak), to save ~350 bytes each
 * (docs/performance.md, sixth pass).
 */
const STORED_MAX = 2048;

/**
 * `block` as a gzip member holding one stored deflate block (RFC 1951 §3.2.4, CRC-32 in the trailer) or a zstd frame
 * holding one raw block (single segment, 2-byte content size, no checksum); null outside 256..STORED_MAX bytes.
 */
function storedBlock(compression: Compression, block: Buffer): Buffer | null {
  if (block.length > STORED_MAX || block.length < 256) return null;
  if (compression === "gzip") {
    const head = Buffer.concat([GZIP_STORED_HEAD, Buffer.from([1, 0, 0, 0, 0])]);
    head.writeUInt16LE(block.length, 11);
    head.writeUInt16LE(~block.length & 0xffff, 13);
    const tail = Buffer.alloc(8);
    tail.writeUInt32LE(zlib.crc32(block), 0);
    tail.writeUInt32LE(block.length, 4);
    return Buffer.concat([head, block, tail]);
  }
  const head = Buffer.alloc(10);
  head.writeUInt32LE(ZSTD_FRAME_MAGIC, 0);
  // Frame header descriptor: single segment, 2-byte content size field (stores size - 256), no checksum, no dictionary.
  head[4] = 0x60;
  head.writeUInt16LE(block.length - 256, 5);
  // Block header: last block, raw, its size.
  head.writeUIntLE(1 | (block.length << 3), 7, 3);
  return Buffer.concat([head, block]);
}

/**
 * `bytes` unwrapped by hand when they are nothing but storedBlock members / frames (gzip: CRC-32 and size checked),
 * else null (the codec decodes them, and reports damage). Spares verify a codec call per tar header between pre-checked bodies.
 */
function decodeStored(compression: Compression, bytes: Buffer): Buffer | null {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    if (compression === "gzip") {
      if (pos + 23 > bytes.length || !bytes.subarray(pos, pos + 10).equals(GZIP_STORED_HEAD) || bytes[pos + 10] !== 1) return null;
      const len = bytes.readUInt16LE(pos + 11);
      if ((bytes.readUInt16LE(pos + 13) ^ 0xffff) !== len || pos + 23 + len > bytes.length) return null;
      const data = bytes.subarray(pos + 15, pos + 15 + len);
      if (bytes.readUInt32LE(pos + 15 + len) !== zlib.crc32(data) || bytes.readUInt32LE(pos + 19 + len) !== len) return null;
      out.push(data);
      pos += 23 + len;
    } else {
      if (pos + 10 > bytes.length || bytes.readUInt32LE(pos) !== ZSTD_FRAME_MAGIC || bytes[pos + 4] !== 0x60) return null;
      const len = bytes.readUInt16LE(pos + 5) + 256;
      if (bytes.readUIntLE(pos + 7, 3) !== (1 | (len << 3)) || pos + 10 + len > bytes.length) return null;
      out.push(bytes.subarray(pos + 10, pos + 10 + len));
      pos += 10 + len;
    }
  }
  return out.length === 1 ? out[0]! : Buffer.concat(out);
}

/**
 * Whether one block written by compressBlock decodes to exactly `expected`, compared chunk by chunk as the decoder
 * produces them on the libuv pool (the decoded block is never held whole: less memory, fewer large allocations).
 */
export function blockDecodesTo(compression: Compression, block: Buffer, expected: Buffer): Promise<boolean> {
  if (compression === "none") return Promise.resolve(block.equals(expected));
  return new Promise((resolve, reject) => {
    let decoder: Duplex;
    try {
      decoder = compression === "gzip" ? zlib.createGunzip({ chunkSize: outputChunk(expected.length) }) : createDecompressor("zstd", "a compressed block");
    } catch (error) {
      reject(error);
      return;
    }
    let offset = 0;
    let settled = false;
    const finish = (same: boolean): void => {
      if (settled) return;
      settled = true;
      resolve(same);
      if (!same) decoder.destroy();
    };
    decoder.on("data", (chunk: Buffer) => {
      if (offset + chunk.length > expected.length || !chunk.equals(expected.subarray(offset, offset + chunk.length))) finish(false);
      offset += chunk.length;
      releaseDecodedChunk(decoder, chunk);
    });
    decoder.on("end", () => finish(offset === expected.length));
    decoder.on("error", () => finish(false));
    decoder.end(block);
  });
}
