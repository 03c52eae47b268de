// Global-target importers: the same plan → import → verify → retire → ledger pipeline, on the global DB.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IMPORTERS } from "../../src/migration/importers/index.js";
import { inspectJsonSource, isObject, readJsonSource, assertUnchanged, shapeError } from "../../src/migration/json-source.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import type { GlobalSourceImporter, ImportCounts, PlannedSource, SourceImporter, SourceKind } from "../../src/migration/types.js";
import type { GlobalDatabase } from "../../src/state/state-databases.js";
import { makeTempState } from "../helpers/temp-state.js";
import { dumpState, migrate, rows } from "../helpers/migration.js";

/** A toy control-plane kind: `fake/<name>.json` = `{"items":[{"id","value"}]}` → plugin_state_entries (plugin "fake"). */
// With failAfterFirstRow, a file of several items throws after writing its first row.
const FAKE_KIND = "fake-global" as SourceKind;
let failAfterFirstRow = false;

function items(file: string): Array<{ id: string; value: unknown }> {
  const { value } = readJsonSource(file);
  if (!isObject(value) || !Array.isArray(value.items)) throw shapeError(file, 'an object with an "items" array', value);
  return value.items as Array<{ id: string; value: unknown }>;
}

const fakeImporter: GlobalSourceImporter = {
  kind: FAKE_KIND,
  target: "global",
  label: { one: "fake file", many: "fake files", records: "items" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect(ctx) {
    const dir = path.join(ctx.root, "fake");
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .filter((n) => n.endsWith(".json"))
      .sort()
      .map((n) => ({ kind: FAKE_KIND, agentId: null, path: path.join(dir, n), relativePath: `fake/${n}`, legacyRoot: false }));
  },
  inspect: (source) => inspectJsonSource(source, (v) => ({ records: isObject(v) && Array.isArray(v.items) ? v.items.length : 0 })),
  import(db: GlobalDatabase, source: PlannedSource): ImportCounts {
    assertUnchanged(source, readJsonSource(source.path).sha256);
    const list = items(source.path);
    let n = 0;
    for (const item of list) {
      db.run(
        db.q
          .insertInto("plugin_state_entries")
          .values({ plugin_id: "fake", namespace: "items", entry_key: item.id, value_json: JSON.stringify(item.value), created_at: 1, expires_at: null })
          .onConflict((oc) => oc.columns(["plugin_id", "namespace", "entry_key"]).doUpdateSet({ value_json: JSON.stringify(item.value) })),
      );
      n += 1;
      if (failAfterFirstRow && n < list.length) throw new Error("simulated failure after the first row");
    }
    return { records: list.length, rows: { plugin_state_entries: n }, skipped: 0, warnings: [], notes: [], expect: { items: list.length } };
  },
  verify(db, source, expected) {
    const ids = items(source.path).map((i) => i.id);
    const found = ids.filter((id) => db.first(db.q.selectFrom("plugin_state_entries").select("entry_key").where("plugin_id", "=", "fake").where("entry_key", "=", id)) !== undefined).length;
    return found === Number(expected.expect.items) ? null : `expected ${String(expected.expect.items)} item(s), found ${found}`;
  },
};

const registry = IMPORTERS as SourceImporter[];
beforeEach(() => {
  failAfterFirstRow = false;
  registry.push(fakeImporter);
});
afterEach(() => {
  registry.splice(registry.indexOf(fakeImporter), 1);
});

function seed(stateDir: string, files: Record<string, string>): void {
  fs.mkdirSync(path.join(stateDir, "fake"), { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(stateDir, "fake", name), text);
}

const A = JSON.stringify({ items: [{ id: "a1", value: 1 }, { id: "a2", value: { x: true } }] });
const B = JSON.stringify({ items: [{ id: "b1", value: "two" }] });

type Ledger = { source_path: string; migration_kind: string; target_table: string; status: string; source_sha256: string; source_record_count: number; removed_source: number };

function ledger(file: string): Ledger[] {
  return rows<Ledger>(file, "SELECT source_path, migration_kind, target_table, status, source_sha256, source_record_count, removed_source FROM migration_sources ORDER BY source_path");
}

function items_(file: string): unknown[] {
  return rows(file, "SELECT entry_key, value_json FROM plugin_state_entries WHERE plugin_id = 'fake' ORDER BY entry_key");
}

describe("global-target importers", () => {
  it("plans after the agent sources, with no agent, targeting the global database", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    seed(stateDir, { "a.json": A });
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.kind, s.targetDatabase, s.agentId])).toEqual([
      ["sessions-index", "agent", "main"],
      ["transcript", "agent", "main"],
      ["transcript", "agent", "main"],
      [FAKE_KIND, "global", null],
    ]);
    expect(plan.sources[3]).toMatchObject({ relativePath: "fake/a.json", action: "import", records: 2, targetTable: "plugin_state_entries" });
    expect(plan.summary[FAKE_KIND]).toMatchObject({ files: 1, records: 2 });
  });

  it("imports rows and the ledger row in one global transaction, retires, and a re-run changes nothing", async () => {
    const { paths, stateDir } = makeTempState();
    seed(stateDir, { "a.json": A, "b.json": B });
    const { run } = await migrate(paths);
    expect(run).toMatchObject({ status: "completed", totals: { imported: 2, retired: 2 } });
    expect(run.sources.map((o) => [o.relativePath, o.status, o.agentId, o.rows])).toEqual([
      ["fake/a.json", "imported", null, { plugin_state_entries: 2 }],
      ["fake/b.json", "imported", null, { plugin_state_entries: 1 }],
    ]);
    expect(items_(paths.globalDbPath)).toEqual([
      { entry_key: "a1", value_json: "1" },
      { entry_key: "a2", value_json: '{"x":true}' },
      { entry_key: "b1", value_json: '"two"' },
    ]);
    expect(ledger(paths.globalDbPath)).toEqual([
      expect.objectContaining({ source_path: "fake/a.json", migration_kind: FAKE_KIND, target_table: "plugin_state_entries", status: "imported", source_record_count: 2, removed_source: 1 }),
      expect.objectContaining({ source_path: "fake/b.json", status: "imported", source_record_count: 1, removed_source: 1 }),
    ]);
    expect(fs.existsSync(path.join(stateDir, "migrated", run.runId, "fake/a.json"))).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "fake"))).toBe(false);
    // No agent database is created for control-plane sources.
    expect(fs.existsSync(paths.agentsDir)).toBe(false);

    const before = dumpState(paths);
    const again = await migrate(paths);
    expect(again.run.sources).toEqual([]);
    expect(dumpState(paths)).toEqual(before);
  });

  it("rolls back a failing import whole: no rows, a failed ledger row, the file kept, the others imported", async () => {
    const { paths, stateDir } = makeTempState();
    seed(stateDir, { "a.json": A, "b.json": B });
    failAfterFirstRow = true;
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => o.status)).toEqual(["failed", "imported"]);
    expect(run.sources[0]!.reason).toMatch(/simulated failure/);
    // b.json has one item, so the failure never fires; a.json's first row was rolled back with the rest.
    expect(items_(paths.globalDbPath)).toEqual([{ entry_key: "b1", value_json: '"two"' }]);
    expect(ledger(paths.globalDbPath).map((r) => [r.source_path, r.status, r.removed_source])).toEqual([
      ["fake/a.json", "failed", 0],
      ["fake/b.json", "imported", 1],
    ]);
    expect(fs.existsSync(path.join(stateDir, "fake/a.json"))).toBe(true);

    failAfterFirstRow = false;
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.relativePath, s.action])).toEqual([["fake/a.json", "import"]]);
    expect(plan.sources[0]!.notes.join()).toMatch(/previous attempt .* failed: simulated failure/);
    const retry = await migrate(paths);
    expect(retry.run).toMatchObject({ status: "completed", totals: { imported: 1 } });
    expect(items_(paths.globalDbPath)).toHaveLength(3);
  });

  it("keeps a malformed file in place with a failed status and no content in the reason", async () => {
    const { paths, stateDir } = makeTempState();
    seed(stateDir, { "a.json": '{"items": [ {"id": "x", "value": "sk-NEVER-SHOW-THIS-123"} ', "b.json": B });
    const plan = await planMigration({ paths });
    expect(plan.sources[0]!.notes).toEqual([expect.stringMatching(/^will fail: .*a\.json: invalid JSON/)]);
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => o.status)).toEqual(["failed", "imported"]);
    expect(run.sources[0]!.reason).toMatch(/a\.json: invalid JSON.*left in place/);
    expect(JSON.stringify(run)).not.toContain("sk-NEVER-SHOW-THIS-123");
    expect(fs.existsSync(path.join(stateDir, "fake/a.json"))).toBe(true);
  });

  it("finishes a crash between commit and retirement, and re-imports when the rows are gone", async () => {
    const { paths, stateDir } = makeTempState();
    seed(stateDir, { "a.json": A });
    const first = await migrate(paths);
    const o = first.run.sources[0]!;
    fs.mkdirSync(path.dirname(o.path), { recursive: true });
    fs.renameSync(o.retiredTo!, o.path);
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => s.action)).toEqual(["already-imported"]);
    const second = await migrate(paths);
    expect(second.run.sources.map((x) => [x.status, x.retired])).toEqual([["already-imported", "moved"]]);

    const back = second.run.sources[0]!;
    fs.mkdirSync(path.dirname(back.path), { recursive: true });
    fs.renameSync(back.retiredTo!, back.path);
    const Database = (await import("better-sqlite3")).default;
    const raw = new Database(paths.globalDbPath);
    raw.prepare("DELETE FROM plugin_state_entries WHERE entry_key = 'a2'").run();
    raw.close();
    const third = await migrate(paths);
    expect(third.run.sources[0]).toMatchObject({ status: "imported", retired: "moved" });
    expect(third.run.sources[0]!.notes.join()).toMatch(/the ledger said imported, but expected 2 item\(s\), found 1/);
    expect(items_(paths.globalDbPath)).toHaveLength(2);
    expect(fs.existsSync(path.join(stateDir, "fake"))).toBe(false);
  });

  it("runs agent and global sources in one run, each in its own database", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    seed(stateDir, { "a.json": A });
    const { run } = await migrate(paths);
    expect(run).toMatchObject({ status: "completed", totals: { imported: 4, retired: 4 } });
    expect(run.sources.map((o) => o.kind)).toEqual(["sessions-index", "transcript", "transcript", FAKE_KIND]);
    expect(rows(paths.globalDbPath, "SELECT count(*) AS n FROM migration_sources WHERE status = 'imported'")).toEqual([{ n: 4 }]);
    expect(items_(paths.globalDbPath)).toHaveLength(2);
  });
});
