// A corrupt agent database isolates itself: left byte-identical, out of the archive (named as skipped), its files in place; the other agents migrate.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { upgradeWaitReason } from "../../src/migration/upgrade-wait.js";
import { findBrokenAgentDatabases } from "../../src/migration/broken-databases.js";
import { planFormatUpgrade } from "../../src/migration/upgrade-format.js";
import type { StatePaths } from "../../src/state/paths.js";
import { openAgentDatabase } from "../../src/state/state-databases.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";
import { readRawEntries } from "../helpers/tar-tools.js";
import { makeTempState } from "../helpers/temp-state.js";

const sha = (file: string): string => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** The `simple` fixture (agent main) plus the same legacy files for agent `ops`, whose database `damage` breaks. */
function twoAgents(damage: (file: string) => void): { paths: StatePaths; stateDir: string; opsDb: string } {
  const { paths, stateDir } = makeTempState("migration/simple");
  fs.cpSync(path.join(stateDir, "agents/main/sessions"), path.join(stateDir, "agents/ops/sessions"), { recursive: true });
  const opsDb = agentDbFile(paths, "ops");
  openAgentDatabase(paths, "ops", { mode: "write", create: true }).close();
  damage(opsDb);
  return { paths, stateDir, opsDb };
}

/** Page 1 zeroed: the SQLite header and the schema page are gone ("file is not a database"). */
function zeroPageOne(file: string): void {
  const fd = fs.openSync(file, "r+");
  try {
    fs.writeSync(fd, Buffer.alloc(4096), 0, 4096, 0);
  } finally {
    fs.closeSync(fd);
  }
}

/** A valid header and schema, but an interior page of a big table overwritten: opens fine, its snapshot fails. */
function damageInteriorPage(file: string): void {
  const db = new Database(file);
  db.pragma("journal_mode = DELETE");
  db.exec("CREATE TABLE filler (x BLOB)");
  const insert = db.prepare("INSERT INTO filler VALUES (randomblob(3000))");
  for (let i = 0; i < 200; i += 1) insert.run();
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  const pages = db.pragma("page_count", { simple: true }) as number;
  db.close();
  const fd = fs.openSync(file, "r+");
  try {
    // Every page after the schema pages: b-tree headers and overflow chains are all garbage now.
    const junk = Buffer.alloc(pageSize, 0xa5);
    for (let p = Math.floor(pages / 2); p < pages; p += 1) fs.writeSync(fd, junk, 0, pageSize, p * pageSize);
  } finally {
    fs.closeSync(fd);
  }
}

function manifestSkipped(archive: string): Array<{ path: string; reason: string }> {
  const entry = readRawEntries(archive).find((e) => e.path.endsWith("/manifest.json"));
  return (JSON.parse(entry!.data.toString("utf8")) as { skipped: Array<{ path: string; reason: string }> }).skipped;
}

describe("a corrupt agent database isolates itself", () => {
  it("page 1 zeroed: left byte-identical and out of the archive, its legacy files stay, the healthy agent migrates behind the backup", async () => {
    const { paths, stateDir, opsDb } = twoAgents(zeroPageOne);
    const before = sha(opsDb);
    expect(findBrokenAgentDatabases(paths).map((b) => b.agentId)).toEqual(["ops"]);

    const { run } = await migrate(paths, { backup: true });

    expect(sha(opsDb)).toBe(before);
    expect(run.error).toBeUndefined();
    expect(run.status).toBe("warning");
    expect(run.backupPath).not.toBeNull();
    // The healthy agent: imported and retired.
    const main = run.sources.filter((o) => o.agentId === "main");
    expect(main.map((o) => [o.status, o.retired])).toEqual(main.map(() => ["imported", "moved"]));
    expect(rows(agentDbFile(paths, "main"), "SELECT count(*) AS n FROM sessions")[0]).toMatchObject({ n: 2 });
    // The broken one: every source failed with the reason, still in place, nothing retired.
    const ops = run.sources.filter((o) => o.agentId === "ops");
    expect(ops).toHaveLength(3);
    for (const o of ops) {
      expect(o).toMatchObject({ status: "failed", retired: null });
      expect(o.reason).toMatch(/agent database "ops" \(agents\/ops\/agent\/openclaw-agent\.sqlite\) cannot be opened \(file is not a database\)/);
      expect(fs.existsSync(o.path)).toBe(true);
    }
    // Named with the remedy, using commands that exist.
    expect(run.skippedDatabases).toHaveLength(1);
    const skipped = run.skippedDatabases![0]!;
    expect(skipped).toMatchObject({ agentId: "ops", path: opsDb, relativePath: "agents/ops/agent/openclaw-agent.sqlite" });
    expect(skipped.reason).toMatch(/file is not a database/);
    expect(skipped.remedy).toMatch(/move it out of the state dir/);
    expect(skipped.remedy).toMatch(/openclaw-state backup restore <archive> --target <dir> --yes/);
    expect(skipped.remedy).toMatch(/openclaw-state migrate skip <path> --reason/);
    expect(run.warnings.join("\n")).toMatch(/agent database "ops" .* left byte-identical and is not in the backup archive, and its 3 legacy source\(s\) stay in place/);
    // The archive's manifest records it as skipped with its reason; nothing of it is archived.
    const manifest = manifestSkipped(run.backupPath!);
    expect(manifest).toContainEqual({ kind: "file", path: opsDb, reason: expect.stringMatching(/^set aside: agent database "ops" cannot be opened \(file is not a database\)/) });
    expect(readRawEntries(run.backupPath!).some((e) => e.path.endsWith("agents/ops/agent/openclaw-agent.sqlite"))).toBe(false);
    expect(readRawEntries(run.backupPath!).some((e) => e.path.endsWith("agents/main/sessions/s-main.jsonl"))).toBe(true);
    // The format upgrade waits, naming the database; `migrate upgrade` names it with the remedy too.
    expect(upgradeWaitReason(run)).toMatch(/agent database "ops" .* cannot be opened/);
    const blocked = planFormatUpgrade(paths).find((p) => p.agentId === "ops")!;
    expect(blocked.action).toBe("blocked");
    expect(blocked.reason).toMatch(/move it out of the state dir .* migrate skip/);

    // A second run changes nothing for it and takes no new archive for the waiting files alone.
    const again = await migrate(paths, { backup: true });
    expect(sha(opsDb)).toBe(before);
    expect(again.run.backupPath).toBeNull();
    expect(again.run.sources.map((o) => o.status)).toEqual(["failed", "failed", "failed"]);
    expect(again.run.status).toBe("failed");

    // The first remedy: moved out of the state dir, the next run creates a new database and imports agent ops.
    fs.renameSync(opsDb, path.join(stateDir, "..", "ops-broken.sqlite"));
    const healed = await migrate(paths, { backup: true });
    expect(healed.run.status).toBe("completed");
    expect(healed.run.skippedDatabases).toBeUndefined();
    expect(healed.run.sources.map((o) => o.status)).toEqual(["imported", "imported", "imported"]);
    expect(upgradeWaitReason(healed.run)).toBeNull();
  });

  it("a damaged interior page the open does not reach: the backup's failed snapshot sets it aside and the backup is retried", async () => {
    const { paths, opsDb } = twoAgents(damageInteriorPage);
    const before = sha(opsDb);
    // Not caught by opening it: only the snapshot reads the damaged pages.
    expect(findBrokenAgentDatabases(paths)).toEqual([]);

    const { run } = await migrate(paths, { backup: true });

    expect(sha(opsDb)).toBe(before);
    expect(run.error).toBeUndefined();
    expect(run.backupPath).not.toBeNull();
    expect(run.skippedDatabases?.map((b) => b.agentId)).toEqual(["ops"]);
    expect(run.skippedDatabases![0]!.reason).toMatch(/Cannot snapshot database|fails integrity_check/);
    expect(run.sources.filter((o) => o.agentId === "main").every((o) => o.status === "imported" && o.retired === "moved")).toBe(true);
    expect(run.sources.filter((o) => o.agentId === "ops").every((o) => o.status === "failed" && fs.existsSync(o.path))).toBe(true);
    expect(manifestSkipped(run.backupPath!).some((s) => s.path === opsDb && s.reason.startsWith("set aside:"))).toBe(true);
  });
});
