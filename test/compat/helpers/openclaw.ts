// Runs a pinned OpenClaw release's CLI in a throwaway sandbox (own HOME, state dir, tmp), under a deadline.
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inject } from "vitest";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export interface PinnedVersion {
  version: string;
  role: string;
  era: "sqlite" | "files";
  globalUserVersion: number | null;
  agentUserVersion: number | null;
  note: string;
}

/** scripts/compat/versions.json: the one list of releases the suite installs. */
export function pinnedVersions(): { minNode: string; versions: PinnedVersion[] } {
  return JSON.parse(readFileSync(join(REPO_ROOT, "scripts", "compat", "versions.json"), "utf8")) as { minNode: string; versions: PinnedVersion[] };
}

export interface InstallResult {
  ok: boolean;
  version: string;
  dir: string;
  entry: string;
  reused?: boolean;
  reason?: string;
}

export interface CompatSetup {
  root: string;
  node: string;
  results: InstallResult[];
}

declare module "vitest" {
  export interface ProvidedContext {
    openclawCompat: CompatSetup;
  }
}

export interface OpenClawInstall {
  version: string;
  /** The package's CLI entry (node_modules/openclaw/openclaw.mjs). */
  entry: string;
}

/**
 * The install of `version` made by the global setup, or null with a loud note on stderr: callers skip their tests
 * (describe.skipIf(!install)) so a registry outage shows up as skipped, never as passed.
 */
export function openclawInstall(version: string): OpenClawInstall | null {
  // Undefined when a file of this suite runs under another vitest config (no global setup installed anything).
  const setup = inject("openclawCompat") as CompatSetup | undefined;
  if (!setup) {
    process.stderr.write(`\ncompat: SKIPPED — openclaw@${version}: not installed; run the compat suite with \`npm run test:compat\`\n\n`);
    return null;
  }
  const result = setup.results.find((r) => r.version === version);
  if (result?.ok) return { version, entry: result.entry };
  const why = result ? (result.reason ?? "unknown failure") : "not installed by the global setup (is it in scripts/compat/versions.json?)";
  process.stderr.write(`\ncompat: SKIPPED — could not install openclaw@${version}: ${why}\n\n`);
  return null;
}

export interface Sandbox {
  root: string;
  home: string;
  stateDir: string;
  tmp: string;
  /** Removes the sandbox unless OPENCLAW_STATE_COMPAT_KEEP=1 (then prints where it is). */
  cleanup(): void;
}

/**
 * A fresh temp dir with home/, state/ and tmp/ for one OpenClaw run; state/ starts empty. `stateUnderHome`: the state
 * dir is home/.openclaw instead, the default state dir, for legacy files OpenClaw reads from `~/.openclaw/` only.
 */
export function makeSandbox(label = "run", options: { stateUnderHome?: boolean } = {}): Sandbox {
  const root = mkdtempSync(join(tmpdir(), `openclaw-compat-${label.replace(/[^a-z0-9.-]/gi, "_")}-`));
  const sandbox: Sandbox = {
    root,
    home: join(root, "home"),
    stateDir: options.stateUnderHome ? join(root, "home", ".openclaw") : join(root, "state"),
    tmp: join(root, "tmp"),
    cleanup() {
      if (process.env.OPENCLAW_STATE_COMPAT_KEEP === "1") process.stderr.write(`compat: kept sandbox ${root}\n`);
      else rmSync(root, { recursive: true, force: true });
    },
  };
  for (const dir of [sandbox.home, sandbox.stateDir, sandbox.tmp]) mkdirSync(dir, { recursive: true });
  return sandbox;
}

export interface RunOptions {
  timeoutMs?: number;
  /** Extra variables on top of the isolated environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** runDoctorFix only: written as the copy's openclaw.json (over the tree's own) before the doctor runs. */
  config?: object;
  /** runDoctorFix only: the state dir is `~/.openclaw` (makeSandbox's stateUnderHome). */
  stateUnderHome?: boolean;
}

export interface RunResult {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

/**
 * The environment OpenClaw sees: nothing inherited but PATH (this Node first) and the locale, so a developer's
 * OPENCLAW_* variables, API keys and real ~/.openclaw can never leak into a run.
 */
export function isolatedEnv(sandbox: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? "/usr/bin:/bin"}`,
    LANG: process.env.LANG ?? "C.UTF-8",
    TZ: "UTC",
    HOME: sandbox.home,
    USERPROFILE: sandbox.home,
    XDG_CONFIG_HOME: join(sandbox.home, ".config"),
    XDG_CACHE_HOME: join(sandbox.home, ".cache"),
    XDG_DATA_HOME: join(sandbox.home, ".local", "share"),
    XDG_STATE_HOME: join(sandbox.home, ".local", "state"),
    TMPDIR: sandbox.tmp,
    OPENCLAW_STATE_DIR: sandbox.stateDir,
    OPENCLAW_DISABLE_UPDATE_CHECK: "1",
    NO_COLOR: "1",
    ...extra,
  };
}

/** Runs `openclaw <args>` of one release under this Node (>= 24.16, checked by the setup); kills its process group at the deadline. */
export function runOpenClaw(install: OpenClawInstall, sandbox: Sandbox, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  const command = `openclaw@${install.version} ${args.join(" ")}`;
  const started = Date.now();
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [install.entry, ...args], {
      cwd: options.cwd ?? sandbox.root,
      env: isolatedEnv(sandbox, options.env),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup("SIGTERM");
      setTimeout(() => killGroup("SIGKILL"), 5_000).unref();
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolvePromise({ command, code: null, signal: null, stdout, stderr: `${stderr}\n${error.message}`, timedOut, durationMs: Date.now() - started });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // A daemon the CLI left behind would outlive the sandbox; the group is ours alone.
      killGroup("SIGKILL");
      resolvePromise({ command, code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started });
    });
  });
}

/** One line for assertion messages: the command, how it ended, and the tail of its output. */
export function describeRun(result: RunResult, tail = 4000): string {
  const how = result.timedOut ? `timed out after ${result.durationMs} ms` : `exit ${result.code ?? `signal ${result.signal}`} in ${result.durationMs} ms`;
  return `${result.command}: ${how}\n--- stdout (tail) ---\n${result.stdout.slice(-tail)}\n--- stderr (tail) ---\n${result.stderr.slice(-tail)}`;
}

export interface DoctorRun {
  sandbox: Sandbox;
  result: RunResult;
  /** <state>/state/openclaw.sqlite */
  globalDb: string;
  /** <state>/agents/<id>/agent/openclaw-agent.sqlite */
  agentDb(agentId: string): string;
}

/** Copies a legacy tree into a new sandbox's state dir and runs that release's `doctor --fix --non-interactive --yes` on it. */
export async function runDoctorFix(install: OpenClawInstall, fixtureDir: string, options: RunOptions = {}): Promise<DoctorRun> {
  const sandbox = makeSandbox(`doctor-${install.version}`, { stateUnderHome: options.stateUnderHome });
  cpSync(fixtureDir, sandbox.stateDir, { recursive: true });
  if (options.config) writeFileSync(join(sandbox.stateDir, "openclaw.json"), JSON.stringify(options.config, null, 2), { mode: 0o600 });
  const result = await runOpenClaw(install, sandbox, ["doctor", "--fix", "--non-interactive", "--yes"], options);
  return {
    sandbox,
    result,
    globalDb: join(sandbox.stateDir, "state", "openclaw.sqlite"),
    agentDb: (agentId) => join(sandbox.stateDir, "agents", agentId, "agent", "openclaw-agent.sqlite"),
  };
}

/**
 * One of the package's internal functions, found by name in its hashed dist chunks (the export alias read from the
 * chunk's export list) and loaded: the oracle for checks that compare a single step shape by shape.
 */
export async function loadOpenClawFunction<F>(entryFile: string, name: string): Promise<F> {
  const dist = join(dirname(entryFile), "dist");
  for (const file of readdirSync(dist).filter((n) => n.endsWith(".mjs"))) {
    const text = readFileSync(join(dist, file), "utf8");
    if (!text.includes(`function ${name}(`)) continue;
    const alias = new RegExp(`\\b${name} as (\\w+)`).exec(text)?.[1];
    if (!alias) continue;
    const mod = (await import(pathToFileURL(join(dist, file)).href)) as Record<string, F>;
    return mod[alias]!;
  }
  throw new Error(`${name} not found under ${dist}`);
}
