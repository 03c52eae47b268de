// Block-parallel gzip/zstd writer: blocks compressed on several threads, written in order, with cuttable segments.
//
// Compression is the bulk of a backup's CPU time. Fixed-size blocks are compressed independently on the libuv
// pool (see compressBlock) and written in order; the cost is a dictionary reset per block (under 0.5% with
// 4 MiB blocks). Memory stays bounded: at most `concurrency` blocks are in flight. A segment is a run of whole
// blocks whose bytes (offset, length, sha256) are known once written, so a later archive can copy them as they
// are; `copySegment` is that copy, checked against the sha256 recorded when the segment was first written.
// With checkSegments, every block of a segment is decoded again as soon as it is compressed and compared with its
// input, so a segment's compressed bytes are proven to decode to the content hashed on the way in: the create-time
// verify can then check them by their sha256 instead of decoding them a second time (PrecheckedRun, read-archive.ts).
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { OperationError } from "../core/errors.js";
import { blockDecodesTo, compressBlock, compressSmallBlock, releaseCodecOutput, type Compression } from "./compression.js";
import { ZstdBlockChecker } from "./zstd-block-checker.js";

export interface ParallelCompressorOptions {
  compression: Compression;
  /** Uncompressed bytes per block (default 4 MiB). */
  blockSize?: number;
  /** Blocks in flight (default: cores, at most the 4 libuv pool threads, plus one so no core idles between blocks). */
  concurrency?: number;
  level?: number;
  /** Decode every block of a segment right after compressing it and compare it with its input (default false). */
  checkSegments?: boolean;
  /**
   * The sink is done with a chunk when its promise settles (it keeps no reference): each compressed block's memory is
   * then freed at once (releaseCodecOutput) instead of at V8's next full collection.
   */
  releaseWritten?: boolean;
  /** The decoder segments are checked with (tests inject a faulty one). */
  decodesTo?: (compression: Compression, block: Buffer, expected: Buffer) => Promise<boolean>;
}

/** Where a segment landed in the output: byte range and the sha256 of those compressed bytes. */
export interface WrittenSegment {
  start: number;
  length: number;
  sha256: string;
}

const COPY_CHUNK = 1024 * 1024;
/** A lent body (ReuseCandidate.lent) whose bytes did not hash to the earlier manifest's record while they were copied. */
export class LentCopyMismatch extends OperationError {
  constructor(source: string) {
    super("reuse_mismatch", `The bytes ${source} lent do not hash to what its manifest records; no archive was written.`, { path: source });
  }
}

/**
 * Blocks up to this size are compressed on the calling thread: a plain file's body of its own (write-archive.ts) as a
 * pool job each made a fresh create ~1 CPU-s slower on 1,500 files of 43 KB; inline it is on a par with 4 MiB blocks.
 */
const SYNC_BLOCK_MAX = 256 * 1024;

export class ParallelCompressor {
  /** The block being filled, and blocks whose compression finished (reused: large buffers churn the GC). */
  private block: Buffer | null = null;
  private readonly spare: Buffer[] = [];
  private size = 0;
  /** Every write to `sink` runs on this chain, in submission order. */
  private chain: Promise<void> = Promise.resolve();
  /** Chain links of blocks not yet written; their count bounds memory. */
  private readonly inFlight: Array<Promise<void>> = [];
  private written = 0;
  private segment: { start: number; hash: crypto.Hash } | null = null;
  /** Set between beginSegment and endSegment: blocks cut meanwhile are decoded and compared after compression. */
  private inSegment = false;
  private checkSegment = false;
  private readonly blockSize: number;
  private readonly concurrency: number;
  /** zstd segments' blocks are checked through one decoder (zstd-block-checker.ts), unless a test injects decodesTo. */
  private readonly checker: ZstdBlockChecker | null;

  constructor(
    private readonly sink: (chunk: Buffer) => Promise<void>,
    private readonly options: ParallelCompressorOptions,
  ) {
    this.blockSize = options.blockSize ?? 4 * 1024 * 1024;
    this.concurrency = Math.max(1, options.concurrency ?? Math.min(os.availableParallelism(), 4) + 1);
    this.checker = options.checkSegments && options.compression === "zstd" && !options.decodesTo ? ZstdBlockChecker.create() : null;
  }

  /** Bytes handed to the sink so far. */
  get bytesWritten(): number {
    return this.written;
  }

  /** Copies `chunk` into the current block (the caller may reuse `chunk` once this resolves). */
  async write(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      this.block ??= this.spare.pop() ?? Buffer.allocUnsafeSlow(this.blockSize);
      const take = Math.min(this.blockSize - this.size, chunk.length - offset);
      chunk.copy(this.block, this.size, offset, offset + take);
      this.size += take;
      offset += take;
      if (this.size === this.blockSize) this.cut();
      while (this.inFlight.length >= this.concurrency) await this.inFlight.shift();
    }
  }

  /** Ends the current block early: the next byte starts a new gzip member / zstd frame. */
  cut(): void {
    if (this.size === 0 || !this.block) return;
    const buffer = this.block;
    const input = buffer.subarray(0, this.size);
    // A small block (a tar header, a small file's body of its own) costs more as a pool job than to compress here.
    const compressed = this.size <= SYNC_BLOCK_MAX ? compressSmallBlock(this.options.compression, input, this.options.level) : compressBlock(this.options.compression, input, { level: this.options.level });
    const job = this.inSegment && this.checkSegment ? compressed.then((out) => this.roundTrip(out, input)) : compressed;
    this.block = null;
    this.size = 0;
    // The buffer is free again once the codec is done with it, written or not.
    void job.then(
      () => this.spare.push(buffer),
      () => undefined,
    );
    this.inFlight.push(
      this.enqueue(async () => {
        const out = await job;
        await this.emit(out);
        // Only the codec's own output, never a copied or inserted segment's buffer (those are the caller's).
        if (this.options.releaseWritten) releaseCodecOutput(out);
      }),
    );
  }

  /**
   * Starts a segment at the next block boundary (segments do not nest). `check: false` skips the decode-and-compare
   * of its blocks even with checkSegments (a plain file's body: verify decodes it in the stream like any other).
   */
  beginSegment(check = true): void {
    this.cut();
    this.inSegment = true;
    this.checkSegment = check && this.options.checkSegments === true;
    void this.enqueue(async () => {
      this.segment = { start: this.written, hash: crypto.createHash("sha256") };
    });
  }

  /** Ends the segment at a block boundary; resolves once its last byte is written. */
  endSegment(): Promise<WrittenSegment> {
    this.cut();
    this.inSegment = false;
    let result!: WrittenSegment;
    return this.enqueue(async () => {
      const seg = this.segment!;
      this.segment = null;
      result = { start: seg.start, length: this.written - seg.start, sha256: seg.hash.digest("hex") };
    }).then(() => result);
  }

  /**
   * Copies `source`'s compressed bytes [start, start+length) as a segment of their own. The bytes must hash to
   * `sha256` (what was recorded when they were first written); otherwise the write fails and nothing is reused.
   * `lent`: the bytes were not hashed before (snapshot-reuse.ts), so a mismatch is a LentCopyMismatch.
   */
  copySegment(source: string, from: WrittenSegment, lent = false): Promise<WrittenSegment> {
    this.cut();
    let result!: WrittenSegment;
    return this.enqueue(async () => {
      // Synchronous reads (page cache) like the rest of the write path: the libuv pool is busy compressing.
      const fd = fs.openSync(source, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
      try {
        if (!fs.fstatSync(fd).isFile()) throw new OperationError("reuse_mismatch", `${source} is no longer a regular file; no archive was written. Run the backup again.`, { path: source });
        const start = this.written;
        const hash = crypto.createHash("sha256");
        let done = 0;
        const buf = Buffer.allocUnsafeSlow(COPY_CHUNK);
        while (done < from.length) {
          const bytesRead = fs.readSync(fd, buf, 0, Math.min(COPY_CHUNK, from.length - done), from.start + done);
          if (bytesRead === 0) break;
          const chunk = buf.subarray(0, bytesRead);
          hash.update(chunk);
          await this.emit(chunk);
          done += bytesRead;
        }
        const sha256 = hash.digest("hex");
        if (done !== from.length || sha256 !== from.sha256) {
          if (lent) throw new LentCopyMismatch(source);
          throw new OperationError("reuse_mismatch", `The reused bytes of ${source} changed while they were copied (sha256 mismatch); no archive was written. Run the backup again.`, { path: source });
        }
        result = { start, length: done, sha256 };
      } finally {
        fs.closeSync(fd);
      }
    }).then(() => result);
  }

  /**
   * Writes `bytes` (compressed bytes the caller already checked against `sha256`, e.g. an unchanged file's body from
   * an earlier archive) as a segment of their own, in order; the caller must not change `bytes` afterwards.
   */
  insertSegment(bytes: Buffer, sha256: string): Promise<WrittenSegment> {
    this.cut();
    let start = 0;
    const link = this.enqueue(async () => {
      start = this.written;
      await this.emit(bytes);
    });
    this.inFlight.push(link);
    return link.then(() => ({ start, length: bytes.length, sha256 }));
  }

  /** Waits until fewer than `concurrency` blocks or inserted segments are in flight (bounds memory between inserts). */
  async room(): Promise<void> {
    while (this.inFlight.length >= this.concurrency) await this.inFlight.shift();
  }

  /** Flushes the last block and waits for every write; returns the total bytes written. */
  async end(): Promise<number> {
    this.cut();
    try {
      await this.chain;
    } finally {
      this.checker?.close();
    }
    return this.written;
  }

  /** Waits for queued work to settle (after a failure), so nothing writes after the caller cleans up. */
  async settle(): Promise<void> {
    await this.chain.catch(() => undefined);
    this.checker?.close();
  }

  /** `out` once it decodes back to exactly `input` (a codec fault must never reach a verified archive). */
  private async roundTrip(out: Buffer, input: Buffer): Promise<Buffer> {
    const same = this.checker ? await this.checker.decodesTo(out, input) : await (this.options.decodesTo ?? blockDecodesTo)(this.options.compression, out, input);
    if (!same) {
      throw new OperationError("compress_mismatch", `A compressed ${this.options.compression} block did not decode back to its input; no archive was written. Retry, or use --compression ${this.options.compression === "zstd" ? "gzip" : "zstd"}.`, {});
    }
    return out;
  }

  private async emit(chunk: Buffer): Promise<void> {
    await this.sink(chunk);
    this.segment?.hash.update(chunk);
    this.written += chunk.length;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const link = this.chain.then(step);
    link.catch(() => undefined);
    this.chain = link;
    return link;
  }
}
