// Through the real binary: no -wal/-shm left behind after any command (SPEC §3), a corrupt agent DB isolates itself, a blocked retire exits 1 then converges.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, repoRoot, runBin } from "../helpers/temp-state.js";

/** Every SQLite sidecar under `dir` (state tree and backups beside it). */
function sidecars(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/-(wal|shm|journal)$/.test(entry.name)) found.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return found.sort();
}

/** What a killed runtime leaves: a write in WAL mode, then exit without closing (the -wal and -shm stay). */
function killedWriter(file: string): void {
  const script = `const D = require(${JSON.stringify(path.join(repoRoot, "node_modules", "better-sqlite3"))}); const db = new D(${JSON.stringify(file)}); db.pragma("journal_mode = WAL"); db.pragma("wal_autocheckpoint = 0"); db.exec("CREATE TABLE IF NOT EXISTS zz_runtime_probe (x); INSERT INTO zz_runtime_probe VALUES (1)"); process.exit(0);`;
  execFileSync(process.execPath, ["-e", script]);
}

const sha = (file: string): string => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

describe("clean close", () => {
  it("doctor --fix on a legacy tree, and every command after it, leaves no -wal/-shm anywhere", async () => {
    const { env, root, stateDir } = makeTempState("legacy-state");
    const fix = await runBin(["doctor", "--fix", "--yes"], env);
    expect(fix.code, fix.stdout + fix.stderr).toBe(0);
    expect(fs.existsSync(path.join(stateDir, "agents/main/agent/openclaw-agent.sqlite"))).toBe(true);
    expect(sidecars(root)).toEqual([]);

    // Every command on a clean tree: none leaves a sidecar of a database it opened.
    for (const args of [["doctor"], ["doctor", "--fix", "--yes"], ["doctor", "--deep"], ["inspect"], ["sessions", "list", "--all-agents"], ["migrate", "plan"], ["migrate", "history"], ["backup", "create"], ["backup", "list"]]) {
      const r = await runBin(args, env);
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(sidecars(root), args.join(" ")).toEqual([]);
    }
    // A killed runtime's leftovers: the commands that open every database close them away.
    const agentDb = path.join(stateDir, "agents/main/agent/openclaw-agent.sqlite");
    const globalDb = path.join(stateDir, "state/openclaw.sqlite");
    for (const args of [["doctor"], ["doctor", "--fix", "--yes"], ["inspect"]]) {
      killedWriter(agentDb);
      killedWriter(globalDb);
      expect(sidecars(root).length).toBeGreaterThan(0);
      const r = await runBin(args, env);
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(sidecars(root), args.join(" ")).toEqual([]);
    }
  });

  it("a corrupt agent DB: byte-identical, named with the remedy, the healthy agent migrated, exit 1 with ok:false, no sidecars", async () => {
    const { env, root, stateDir } = makeTempState("migration/simple");
    fs.cpSync(path.join(stateDir, "agents/main/sessions"), path.join(stateDir, "agents/ops/sessions"), { recursive: true });
    const opsDb = path.join(stateDir, "agents/ops/agent/openclaw-agent.sqlite");
    fs.mkdirSync(path.dirname(opsDb), { recursive: true });
    // A real database whose page 1 is then zeroed.
    execFileSync(process.execPath, ["-e", `const D = require(${JSON.stringify(path.join(repoRoot, "node_modules", "better-sqlite3"))}); const db = new D(${JSON.stringify(opsDb)}); db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (randomblob(9000))"); db.close();`]);
    const fd = fs.openSync(opsDb, "r+");
    fs.writeSync(fd, Buffer.alloc(4096), 0, 4096, 0);
    fs.closeSync(fd);
    const before = sha(opsDb);

    const r = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(false);
    const run = doc.migration.run;
    expect(run.backupPath).toEqual(expect.any(String));
    expect(run.skippedDatabases).toEqual([expect.objectContaining({ agentId: "ops", path: opsDb, reason: expect.stringMatching(/file is not a database/), remedy: expect.stringMatching(/migrate skip/) })]);
    expect(run.sources.filter((o: { agentId: string; status: string }) => o.agentId === "main").map((o: { status: string }) => o.status)).toEqual(["imported", "imported", "imported"]);
    expect(run.sources.filter((o: { agentId: string; status: string }) => o.agentId === "ops").map((o: { status: string }) => o.status)).toEqual(["failed", "failed", "failed"]);
    expect(doc.repairs.find((x: { id: string }) => x.id === "format.upgrade")).toMatchObject({ status: "failed", detail: expect.stringMatching(/^not run: .*agent database "ops"/) });
    expect(sha(opsDb)).toBe(before);
    for (const rel of ["sessions.json", "s-main.jsonl", "s-ops.jsonl"]) expect(fs.existsSync(path.join(stateDir, "agents/ops/sessions", rel))).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-main.jsonl"))).toBe(false);
    expect(sidecars(root)).toEqual([]);

    const human = await runBin(["doctor", "--fix", "--yes"], env);
    expect(human.code).toBe(1);
    expect(human.stdout + human.stderr).toMatch(/agent database "ops" .* cannot be opened \(file is not a database\): it was left byte-identical/);
    expect(sha(opsDb)).toBe(before);
    expect(sidecars(root)).toEqual([]);
  });

  it("a blocked retire exits 1 (ok:false) and the next run, with the path free, retires and exits 0", async () => {
    const { env, root, stateDir } = makeTempState("migration/simple");
    fs.writeFileSync(path.join(stateDir, "migrated"), "in the way\n");
    const first = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(first.code).toBe(1);
    const doc = JSON.parse(first.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.repairs.find((x: { id: string }) => x.id === "legacy.migrate")).toMatchObject({ status: "failed", detail: expect.stringMatching(/3 imported but not retired/) });
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-main.jsonl"))).toBe(true);
    expect(sidecars(root)).toEqual([]);

    fs.rmSync(path.join(stateDir, "migrated"));
    const second = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(second.code, second.stdout).toBe(0);
    expect(JSON.parse(second.stdout).migration.run.totals).toMatchObject({ alreadyImported: 3, retired: 3 });
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-main.jsonl"))).toBe(false);
    expect(sidecars(root)).toEqual([]);
  });
});
