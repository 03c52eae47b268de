// Our doctor --fix on a legacy tree (ending in OpenClaw's format): the current OpenClaw lists the same sessions its own doctor imports from the same fixture.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keptDesignV1, ourNode } from "./helpers/our-node.js";
import { describeRun, makeSandbox, openclawInstall, pinnedVersions, REPO_ROOT, runDoctorFix, runOpenClaw, type DoctorRun, type RunResult, type Sandbox } from "./helpers/openclaw.js";
import { sqliteReader } from "./helpers/sqlite-reader.js";

const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);
const reader = sqliteReader();
const FIXTURE = join(REPO_ROOT, "fixtures", "legacy-state");
const UPGRADE_JS = join(REPO_ROOT, "dist", "state", "upgrade", "upgrade-agent-db.js");

const node = ourNode();
if (!node) process.stderr.write("\ncompat: SKIPPED — upgrade-agent: no node that loads node_modules' better-sqlite3 (set OPENCLAW_STATE_COMPAT_OUR_NODE)\n\n");
if (!existsSync(UPGRADE_JS)) process.stderr.write("\ncompat: SKIPPED — upgrade-agent: dist/ is not built (run `npm run build`)\n\n");

function runOurs(args: string[], env: Record<string, string>, input?: string): { code: number | null; out: string } {
  const r = spawnSync(node!, args, { cwd: REPO_ROOT, env: { PATH: `${dirname(node!)}${delimiter}/usr/bin:/bin`, ...env }, input, encoding: "utf8", timeout: 300_000 });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

interface Listed { key: string; sessionId: string; updatedAt: number }

function listed(run: RunResult): Listed[] {
  expect(run.code, describeRun(run)).toBe(0);
  const body = JSON.parse(run.stdout.slice(run.stdout.indexOf("{"))) as { sessions: Listed[] };
  return body.sessions.map(({ key, sessionId, updatedAt }) => ({ key, sessionId, updatedAt })).sort((a, b) => a.sessionId.localeCompare(b.sessionId));
}

describe.skipIf(!install || !node || !existsSync(UPGRADE_JS))(`openclaw@${current.version} reads the state our doctor --fix left`, () => {
  let theirs: DoctorRun;
  let ours: Sandbox;
  let designV1: string;
  let upgraded: string;

  beforeAll(async () => {
    theirs = await runDoctorFix(install!, FIXTURE, { timeoutMs: 300_000 });
    expect(theirs.result.code, describeRun(theirs.result)).toBe(0);
    ours = makeSandbox("doctor-fix");
    // Our doctor --fix on the same legacy tree, in the sandbox's own state dir: it ends in OpenClaw's format, and the
    // real OpenClaw's read commands below run on exactly what it left (the design-v1 file it imported into is kept).
    cpSync(FIXTURE, ours.stateDir, { recursive: true });
    const fix = runOurs([join(REPO_ROOT, "bin", "openclaw-state.js"), "doctor", "--fix", "--yes", "--no-backup"], { HOME: ours.home, OPENCLAW_STATE_DIR: ours.stateDir });
    expect(fix.code, fix.out).toBe(0);
    designV1 = keptDesignV1(ours.stateDir, join("agents", "main", "agent", "openclaw-agent.sqlite"));
    upgraded = join(ours.stateDir, "agents", "main", "agent", "openclaw-agent.sqlite");
    // Its state files besides the databases must not upset OpenClaw either: nothing but the config is replaced.
    // The same current-format config their doctor ended with, so model defaults in the listing come from one place.
    cpSync(join(theirs.sandbox.stateDir, "openclaw.json"), join(ours.stateDir, "openclaw.json"));
  });

  afterAll(() => {
    theirs?.sandbox.cleanup();
    ours?.cleanup();
  });

  it(`openclaw sessions --all-agents --json lists the same keys, session ids and updatedAt`, async () => {
    const theirList = listed(await runOpenClaw(install!, theirs.sandbox, ["sessions", "--all-agents", "--json"], { timeoutMs: 120_000 }));
    const ourList = listed(await runOpenClaw(install!, ours, ["sessions", "--all-agents", "--json"], { timeoutMs: 120_000 }));
    expect(ourList.map((s) => s.sessionId)).toEqual(theirList.map((s) => s.sessionId));
    for (const theirsRow of theirList) {
      const oursRow = ourList.find((s) => s.sessionId === theirsRow.sessionId)!;
      // A transcript no index named: both name it `agent:<id>:recovered:<sessionId>` and date it by the file's mtime,
      // but each run reads its own copy of the fixture (copied at another moment), so only the key is compared.
      if (theirsRow.key.includes(":recovered:")) {
        expect(oursRow.key).toBe(theirsRow.key);
        continue;
      }
      expect(oursRow).toEqual(theirsRow);
    }
  });

  it("every transcript row is where the runtime reads it, with the design-v1 event_json", () => {
    const q = "SELECT session_id, seq, event_json, created_at FROM transcript_events ORDER BY session_id, seq";
    expect(reader.query(upgraded, q)).toEqual(reader.query(designV1, q));
    const counts = "SELECT session_id, count(*) AS n FROM transcript_events GROUP BY session_id ORDER BY session_id";
    expect(reader.query(upgraded, counts)).toEqual(reader.query(theirs.agentDb("main"), counts));
    expect(reader.query(upgraded, "PRAGMA user_version")).toEqual([{ user_version: current.agentUserVersion }]);
  });

  it("openclaw doctor (no --fix) finds no session row to repair or migrate", async () => {
    const run = await runOpenClaw(install!, ours, ["doctor", "--non-interactive"], { timeoutMs: 300_000 });
    expect(run.code, describeRun(run)).toBe(0);
    const text = `${run.stdout}\n${run.stderr}`;
    expect(text).not.toMatch(/invalid persisted session|requires repair|legacy agent database|legacy session|session-sqlite|Legacy entries/i);
  });
});
