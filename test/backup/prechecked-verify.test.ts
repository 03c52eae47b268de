// The create-time verify that checks database bodies by their compressed bytes: what it accepts and what it refuses.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { blockDecodesTo, compressBlock, zstdSupported, type Compression } from "../../src/backup/compression.js";
import { createBackup } from "../../src/backup/create-backup.js";
import { buildManifest } from "../../src/backup/manifest.js";
import { ParallelCompressor } from "../../src/backup/parallel-compress.js";
import { planAssets } from "../../src/backup/asset-plan.js";
import type { PrecheckedRun } from "../../src/backup/archive-source.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { archiveOrder, walkAssets } from "../../src/backup/walk-assets.js";
import { writeArchive, type WriteArchiveResult } from "../../src/backup/write-archive.js";
import { SqliteJobRunner } from "../../src/state/sqlite-jobs.js";
import { addSessions, agentDb, seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, type TempState } from "../helpers/temp-state.js";

const compressions: Compression[] = zstdSupported() ? ["gzip", "zstd"] : ["gzip"];

function decode(compression: Compression, bytes: Buffer): Buffer {
  return compression === "gzip" ? zlib.gunzipSync(bytes) : (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer }).zstdDecompressSync(bytes);
}

describe("verify with pre-checked database bodies", () => {
  let state: TempState;
  const runner = new SqliteJobRunner();

  // Temp dirs are removed after each test: a fresh state per test.
  beforeEach(() => {
    state = makeTempState("legacy-state");
    seedState(state);
    // One agent DB over two 4 MiB blocks, so its segment is several frames/members long.
    addSessions(agentDb(state), 1000, 3000, 25);
  });
  afterAll(() => runner.close());

  async function write(compression: Compression, headReserve?: number): Promise<{ file: string; written: WriteArchiveResult; checked: Map<string, string> }> {
    const plan = planAssets({ paths: state.paths });
    const walk = walkAssets(plan.assets, { exclude: [] });
    const file = path.join(makeTempDir(), `a${compression === "gzip" ? ".tar.gz" : ".tar.zst"}`);
    const written = await writeArchive({
      archivePath: file,
      root: "pre",
      stagingDir: makeTempDir(),
      entries: archiveOrder(walk.entries),
      runner,
      createdAt: new Date(),
      compression,
      precheck: true,
      headReserve,
      manifestFor: (parts) =>
        buildManifest({ runId: "r", createdAt: new Date(), archiveRoot: "pre", paths: state.paths, options: { onlyConfig: false, includeWorkspace: true, verify: true, dryRun: false }, assets: plan.assets.map(({ kind, sourcePath, archivePath, type }) => ({ kind, sourcePath, archivePath, type, excluded: [] })), ...parts }),
    });
    const checked = new Map(written.manifest.databases.map((d) => [d.archivePath, d.sha256!] as const));
    return { file, written, checked };
  }

  it("createBackup's own verify takes the database bodies by their compressed bytes (one progress step each, not one per chunk)", async () => {
    const events: Array<{ phase: string; path?: string }> = [];
    const made = await createBackup({ paths: state.paths, onProgress: (e) => events.push({ phase: e.phase, path: e.path }) });
    expect(made.verified).toBe(true);
    const big = "state/agents/main/agent/openclaw-agent.sqlite";
    const verifySteps = events.filter((e) => e.phase === "verify" && e.path?.endsWith(big));
    const archiveSteps = events.filter((e) => e.phase === "archive" && e.path?.endsWith(big));
    expect(archiveSteps.length).toBeGreaterThan(4);
    expect(verifySteps).toHaveLength(1);
    // backup verify decodes it: progress per chunk.
    const full: string[] = [];
    const checked = await verifyBackup(made.archivePath, { onProgress: (e) => (e.path?.endsWith(big) ? full.push(e.phase) : undefined) });
    expect(checked.ok, checked.problem).toBe(true);
    expect(full.length).toBeGreaterThan(1);
  });

  for (const compression of compressions) {
    it(`${compression}: every database body is pre-checked, its bytes decode to its content, and the archive verifies both ways`, async () => {
      for (const headReserve of [undefined, 64]) {
        const { file, written, checked } = await write(compression, headReserve);
        expect(written.prechecked.map((r) => r.archivePath).sort()).toEqual(written.manifest.databases.map((d) => d.archivePath).sort());
        const big = written.prechecked.find((r) => r.archivePath.includes("agents/main/"))!;
        expect(big.length).toBeGreaterThan(4 * 1024 * 1024);
        const bytes = fs.readFileSync(file);
        for (const run of written.prechecked) {
          // Offsets are final (also when the payload moved behind a manifest that outgrew its room).
          const content = decode(compression, bytes.subarray(run.segment.start, run.segment.start + run.segment.length));
          expect(content.length).toBe(run.length);
          const size = written.manifest.files.find((f) => f.archivePath === run.archivePath)!.size;
          expect(crypto.createHash("sha256").update(content.subarray(0, size)).digest("hex")).toBe(run.contentSha256);
          expect(run.sqlite).toBe(true);
        }
        const quick = await verifyBackup(file, { checkedDatabases: checked, prechecked: written.prechecked });
        expect(quick.ok, quick.problem).toBe(true);
        const full = await verifyBackup(file);
        expect(full.ok, full.problem).toBe(true);
        expect(quick.files).toBe(full.files);
        expect(quick.bytes).toBe(full.bytes);
      }
    });

    it(`${compression}: a flipped byte inside a pre-checked body fails the verify by its compressed sha256`, async () => {
      const { file, written, checked } = await write(compression);
      const run = written.prechecked.find((r) => r.archivePath.includes("agents/main/"))!;
      const fd = fs.openSync(file, "r+");
      const at = run.segment.start + Math.floor(run.segment.length / 2);
      const one = Buffer.alloc(1);
      fs.readSync(fd, one, 0, 1, at);
      fs.writeSync(fd, Buffer.from([one[0]! ^ 0x40]), 0, 1, at);
      fs.closeSync(fd);
      const result = await verifyBackup(file, { checkedDatabases: checked, prechecked: written.prechecked });
      expect(result.ok).toBe(false);
      expect(result.problem).toContain(`the compressed bytes of ${run.archivePath} differ from the ones written`);
    });

    it(`${compression}: a run that does not line up with an entry's body, or whose content the pass needs, is refused`, async () => {
      const { file, written, checked } = await write(compression);
      const runs = written.prechecked;
      const [first, second] = runs;
      const shifted: PrecheckedRun[] = [{ ...first!, segment: { ...first!.segment, start: first!.segment.start - 1, length: first!.segment.length + 1 } }, ...runs.slice(1)];
      const misnamed: PrecheckedRun[] = [{ ...first!, archivePath: second!.archivePath }, ...runs.slice(1)];
      for (const prechecked of [shifted, misnamed]) {
        const result = await verifyBackup(file, { checkedDatabases: checked, prechecked });
        expect(result.ok).toBe(false);
      }
      const misnamedResult = await verifyBackup(file, { checkedDatabases: checked, prechecked: misnamed });
      expect(misnamedResult.problem).toContain("do not line up");
      // Without the create's checked snapshots the pass must unpack the databases: it cannot take them pre-checked.
      const needy = await verifyBackup(file, { prechecked: runs });
      expect(needy.ok).toBe(false);
      expect(needy.problem).toContain("needs its content");
      // A claimed content hash that is not the manifest's fails like a sha256 mismatch.
      const lying = await verifyBackup(file, { checkedDatabases: checked, prechecked: [{ ...first!, contentSha256: "0".repeat(64) }, ...runs.slice(1)] });
      expect(lying.ok).toBe(false);
      expect(lying.problem).toContain("does not match the manifest");
    });
  }
});

describe("ParallelCompressor segment round trip", () => {
  for (const compression of compressions) {
    it(`${compression}: blockDecodesTo is true only for the exact input`, async () => {
      const input = crypto.randomBytes(300 * 1024);
      const block = await compressBlock(compression, input);
      expect(await blockDecodesTo(compression, block, input)).toBe(true);
      const other = Buffer.from(input);
      other.writeUInt8(other.readUInt8(200 * 1024) ^ 1, 200 * 1024);
      expect(await blockDecodesTo(compression, block, other)).toBe(false);
      expect(await blockDecodesTo(compression, block, input.subarray(0, input.length - 1))).toBe(false);
      expect(await blockDecodesTo(compression, block, Buffer.concat([input, Buffer.from("x")]))).toBe(false);
      expect(await blockDecodesTo(compression, Buffer.from("not compressed at all"), input)).toBe(false);
    });

    it(`${compression}: a block that does not decode back to its input fails the write; outside segments nothing is decoded`, async () => {
      let calls = 0;
      let plainCalls = 0;
      const liar = async (): Promise<boolean> => {
        calls += 1;
        return false;
      };
      const sink = async (): Promise<void> => undefined;
      const checking = new ParallelCompressor(sink, { compression, blockSize: 64 * 1024, checkSegments: true, decodesTo: liar });
      await checking.write(crypto.randomBytes(10_000));
      checking.beginSegment();
      await checking.write(crypto.randomBytes(100_000)).catch(() => undefined);
      const segment = checking.endSegment();
      await expect(segment).rejects.toThrow(/did not decode back to its input/);
      await checking.settle();
      expect(calls).toBeGreaterThanOrEqual(1);

      const counting = async (): Promise<boolean> => {
        plainCalls += 1;
        return false;
      };
      const plain = new ParallelCompressor(sink, { compression, blockSize: 64 * 1024, checkSegments: false, decodesTo: counting });
      plain.beginSegment();
      await plain.write(crypto.randomBytes(100_000));
      await plain.endSegment();
      await plain.end();
      expect(plainCalls).toBe(0);
    });
  }
});
