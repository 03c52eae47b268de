// Codec buffers freed as soon as they are used: only the codecs' own buffers, and nothing a reader or writer still holds.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { compressBlock, createDecompressor, defaultCompression, releaseCodecOutput, releaseDecodedChunk, setDecodeChunkForTests } from "../../src/backup/compression.js";
import { ParallelCompressor } from "../../src/backup/parallel-compress.js";
import { createBackup } from "../../src/backup/create-backup.js";
import { readTar } from "../../src/backup/tar-format.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, snapshotTree } from "../helpers/temp-state.js";

/** ArrayBuffer.prototype.transfer (Node 22+): without it nothing is released and the pass must still be right. */
const canRelease = typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === "function";
const yes = async (): Promise<boolean> => true;

let restoreDefaults: (() => void) | undefined;
afterEach(() => {
  restoreDefaults?.();
  restoreDefaults = undefined;
});

/** sha256 of every regular file below `root` by relative path (snapshotTree: links are not followed). */
function fileHashes(root: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [rel, entry] of Object.entries(snapshotTree(root))) if (entry.type === "file") out[rel] = entry.sha256;
  return out;
}

describe("releasing decoded chunks", () => {
  it.each([...new Set([defaultCompression(), "gzip" as const])])("frees only the last slice of a %s decoder's own buffer, and only the decoder's", async (compression) => {
    // Output buffers under half of Buffer's pool size are slices of the shared pool: a size above it.
    const size = Buffer.poolSize / 2 + 100;
    restoreDefaults = setDecodeChunkForTests(size);
    const input = crypto.randomBytes(5 * size + 123);
    const decoder = createDecompressor(compression, "test");
    const chunks: Buffer[] = [];
    decoder.on("data", (chunk: Buffer) => chunks.push(chunk));
    const done = new Promise((resolve) => decoder.on("end", resolve));
    decoder.end(await compressBlock(compression, input));
    await done;
    expect(Buffer.concat(chunks).equals(input)).toBe(true);
    const atEnd = chunks.filter((c) => c.byteOffset + c.length === c.buffer.byteLength && c.buffer.byteLength === size);
    expect(atEnd.length).toBeGreaterThanOrEqual(4);
    const notAtEnd = chunks.filter((c) => !atEnd.includes(c));
    for (const chunk of notAtEnd) expect(releaseDecodedChunk(decoder, chunk)).toBe(false);
    for (const chunk of atEnd) {
      expect(releaseDecodedChunk(decoder, chunk)).toBe(canRelease);
      expect(chunk.buffer.byteLength).toBe(canRelease ? 0 : size);
    }
    // Not a decoder of ours (a PassThrough, any other stream), or a slice of Buffer's shared pool: never released.
    const own = Buffer.allocUnsafeSlow(size);
    expect(releaseDecodedChunk(new PassThrough(), own)).toBe(false);
    expect(own.buffer.byteLength).toBe(size);
    const pooled = Buffer.allocUnsafe(100);
    expect(releaseDecodedChunk(decoder, pooled)).toBe(false);
  });

  it("verify and restore stay exact when a chunk boundary cuts a tar header, a file's first 16 bytes and the manifest", async () => {
    const state = makeTempState("legacy-state");
    seedState(state, { sessions: 30 });
    const dir = path.join(state.paths.stateDir, "files");
    fs.mkdirSync(dir, { recursive: true });
    // Sizes from 1 byte up (many under the 16-byte SQLite header), a long name (a pax header), and enough entries for a
    // manifest longer than a decoder chunk.
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), Buffer.alloc((i * 37) % 1500 || 1, i % 251));
    for (let i = 1; i <= 15; i++) fs.writeFileSync(path.join(dir, `tiny-${i}`), "x".repeat(i));
    fs.writeFileSync(path.join(dir, `${"long-name-".repeat(12)}.jsonl`), '{"a":1}\n'.repeat(300));
    const before = fileHashes(state.paths.stateDir);
    const backup = await createBackup({ paths: state.paths });

    // Where the decoded tar's entries lie, then a chunk size whose boundaries fall inside each kind of region.
    const tar = await decodeWhole(backup.archivePath);
    const headers: Array<[number, number]> = [];
    const heads: Array<[number, number]> = [];
    let manifest: [number, number] | undefined;
    await readTar(
      (async function* () {
        yield tar;
      })(),
      {
        entry: (entry) => {
          headers.push([entry.offset, entry.offset + 512]);
          if (entry.path.endsWith("/manifest.json")) manifest = [entry.offset + 512, entry.offset + 512 + entry.size];
          else if (entry.type === "File" && entry.size >= 16) heads.push([entry.offset + 512, entry.offset + 512 + 16]);
          return { write() {}, end() {} };
        },
      },
    );
    expect(manifest).toBeDefined();
    // Larger than half of Buffer's pool (smaller output buffers are pool slices, which are never released).
    const chunk = chunkCutting(tar.length, [headers, heads, [manifest!]], Buffer.poolSize / 2 + 1);
    expect(chunk, "no chunk size in range cuts all three kinds of region").toBeGreaterThan(0);

    let released = 0;
    restoreDefaults = setDecodeChunkForTests(chunk, () => void (released += 1));
    const verified = await verifyBackup(backup.archivePath);
    expect(verified.problems).toEqual([]);
    expect(verified.ok).toBe(true);
    const target = path.join(makeTempDir(), "restored");
    const restored = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, target, confirm: yes });
    expect(restored.status).toBe("restored");
    const after = fileHashes(path.join(target, "state"));
    for (const [rel, digest] of Object.entries(before)) {
      if (rel.endsWith(".sqlite")) continue; // restored databases are made live-ready (WAL), not byte-identical
      expect(after[rel], rel).toBe(digest);
    }
    // Both passes released most of their buffers (a boundary read together with the next chunk is not released).
    const boundaries = Math.floor(tar.length / chunk);
    if (canRelease) expect(released).toBeGreaterThan(boundaries);
    else expect(released).toBe(0);
  });
});

describe("releasing written codec output", () => {
  it("frees a codec's own output but never a slice of Buffer's shared pool", async () => {
    const big = await compressBlock(defaultCompression(), crypto.randomBytes(256 * 1024));
    const length = big.buffer.byteLength;
    expect(releaseCodecOutput(big)).toBe(canRelease);
    expect(big.buffer.byteLength).toBe(canRelease ? 0 : length);
    const pooled = Buffer.allocUnsafe(100).fill(7);
    expect(releaseCodecOutput(pooled)).toBe(false);
    expect(pooled.every((b) => b === 7)).toBe(true);
  });

  it("with releaseWritten, a written block is freed after the sink and the segment hash saw it; copied segments are left to their owner", async () => {
    const compression = defaultCompression();
    // Incompressible: the segment is over 1 MiB, so copying it takes more than one read into the same buffer.
    const data = crypto.randomBytes(1_200_000);
    const seen: Buffer[] = [];
    const copies: Buffer[] = [];
    const c = new ParallelCompressor(
      async (b) => {
        seen.push(b);
        copies.push(Buffer.from(b));
      },
      { compression, blockSize: 256 * 1024, releaseWritten: true },
    );
    c.beginSegment(false);
    await c.write(data);
    const seg = await c.endSegment();
    await c.end();
    const bytes = Buffer.concat(copies);
    expect(crypto.createHash("sha256").update(bytes.subarray(seg.start, seg.start + seg.length)).digest("hex")).toBe(seg.sha256);
    const released = seen.filter((b) => b.buffer.byteLength === 0).length;
    if (canRelease) expect(released).toBeGreaterThan(0);
    else expect(released).toBe(0);

    // A copied segment's bytes are read into the compressor's own reused buffer: never released, the copy completes.
    const source = path.join(makeTempDir(), "source");
    fs.writeFileSync(source, bytes);
    const copied: Buffer[] = [];
    const d = new ParallelCompressor(async (b) => void copied.push(Buffer.from(b)), { compression, releaseWritten: true });
    expect(await d.copySegment(source, seg)).toEqual({ start: 0, length: seg.length, sha256: seg.sha256 });
    await d.end();
    expect(Buffer.concat(copied).equals(bytes.subarray(seg.start, seg.start + seg.length))).toBe(true);
  });
});

/** The archive's whole decoded tar. */
async function decodeWhole(archivePath: string): Promise<Buffer> {
  const compressed = fs.readFileSync(archivePath);
  const decoder = createDecompressor(defaultCompression(), archivePath);
  const parts: Buffer[] = [];
  decoder.on("data", (c: Buffer) => parts.push(Buffer.from(c)));
  const done = new Promise((resolve, reject) => {
    decoder.on("end", resolve);
    decoder.on("error", reject);
  });
  decoder.end(compressed);
  await done;
  return Buffer.concat(parts);
}

/** The smallest chunk size from `min` whose multiples fall strictly inside a region of every group, or 0. */
function chunkCutting(total: number, groups: Array<Array<[number, number]>>, min: number): number {
  for (let size = Math.ceil(min); size < total / 2; size++) {
    const cuts = (regions: Array<[number, number]>): boolean => regions.some(([a, b]) => Math.floor((b - 1) / size) * size > a);
    if (groups.every(cuts)) return size;
  }
  return 0;
}
