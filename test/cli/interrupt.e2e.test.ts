// Ctrl-C stops a command while its spinner runs on a terminal (a pty via util-linux `script`), and SIGINT off a
// terminal still ends it at once; the run's staging dir is removed first, a second Ctrl-C during that removal quits
// at once and names it, and a `kill -9`'s staging dir is swept by the next `backup create`.
import { spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLEANUP_DELAY_ENV } from "../../src/cli/interrupt.js";
import { binPath, repoRoot } from "../helpers/temp-state.js";

const scriptBin = ["/usr/bin/script", "/bin/script"].find((p) => fs.existsSync(p));
const SKIP_NOTE = scriptBin ? "" : " (skipped: util-linux `script` not found at /usr/bin/script)";
const STAGING = /^\.openclaw-backup-staging-\d+-/;

let root: string;
let stateDir: string;
let outDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  expect(fs.existsSync(path.join(repoRoot, "dist", "cli", "main.js")), "run `npm run build` first").toBe(true);
  root = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-interrupt-"));
  stateDir = path.join(root, ".openclaw");
  outDir = path.join(root, "out");
  fs.mkdirSync(stateDir);
  // 200 MB that gzip cannot shrink: `backup create` archives and verifies it for several seconds.
  const fd = fs.openSync(path.join(stateDir, "big.bin"), "w");
  const chunk = Buffer.alloc(8 * 1024 * 1024);
  for (let i = 0; i < 25; i += 1) fs.writeSync(fd, crypto.randomFillSync(chunk));
  fs.closeSync(fd);
  env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir, TERM: "xterm-256color", SHELL: "/bin/sh", LANG: "C.UTF-8" };
});

afterAll(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function stagingDirs(): string[] {
  return fs.existsSync(outDir) ? fs.readdirSync(outDir).filter((n) => STAGING.test(n)) : [];
}

/** Resolves once `check()` holds (polled), or rejects after `ms`. */
async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs `openclaw-state <args>` in a pty (util-linux `script`), types ^C once `ready(output, msSinceStart)`, and
 * returns the exit status the inner shell printed and how long after the ^C the command ended.
 */
async function ctrlCUnderPty(
  args: string,
  ready: (out: string, ms: number) => boolean,
  options: { again?: (out: string) => boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<{ exit: string | undefined; elapsed: number; out: string }> {
  // The pty gets a size (a pty without one gets no spinner); the shell survives the ^C (`trap`) to print $?.
  const inner = `stty cols 80 rows 24; trap : INT; ${quote(process.execPath)} ${quote(binPath)} ${args}; echo EXIT=$?`;
  const child = spawn(scriptBin!, ["-qfec", inner, "/dev/null"], { env: options.env ?? env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const killer = setTimeout(() => child.kill("SIGKILL"), 40_000);
  try {
    const started = Date.now();
    await waitFor(() => ready(out, Date.now() - started), 20_000, `the command to get going (output so far: ${JSON.stringify(out.slice(-300))})`);
    expect(out, "the command ended before the ^C").not.toContain("EXIT=");
    let interrupted = Date.now();
    child.stdin.write("\x03");
    if (options.again) {
      // A second ^C once `again(output)` holds; the time is then measured from it.
      await waitFor(() => options.again!(out), 5_000, `the first ^C's effect (output: ${JSON.stringify(out.slice(-300))})`);
      interrupted = Date.now();
      child.stdin.write("\x03");
    }
    await waitFor(() => /EXIT=\d+/.test(out), 10_000, `the command to end after ^C (output: ${JSON.stringify(out.slice(-300))})`);
    return { exit: out.match(/EXIT=(\d+)/)?.[1], elapsed: Date.now() - interrupted, out };
  } finally {
    clearTimeout(killer);
    child.stdin.end();
    await closed;
  }
}

describe("interrupting backup create", () => {
  it.skipIf(!scriptBin)(`Ctrl-C on a terminal while the spinner runs: exit 130 within 3 s, no archive published${SKIP_NOTE}`, async () => {
    const archive = path.join(outDir, "tty.tar.gz");
    // The spinner is on screen (its progress text) ~1.5 s into the run: the archive is being written.
    const run = await ctrlCUnderPty(`backup create --output ${quote(archive)}`, (out, ms) => out.includes("Archiving") && ms >= 1500);
    expect(run.exit, run.out.slice(-500)).toBe("130");
    expect(run.elapsed).toBeLessThan(3000);
    expect(fs.existsSync(archive)).toBe(false);
    expect(run.out).not.toContain("Backup written");
    // The staging dir (with the `.partial` archive) was removed before the process ended, and it said so.
    expect(run.out).toContain("interrupted: removing");
    expect(stagingDirs()).toEqual([]);
  });

  it("SIGINT off a terminal ends it within a second, by the signal, after removing its staging dir", async () => {
    const archive = path.join(outDir, "pipe.tar.gz");
    const before = new Set(stagingDirs());
    const child = spawn(process.execPath, [binPath, "backup", "create", "--output", archive], { env, stdio: ["ignore", "pipe", "pipe"] });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
    const killer = setTimeout(() => child.kill("SIGKILL"), 40_000);
    try {
      // Its own staging dir exists: the archive is being written.
      await waitFor(() => stagingDirs().some((n) => !before.has(n)), 20_000, "the run's staging dir");
      await new Promise((r) => setTimeout(r, 300));
      const interrupted = Date.now();
      child.kill("SIGINT");
      const result = await ended;
      expect(Date.now() - interrupted).toBeLessThan(1000);
      // Killed by the signal itself (a shell reports 130), not a clean exit after finishing the work.
      expect(result).toEqual({ code: null, signal: "SIGINT" });
      expect(fs.existsSync(archive)).toBe(false);
      // Its staging dir went before it died.
      expect(stagingDirs().filter((n) => !before.has(n))).toEqual([]);
    } finally {
      clearTimeout(killer);
    }
  });

  it.skipIf(!scriptBin)(`a second Ctrl-C on a terminal quits at once and names the staging dir left behind${SKIP_NOTE}`, async () => {
    const archive = path.join(outDir, "tty-twice.tar.gz");
    const before = new Set(stagingDirs());
    const run = await ctrlCUnderPty(`backup create --output ${quote(archive)}`, (out, ms) => out.includes("Archiving") && ms >= 1000, {
      again: (out) => out.includes("Ctrl-C again to quit at once"),
      // The cleanup is held back 10 s (test hook): only the second ^C can end the run in time.
      env: { ...env, [CLEANUP_DELAY_ENV]: "10000" },
    });
    expect(run.exit, run.out.slice(-500)).toBe("130");
    expect(run.elapsed).toBeLessThan(1000);
    const mine = stagingDirs().filter((n) => !before.has(n));
    expect(mine).toHaveLength(1);
    // `script` turns the pty's newlines into CRLF.
    expect(run.out.replace(/\r/g, "")).toContain(`left behind: ${path.join(outDir, mine[0]!)} (staging dir of an unfinished archive) — safe to delete\n`);
    expect(fs.existsSync(archive)).toBe(false);
  });

  it("a second SIGINT during the cleanup quits at once and names what is left behind", async () => {
    const archive = path.join(outDir, "twice.tar.gz");
    const before = new Set(stagingDirs());
    // The test hook holds the cleanup back 10 s: the second signal surely lands inside it.
    const child = spawn(process.execPath, [binPath, "backup", "create", "--output", archive], { env: { ...env, [CLEANUP_DELAY_ENV]: "10000" }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
    const killer = setTimeout(() => child.kill("SIGKILL"), 40_000);
    try {
      await waitFor(() => stagingDirs().some((n) => !before.has(n)), 20_000, "the run's staging dir");
      const mine = stagingDirs().find((n) => !before.has(n))!;
      await new Promise((r) => setTimeout(r, 300));
      const first = Date.now();
      child.kill("SIGINT");
      await waitFor(() => stderr.includes("interrupted: removing"), 5_000, `the first Ctrl-C's notice (stderr: ${JSON.stringify(stderr.slice(-300))})`);
      const second = Date.now();
      child.kill("SIGINT");
      const result = await ended;
      expect(Date.now() - second).toBeLessThan(1000);
      // Well before the held-back cleanup would have ended: the second signal did not wait for it.
      expect(Date.now() - first).toBeLessThan(5000);
      expect(result).toEqual({ code: null, signal: "SIGINT" });
      const dir = path.join(outDir, mine);
      expect(stderr).toContain(`left behind: ${dir} (staging dir of an unfinished archive) — safe to delete`);
      // Named, not removed: the cleanup never ran. No archive was published.
      expect(fs.existsSync(dir)).toBe(true);
      expect(fs.existsSync(archive)).toBe(false);
    } finally {
      clearTimeout(killer);
    }
  });

  it("the next backup create sweeps the killed runs' staging dirs", async () => {
    // A `kill -9` gets no cleanup at all: its staging dir stays, as the abandoned one above did.
    const before = new Set(stagingDirs());
    const child = spawn(process.execPath, [binPath, "backup", "create", "--output", path.join(outDir, "killed.tar.gz")], { env, stdio: "ignore" });
    const ended = new Promise<void>((resolve) => child.on("close", () => resolve()));
    await waitFor(() => stagingDirs().some((n) => !before.has(n)), 20_000, "the run's staging dir");
    child.kill("SIGKILL");
    await ended;
    expect(stagingDirs().length).toBeGreaterThan(0);
    // Small from here on: the leftovers, not the payload, are under test.
    fs.rmSync(path.join(stateDir, "big.bin"));
    const archive = path.join(outDir, "next.tar.gz");
    const run = spawnSync(process.execPath, [binPath, "backup", "create", "--output", archive], { env, encoding: "utf8", timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(archive)).toBe(true);
    expect(stagingDirs()).toEqual([]);
    expect(fs.readdirSync(outDir).filter((n) => n.includes(".partial"))).toEqual([]);
  });

  it.skipIf(!scriptBin)(`Ctrl-C at a confirmation prompt: exit 130, nothing deleted${SKIP_NOTE}`, async () => {
    const second = spawnSync(process.execPath, [binPath, "backup", "create", "--output", path.join(outDir, "next2.tar.gz")], { env, encoding: "utf8", timeout: 30_000 });
    expect(second.status, second.stderr).toBe(0);
    const before = fs.readdirSync(outDir).sort();
    const run = await ctrlCUnderPty(`backup prune --dir ${quote(outDir)} --keep-last 1`, (out) => out.includes("[y/N]"));
    expect(run.exit, run.out.slice(-500)).toBe("130");
    expect(run.elapsed).toBeLessThan(3000);
    expect(fs.readdirSync(outDir).sort()).toEqual(before);
  });
});

describe("interrupting backup restore", () => {
  let archive: string;
  const RESTORE_STAGING = /^\..+\.restore-\d{8}T\d{6}Z-\d+-[A-Za-z0-9]{6}$/;
  const restoreStaging = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => RESTORE_STAGING.test(n)) : []);

  beforeAll(() => {
    // The 200 MB payload again (the create tests removed it), archived plain and unverified to keep the setup short.
    const fd = fs.openSync(path.join(stateDir, "big.bin"), "w");
    const chunk = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < 25; i += 1) fs.writeSync(fd, crypto.randomFillSync(chunk));
    fs.closeSync(fd);
    archive = path.join(outDir, "restore-me.tar");
    const made = spawnSync(process.execPath, [binPath, "backup", "create", "--output", archive, "--compression", "none", "--no-verify"], { env, encoding: "utf8", timeout: 60_000 });
    expect(made.status, made.stderr).toBe(0);
  }, 90_000);

  /** Starts `backup restore <archive> --target <dir> --yes` and waits until its staging copy exists. */
  async function startRestore(target: string, extraEnv: NodeJS.ProcessEnv = {}) {
    const child = spawn(process.execPath, [binPath, "backup", "restore", archive, "--target", target, "--yes"], { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
    const killer = setTimeout(() => child.kill("SIGKILL"), 40_000);
    ended.finally(() => clearTimeout(killer));
    await waitFor(() => restoreStaging(target).length > 0, 20_000, "the restore's staging copy");
    await new Promise((r) => setTimeout(r, 200));
    return { child, ended, stderr: () => stderr };
  }

  it("SIGINT while extracting removes the staging copy, swaps nothing, and ends by SIGINT", async () => {
    const target = path.join(root, "restore-once");
    const run = await startRestore(target);
    const interrupted = Date.now();
    run.child.kill("SIGINT");
    const result = await run.ended;
    expect(Date.now() - interrupted).toBeLessThan(1000);
    expect(result, run.stderr()).toEqual({ code: null, signal: "SIGINT" });
    expect(restoreStaging(target)).toEqual([]);
    expect(fs.existsSync(path.join(target, "state"))).toBe(false);
  });

  it("a second SIGINT names the restore staging copy left behind", async () => {
    const target = path.join(root, "restore-twice");
    const run = await startRestore(target, { [CLEANUP_DELAY_ENV]: "10000" });
    run.child.kill("SIGINT");
    await waitFor(() => run.stderr().includes("interrupted: removing"), 5_000, "the first Ctrl-C's notice");
    const second = Date.now();
    run.child.kill("SIGINT");
    const result = await run.ended;
    expect(Date.now() - second).toBeLessThan(1000);
    expect(result).toEqual({ code: null, signal: "SIGINT" });
    const [staging] = restoreStaging(target);
    expect(staging).toBeDefined();
    expect(run.stderr()).toContain(`left behind: ${path.join(target, staging!)} (restore staging copy of ${path.join(target, "state")}) — safe to delete`);
    expect(fs.existsSync(path.join(target, "state"))).toBe(false);
  });
});
