// The merge path against the real runtime: legacy files beside a state OpenClaw 2026.9.6 migrated itself, merged by our doctor --fix; the real openclaw then lists every session and finds nothing to migrate or repair.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ourNode } from "./helpers/our-node.js";
import { describeRun, makeSandbox, openclawInstall, pinnedVersions, REPO_ROOT, runOpenClaw, type Sandbox } from "./helpers/openclaw.js";
import { sqliteReader } from "./helpers/sqlite-reader.js";

const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);
const reader = sqliteReader();
const LIVE = join(REPO_ROOT, "fixtures", "openclaw-2026.9.6", "legacy-state-migrated");
const BIN = join(REPO_ROOT, "bin", "openclaw-state.js");
const node = ourNode();
if (!node) process.stderr.write("\ncompat: SKIPPED — merge-current: no node that loads node_modules' better-sqlite3 (set OPENCLAW_STATE_COMPAT_OUR_NODE)\n\n");

const msg = (id: string, parentId: string | null, text: string): string => JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-06T00:00:00.000Z", message: { role: "user", content: text } });

describe.skipIf(!install || !node || !existsSync(BIN))(`openclaw@${current.version} reads what our merge wrote into its own state`, () => {
  let sandbox: Sandbox;
  let agentDb: string;
  let before: Array<{ event_json: string }>;

  beforeAll(() => {
    sandbox = makeSandbox("merge");
    cpSync(LIVE, sandbox.stateDir, { recursive: true });
    rmSync(join(sandbox.stateDir, "README.md"));
    agentDb = join(sandbox.stateDir, "agents", "main", "agent", "openclaw-agent.sqlite");
    before = reader.query(agentDb, "SELECT event_json FROM transcript_events WHERE session_id = 's-main' ORDER BY seq") as Array<{ event_json: string }>;
    // A rolled-back file-era gateway: one more turn on s-main, and a new session with its index entry.
    const sessions = join(sandbox.stateDir, "agents", "main", "sessions");
    mkdirSync(sessions, { recursive: true });
    writeFileSync(join(sessions, "s-main.jsonl"), `${[...before.map((r) => r.event_json), msg("e3", "e2", "one more turn")].join("\n")}\n`);
    const header = JSON.stringify({ type: "session", version: 3, id: "s-late", timestamp: "2026-01-06T00:00:00.000Z", cwd: "/home/demo" });
    writeFileSync(join(sessions, "s-late.jsonl"), `${[header, msg("x1", null, "hello again"), msg("x2", "x1", "still here")].join("\n")}\n`);
    writeFileSync(join(sessions, "sessions.json"), JSON.stringify({ "agent:main:late": { sessionId: "s-late", updatedAt: Date.UTC(2026, 0, 6) } }));
    const r = spawnSync(node!, [BIN, "doctor", "--fix", "--yes", "--no-backup"], {
      cwd: REPO_ROOT,
      env: { PATH: `${dirname(node!)}${delimiter}/usr/bin:/bin`, HOME: sandbox.home, OPENCLAW_STATE_DIR: sandbox.stateDir, TMPDIR: sandbox.tmp },
      encoding: "utf8",
      timeout: 300_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  });

  afterAll(() => sandbox?.cleanup());

  it("the merged rows are in its tables: the appended turn after the runtime's history, the new session with its events", () => {
    const main = reader.query(agentDb, "SELECT seq, event_json FROM transcript_events WHERE session_id = 's-main' ORDER BY seq") as Array<{ seq: number; event_json: string }>;
    expect(main.slice(0, before.length).map((r) => r.event_json)).toEqual(before.map((r) => r.event_json));
    expect(main.map((r) => (JSON.parse(r.event_json) as { id: string }).id).slice(-1)).toEqual(["e3"]);
    expect(reader.query(agentDb, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-late'")).toEqual([{ n: 3 }]);
    expect(reader.query(agentDb, "PRAGMA user_version")).toEqual([{ user_version: current.agentUserVersion }]);
  });

  it("openclaw sessions --all-agents --json lists the new session beside the ones it migrated", async () => {
    const run = await runOpenClaw(install!, sandbox, ["sessions", "--all-agents", "--json"], { timeoutMs: 120_000 });
    expect(run.code, describeRun(run)).toBe(0);
    const body = JSON.parse(run.stdout.slice(run.stdout.indexOf("{"))) as { sessions: Array<{ key: string; sessionId: string }> };
    const ids = body.sessions.map((s) => s.sessionId).sort();
    expect(ids).toEqual(["s-late", "s-lost", "s-main", "s-ops", "s-root-dm"]);
    expect(body.sessions.find((s) => s.sessionId === "s-late")?.key).toBe("agent:main:late");
  });

  it("openclaw doctor (no --fix) finds nothing to migrate or repair", async () => {
    const run = await runOpenClaw(install!, sandbox, ["doctor", "--non-interactive"], { timeoutMs: 300_000 });
    expect(run.code, describeRun(run)).toBe(0);
    expect(`${run.stdout}\n${run.stderr}`).not.toMatch(/invalid persisted session|requires repair|legacy agent database|legacy session|session-sqlite|Legacy entries/i);
  });
});
