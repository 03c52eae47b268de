// Ctrl-C stops a command while its spinner runs on a terminal (a pty via util-linux `script`), and SIGINT off a
// terminal still kills at once; the killed run's staging dir is swept by the next `backup create`.
import { spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
async function ctrlCUnderPty(args: string, ready: (out: string, ms: number) => boolean): Promise<{ exit: string | undefined; elapsed: number; out: string }> {
  // The pty gets a size (a pty without one gets no spinner); the shell survives the ^C (`trap`) to print $?.
  const inner = `stty cols 80 rows 24; trap : INT; ${quote(process.execPath)} ${quote(binPath)} ${args}; echo EXIT=$?`;
  const child = spawn(scriptBin!, ["-qfec", inner, "/dev/null"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const killer = setTimeout(() => child.kill("SIGKILL"), 40_000);
  try {
    const started = Date.now();
    await waitFor(() => ready(out, Date.now() - started), 20_000, `the command to get going (output so far: ${JSON.stringify(out.slice(-300))})`);
    expect(out, "the command ended before the ^C").not.toContain("EXIT=");
    const interrupted = Date.now();
    child.stdin.write("\x03");
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
    // What the killed run left: its staging dir (with the `.partial` archive), swept by a later run below.
    expect(stagingDirs().length).toBeGreaterThan(0);
  });

  it("SIGINT off a terminal kills at once (no handler waits for a busy event loop)", async () => {
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
    } finally {
      clearTimeout(killer);
    }
  });

  it("the next backup create sweeps the killed runs' staging dirs", () => {
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
