// One long-lived zstd decoder checking a create's blocks: exact per block, in any order, and never fooled by framing.
import crypto from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { compressBlock, compressSmallBlock, setDecodeChunkForTests, zstdSupported } from "../../src/backup/compression.js";
import { ParallelCompressor } from "../../src/backup/parallel-compress.js";
import { ZstdBlockChecker } from "../../src/backup/zstd-block-checker.js";
import { isWholeZstdFrames } from "../../src/backup/zstd-frames.js";

/** Compressible input (JSON lines), so blocks hold compressed zstd blocks, not only raw ones. */
function jsonl(bytes: number, seed: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i += 1) {
    const line = JSON.stringify({ seq: i, seed, text: `event ${i % 97} of ${seed}`, rand: crypto.randomBytes(6).toString("hex") });
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join("\n")}\n`).subarray(0, bytes);
}

function checker(): ZstdBlockChecker {
  const c = ZstdBlockChecker.create();
  if (!c) throw new Error("no zstd in node:zlib");
  return c;
}

describe.skipIf(!zstdSupported())("ZstdBlockChecker", () => {
  afterEach(() => vi.restoreAllMocks());

  it("passes each block that decodes to its input, one decoder for all of them", async () => {
    const inputs = [jsonl(300_000, 1), crypto.randomBytes(200_000), jsonl(5_000, 2), jsonl(1_200_000, 3)];
    const blocks = await Promise.all(inputs.map((input) => compressBlock("zstd", input)));
    const c = checker();
    for (let i = 0; i < inputs.length; i += 1) expect(await c.decodesTo(blocks[i]!, inputs[i]!)).toBe(true);
    c.close();
  });

  it("answers concurrent checks each for its own block", async () => {
    const inputs = Array.from({ length: 12 }, (_, i) => jsonl(50_000 + i * 7_000, i));
    const blocks = await Promise.all(inputs.map((input) => compressBlock("zstd", input)));
    const c = checker();
    // Every other check is against the wrong input: the answers must not bleed into each other.
    const answers = await Promise.all(blocks.map((block, i) => c.decodesTo(block, i % 2 === 0 ? inputs[i]! : inputs[i - 1]!)));
    expect(answers).toEqual(inputs.map((_, i) => i % 2 === 0));
    c.close();
  });

  it("fails a block whose input differs by one byte, is shorter or longer, and passes the next good block", async () => {
    const input = jsonl(400_000, 4);
    const block = await compressBlock("zstd", input);
    const flipped = Buffer.from(input);
    flipped[123_456] = flipped[123_456]! ^ 1;
    const c = checker();
    expect(await c.decodesTo(block, flipped)).toBe(false);
    expect(await c.decodesTo(block, input.subarray(0, input.length - 1))).toBe(false);
    expect(await c.decodesTo(block, Buffer.concat([input, Buffer.from("x")]))).toBe(false);
    expect(await c.decodesTo(block, input)).toBe(true);
    c.close();
  });

  it("fails damaged or partial framing, and a corrupt body, without poisoning later checks", async () => {
    const input = jsonl(300_000, 5);
    const block = await compressBlock("zstd", input);
    const c = checker();
    // The checksum cut off: the content is all there, the frame is not whole.
    expect(await c.decodesTo(block.subarray(0, block.length - 4), input)).toBe(false);
    // A trailing byte, and the start of a next frame, after a whole frame.
    expect(await c.decodesTo(Buffer.concat([block, Buffer.from([0])]), input)).toBe(false);
    expect(await c.decodesTo(Buffer.concat([block, block.subarray(0, 6)]), input)).toBe(false);
    // A flipped byte in the compressed body: a decoder error or a checksum mismatch.
    const corrupt = Buffer.from(block);
    corrupt[Math.floor(block.length / 2)] = corrupt[Math.floor(block.length / 2)]! ^ 0x55;
    expect(await c.decodesTo(corrupt, input)).toBe(false);
    expect(await c.decodesTo(Buffer.from("not zstd at all"), input)).toBe(false);
    expect(await c.decodesTo(block, input)).toBe(true);
    c.close();
  });

  it("passes two whole frames back to back against both inputs, and stored frames", async () => {
    const a = jsonl(100_000, 6);
    const b = jsonl(80_000, 7);
    const both = Buffer.concat([await compressBlock("zstd", a), await compressBlock("zstd", b)]);
    const header = Buffer.alloc(512, 0x61);
    const stored = await compressSmallBlock("zstd", header);
    const c = checker();
    expect(await c.decodesTo(both, Buffer.concat([a, b]))).toBe(true);
    expect(await c.decodesTo(stored, header)).toBe(true);
    c.close();
  });

  it("frees decoded chunks as it compares them, across chunk boundaries", async () => {
    let released = 0;
    // Above Buffer.poolSize (64 KiB on Node 24): a buffer of the pool's size is never released.
    const restore = setDecodeChunkForTests(128 * 1024, () => (released += 1));
    try {
      const input = jsonl(1_000_000, 8);
      const block = await compressBlock("zstd", input);
      const c = checker();
      expect(await c.decodesTo(block, input)).toBe(true);
      expect(await c.decodesTo(block, input)).toBe(true);
      c.close();
      // Node 22+ detaches; Node 20 has no zstd in node:zlib and skips this suite.
      expect(released).toBeGreaterThanOrEqual(2 * Math.floor(input.length / (128 * 1024)));
    } finally {
      restore();
    }
  });

  it("is what ParallelCompressor checks zstd segments with, and it is closed at the end", async () => {
    const decodes = vi.spyOn(ZstdBlockChecker.prototype, "decodesTo");
    const close = vi.spyOn(ZstdBlockChecker.prototype, "close");
    const chunks: Buffer[] = [];
    const compressor = new ParallelCompressor(async (chunk) => void chunks.push(Buffer.from(chunk)), { compression: "zstd", blockSize: 256 * 1024, checkSegments: true });
    compressor.beginSegment();
    await compressor.write(jsonl(1_000_000, 9));
    await compressor.endSegment();
    await compressor.end();
    expect(decodes.mock.calls.length).toBe(4);
    expect(await Promise.all(decodes.mock.results.map((r) => r.value))).toEqual([true, true, true, true]);
    expect(close).toHaveBeenCalled();

    decodes.mockClear();
    const unchecked = new ParallelCompressor(async () => undefined, { compression: "zstd", blockSize: 256 * 1024, checkSegments: false });
    unchecked.beginSegment();
    await unchecked.write(jsonl(600_000, 10));
    await unchecked.endSegment();
    await unchecked.end();
    expect(decodes).not.toHaveBeenCalled();
  });

  it("fails the write when a block does not decode back (the checker says no)", async () => {
    vi.spyOn(ZstdBlockChecker.prototype, "decodesTo").mockResolvedValue(false);
    const compressor = new ParallelCompressor(async () => undefined, { compression: "zstd", blockSize: 64 * 1024, checkSegments: true });
    compressor.beginSegment();
    await compressor.write(jsonl(200_000, 11)).catch(() => undefined);
    await expect(compressor.endSegment()).rejects.toThrow(/did not decode back to its input/);
    await compressor.settle();
  });
});

describe("isWholeZstdFrames", () => {
  it.skipIf(!zstdSupported())("accepts whole frames only", async () => {
    const block = await compressBlock("zstd", jsonl(100_000, 12));
    expect(isWholeZstdFrames(block)).toBe(true);
    expect(isWholeZstdFrames(Buffer.concat([block, block]))).toBe(true);
    expect(isWholeZstdFrames(block.subarray(0, block.length - 1))).toBe(false);
    expect(isWholeZstdFrames(Buffer.concat([block, Buffer.from([0x28])]))).toBe(false);
  });

  it("refuses empty input, skippable frames and other magic", async () => {
    expect(isWholeZstdFrames(Buffer.alloc(0))).toBe(false);
    const skippable = Buffer.alloc(12);
    skippable.writeUInt32LE(0x184d2a50, 0);
    skippable.writeUInt32LE(4, 4);
    expect(isWholeZstdFrames(skippable)).toBe(false);
    expect(isWholeZstdFrames(Buffer.from("\x1f\x8b\x08\x00gzip"))).toBe(false);
    // A stored zstd frame as storedBlock writes it is whole (it needs no codec to build).
    const stored = await compressSmallBlock("zstd", Buffer.alloc(512, 0x62));
    expect(stored.readUInt32LE(0)).toBe(0xfd2fb528);
    expect(isWholeZstdFrames(stored)).toBe(true);
  });
});
