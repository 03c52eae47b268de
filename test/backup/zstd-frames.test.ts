// The zstd frame walker on streams the zstd CLI and pzstd wrote, and on hand-built frames: skippable frames anywhere
// between frames are dropped, frames pass unchanged, a window is refused only when the frame's data needs it.
// Runs on every Node (no decoder involved): the zstd CLI decodes what the walker passed on.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { compressionOfMagic } from "../../src/backup/compression.js";
import { MAX_ZSTD_WINDOW, ZstdFrameWalker, ZstdFramingError, ZstdWindowError } from "../../src/backup/zstd-frames.js";

const hasZstdCli = spawnSync("zstd", ["--version"]).status === 0;
const hasPzstd = spawnSync("pzstd", ["--version"]).status === 0;

/** Some compressible, not trivial data (text with random ids), ~2 MiB. */
const DATA = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `line ${i} ${crypto.createHash("sha1").update(String(i % 977)).digest("hex")}\n`).join(""));

function cli(cmd: string, args: string[], input: Buffer): Buffer {
  const run = spawnSync(cmd, args, { input, maxBuffer: 1 << 30 });
  expect(run.status, String(run.stderr)).toBe(0);
  return run.stdout;
}

/** The walker's output, fed in pieces of `chunk` bytes (1: every header split across writes). */
async function walk(input: Buffer, chunk = 64 * 1024): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for (let i = 0; i < input.length; i += chunk) pieces.push(input.subarray(i, i + chunk));
  const out: Buffer[] = [];
  for await (const b of Readable.from(pieces).pipe(new ZstdFrameWalker("test.tar.zst"))) out.push(b as Buffer);
  return Buffer.concat(out);
}

function skippable(magicLow: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32LE(0x184d2a50 + magicLow, 0);
  head.writeUInt32LE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

/** A frame header: window descriptor for 2^windowLog (not single-segment), optional 8-byte content size. */
function frameHeader(windowLog: number, contentSize?: bigint): Buffer {
  const fhd = contentSize === undefined ? 0x00 : 0xc0;
  const head = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, fhd, (windowLog - 10) << 3]);
  if (contentSize === undefined) return head;
  const fcs = Buffer.alloc(8);
  fcs.writeBigUInt64LE(contentSize);
  return Buffer.concat([head, fcs]);
}

/** An RLE block: one byte repeated `size` times (3-byte header + 1 byte), so huge outputs cost a few bytes. */
function rleBlock(size: number, last: boolean): Buffer {
  const h = (size << 3) | (1 << 1) | (last ? 1 : 0);
  return Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, 0x00]);
}

describe("zstd frame walker", () => {
  it("a skippable frame's magic (any of the 16) is read as zstd", () => {
    for (const low of [0, 7, 15]) expect(compressionOfMagic(skippable(low, Buffer.alloc(0)))).toBe("zstd");
    expect(compressionOfMagic(Buffer.from([0x60, 0x2a, 0x4d, 0x18]))).toBeNull();
  });

  it.runIf(hasZstdCli)("frames from the zstd CLI pass byte for byte, whole or one byte at a time, with a checksum or without", async () => {
    for (const args of [["-q", "-c"], ["-q", "-c", "--no-check", "-3"], ["-q", "-c", "--long=31"]]) {
      const z = cli("zstd", args, DATA);
      expect((await walk(z)).equals(z)).toBe(true);
      const small = cli("zstd", args, DATA.subarray(0, 30_000));
      expect((await walk(small, 1)).equals(small)).toBe(true);
    }
  });

  it.runIf(hasZstdCli)("skippable frames before, between and after frames (empty ones too) are dropped; the rest decodes to the data", async () => {
    const a = cli("zstd", ["-q", "-c"], DATA.subarray(0, 1_000_000));
    const b = cli("zstd", ["-q", "-c"], DATA.subarray(1_000_000));
    const input = Buffer.concat([skippable(0, Buffer.from("pzstd index")), a, skippable(15, Buffer.alloc(0)), skippable(3, crypto.randomBytes(70_000)), b, skippable(9, Buffer.from("tail"))]);
    for (const chunk of [997, 4096, input.length]) {
      const out = await walk(input, chunk);
      expect(out.equals(Buffer.concat([a, b]))).toBe(true);
    }
    expect(cli("zstd", ["-d", "-q", "-c"], await walk(input)).equals(DATA)).toBe(true);
  });

  it.runIf(hasPzstd)("pzstd's output (a skippable frame before each frame) is walked to frames zstd -d reads", async () => {
    const p = cli("pzstd", ["-q", "-p", "2", "-c"], DATA);
    expect(p.readUInt32LE(0)).toBe(0x184d2a50);
    const out = await walk(p, 1000);
    expect(out.length).toBeLessThan(p.length);
    expect(cli("zstd", ["-d", "-q", "-c"], out).equals(DATA)).toBe(true);
  });

  it("a 2 GiB declared window with little data passes; the frame is refused as soon as its data needs more than the limit", async () => {
    const small = Buffer.concat([frameHeader(31), rleBlock(100_000, false), rleBlock(5, true)]);
    expect((await walk(small)).equals(small)).toBe(true);
    // 1024 RLE blocks of 128 KiB fill the 128 MiB limit exactly; the next one would pass it.
    const blocks = Array.from({ length: MAX_ZSTD_WINDOW / (128 * 1024) - 1 }, () => rleBlock(128 * 1024, false));
    const full = Buffer.concat([frameHeader(31), ...blocks, rleBlock(128 * 1024, true)]);
    expect((await walk(full)).equals(full)).toBe(true);
    const over = walk(Buffer.concat([frameHeader(31), ...blocks, rleBlock(128 * 1024, false), rleBlock(1, true)]));
    await expect(over).rejects.toThrow(ZstdWindowError);
    await expect(over).rejects.toThrow(/declares a 2(\.0)? GiB window \(window log 31\) and its data needs more than the 128(\.0)? MiB \(window log 27\) openclaw-state accepts; .*zstd -d --long=31 < test\.tar\.zst \| zstd -o <new>\.tar\.zst/);
  });

  it("a declared content size over the limit with a window over it is refused at the header; under the window it bounds the need", async () => {
    await expect(walk(Buffer.concat([frameHeader(31, 1n << 30n), rleBlock(1, true)]))).rejects.toThrow(ZstdWindowError);
    const bounded = Buffer.concat([frameHeader(31, 10n), rleBlock(10, true)]);
    expect((await walk(bounded)).equals(bounded)).toBe(true);
    // A window under the limit is never refused, whatever the content size says.
    const okWindow = Buffer.concat([frameHeader(20, 1n << 40n), rleBlock(10, true)]);
    expect((await walk(okWindow)).equals(okWindow)).toBe(true);
  });

  it("a chunk of whole frames is handed on as the same buffer (no copy); a chunk with a skippable frame or a split header is joined", async () => {
    const frames = Buffer.concat([frameHeader(20, 100_005n), rleBlock(100_000, false), rleBlock(5, true), frameHeader(20), rleBlock(7, true)]);
    /** The walker's output chunks for `pieces`, written in order. */
    const outputs = async (pieces: Buffer[]): Promise<Buffer[]> => {
      const out: Buffer[] = [];
      for await (const b of Readable.from(pieces).pipe(new ZstdFrameWalker("test.tar.zst"))) out.push(b as Buffer);
      return out;
    };
    const same = await outputs([frames]);
    expect(same).toHaveLength(1);
    expect(same[0]).toBe(frames);
    // Split inside the second frame's header: the carried bytes go on with the next chunk, nothing is lost.
    const at = frameHeader(20, 100_005n).length + 8 + 2;
    const split = await outputs([frames.subarray(0, at), frames.subarray(at)]);
    expect(split[0]).not.toBe(frames);
    expect(Buffer.concat(split).equals(frames)).toBe(true);
    const withSkippable = Buffer.concat([frames.subarray(0, at - 2), skippable(1, Buffer.from("index")), frames.subarray(at - 2)]);
    const dropped = await outputs([withSkippable]);
    expect(dropped[0]).not.toBe(withSkippable);
    expect(Buffer.concat(dropped).equals(frames)).toBe(true);
  });

  it("damaged framing is a corrupt-stream error: bad magic, a reserved bit, a reserved block type, truncation", async () => {
    await expect(walk(Buffer.from("not zstd at all"))).rejects.toThrow(ZstdFramingError);
    const reservedBit = Buffer.concat([frameHeader(20), rleBlock(1, true)]);
    reservedBit[4] = 0x08;
    await expect(walk(reservedBit)).rejects.toThrow(/corrupt zstd stream: the frame at byte 0 sets a reserved header bit/);
    await expect(walk(Buffer.concat([frameHeader(20), Buffer.from([0x07, 0, 0])]))).rejects.toThrow(/reserved type/);
    await expect(walk(Buffer.concat([frameHeader(20), rleBlock(10, false)]))).rejects.toThrow(/ends inside a frame .*truncated/);
    await expect(walk(skippable(0, Buffer.alloc(10)).subarray(0, 12))).rejects.toThrow(/truncated/);
  });
});
