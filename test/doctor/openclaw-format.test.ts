// doctor on states whose databases a released OpenClaw wrote (2026.9.6, 2026.6.33, a newer one): reported, never written.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { doctorExitCode, runDoctor, type DoctorResult } from "../../src/doctor/run-doctor.js";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { agentDbPath } from "../../src/state/paths.js";
import { openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import { makeTempState, snapshotTree, type TempState, type TreeEntry } from "../helpers/temp-state.js";

const V96 = "openclaw-2026.9.6/legacy-state-migrated";
const V633 = "openclaw-2026.6.33/legacy-state-migrated";

/** The files OpenClaw 2026.9.6's own doctor leaves beside its databases (names as it writes them). */
const OPENCLAW_OWN_96 = [
  "cron/jobs.json.migrated",
  "agents/main/session-sqlite-import-archive/agent_main_main.s-main.jsonl.imported-1796400483263",
  "session-sqlite-migration-runs/session-sqlite-1796400481953-b744d219.json",
  "agents/main/agent/auth-profiles.json.migrated-2026-12-04T16-08-00.731Z-650bf5c4-7275-407f-bc6f-36d0763a57e9",
];

/** A copy of a fixture as a state dir, without its README (not a state file). */
function openclawState(fixture: string): TempState {
  const state = makeTempState(fixture);
  fs.rmSync(path.join(state.stateDir, "README.md"));
  return state;
}

/** The 9.6 databases plus the working and retired files its doctor leaves (and its live models.json). */
function state96(): TempState {
  const state = openclawState(V96);
  // The fixture was made at /work/oc/t1/state: key its cron rows as OpenClaw would here (a moved state: moved-cron-store.test.ts).
  const global = new Database(path.join(state.stateDir, "state/openclaw.sqlite"));
  for (const t of ["cron_jobs", "cron_job_scratch", "cron_run_receipts"]) global.prepare(`UPDATE ${t} SET store_key = ?`).run(path.join(state.stateDir, "cron", "jobs.json"));
  global.close();
  for (const rel of OPENCLAW_OWN_96) {
    fs.mkdirSync(path.dirname(path.join(state.stateDir, rel)), { recursive: true });
    fs.writeFileSync(path.join(state.stateDir, rel), `{"retiredBy":"openclaw"}\n`);
  }
  fs.writeFileSync(path.join(state.stateDir, "agents/main/agent/models.json"), `{ "providers": { "anthropic": { "models": ["claude-sonnet-4"] } } }\n`);
  const quarantine = new Database(path.join(state.stateDir, "state/openclaw-quarantine.sqlite"));
  quarantine.exec("CREATE TABLE quarantined_rows (id INTEGER PRIMARY KEY, source TEXT)");
  quarantine.close();
  return state;
}

function privateModes(dir: string): void {
  fs.chmodSync(dir, 0o700);
  for (const name of fs.readdirSync(dir)) {
    const full = path.join(dir, name);
    if (fs.lstatSync(full).isDirectory()) privateModes(full);
    else fs.chmodSync(full, 0o600);
  }
}

interface DbShape {
  userVersion: number;
  schema: Array<{ type: string; name: string; sql: string | null }>;
  counts: Record<string, number>;
}

/** Schema (every sqlite_master row) and the row count of every table: read-only. */
function shapeOf(file: string): DbShape {
  const db = new Database(file, { readonly: true });
  try {
    const schema = db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").all() as DbShape["schema"];
    const counts: Record<string, number> = {};
    for (const { name } of schema.filter((r) => r.type === "table")) {
      counts[name] = (db.prepare(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`).get() as { n: number }).n;
    }
    return { userVersion: db.pragma("user_version", { simple: true }) as number, schema, counts };
  } finally {
    db.close();
  }
}

/** Tables of this tool's design format that no OpenClaw release has: none may appear in their databases. */
function designOnlyTables(openclawTables: { global: string[]; agent: string[] }): { global: string[]; agent: string[] } {
  const scratch = makeTempState();
  const global = openGlobalDatabase(scratch.paths, { mode: "write", create: true });
  const agent = openAgentDatabase(scratch.paths, "main", { mode: "write", create: true });
  try {
    return {
      global: global.tableNames().filter((t) => !openclawTables.global.includes(t)),
      agent: agent.tableNames().filter((t) => !openclawTables.agent.includes(t)),
    };
  } finally {
    agent.close();
    global.close();
  }
}

function tablesOf(shape: DbShape): string[] {
  return shape.schema.filter((r) => r.type === "table").map((r) => r.name);
}

/** Content of every non-database file and the tree's paths (modes aside: --fix tightens them). */
function contentOf(dir: string): Record<string, Omit<TreeEntry, "mode">> {
  const out: Record<string, Omit<TreeEntry, "mode">> = {};
  for (const [rel, { mode: _mode, ...rest }] of Object.entries(snapshotTree(dir))) {
    if (/openclaw(-agent)?\.sqlite(-wal|-shm|-journal)?$/.test(rel)) continue;
    out[rel] = rest;
  }
  return out;
}

function dbFiles(state: TempState): { global: string; agent: string } {
  return { global: state.paths.globalDbPath, agent: agentDbPath(state.paths, "main") };
}

function finding(result: DoctorResult, id: string) {
  return result.findings.find((f) => f.id === id);
}

function nonInfo(result: DoctorResult): string[] {
  return result.findings.filter((f) => f.severity !== "info").map((f) => f.id);
}

/** The --fix invariants on OpenClaw's databases: same schema, same rows per table (the lease row removed again), none of our tables. */
function expectDatabasesUntouched(state: TempState, before: { global: DbShape; agent: DbShape; agentBytes?: Buffer }): void {
  const files = dbFiles(state);
  // The lease lives in the global DB only: the agent DB is byte-identical.
  if (before.agentBytes) expect(fs.readFileSync(files.agent).equals(before.agentBytes)).toBe(true);
  const after = { global: shapeOf(files.global), agent: shapeOf(files.agent) };
  expect(after.global).toEqual(before.global);
  expect(after.agent).toEqual(before.agent);
  const ours = designOnlyTables({ global: tablesOf(before.global), agent: tablesOf(before.agent) });
  expect(ours.global.length).toBeGreaterThan(0);
  expect(tablesOf(after.global).filter((t) => ours.global.includes(t))).toEqual([]);
  expect(tablesOf(after.agent).filter((t) => ours.agent.includes(t))).toEqual([]);
}

describe("doctor on OpenClaw 2026.9.6's own migration", () => {
  it("reports each database as written by OpenClaw 2026.9.6 (info); its own files and live models.json are no warnings", async () => {
    const state = state96();
    privateModes(state.stateDir);
    const before = snapshotTree(state.stateDir);
    const result = await runDoctor({ paths: state.paths });
    expect(finding(result, "global-db.format")).toMatchObject({ severity: "info", title: expect.stringMatching(/written by OpenClaw 2026\.9\.6 \(global format v18\)/) });
    expect(finding(result, "agent-db.format")).toMatchObject({ severity: "info", title: expect.stringMatching(/written by OpenClaw 2026\.9\.6 \(agent format v23\)/) });
    // The current format is the one this tool writes: no "does not write into it" for it.
    expect(finding(result, "global-db.format")?.detail).toMatch(/The format openclaw-state writes: `doctor --fix` merges legacy files into it/);
    expect(nonInfo(result)).toEqual([]);
    expect(result.status).toBe("ok");
    expect(doctorExitCode(result, true)).toBe(0);

    const own = finding(result, "legacy.openclaw-own");
    expect(own?.severity).toBe("info");
    const listed = ["cron/jobs.json.migrated", "agents/main/session-sqlite-import-archive/", "session-sqlite-migration-runs/", OPENCLAW_OWN_96[3]!, "agents/main/agent/models.json", "state/openclaw-quarantine.sqlite"];
    for (const rel of listed) {
      expect(own?.detail).toContain(rel);
    }
    // models.json beside an agent DB in OpenClaw's format is its live model registry, not a source to import.
    const plan = result.migration!.plan;
    expect(plan.sources).toEqual([]);
    expect(plan.inventory.current.find((e) => e.relativePath === "agents/main/agent/models.json")).toMatchObject({ owner: "OpenClaw", reason: expect.stringMatching(/live model catalog/) });
    expect(plan.inventory.counts.unknown).toBe(0);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("--fix imports nothing, exits 0 and leaves each database's schema and rows as they were (the lease row is removed again)", async () => {
    const state = state96();
    const files = dbFiles(state);
    const before = { global: shapeOf(files.global), agent: shapeOf(files.agent), agentBytes: fs.readFileSync(files.agent) };
    const content = contentOf(state.stateDir);
    const quarantine = fs.readFileSync(path.join(state.stateDir, "state/openclaw-quarantine.sqlite"));

    // Loose modes from the fixture copy: one format-agnostic repair runs, so the lease is taken in their state_leases.
    const fixed = await runDoctor({ paths: state.paths, fix: true });
    expect(fixed.repairs.map((r) => [r.id, r.status])).toEqual([["modes.tighten", "applied"]]);
    expect(fixed.migration?.run).toBeUndefined();
    expect(fixed.findings.some((f) => f.leftUndone)).toBe(false);
    expect(fixed.status).toBe("ok");
    expect(doctorExitCode(fixed, false)).toBe(0);

    expectDatabasesUntouched(state, before);
    expect(before.global.counts.state_leases).toBe(0);
    expect(contentOf(state.stateDir)).toEqual(content);
    expect(fs.readFileSync(path.join(state.stateDir, "state/openclaw-quarantine.sqlite")).equals(quarantine)).toBe(true);
    expect(fs.existsSync(path.join(state.stateDir, "migrated"))).toBe(false);
    // Rollback journal, as OpenClaw left it: no WAL switched on by a write open.
    expect(fs.existsSync(`${files.global}-wal`)).toBe(false);
  });

  it("reads a live gateway lease from OpenClaw's own state_leases: lease.held, and --fix waits (exit 75)", async () => {
    const state = state96();
    const db = new Database(state.paths.globalDbPath);
    const now = Date.now();
    db.prepare("INSERT INTO state_leases (scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at) VALUES (?, 'gateway', ?, NULL, ?, ?, ?, ?)").run(
      GATEWAY_SCOPE,
      `${process.pid}@${os.hostname()}`,
      now,
      JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: now }),
      now,
      now,
    );
    db.close();
    const check = await runDoctor({ paths: state.paths });
    expect(finding(check, "lease.held")?.severity).toBe("warning");
    const before = snapshotTree(state.stateDir);
    await expect(runDoctor({ paths: state.paths, fix: true })).rejects.toMatchObject({ exitCode: 75 });
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });
});

describe("doctor on OpenClaw 2026.6.33's own migration (sessions still files)", () => {
  const WAITING = ["agents/main/sessions/sessions.json", "agents/main/sessions/s-lost.jsonl", "agents/main/sessions/s-main.jsonl", "agents/main/sessions/s-ops.jsonl", "agents/main/sessions/s-root-dm.jsonl"];

  it("lists the legacy sources as waiting, with the reason naming `openclaw doctor --fix`; check mode exits 0 (1 with --strict)", async () => {
    const state = openclawState(V633);
    const result = await runDoctor({ paths: state.paths });
    expect(finding(result, "global-db.format")).toMatchObject({ severity: "info", title: expect.stringMatching(/written by OpenClaw 2026\.6\.33 \(global format v1\)/) });
    expect(finding(result, "agent-db.format")).toMatchObject({ severity: "info", title: expect.stringMatching(/written by OpenClaw 2026\.6\.33 \(agent format v1\)/) });
    expect(finding(result, "agent-db.format")?.detail).toMatch(/does not write into it; `openclaw doctor --fix` \(OpenClaw's own\) upgrades it/);

    const plan = result.migration!.plan;
    expect(plan.sources.map((s) => s.relativePath).sort()).toEqual([...WAITING].sort());
    for (const source of plan.sources) {
      expect(source).toMatchObject({ action: "skip", attention: true });
      expect(source.reason).toMatch(/written by OpenClaw 2026\.6\.33 .*cannot write yet — run `openclaw doctor --fix`/);
    }
    const waiting = finding(result, "legacy.foreign-format");
    expect(waiting).toMatchObject({ severity: "warning", leftUndone: true, title: expect.stringMatching(/^5 legacy source\(s\) wait .*`openclaw doctor --fix`/) });
    expect(waiting!.detail!.split("\n").sort()).toEqual([...WAITING].sort());
    expect(finding(result, "legacy.migrate")).toBeUndefined();

    // What OpenClaw 2026.6.33 retired or keeps live: one info line, not unknown/discard warnings.
    const own = finding(result, "legacy.openclaw-own");
    expect(own?.severity).toBe("info");
    for (const rel of ["cron/jobs.json.migrated", "cron/jobs-state.json.migrated", "cron/runs/daily-brief.jsonl.migrated", "agents/main/agent/auth-profiles.json.sqlite-import.1796400653061.bak", "agents/main/agent/auth-state.json.sqlite-import.1796400653061.bak", "agents/main/agent/auth-profiles.json.openai-provider-unification.1796400653044.bak", "agents/main/agent/models.json", "agents/main/agent/plugins/anthropic/catalog.json"]) {
      expect(own?.detail).toContain(rel);
    }
    expect(plan.inventory.counts.unknown).toBe(0);
    expect(plan.sources.some((s) => s.kind === "model-catalog")).toBe(false);

    expect(result.status).toBe("warnings");
    expect(doctorExitCode(result, false)).toBe(0);
    expect(doctorExitCode(result, true)).toBe(1);
  });

  it("--fix imports nothing and exits 1 while the sources wait (docs/doctor.md); status says errors, as the exit code does", async () => {
    const state = openclawState(V633);
    const files = dbFiles(state);
    const before = { global: shapeOf(files.global), agent: shapeOf(files.agent), agentBytes: fs.readFileSync(files.agent) };
    const content = contentOf(state.stateDir);

    const fixed = await runDoctor({ paths: state.paths, fix: true });
    expect(fixed.repairs.map((r) => r.id)).toEqual(["modes.tighten"]);
    expect(fixed.migration?.run).toBeUndefined();
    expect(finding(fixed, "legacy.foreign-format")).toMatchObject({ leftUndone: true });
    // One verdict: a run that exits 1 never reports status "warnings" (the finding is a warning; the run failed).
    expect(fixed.status).toBe("errors");
    expect(fixed.summary.errors).toBe(0);
    expect(doctorExitCode(fixed, false)).toBe(1);

    expectDatabasesUntouched(state, before);
    expect(contentOf(state.stateDir)).toEqual(content);
    expect(fs.existsSync(path.join(state.stateDir, "migrated"))).toBe(false);

    // Nothing left to repair: --fix still exits 1, the sources still wait.
    const again = await runDoctor({ paths: state.paths, fix: true });
    expect(again.repairs).toEqual([]);
    expect(doctorExitCode(again, false)).toBe(1);
    expectDatabasesUntouched(state, before);
  });
});

describe("doctor on a database a newer OpenClaw wrote", () => {
  function newerState(): TempState {
    const state = openclawState(V96);
    const db = new Database(state.paths.globalDbPath);
    db.pragma("user_version = 99");
    db.close();
    return state;
  }

  it("reports an error naming a newer OpenClaw, and --fix touches nothing", async () => {
    const state = newerState();
    privateModes(state.stateDir);
    const before = snapshotTree(state.stateDir);
    const result = await runDoctor({ paths: state.paths });
    expect(finding(result, "global-db")).toMatchObject({ severity: "error", title: expect.stringMatching(/written by a newer OpenClaw than 2026\.9\.6 \(global format v99/) });
    expect(result.status).toBe("errors");
    const fixed = await runDoctor({ paths: state.paths, fix: true });
    expect(fixed.repairs).toEqual([]);
    expect(fixed.status).toBe("errors");
    expect(doctorExitCode(fixed, false)).toBe(1);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("with a file-mode repair to run, --fix still leaves its schema, user_version and rows as they were", async () => {
    const state = newerState();
    const before = { global: shapeOf(state.paths.globalDbPath), agent: shapeOf(agentDbPath(state.paths, "main")) };
    const fixed = await runDoctor({ paths: state.paths, fix: true });
    expect(fixed.repairs.map((r) => r.id)).toEqual(["modes.tighten"]);
    expect(doctorExitCode(fixed, false)).toBe(1);
    expect(shapeOf(state.paths.globalDbPath)).toEqual(before.global);
    expect(shapeOf(agentDbPath(state.paths, "main"))).toEqual(before.agent);
    expect(before.global.userVersion).toBe(99);
  });
});
