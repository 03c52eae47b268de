// The plan decides each file's conditional destinations from the file itself: named when it has such records, left out when it has none.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { doctorDryRun } from "../../src/doctor/dry-run.js";
import type { Repair } from "../../src/doctor/types.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import type { MigrationPlan } from "../../src/migration/types.js";
import { makeTempState, type TempState } from "../helpers/temp-state.js";

function write(root: string, rel: string, value: unknown): void {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
}

const ACP = { backend: "acpx", agent: "codex", runtimeSessionName: "rt-1", mode: "persistent", state: "idle", lastActivityAt: 5 };
const device = (paired: boolean) => ({ deviceId: "d1", publicKey: "pk", createdAtMs: 1, ...(paired ? { approvedAtMs: 2 } : {}) });

function source(plan: MigrationPlan, rel: string) {
  const s = plan.sources.find((x) => x.relativePath === rel);
  expect(s, rel).toBeDefined();
  return s!;
}

function dryRun(state: TempState, plan: MigrationPlan) {
  const migrate = { id: "legacy.migrate", description: "" } as unknown as Repair;
  return doctorDryRun(state.paths, [migrate], plan, { backup: true, removeSources: false });
}

describe("conditional destinations decided per file", () => {
  it("a session index names acp_sessions (global) and conversations only when its entries have them", async () => {
    const state = makeTempState();
    write(state.stateDir, "agents/main/sessions/sessions.json", { "agent:main:main": { sessionId: "s1", updatedAt: 1, acp: ACP } });
    write(state.stateDir, "agents/ops/sessions/sessions.json", { "agent:ops:main": { sessionId: "s2", updatedAt: 1, deliveryContext: { channel: "telegram", to: "42" } } });
    // ACP metadata 9.6 cannot store (no lastActivityAt) stays in the entry: no acp_sessions row.
    write(state.stateDir, "agents/work/sessions/sessions.json", { "agent:work:main": { sessionId: "s3", updatedAt: 1, acp: { ...ACP, lastActivityAt: "later" } } });
    // A plain plan (every doctor and --fix) does not read an index a second time: its conditions stay open.
    const plain = await planMigration({ paths: state.paths });
    expect(source(plain, "agents/work/sessions/sessions.json").reach).toBeUndefined();
    expect(source(plain, "agents/work/sessions/sessions.json").openclawTables.some((t) => t.includes("(if "))).toBe(true);
    const plan = await planMigration({ paths: state.paths, reach: true });
    expect(source(plan, "agents/main/sessions/sessions.json").openclawTables).toEqual(["session_windows", "session_nodes", "acp_sessions"]);
    expect(source(plan, "agents/ops/sessions/sessions.json").openclawTables).toEqual(["session_windows", "session_nodes", "conversations", "session_conversations"]);
    expect(source(plan, "agents/work/sessions/sessions.json").openclawTables).toEqual(["session_windows", "session_nodes"]);
    const dbs = Object.fromEntries(dryRun(state, plan).sources.map((s) => [s.relativePath, s.databases]));
    expect(dbs["agents/main/sessions/sessions.json"]).toEqual(["agents/main/agent/openclaw-agent.sqlite", "state/openclaw.sqlite"]);
    expect(dbs["agents/ops/sessions/sessions.json"]).toEqual(["agents/ops/agent/openclaw-agent.sqlite"]);
    expect(dbs["agents/work/sessions/sessions.json"]).toEqual(["agents/work/agent/openclaw-agent.sqlite"]);
  });

  it("device and node pairing: pending files reach nothing, paired devices are named, a paired node keeps its (if …)", async () => {
    const state = makeTempState();
    write(state.stateDir, "devices/paired.json", { d1: device(true) });
    write(state.stateDir, "devices/pending.json", { d2: { ...device(false), deviceId: "d2", requestId: "r" } });
    write(state.stateDir, "nodes/paired.json", { d1: { nodeId: "d1", displayName: "n" } });
    write(state.stateDir, "nodes/pending.json", { d3: { nodeId: "d3", requestId: "r" } });
    const plan = await planMigration({ paths: state.paths });
    expect(source(plan, "devices/paired.json").openclawTables).toEqual(["device_pairing_paired"]);
    expect(source(plan, "devices/pending.json").openclawTables).toEqual([]);
    expect(source(plan, "nodes/pending.json").openclawTables).toEqual([]);
    // Whether its device is paired as a node is in devices/paired.json, not in this file.
    expect(source(plan, "nodes/paired.json").openclawTables).toEqual(["device_pairing_paired (if its device is paired as a node)"]);
    const dbs = Object.fromEntries(dryRun(state, plan).sources.map((s) => [s.relativePath, s.databases]));
    expect(dbs).toMatchObject({
      "devices/paired.json": ["state/openclaw.sqlite"],
      "devices/pending.json": [],
      "nodes/pending.json": [],
      "nodes/paired.json": ["state/openclaw.sqlite (if its device is paired as a node)"],
    });
  });

  it("a paired device 9.6 drops (no approvedAtMs) reaches nothing; an auth store names its state only when it holds some", async () => {
    const state = makeTempState();
    write(state.stateDir, "devices/paired.json", { d1: device(false) });
    write(state.stateDir, "agents/work/agent/auth-profiles.json", { version: 1, profiles: { "openai:default": { type: "api_key", provider: "openai", key: "k" } } });
    write(state.stateDir, "agents/ops/agent/auth-profiles.json", { version: 1, profiles: { "openai:default": { type: "api_key", provider: "openai", key: "k" } }, lastGood: { openai: "openai:default" } });
    const plan = await planMigration({ paths: state.paths });
    expect(source(plan, "devices/paired.json").openclawTables).toEqual([]);
    expect(source(plan, "agents/work/agent/auth-profiles.json").openclawTables).toEqual(["auth_profile_store"]);
    expect(source(plan, "agents/ops/agent/auth-profiles.json").openclawTables).toEqual(["auth_profile_store", "auth_profile_state"]);
  });

  it("a file that cannot be parsed keeps its (if …), saying it was not decided", async () => {
    const state = makeTempState();
    write(state.stateDir, "devices/paired.json", "{ not json");
    write(state.stateDir, "agents/main/sessions/sessions.json", "[1, 2]");
    const plan = await planMigration({ paths: state.paths, reach: true });
    expect(source(plan, "devices/paired.json").openclawTables).toEqual(["device_pairing_paired (if paired)"]);
    const dbs = Object.fromEntries(dryRun(state, plan).sources.map((s) => [s.relativePath, s.databases]));
    expect(dbs["devices/paired.json"]).toEqual(["state/openclaw.sqlite (if paired; undecided: the file could not be read, see its reason)"]);
    expect(dbs["agents/main/sessions/sessions.json"]).toEqual(["agents/main/agent/openclaw-agent.sqlite", "state/openclaw.sqlite (if ACP metadata; undecided: the file could not be read, see its reason)"]);
  });
});
