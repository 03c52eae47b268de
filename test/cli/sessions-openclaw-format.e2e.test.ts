// The real binary on OpenClaw 2026.9.6's own migration: list/show/tail read it, delete refuses untouched, an OpenClaw 2026.6.x store says what to run.
import crypto from "node:crypto";
import fs from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { agentDbPath } from "../../src/state/paths.js";
import { makeTempState, runBin, snapshotTree } from "../helpers/temp-state.js";

const FIXTURE = "openclaw-2026.9.6/legacy-state-migrated";

describe("sessions CLI on OpenClaw's current format", () => {
  it("list --all-agents --json has the real `openclaw sessions` keys, ids and updatedAt; show and tail read it", async () => {
    const state = makeTempState(FIXTURE);
    const before = snapshotTree(state.stateDir);
    const list = await runBin(["sessions", "list", "--all-agents", "--json"], state.env);
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout) as { sessions: Array<{ key: string; sessionId: string; updatedAt: string }>; warnings: string[] };
    expect(listed.warnings).toEqual([]);
    expect(listed.sessions.map((s) => [s.key, s.sessionId, s.updatedAt])).toEqual([
      ["agent:main:recovered:s-lost", "s-lost", "2026-12-04T16:07:50.576Z"],
      ["agent:main:unknown:group:ops", "s-ops", "2026-01-01T01:00:00.000Z"],
      ["agent:main:main", "s-main", "2026-01-01T00:00:00.000Z"],
      ["agent:main:+15550002", "s-root-dm", "2025-12-01T00:00:00.000Z"],
    ]);
    const show = await runBin(["sessions", "show", "main", "--json"], state.env);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ session: { sessionId: "s-main" }, transcript: { eventCount: 3 } });
    const tail = await runBin(["sessions", "tail", "agent:main:unknown:group:ops"], state.env);
    expect(tail.code).toBe(0);
    expect(tail.stdout).toMatch(/deploy status\?/);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("sessions delete exits 1 with the reason and touches nothing", async () => {
    const state = makeTempState(FIXTURE);
    const before = snapshotTree(state.stateDir);
    const r = await runBin(["sessions", "delete", "main", "--yes"], state.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/OpenClaw 2026\.9\.6 \(agent format v23\).*nothing was deleted.*openclaw sessions delete/s);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("an OpenClaw 2026.6.x agent DB: sessions list names the command that imports its session files", async () => {
    const state = makeTempState(FIXTURE);
    const file = agentDbPath(state.paths, "main");
    fs.rmSync(file);
    const db = new Database(file);
    db.exec("CREATE TABLE auth_profile_store (id TEXT)");
    db.pragma("user_version = 1");
    db.close();
    const hash = crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    const r = await runBin(["sessions", "list", "--all-agents"], state.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/legacy files under agents\/main\/sessions\/.*`openclaw doctor --fix` of OpenClaw 2026\.9\.6 or newer/s);
    expect(crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")).toBe(hash);
  });
});
