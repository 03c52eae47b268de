// zstd through the zstd CLI: the path taken and the fallback, damage vs failure, killed on destroy, no hang, bounded.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { createDecompressor, isCorruptStreamError, zstdSupported } from "../../src/backup/compression.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { ZSTD_CLI_ARGS, ZSTD_CLI_ENV, ZstdChildDecoder, zstdCliMode } from "../../src/backup/zstd-child-decoder.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState } from "../helpers/temp-state.js";

const realZstd = spawnSync("sh", ["-c", "command -v zstd"], { encoding: "utf8" }).stdout.trim();
const savedPath = process.env.PATH;
const savedSwitch = process.env[ZSTD_CLI_ENV];
// The CLI also for long reads (the default uses it only where node:zlib has no zstd; a test below checks that).
beforeEach(() => {
  process.env[ZSTD_CLI_ENV] = "1";
});
afterEach(() => {
  process.env.PATH = savedPath;
  if (savedSwitch === undefined) delete process.env[ZSTD_CLI_ENV];
  else process.env[ZSTD_CLI_ENV] = savedSwitch;
});

/** Puts a `zstd` shell script first on PATH; returns the file it may log to. */
function fakeZstd(body: string): string {
  const dir = makeTempDir();
  const log = path.join(dir, "calls.log");
  fs.writeFileSync(path.join(dir, "zstd"), `#!/bin/sh\n${body.replaceAll("$LOG", JSON.stringify(log))}\n`, { mode: 0o755 });
  process.env.PATH = `${dir}:${savedPath}`;
  return log;
}

/** A zstd archive of a seeded state written by the zstd CLI (so this runs on Node 20 too), with its state. */
async function zstdArchive(): Promise<{ state: ReturnType<typeof makeTempState>; archive: string }> {
  const state = makeTempState("legacy-state");
  seedState(state);
  const made = await createBackup({ paths: state.paths, compression: "none", verify: false });
  const archive = path.join(makeTempDir(), "cli.tar.zst");
  expect(spawnSync("zstd", ["-q", "-c", made.archivePath, "-o", archive]).status).toBe(0);
  return { state, archive };
}

async function drain(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

describe.runIf(realZstd !== "")("zstd through the zstd CLI", () => {
  it("starts `zstd -d -q -c --memory=2048MB` (the decoder's own window bound, 2^31) and reads only stdin", () => {
    expect(ZSTD_CLI_ARGS).toEqual(["-d", "-q", "-c", "--memory=2048MB"]);
    expect(zstdCliMode({})).toBe("auto");
    for (const off of ["0", "off", "false", "no", " OFF "]) expect(zstdCliMode({ [ZSTD_CLI_ENV]: off })).toBe("off");
    for (const on of ["1", "on", "true", "yes", " Yes "]) expect(zstdCliMode({ [ZSTD_CLI_ENV]: on })).toBe("on");
    expect(zstdCliMode({ [ZSTD_CLI_ENV]: "maybe" })).toBe("auto");
  });

  it("verify and restore take the CLI path: the child is started with those arguments, and the state comes back", async () => {
    const { state, archive } = await zstdArchive();
    const log = fakeZstd(`echo "$*" >> $LOG\nexec ${JSON.stringify(realZstd)} "$@"`);
    const verified = await verifyBackup(archive);
    expect(verified.ok, verified.problem).toBe(true);
    const target = path.join(makeTempDir(), "restored");
    expect((await restoreBackup({ paths: state.paths, archivePath: archive, target, confirm: async () => true })).status).toBe("restored");
    const db = path.join(target, "state/agents/main/agent/openclaw-agent.sqlite");
    expect(spawnSync("sqlite3", [db, "SELECT count(*) FROM sessions"], { encoding: "utf8" }).stdout.trim()).toBe("20");
    const calls = fs.readFileSync(log, "utf8").trim().split("\n");
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const call of calls) expect(call).toBe(ZSTD_CLI_ARGS.join(" "));
  });

  it("by default (unset) verify uses node:zlib's decoder where it has zstd, and the CLI only where it has none", async () => {
    const { archive } = await zstdArchive();
    const log = fakeZstd(`echo "$*" >> $LOG\nexec ${JSON.stringify(realZstd)} "$@"`);
    delete process.env[ZSTD_CLI_ENV];
    const verified = await verifyBackup(archive);
    expect(verified.ok, verified.problem).toBe(true);
    expect(fs.existsSync(log)).toBe(!zstdSupported());
  });

  it("falls back to node:zlib's decoder when turned off or when no zstd is on PATH (Node >= 22.15), else says what is missing", async () => {
    const { archive } = await zstdArchive();
    const log = fakeZstd(`echo "$*" >> $LOG\nexec ${JSON.stringify(realZstd)} "$@"`);
    process.env[ZSTD_CLI_ENV] = "0";
    expect(ZstdChildDecoder.start()).toBeNull();
    const off = await verifyBackup(archive).catch((error: Error) => ({ ok: false, problem: error.message }));
    delete process.env[ZSTD_CLI_ENV];
    process.env.PATH = makeTempDir();
    expect(ZstdChildDecoder.start()).toBeNull();
    const missing = await verifyBackup(archive).catch((error: Error) => ({ ok: false, problem: error.message }));
    expect(fs.existsSync(log)).toBe(false);
    for (const run of [off, missing]) {
      if (zstdSupported()) expect(run.ok, run.problem).toBe(true);
      else expect(run.problem).toMatch(/zstd-compressed and reading it needs Node\.js 22\.15 or newer or the zstd command on PATH/);
    }
  });

  it("a flipped byte the CLI finds (checksum, corrupt block) is reported as truncated or corrupt; nothing is restored", async () => {
    const { state, archive } = await zstdArchive();
    const bytes = fs.readFileSync(archive);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    const flipped = path.join(makeTempDir(), "flipped.tar.zst");
    fs.writeFileSync(flipped, bytes);
    const checked = await verifyBackup(flipped);
    expect(checked.ok).toBe(false);
    expect(checked.problem).toMatch(/truncated or corrupt \(zstd: corrupt zstd data: zstd -d exited with status 1|sha256/);
    const target = path.join(makeTempDir(), "restored");
    await expect(restoreBackup({ paths: state.paths, archivePath: flipped, target, confirm: async () => true })).rejects.toMatchObject({ code: "archive_invalid" });
    expect(fs.existsSync(target)).toBe(false);
  });

  it("a child that dies early (status 1 without reading its input) is corrupt data, and nothing hangs", async () => {
    fakeZstd(`head -c 1000 >/dev/null\necho "zstd: /*stdin*\\\\: Data corruption detected" >&2\nexit 1`);
    const input = spawnSync(realZstd, ["-q", "-c", "--no-check"], { input: crypto.randomBytes(8 * 1024 * 1024), maxBuffer: 1 << 30 }).stdout;
    const decoder = createDecompressor("zstd", "test.tar.zst", { long: true });
    decoder.end(input);
    const error = await drain(decoder).then(() => null, (e: unknown) => e);
    expect(String(error)).toMatch(/corrupt zstd data: zstd -d exited with status 1 \(zstd: .*Data corruption detected\)/);
    expect(isCorruptStreamError(error)).toBe(true);
  });

  it("a child killed by a signal or out of memory is a failure, not damage", async () => {
    for (const body of ["kill -9 $$", `echo "zstd: error 11 : Allocation error : not enough memory" >&2\nexit 1`]) {
      fakeZstd(body);
      const decoder = createDecompressor("zstd", "test.tar.zst", { long: true });
      decoder.end(spawnSync(realZstd, ["-q", "-c"], { input: Buffer.alloc(1000) }).stdout);
      const error = await drain(decoder).then(() => null, (e: unknown) => e);
      expect(error).toMatchObject({ code: "zstd_cli_failed" });
      expect(isCorruptStreamError(error)).toBe(false);
    }
  });

  it("destroying the stream kills the child and it is reaped; an empty stream decodes to nothing", async () => {
    const child = ZstdChildDecoder.start()!;
    child.write(spawnSync(realZstd, ["-q", "-c"], { input: crypto.randomBytes(4 * 1024 * 1024), maxBuffer: 1 << 30 }).stdout.subarray(0, 1024 * 1024));
    const pid = child.pid;
    child.destroy();
    await child.exited;
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    const empty = ZstdChildDecoder.start()!;
    empty.end();
    expect((await drain(empty)).length).toBe(0);
    await empty.exited;
  });

  it("holds a bounded amount when nobody reads (backpressure), and decodes every byte when read", async () => {
    const plain = Buffer.alloc(64 * 1024 * 1024);
    for (let i = 0; i < plain.length; i += 4096) plain.writeUInt32LE(i, i);
    const input = spawnSync(realZstd, ["-q", "-c"], { input: plain, maxBuffer: 1 << 30 }).stdout;
    const decoder = createDecompressor("zstd", "test.tar.zst", { long: true });
    decoder.end(input);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(decoder.readableLength).toBeLessThanOrEqual(4 * 1024 * 1024);
    const out = await drain(decoder);
    expect(crypto.createHash("sha256").update(out).digest("hex")).toBe(crypto.createHash("sha256").update(plain).digest("hex"));
  });
});
