// The key check of the global side: the state our doctor --fix left (ending in OpenClaw's format), read as it is by the real OpenClaw.
//
// Our side (doctor --fix) runs from dist/ under the Node that loads node_modules' better-sqlite3 (`npm run build`
// first); OpenClaw runs under this suite's Node 24. Results are read with the sqlite3 CLI / node:sqlite
// (sqliteReader), never with our own code. Only the config is replaced (9.6 refuses a file-era config before it
// reads any state); every database and file is exactly what doctor --fix wrote.
import { spawn, spawnSync } from "node:child_process";
import { keptDesignV1, ourNode } from "./helpers/our-node.js";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeRun, isolatedEnv, makeSandbox, openclawInstall, pinnedVersions, REPO_ROOT, runDoctorFix, runOpenClaw, type Sandbox } from "./helpers/openclaw.js";
import { sqliteReader } from "./helpers/sqlite-reader.js";

const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);
const reader = sqliteReader();

const ourNodeBin = install ? ourNode() : null;
if (install && !ourNodeBin) process.stderr.write("\ncompat: SKIPPED — upgrade-global: no node that loads node_modules' better-sqlite3 (set OPENCLAW_STATE_COMPAT_OUR_NODE)\n\n");

const built = existsSync(join(REPO_ROOT, "dist", "cli", "main.js"));

function runOurs(args: string[], env: Record<string, string>): { code: number | null; out: string } {
  const r = spawnSync(ourNodeBin!, args, { cwd: REPO_ROOT, env, encoding: "utf8", timeout: 300_000 });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

const DAY_MS = 86_400_000;

/**
 * fixtures/migration/cron with its run log moved to the last few days (whole days, so schedules keep their times of
 * day). 9.6's gateway prunes a finished task run 7 days after it ended (its task maintenance, DEFAULT_TASK_RETENTION_MS,
 * first sweeping a while after start): with the fixture's January 2026 runs, whether `cron runs` still listed them
 * depended on whether that sweep had run yet, on each of the two gateways compared below.
 */
function recentCronFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), "ocs-compat-cron-"));
  cpSync(join(REPO_ROOT, "fixtures", "migration", "cron"), dir, { recursive: true });
  const runs = join(dir, "cron", "runs");
  const lines = readdirSync(runs).flatMap((f) => readFileSync(join(runs, f), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as { ts: number }));
  const shift = Math.floor((Date.now() - 2 * DAY_MS - Math.max(...lines.map((l) => l.ts))) / DAY_MS) * DAY_MS;
  for (const f of readdirSync(runs)) {
    const moved = readFileSync(join(runs, f), "utf8").split("\n").map((line) => {
      if (line.trim() === "") return line;
      const entry = JSON.parse(line) as Record<string, unknown>;
      for (const field of ["ts", "runAtMs", "nextRunAtMs"]) if (typeof entry[field] === "number") entry[field] = (entry[field] as number) + shift;
      return JSON.stringify(entry);
    });
    writeFileSync(join(runs, f), moved.join("\n"));
  }
  return dir;
}

/**
 * `cron list --all` and `cron runs --id daily-brief` through a gateway on loopback (token auth), scheduler off: the
 * fixture's jobs are long overdue, and a live scheduler would run them at start (deleting the one-shot job) before
 * the list is read — runtime behaviour, not the format. The gateway's process group is killed afterwards.
 */
async function cronView(sandbox: Sandbox): Promise<{ jobs: string[]; runs: unknown[]; raw: string }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const env = isolatedEnv(sandbox, { OPENCLAW_SKIP_CRON: "1" });
  const gateway = spawn(process.execPath, [install!.entry, "gateway", "run", "--bind", "loopback", "--port", String(port), "--auth", "token", "--token", "x", "--allow-unconfigured"], { env, detached: true, stdio: ["ignore", "pipe", "pipe"], cwd: sandbox.root });
  let log = "";
  gateway.stdout.setEncoding("utf8").on("data", (d: string) => (log += d));
  gateway.stderr.setEncoding("utf8").on("data", (d: string) => (log += d));
  try {
    const deadline = Date.now() + 240_000;
    while (!/\[gateway\] ready/.test(log) && Date.now() < deadline && gateway.exitCode === null) await new Promise((r) => setTimeout(r, 1000));
    expect(/\[gateway\] ready/.test(log), log.slice(-4000)).toBe(true);
    const client = { ...sandbox, cleanup: () => undefined };
    const url = ["--url", `ws://127.0.0.1:${port}`, "--token", "x"];
    const list = await runOpenClaw(install!, client, ["cron", "list", "--all", "--json", ...url], { env: { OPENCLAW_SKIP_CRON: "1" }, timeoutMs: 120_000 });
    expect(list.code, describeRun(list)).toBe(0);
    // An empty answer is asked again for up to a minute (a history that is really missing still fails the comparison
    // below, a minute later). The empty answers seen before were the gateway's 7-day task pruning (recentCronFixture).
    const runsDeadline = Date.now() + 60_000;
    let runs;
    let entries: Array<{ runId: unknown; status: unknown; ts: unknown }>;
    for (;;) {
      runs = await runOpenClaw(install!, client, ["cron", "runs", "--id", "daily-brief", ...url], { env: { OPENCLAW_SKIP_CRON: "1" }, timeoutMs: 120_000 });
      expect(runs.code, describeRun(runs)).toBe(0);
      entries = (JSON.parse(runs.stdout) as { entries: Array<Record<string, unknown>> }).entries.map((e) => ({ runId: e.runId, status: e.status, ts: e.ts }));
      if (entries.length > 0 || Date.now() >= runsDeadline) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const jobs = (JSON.parse(list.stdout) as { jobs: Array<{ id: string }> }).jobs.map((j) => j.id).sort();
    return { jobs, runs: entries, raw: `${list.stdout}\n${runs.stdout}` };
  } finally {
    if (gateway.pid) {
      try {
        process.kill(-gateway.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
}

const CONFIG = { agents: { defaults: { model: "anthropic/claude-sonnet-4-6" }, entries: { main: {} } }, gateway: { port: 18789 } };

describe.skipIf(!install || !ourNodeBin)(`openclaw@${current.version} reads the global DB our doctor --fix left`, () => {
  let ours: Sandbox;
  let sourceDb: string;
  let fixture: string;

  beforeAll(() => {
    expect(built, "dist/ is missing: run `npm run build` first").toBe(true);
    fixture = recentCronFixture();
    ours = makeSandbox("ours-doctor-fix");
    cpSync(fixture, ours.stateDir, { recursive: true });
    const migrated = runOurs([join(REPO_ROOT, "bin", "openclaw-state.js"), "doctor", "--fix", "--yes", "--no-backup"], isolatedEnv(ours, { PATH: process.env.PATH ?? "" }));
    expect(migrated.code, migrated.out).toBe(0);
    // The design-v1 file the importers wrote (kept by the format upgrade) is the independent list of what was imported.
    sourceDb = keptDesignV1(ours.stateDir, join("state", "openclaw.sqlite"));
    writeFileSync(join(ours.stateDir, "openclaw.json"), JSON.stringify(CONFIG, null, 2), { mode: 0o600 });
  });

  afterAll(() => {
    ours?.cleanup();
    if (fixture) rmSync(fixture, { recursive: true, force: true });
  });

  it("is at user_version 18 with every job and run the importers wrote", () => {
    const db = join(ours.stateDir, "state", "openclaw.sqlite");
    expect(reader.query(db, "PRAGMA user_version")[0]).toMatchObject({ user_version: current.globalUserVersion });
    const jobs = reader.query(sourceDb, "SELECT job_id FROM cron_jobs ORDER BY job_id").map((r) => r.job_id);
    expect(reader.query(db, "SELECT job_id FROM cron_jobs ORDER BY job_id").map((r) => r.job_id)).toEqual(jobs);
    const runs = reader.query(sourceDb, "SELECT count(*) AS n FROM cron_run_logs")[0]!.n;
    expect(reader.query(db, "SELECT count(*) AS n FROM task_runs WHERE runtime = 'cron'")[0]!.n).toBe(runs);
  });

  it("its doctor (no --fix) finds no state migration to run on what our doctor --fix left", async () => {
    const sandbox: Sandbox = { ...ours, cleanup: () => undefined };
    const result = await runOpenClaw(install!, sandbox, ["doctor", "--non-interactive"], { timeoutMs: 400_000 });
    expect(result.code, describeRun(result)).toBe(0);
    const text = `${result.stdout}\n${result.stderr}`;
    // What 9.6's doctor prints when state still needs moving: on the same fixture as legacy files it reports "Doctor
    // changes: Cron store migrated to SQLite … Imported 2 legacy cron run logs" and an in-flight marker; on other trees
    // the auth/session SQLite migration sections, a refusal, or the legacy registry error.
    for (const pending of ["Cron store migrated", "legacy cron run logs", "still marked in-flight", "Auth profile SQLite migration", "Session SQLite", "legacy agent database registry", "Doctor stopped"]) {
      expect(text.includes(pending), `${pending}\n${describeRun(result)}`).toBe(false);
    }
    expect(/◇\s+Doctor changes\s+─/.test(text), describeRun(result)).toBe(false);
  });

  it("its gateway lists every imported job (cron list) and the same run history as on its own migration (cron runs)", async () => {
    const sourceJobs = reader.query(sourceDb, "SELECT job_id FROM cron_jobs ORDER BY job_id").map((r) => String(r.job_id));
    const ourView = await cronView(ours);
    for (const id of sourceJobs) expect(ourView.jobs, ourView.raw).toContain(id);
    // The same legacy tree migrated by 9.6's own doctor, read by the same commands: the history must match too.
    const theirs = await runDoctorFix(install!, fixture, { timeoutMs: 400_000 });
    try {
      expect(theirs.result.code, describeRun(theirs.result)).toBe(0);
      const theirView = await cronView(theirs.sandbox);
      expect(ourView.jobs.filter((id) => sourceJobs.includes(id))).toEqual(theirView.jobs.filter((id) => sourceJobs.includes(id)));
      // Both histories in full: the runs are recent enough that neither gateway prunes them.
      expect(theirView.runs.map((r) => (r as { runId: string }).runId), theirView.raw).toEqual(["run-2", "run-1"]);
      expect(ourView.runs, `ours: ${ourView.raw}\ntheirs: ${theirView.raw}`).toEqual(theirView.runs);
    } finally {
      theirs.sandbox.cleanup();
    }
  });

});
