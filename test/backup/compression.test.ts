// gzip and zstd archives: default per runtime, naming, detection by magic bytes, GNU tar interop, the Node 20 message.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { resolveArchiveOutput } from "../../src/backup/archive-output.js";
import { compressionForName, compressSmallBlock, decodeSmallSync, defaultCompression, parseCompression, sniffCompression, zstdSupported } from "../../src/backup/compression.js";
import { createBackup } from "../../src/backup/create-backup.js";
import { ParallelCompressor } from "../../src/backup/parallel-compress.js";
import { encodeEntryHeader } from "../../src/backup/tar-format.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { UsageError } from "../../src/core/errors.js";
import { agentDb, countRows, seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, runBin } from "../helpers/temp-state.js";

const hasZstdCli = spawnSync("zstd", ["--version"]).status === 0;
if (!hasZstdCli) console.warn("note: the zstd CLI is not installed (apt-get install zstd): GNU tar --zstd interop checks are skipped");
const zstdSync = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;

describe("compression basics", () => {
  it("defaults to zstd exactly where node:zlib has it", () => {
    expect(zstdSupported()).toBe(typeof (zlib as unknown as Record<string, unknown>).zstdCompress === "function");
    expect(defaultCompression()).toBe(zstdSupported() ? "zstd" : "gzip");
  });

  it("names and flag values", () => {
    expect(compressionForName("/x/a.tar.gz")).toBe("gzip");
    expect(compressionForName("/x/a.TGZ")).toBe("gzip");
    expect(compressionForName("/x/a.tar.zst")).toBe("zstd");
    expect(compressionForName("/x/a.tzst")).toBe("zstd");
    // A plain tar is `--compression none` (issue 25).
    expect(compressionForName("/x/a.tar")).toBe("none");
    expect(compressionForName("/x/a.zip")).toBeNull();
    expect(parseCompression(" ZSTD ")).toBe("zstd");
    expect(() => parseCompression("xz")).toThrow(/Invalid --compression value "xz": use zstd, gzip or none/);
  });

  it("an explicit --compression and a contradicting --output name is a usage error; a bare dir gets the matching extension", () => {
    const state = makeTempState("legacy-state");
    const when = new Date("2026-01-02T03:04:05.678Z");
    expect(() => resolveArchiveOutput(path.join(state.root, "a.tar.gz"), state.paths, when, "zstd")).toThrow(/names a gzip archive but --compression zstd/);
    const gz = resolveArchiveOutput(`${state.root}/out/`, state.paths, when, "gzip");
    expect(path.basename(gz.archivePath)).toBe("2026-01-02T03-04-05.678Z-openclaw-backup.tar.gz");
    expect(gz.root).toBe("2026-01-02T03-04-05.678Z-openclaw-backup");
    expect(resolveArchiveOutput(path.join(state.root, "named.tar.gz"), state.paths, when).compression).toBe("gzip");
  });

  it("blocks and segments: concatenated members/frames decode as one stream; a copied segment must hash as recorded", async () => {
    const dir = makeTempDir();
    const data = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `line ${i} ${i % 7 === 0 ? "seven" : "other"}\n`).join(""));
    for (const compression of zstdSupported() ? (["gzip", "zstd"] as const) : (["gzip"] as const)) {
      const out: Buffer[] = [];
      const c = new ParallelCompressor(async (b) => void out.push(Buffer.from(b)), { compression, blockSize: 64 * 1024, concurrency: 3 });
      await c.write(data.subarray(0, 1000));
      c.beginSegment();
      await c.write(data.subarray(1000, 300_000));
      const seg = await c.endSegment();
      await c.write(data.subarray(300_000));
      await c.end();
      const bytes = Buffer.concat(out);
      const decode = (b: Buffer): Buffer => (compression === "gzip" ? zlib.gunzipSync(b) : zstdSync!(b));
      expect(decode(bytes).equals(data)).toBe(true);
      // The segment alone decodes to exactly its input: it starts and ends on block boundaries.
      expect(decode(bytes.subarray(seg.start, seg.start + seg.length)).equals(data.subarray(1000, 300_000))).toBe(true);

      const source = path.join(dir, `src-${compression}`);
      fs.writeFileSync(source, bytes);
      const copied: Buffer[] = [];
      const d = new ParallelCompressor(async (b) => void copied.push(Buffer.from(b)), { compression });
      const again = await d.copySegment(source, seg);
      await d.end();
      expect(again).toEqual({ start: 0, length: seg.length, sha256: seg.sha256 });
      const e = new ParallelCompressor(async () => undefined, { compression });
      await expect(e.copySegment(source, { ...seg, sha256: "0".repeat(64) })).rejects.toMatchObject({ code: "reuse_mismatch" });
    }
  });
});

describe("stored tar headers (no codec call)", () => {
  const header = encodeEntryHeader({ path: "root/payload/state/migrated/a.jsonl", type: "File", size: 40_000, mode: 0o600, mtime: new Date(1_700_000_000_000) });
  const paxHeader = encodeEntryHeader({ path: `root/payload/${"d/".repeat(80)}long.jsonl`, type: "File", size: 40_000, mode: 0o600, mtime: new Date(1_700_000_000_000) });

  it("a lone header is one stored gzip member / raw zstd frame that gzip, zstd and our hand decoder read; larger blocks are compressed", async () => {
    const dir = makeTempDir();
    for (const compression of ["gzip", "zstd"] as const) {
      const one = await compressSmallBlock(compression, header);
      expect(one.length).toBe(header.length + (compression === "gzip" ? 23 : 10));
      expect(one.subarray(compression === "gzip" ? 15 : 10).subarray(0, header.length).equals(header)).toBe(true);
      const two = Buffer.concat([one, await compressSmallBlock(compression, paxHeader)]);
      const both = Buffer.concat([header, paxHeader]);
      expect(decodeSmallSync(compression, two, 1 << 20).equals(both)).toBe(true);
      // Output past the caller's bound is not returned by the hand decoder (the codec then refuses it).
      if (compression === "gzip") expect(() => decodeSmallSync(compression, two, 1000)).toThrow();
      const file = path.join(dir, `two.${compression}`);
      fs.writeFileSync(file, two);
      if (compression === "gzip") expect(zlib.gunzipSync(two).equals(both)).toBe(true);
      if (compression === "gzip" || hasZstdCli) {
        const cli = spawnSync(compression, ["-dc", file]);
        expect(cli.status).toBe(0);
        expect(cli.stdout.equals(both)).toBe(true);
      }
      const big = Buffer.alloc(4096, 0x61);
      expect((await compressSmallBlock(compression === "zstd" && !zstdSupported() ? "gzip" : compression, big)).length).toBeLessThan(200);
    }
  });

  it("a damaged stored gzip member is not unwrapped by hand: the codec refuses it", async () => {
    const one = await compressSmallBlock("gzip", header);
    for (const at of [20, one.length - 6]) {
      const bad = Buffer.from(one);
      bad[at]! ^= 0x01;
      expect(() => decodeSmallSync("gzip", bad, 1 << 20)).toThrow();
    }
  });

  it("an archive of plain files with headers stored verifies, restores byte-exact, and lists with GNU tar", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const dir = path.join(state.paths.stateDir, "notes");
    fs.mkdirSync(dir, { recursive: true });
    const files = Array.from({ length: 5 }, (_, i) => [`notes/${i}.jsonl`, Buffer.from(`{"n":${i}}\n`.repeat(3000 + i))] as const);
    for (const [rel, bytes] of files) fs.writeFileSync(path.join(state.paths.stateDir, rel), bytes);
    const made = await createBackup({ paths: state.paths, compression: "gzip" });
    expect((await verifyBackup(made.archivePath)).ok).toBe(true);
    const listed = spawnSync("tar", ["-tzf", made.archivePath], { encoding: "utf8" });
    expect(listed.status, listed.stderr).toBe(0);
    for (const [rel] of files) expect(listed.stdout).toContain(rel);
    const target = path.join(makeTempDir(), "t");
    await restoreBackup({ paths: state.paths, archivePath: made.archivePath, target, confirm: async () => true });
    for (const [rel, bytes] of files) expect(fs.readFileSync(path.join(target, "state", rel)).equals(bytes)).toBe(true);
  });
});

describe.runIf(zstdSupported())("zstd archives (Node >= 22.15)", () => {
  it("create writes .tar.zst by default; verify and restore read it; GNU tar --zstd extracts it", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const made = await createBackup({ paths: state.paths });
    expect(made.compression).toBe("zstd");
    expect(made.archivePath).toMatch(/\.tar\.zst$/);
    expect(sniffCompression(made.archivePath)).toBe("zstd");
    expect((await verifyBackup(made.archivePath)).ok).toBe(true);
    if (hasZstdCli) {
      const x = makeTempDir();
      const tar = spawnSync("tar", ["--zstd", "-xf", made.archivePath, "-C", x], { encoding: "utf8" });
      expect(tar.status, tar.stderr).toBe(0);
      const root = path.join(x, path.basename(made.archivePath, ".tar.zst"));
      expect(JSON.parse(fs.readFileSync(path.join(root, "manifest.json"), "utf8")).runId).toBe(made.runId);
      const db = path.join(root, "payload/state/agents/main/agent/openclaw-agent.sqlite");
      // The sqlite3 shell as an independent reader of what we wrote.
      expect(spawnSync("sqlite3", [db, "SELECT count(*) FROM sessions"], { encoding: "utf8" }).stdout.trim()).toBe("20");
    }
    const target = path.join(makeTempDir(), "restored");
    const restored = await restoreBackup({ paths: state.paths, archivePath: made.archivePath, target, confirm: async () => true });
    expect(restored.status).toBe("restored");
  });

  it("detects the codec by magic bytes, not by name, and refuses a corrupt zstd stream", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const gz = await createBackup({ paths: state.paths, compression: "gzip", verify: false });
    const zst = await createBackup({ paths: state.paths, verify: false });
    const dir = makeTempDir();
    const gzNamedZst = path.join(dir, "really-gzip.tar.zst");
    const zstNamedGz = path.join(dir, "really-zstd.tar.gz");
    fs.copyFileSync(gz.archivePath, gzNamedZst);
    fs.copyFileSync(zst.archivePath, zstNamedGz);
    expect((await verifyBackup(gzNamedZst)).ok).toBe(true);
    expect((await verifyBackup(zstNamedGz)).ok).toBe(true);

    const flipped = path.join(dir, "flipped.tar.zst");
    const bytes = fs.readFileSync(zst.archivePath);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    fs.writeFileSync(flipped, bytes);
    const bad = await verifyBackup(flipped);
    expect(bad.ok).toBe(false);
    expect(bad.problem).toMatch(/truncated or corrupt \(zstd|sha256/);
    const truncated = path.join(dir, "truncated.tar.zst");
    fs.writeFileSync(truncated, fs.readFileSync(zst.archivePath).subarray(0, 4000));
    expect((await verifyBackup(truncated)).problem).toMatch(/truncated or corrupt|missing/);
  });

  it.runIf(hasZstdCli)("reads an archive recompressed by the zstd CLI (one frame, no block structure)", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const gz = await createBackup({ paths: state.paths, compression: "gzip", verify: false });
    const out = path.join(makeTempDir(), "cli.tar.zst");
    const run = spawnSync("sh", ["-c", `gzip -dc "${gz.archivePath}" | zstd -q -19 -o "${out}"`]);
    expect(run.status).toBe(0);
    const verified = await verifyBackup(out);
    expect(verified.ok, verified.problem).toBe(true);
    expect(countRows(agentDb(state), "sessions")).toBe(20);
  });
});

/** A skippable frame (magic 0x184D2A50 + low, then the payload's length) as pzstd and other tools write them. */
function skippableFrame(low: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32LE(0x184d2a50 + low, 0);
  head.writeUInt32LE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

/** One of our archives as its tar bytes (decompressed by the zstd CLI), with the state it came from. */
async function ourTar(): Promise<{ state: ReturnType<typeof makeTempState>; tar: Buffer }> {
  const state = makeTempState("legacy-state");
  seedState(state);
  const made = await createBackup({ paths: state.paths, verify: false });
  const tar = spawnSync("zstd", ["-d", "-q", "-c", made.archivePath], { maxBuffer: 1 << 30 });
  expect(tar.status, String(tar.stderr)).toBe(0);
  return { state, tar: tar.stdout };
}

function zstdCli(args: string[], input: Buffer, cmd = "zstd"): Buffer {
  const run = spawnSync(cmd, args, { input, maxBuffer: 1 << 30 });
  expect(run.status, String(run.stderr)).toBe(0);
  return run.stdout;
}

/** verify passes, restore --target writes the state, and its agent database holds the seeded sessions. */
async function verifyAndRestore(state: ReturnType<typeof makeTempState>, archive: string): Promise<void> {
  const verified = await verifyBackup(archive);
  expect(verified.ok, verified.problem).toBe(true);
  const target = path.join(makeTempDir(), "restored");
  const restored = await restoreBackup({ paths: state.paths, archivePath: archive, target, confirm: async () => true });
  expect(restored.status).toBe("restored");
  const db = path.join(target, "state/agents/main/agent/openclaw-agent.sqlite");
  expect(spawnSync("sqlite3", [db, "SELECT count(*) FROM sessions"], { encoding: "utf8" }).stdout.trim()).toBe("20");
}

describe.runIf(zstdSupported() && hasZstdCli)("zstd archives other tools wrote (Node >= 22.15)", () => {
  it("zstd --long=31 (and --long=27) from a pipe declares a 2 GiB (128 MiB) window over a small archive: verified and restored", async () => {
    const { state, tar } = await ourTar();
    for (const long of ["--long=31", "--long=27"]) {
      const z = zstdCli(["-q", "-c", long], tar);
      // Not single-segment, no content size: the declared window is the one --long asked for.
      expect(z[4]! & 0x20).toBe(0);
      const archive = path.join(makeTempDir(), `long.tar.zst`);
      fs.writeFileSync(archive, z);
      await verifyAndRestore(state, archive);
    }
  });

  it.runIf(spawnSync("pzstd", ["--version"]).status === 0)("pzstd's archive (it starts with a skippable frame) is verified and restored; `backup verify` exits 0", async () => {
    const { state, tar } = await ourTar();
    const z = zstdCli(["-q", "-p", "2", "-c"], tar, "pzstd");
    expect(z.readUInt32LE(0)).toBe(0x184d2a50);
    const archive = path.join(makeTempDir(), "pzstd.tar.zst");
    fs.writeFileSync(archive, z);
    expect(sniffCompression(archive)).toBe("zstd");
    await verifyAndRestore(state, archive);
    const run = await runBin(["backup", "verify", archive], state.env);
    expect(run.code, run.stderr).toBe(0);
  });

  it("skippable frames before, between and after the frames of an archive are skipped", async () => {
    const { state, tar } = await ourTar();
    const half = Math.floor(tar.length / 2);
    const z = Buffer.concat([
      skippableFrame(0, Buffer.from("index")),
      zstdCli(["-q", "-c"], tar.subarray(0, half)),
      skippableFrame(15, Buffer.alloc(0)),
      skippableFrame(4, Buffer.alloc(100_000, 7)),
      zstdCli(["-q", "-c", "--no-check"], tar.subarray(half)),
      skippableFrame(9, Buffer.from("trailer")),
    ]);
    const archive = path.join(makeTempDir(), "skippable.tar.zst");
    fs.writeFileSync(archive, z);
    await verifyAndRestore(state, archive);
  });

  it("a frame that needs a window past the limit is refused with the limit and the flag, not called corrupt; nothing is restored", async () => {
    const { state } = await ourTar();
    // Declares a 2 GiB window and 1 GiB of content: the window it needs is 1 GiB.
    const fcs = Buffer.alloc(8);
    fcs.writeBigUInt64LE(1n << 30n);
    const archive = path.join(makeTempDir(), "huge-window.tar.zst");
    fs.writeFileSync(archive, Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xc0, (31 - 10) << 3]), fcs, Buffer.from([0x03, 0x00, 0x01, 0x00])]));
    const checked = await verifyBackup(archive);
    expect(checked.ok).toBe(false);
    expect(checked.problem).not.toMatch(/corrupt/);
    expect(checked.problem).toMatch(/declares a 2(\.0)? GiB window \(window log 31\) and its data needs more than the 128(\.0)? MiB \(window log 27\) openclaw-state accepts; recompress it with a smaller window: `zstd -d --long=31 < /);
    const target = path.join(makeTempDir(), "restored");
    await expect(restoreBackup({ paths: state.paths, archivePath: archive, target, confirm: async () => true })).rejects.toThrow(/window log 27/);
    expect(fs.existsSync(target)).toBe(false);
  });
});

describe.skipIf(zstdSupported())("zstd on a Node without it (Node 20)", () => {
  it("create --compression zstd is a usage error naming the requirement; default is gzip", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    await expect(createBackup({ paths: state.paths, compression: "zstd" })).rejects.toThrow(UsageError);
    await expect(createBackup({ paths: state.paths, output: path.join(state.root, "x.tar.zst") })).rejects.toThrow(/zstd compression needs Node\.js 22\.15 or newer/);
    const run = await runBin(["backup", "create", "--compression", "zstd"], state.env);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect((await createBackup({ paths: state.paths, verify: false })).archivePath).toMatch(/\.tar\.gz$/);
  });

  it.runIf(hasZstdCli)("with the zstd CLI turned off, verify and restore of a zstd archive fail with one line: the requirement and the zstd -d | tar x fallback", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const gz = await createBackup({ paths: state.paths, verify: false });
    const zst = path.join(makeTempDir(), "archive.tar.zst");
    expect(spawnSync("sh", ["-c", `gzip -dc "${gz.archivePath}" | zstd -q -o "${zst}"`]).status).toBe(0);
    // With the CLI on (the default), Node 20 reads it through `zstd -d`.
    const withCli = await runBin(["backup", "verify", zst], state.env);
    expect(withCli.code, withCli.stderr).toBe(0);
    state.env = { ...state.env, OPENCLAW_STATE_ZSTD_CLI: "0" };
    for (const args of [["backup", "verify", zst], ["backup", "restore", zst, "--yes", "--target", path.join(state.root, "t")]]) {
      const run = await runBin(args, state.env);
      expect(run.code).toBe(1);
      const lines = run.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/zstd-compressed and reading it needs Node\.js 22\.15 or newer/);
      expect(lines[0]).toContain(`zstd -d < ${zst} | tar x`);
    }
    expect(fs.existsSync(path.join(state.root, "t"))).toBe(false);
    // list and prune leave it alone and say why.
    fs.copyFileSync(zst, path.join(state.paths.backupDir, "2026-01-01T00-00-00.000Z-openclaw-backup.tar.zst"));
    const listed = await runBin(["backup", "list"], state.env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/unreadable\s+zstd\s.*\.tar\.zst\n\s+↳ zstd: needs Node\.js 22\.15 or newer, or the zstd command, to read/);
    const pruned = await runBin(["backup", "prune", "--keep-last", "1", "--yes", "--json"], state.env);
    expect(JSON.parse(pruned.stdout).ignored).toEqual([expect.objectContaining({ reason: expect.stringMatching(/zstd archive this Node cannot read/) })]);
  });
});
