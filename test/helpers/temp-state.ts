// Test helpers: temp state dirs seeded from fixtures/, in-process and spawned CLI runs, tree snapshots.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { createOutput } from "../../src/cli/output.js";
import { runCli } from "../../src/cli/run-cli.js";
import { resolveStatePaths, type StatePaths } from "../../src/state/paths.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const binPath = path.join(repoRoot, "bin", "openclaw-state.js");
export const fixturesDir = path.join(repoRoot, "fixtures");

const created: string[] = [];
afterEach(() => {
  while (created.length > 0) fs.rmSync(created.pop()!, { recursive: true, force: true });
});

/** A fresh temp dir removed after the test. */
export function makeTempDir(prefix = "ocs-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export interface TempState {
  root: string;
  stateDir: string;
  paths: StatePaths;
  env: NodeJS.ProcessEnv;
}

/** A temp home with `<home>/.openclaw`, optionally copied from `fixtures/<fixture>`. */
export function makeTempState(fixture?: string): TempState {
  const root = makeTempDir();
  const stateDir = path.join(root, ".openclaw");
  if (fixture) fs.cpSync(path.join(fixturesDir, fixture), stateDir, { recursive: true });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir };
  return { root, stateDir, paths: resolveStatePaths({ env }), env };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output (no TTY; prompts answered in order from `answers`: booleans confirm, strings choose). */
export async function runInProcess(args: string[], env: NodeJS.ProcessEnv, answers: Array<boolean | string> = []): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const sink = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t) };
  const code = await runCli({
    argv: args,
    env,
    createOutput: (flags) =>
      createOutput(
        { json: flags.json, quiet: flags.quiet, verbose: flags.verbose, color: false, interactive: false, canPrompt: answers.length > 0 && !flags.json },
        sink,
        async () => answers.shift() === true,
        async () => {
          const answer = answers.shift();
          return typeof answer === "string" ? answer : undefined;
        },
      ),
  });
  return { code, stdout, stderr };
}

/** Spawns the real binary (needs `npm run build`); stdin is closed so nothing can prompt. */
export function runBin(args: string[], env: NodeJS.ProcessEnv, options: { timeoutMs?: number; nodeFlags?: string[] } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), binPath, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export interface TreeEntry {
  type: "file" | "dir" | "symlink" | "other";
  mode: number;
  size: number;
  sha256?: string;
  target?: string;
}

/** Every path under `dir` with type, mode, size and content hash: equal snapshots = byte-for-byte unchanged. */
export function snapshotTree(dir: string): Record<string, TreeEntry> {
  const out: Record<string, TreeEntry> = {};
  if (!fs.existsSync(dir)) return out;
  const walk = (current: string): void => {
    for (const name of fs.readdirSync(current).sort()) {
      const full = path.join(current, name);
      const rel = path.relative(dir, full);
      const st = fs.lstatSync(full);
      const mode = st.mode & 0o7777;
      if (st.isSymbolicLink()) out[rel] = { type: "symlink", mode, size: 0, target: fs.readlinkSync(full) };
      else if (st.isDirectory()) {
        out[rel] = { type: "dir", mode, size: 0 };
        walk(full);
      } else if (st.isFile()) {
        out[rel] = { type: "file", mode, size: st.size, sha256: crypto.createHash("sha256").update(fs.readFileSync(full)).digest("hex") };
      } else out[rel] = { type: "other", mode, size: st.size };
    }
  };
  walk(dir);
  return out;
}

export function modeOf(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

/** The uid/gid of `nobody`: permission tests run the binary as a user that permissions apply to (root reads everything). */
export const NOBODY = 65534;

/** Hands `root` and everything under it (links themselves, never their targets) to `nobody`. */
export function chownToNobody(root: string): void {
  fs.lchownSync(root, NOBODY, NOBODY);
  if (fs.lstatSync(root).isDirectory()) for (const n of fs.readdirSync(root)) chownToNobody(path.join(root, n));
}
