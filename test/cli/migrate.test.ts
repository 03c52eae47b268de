// The CLI surface of the migration: doctor findings and --json plan, doctor --fix flows, migrate plan/history.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { insertLease } from "../helpers/leases.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";
import { agentDbFile, rows, stagedDbFile } from "../helpers/migration.js";

describe("doctor shows the legacy plan", () => {
  it("one finding per kind, per file with --verbose, and the full plan under --json", async () => {
    const { env } = makeTempState("migration/simple");
    const human = await runInProcess(["doctor"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/! 1 legacy session index: 1 to import — 685 B, 2 entries/);
    expect(human.stdout).toMatch(/! 2 legacy transcripts: 2 to import — 1016 B, 7 lines/);
    expect(human.stdout).not.toMatch(/s-ops\.jsonl \(506 B/);
    const verbose = await runInProcess(["doctor", "--verbose"], env);
    expect(verbose.stdout).toMatch(/agents\/main\/sessions\/s-ops\.jsonl \(506 B, 4 lines\) → import/);
    const json = await runInProcess(["doctor", "--json"], env);
    const doc = JSON.parse(json.stdout);
    expect(doc.migration.plan.sources).toHaveLength(3);
    expect(doc.migration.plan.sources[0]).toMatchObject({ kind: "sessions-index", action: "import", sha256: expect.stringMatching(/^[0-9a-f]{64}$/), records: 2, openclawTables: expect.arrayContaining(["session_nodes", "session_windows"]), sizeBytes: 685, mtime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
  });

  it("read-only doctor, migrate plan and migrate history leave the tree byte-for-byte unchanged", async () => {
    const { env, stateDir, paths } = makeTempState("migration/corrupt-middle-line");
    // A half-migrated tree: a database, a ledger with a failed source, a file left in place.
    expect((await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env)).code).toBe(1);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-bad.jsonl"))).toBe(true);
    const before = snapshotTree(path.dirname(stateDir));
    for (const args of [["doctor"], ["doctor", "--json", "--verbose"], ["doctor", "--deep"], ["migrate", "plan"], ["migrate", "plan", "--json"], ["migrate", "history", "--verbose"]]) {
      await runInProcess(args, env);
      expect(snapshotTree(path.dirname(stateDir)), args.join(" ")).toEqual(before);
    }
    expect(fs.existsSync(`${paths.globalDbPath}-wal`)).toBe(false);
  });
});

describe("doctor --fix applies the migration", () => {
  it("prints one JSON document with the run (id, status, per-source outcome, backup path)", async () => {
    const { env, stateDir } = makeTempState("migration/simple");
    const run = await runInProcess(["doctor", "--fix", "--yes", "--json", "--no-backup"], env);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "doctor", mode: "fix" });
    expect(doc.migration.run).toMatchObject({ runId: expect.any(String), status: "completed", backupPath: null, backupSkipped: true });
    expect(doc.migration.run.sources.map((s: { status: string; retiredTo: string }) => [s.status, s.retiredTo.startsWith(path.join(stateDir, "migrated"))])).toEqual(Array(3).fill(["imported", true]));
    expect(run.stderr).toMatch(/WARNING: --no-backup/);
  });

  it("needs --yes off a terminal, and asks (and can be declined) on one", async () => {
    const { env, stateDir } = makeTempState("migration/simple");
    const before = snapshotTree(stateDir);
    const noConsent = await runInProcess(["doctor", "--fix"], env);
    expect(noConsent.code).toBe(2);
    expect(noConsent.stderr).toMatch(/--yes/);
    const declined = await runInProcess(["doctor", "--fix", "--no-backup", "--remove-sources"], env, [false]);
    expect(declined.code).toBe(1);
    expect(declined.stdout).toMatch(/import 3 legacy source\(s\)/);
    expect(declined.stdout).toMatch(/WITHOUT a pre-migration backup/);
    expect(declined.stdout).toMatch(/DELETE the migrated legacy files/);
    expect(snapshotTree(stateDir)).toEqual(before);
    const accepted = await runInProcess(["doctor", "--fix", "--no-backup"], env, [true]);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toMatch(/Migration run \S+: completed/);
  });

  it("exits 75 while the gateway holds its lease, and --force takes over", async () => {
    const { env, paths, stateDir } = makeTempState("migration/simple");
    const global = openGlobalDatabase(paths, { mode: "write", create: true });
    insertLease(global, GATEWAY_SCOPE, process.pid, Date.now() + 60_000);
    global.close();
    const before = snapshotTree(path.join(stateDir, "agents"));
    const locked = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], env);
    expect(locked.code).toBe(75);
    expect(JSON.parse(locked.stdout)).toMatchObject({ ok: false, error: { code: "state_locked" } });
    expect(snapshotTree(path.join(stateDir, "agents"))).toEqual(before);
    const forced = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--force"], env);
    expect(forced.code).toBe(0);
    expect(rows(stagedDbFile(paths, "main"), "SELECT count(*) AS n FROM sessions")).toEqual([{ n: 2 }]);
    expect(rows(agentDbFile(paths), "SELECT count(*) AS n FROM session_nodes")).toEqual([{ n: 2 }]);
  });

  it("--remove-sources deletes the migrated files", async () => {
    const { env, stateDir } = makeTempState("migration/simple");
    expect((await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--remove-sources"], env)).code).toBe(0);
    // Only the staging databases the format upgrade replaced are kept (they may hold rows OpenClaw's format has no place for).
    expect(fs.readdirSync(path.join(stateDir, "migrated")).map((d) => d.replace(/\d.*$/, ""))).toEqual(["format-upgrade-"]);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions"))).toBe(false);
  });

  it("ends a run with a failed source as warning, exits 1 (partial success is not success) and keeps reporting the file", async () => {
    const { env } = makeTempState("migration/corrupt-middle-line");
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/Migration run \S+: warning/);
    expect(run.stdout).toMatch(/✗ failed +agents\/main\/sessions\/s-bad\.jsonl/);
    expect(run.stdout).toMatch(/s-bad\.jsonl:3: invalid JSON/);
    // It will fail again as it is: an error naming `migrate skip`, and the run's last line says FAILED.
    expect(run.stdout).toMatch(/✗ 1 legacy transcript: 1 to import, 1 will fail as it is/);
    expect(run.stdout).toMatch(/migrate skip agents\/main\/sessions\/s-bad\.jsonl --reason/);
    expect(run.stdout.trimEnd().split("\n").pop()).toMatch(/^FAILED \(\d repair\(s\) failed\): 1 error\(s\)/);
    const strict = await runInProcess(["doctor", "--strict"], env);
    expect(strict.code).toBe(1);
  });

  it("moves a legacy ~/.clawdbot state dir into ~/.openclaw, then migrates it", async () => {
    const { root } = makeTempState();
    const env = { PATH: process.env.PATH, HOME: root };
    fs.cpSync(path.join(__dirname, "../../fixtures/migration/simple"), path.join(root, ".clawdbot"), { recursive: true });
    const check = await runInProcess(["doctor"], env);
    expect(check.stdout).toMatch(/Legacy state dir .*\.clawdbot will be moved to .*\.openclaw/);
    expect(check.stdout).toMatch(/2 legacy transcripts: 2 to import/);
    expect(fs.existsSync(path.join(root, ".openclaw"))).toBe(false);
    const fix = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], env);
    expect(fix.code).toBe(0);
    const doc = JSON.parse(fix.stdout);
    expect(doc.repairs.map((r: { id: string; status: string }) => [r.id, r.status])).toContainEqual(["legacy.state-dir.move", "applied"]);
    expect(doc.migration.run).toMatchObject({ status: "completed", replanned: false, totals: { imported: 3 } });
    expect(fs.existsSync(path.join(root, ".clawdbot"))).toBe(false);
    expect(fs.existsSync(path.join(root, ".openclaw/agents/main/agent/openclaw-agent.sqlite"))).toBe(true);
  });

  it("only reports a legacy state dir when ~/.openclaw already exists", async () => {
    const { root, stateDir } = makeTempState("migration/simple");
    const env = { PATH: process.env.PATH, HOME: root };
    fs.mkdirSync(path.join(root, ".moltbot"));
    const fix = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(fix.stdout).toMatch(/! Legacy state dir .*\.moltbot: not moved: .*\.openclaw already exists/);
    expect(fs.existsSync(path.join(root, ".moltbot"))).toBe(true);
    expect(fs.existsSync(stateDir)).toBe(true);
  });
});

describe("migrate plan / history", () => {
  it("plan prints per kind and action (per file with --verbose) and the JSON plan", async () => {
    const { env } = makeTempState("migration/old-layout");
    const human = await runInProcess(["migrate", "plan"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/sessions-index +import +2/);
    expect(human.stdout).toMatch(/3 archived leftover\(s\) left alone/);
    expect(human.stdout).toMatch(/move .*agent → .*agents\/main\/agent/);
    const verbose = await runInProcess(["migrate", "plan", "--verbose"], env);
    expect(verbose.stdout).toMatch(/import sessions\/s-root\.jsonl/);
    const json = JSON.parse((await runInProcess(["migrate", "plan", "--json"], env)).stdout);
    expect(json).toMatchObject({ version: 1, ok: true, command: "migrate plan", plan: { pending: true, leftovers: expect.any(Array) } });
  });

  it("history lists runs newest first with their sources", async () => {
    const { env } = makeTempState("migration/simple");
    const empty = await runInProcess(["migrate", "history"], env);
    expect(empty.stdout).toMatch(/No migration runs recorded/);
    await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env);
    const human = await runInProcess(["migrate", "history", "--verbose"], env);
    expect(human.stdout).toMatch(/\S+ +completed +3 imported, 0 already imported, 0 failed, 3 retired +NO BACKUP/);
    expect(human.stdout).toMatch(/✓ imported +agents\/main\/sessions\/s-ops\.jsonl → /);
    const doc = JSON.parse((await runInProcess(["migrate", "history", "--json"], env)).stdout);
    expect(doc).toMatchObject({ command: "migrate history", total: 1, runs: [{ status: "completed", backupSkipped: true, sources: expect.any(Array) }] });
    expect(doc.runs[0].sources).toHaveLength(3);
    expect((await runInProcess(["migrate", "history", "--limit", "0"], env)).code).toBe(2);
  });
});
