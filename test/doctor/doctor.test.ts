// The doctor frame on broken state dirs: one finding per problem, and the safe fixes that --fix applies.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runDoctor, type DoctorResult } from "../../src/doctor/run-doctor.js";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { openAgentDatabase, openGlobalDatabase, unregisterAgentDatabase } from "../../src/state/state-databases.js";
import { makeTempState, modeOf, snapshotTree } from "../helpers/temp-state.js";
import { insertLease } from "../helpers/leases.js";

function ids(result: DoctorResult): string[] {
  return result.findings.filter((f) => f.severity !== "info").map((f) => f.id);
}

function healthyState() {
  const state = makeTempState();
  openAgentDatabase(state.paths, "main", { mode: "write", create: true }).close();
  return state;
}

describe("doctor", () => {
  it("reports an intact design-v1 state with only the format warning, and --fix leaves a state with no warnings", async () => {
    const { paths } = healthyState();
    const result = await runDoctor({ paths });
    expect(ids(result)).toEqual(["format.design-v1"]);
    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs.map((r) => [r.id, r.status])).toEqual([["format.upgrade", "applied"]]);
    expect(ids(fixed)).toEqual([]);
    expect(fixed.status).toBe("ok");
    expect(fixed.summary.ok).toBeGreaterThanOrEqual(2);
    expect(ids(await runDoctor({ paths }))).toEqual([]);
  });

  it("reports a missing state dir without creating anything, and --fix creates the global DB", async () => {
    const { paths, root } = makeTempState();
    const check = await runDoctor({ paths });
    expect(ids(check)).toEqual(["state-dir.missing"]);
    expect(fs.readdirSync(root)).toEqual([]);
    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs.map((r) => [r.id, r.status])).toEqual([["global-db.create", "applied"], ["format.upgrade", "applied"]]);
    expect(ids(fixed)).toEqual([]);
    expect(modeOf(paths.stateDir)).toBe(0o700);
    expect(modeOf(paths.globalDbPath)).toBe(0o600);
  });

  it("reports a missing global DB in an existing state dir and creates it", async () => {
    const { paths } = makeTempState();
    fs.mkdirSync(paths.stateDir, { mode: 0o700 });
    expect(ids(await runDoctor({ paths }))).toEqual(["global-db.missing"]);
    await runDoctor({ paths, fix: true });
    expect(fs.existsSync(paths.globalDbPath)).toBe(true);
  });

  it("reports an unopenable database as an error and leaves it alone", async () => {
    const { paths } = healthyState();
    fs.writeFileSync(paths.globalDbPath, "this is not a database, just text padding".repeat(20));
    fs.rmSync(`${paths.globalDbPath}-wal`, { force: true });
    const before = snapshotTree(paths.stateDir);
    const result = await runDoctor({ paths });
    expect(ids(result)).toContain("global-db");
    expect(result.findings.find((f) => f.id === "global-db")!.severity).toBe("error");
    expect(result.status).toBe("errors");
    expect(snapshotTree(paths.stateDir)).toEqual(before);
  });

  it("reports a newer schema version as an error and --fix never touches it", async () => {
    const { paths } = healthyState();
    const raw = new Database(paths.globalDbPath);
    raw.pragma("user_version = 99");
    raw.close();
    const before = snapshotTree(paths.stateDir);
    const result = await runDoctor({ paths });
    expect(result.findings.find((f) => f.id === "global-db")).toMatchObject({ severity: "error", title: expect.stringMatching(/newer/) });
    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs).toEqual([]);
    expect(fixed.status).toBe("errors");
    expect(snapshotTree(paths.stateDir)).toEqual(before);
  });

  it("detects a corrupted index with quick_check, and --deep runs integrity_check", async () => {
    const { paths } = healthyState();
    const db = openGlobalDatabase(paths, { mode: "write" });
    db.immediate(() => {
      const insert = db.handle.prepare("INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at, expires_at) VALUES ('p','n',?,'{}',1,?)");
      for (let i = 0; i < 3000; i++) insert.run(`key-${i}`, i);
    });
    const { rootpage } = db.handle.prepare("SELECT rootpage FROM sqlite_master WHERE type='index' AND tbl_name='plugin_state_entries' AND sql IS NOT NULL").get() as { rootpage: number };
    const pageSize = db.handle.pragma("page_size", { simple: true }) as number;
    db.close();
    const fd = fs.openSync(paths.globalDbPath, "r+");
    // Scramble the index root page's cell area: the table stays readable, the index no longer matches.
    fs.writeSync(fd, Buffer.alloc(pageSize - 100, 0x5a), 0, pageSize - 100, (rootpage - 1) * pageSize + 100);
    fs.closeSync(fd);
    const quick = await runDoctor({ paths });
    expect(quick.findings.find((f) => f.id === "global-db.integrity")).toMatchObject({ severity: "error", title: expect.stringMatching(/quick_check/) });
    const deep = await runDoctor({ paths, deep: true });
    expect(deep.findings.find((f) => f.id === "global-db.integrity")?.title).toMatch(/integrity_check/);
  });

  it("reconciles the registry: registers unknown agent DBs and drops rows whose file is gone", async () => {
    const { paths } = healthyState();
    openAgentDatabase(paths, "ops", { mode: "write", create: true }).close();
    const global = openGlobalDatabase(paths, { mode: "write" });
    unregisterAgentDatabase(global, "ops");
    global.run(global.q.insertInto("agent_databases").values({ agent_id: "gone", path: path.join(paths.agentsDir, "gone/agent/openclaw-agent.sqlite"), schema_version: 1, last_seen_at: 1, size_bytes: 1 }));
    global.close();
    expect(ids(await runDoctor({ paths })).sort()).toEqual(["format.design-v1", "registry.missing-file", "registry.unregistered"]);
    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs.every((r) => r.status === "applied")).toBe(true);
    expect(ids(fixed)).toEqual([]);
  });

  it("flags modes wider than 0600/0700 and tightens them keeping owner bits", async () => {
    const { paths, stateDir } = healthyState();
    const script = path.join(stateDir, "hooks.sh");
    fs.writeFileSync(script, "#!/bin/sh\n", { mode: 0o755 });
    fs.chmodSync(script, 0o755);
    fs.chmodSync(path.join(stateDir, "agents"), 0o755);
    const result = await runDoctor({ paths });
    // hooks.sh is no file of OpenClaw's design: reported as unknown as well.
    expect(ids(result)).toEqual(["legacy.unknown", "format.design-v1", "modes.loose"]);
    expect(result.findings[result.findings.length - 1]!.detail).toContain("0755");
    await runDoctor({ paths, fix: true });
    expect(modeOf(script)).toBe(0o700);
    expect(modeOf(path.join(stateDir, "agents"))).toBe(0o700);
  });

  it("reports a held gateway lease, and --fix refuses with StateLockedError", async () => {
    const { paths } = healthyState();
    fs.chmodSync(paths.stateDir, 0o755);
    const global = openGlobalDatabase(paths, { mode: "write" });
    insertLease(global, GATEWAY_SCOPE, process.pid, Date.now() + 60_000);
    global.close();
    expect(ids(await runDoctor({ paths }))).toContain("lease.held");
    await expect(runDoctor({ paths, fix: true })).rejects.toMatchObject({ exitCode: 75 });
    expect(modeOf(paths.stateDir)).toBe(0o755);
  });

  it("does nothing when the confirmation is declined", async () => {
    const { paths, root } = makeTempState();
    const result = await runDoctor({ paths, fix: true, confirm: async () => false });
    expect(result.declined).toBe(true);
    expect(fs.readdirSync(root)).toEqual([]);
  });
});
