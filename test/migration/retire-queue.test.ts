// Sources are retired only after the WAL holding their rows is synced; a failed sync keeps them in place.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { StateDatabase } from "../../src/state/database.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { migrate, rows } from "../helpers/migration.js";
import { makeTempState } from "../helpers/temp-state.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("retirement after durability", () => {
  it("syncs the agent and global WAL before the first source moves", async () => {
    const { paths } = makeTempState("migration/simple");
    const events: string[] = [];
    vi.spyOn(StateDatabase.prototype, "syncWal").mockImplementation(function (this: StateDatabase<unknown>) {
      events.push(`sync ${path.basename(this.path)}`);
    });
    const rename = fs.renameSync;
    vi.spyOn(fs, "renameSync").mockImplementation((from, to) => {
      if (String(to).includes(`${path.sep}migrated${path.sep}`)) events.push(`move ${path.basename(String(from))}`);
      rename(from, to);
    });
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const firstMove = events.findIndex((e) => e.startsWith("move"));
    expect(firstMove).toBeGreaterThan(0);
    expect(events.slice(0, firstMove)).toEqual(expect.arrayContaining(["sync openclaw-agent.sqlite", "sync openclaw.sqlite"]));
    expect(events.filter((e) => e.startsWith("move")).length).toBe(run.sources.filter((o) => o.retired === "moved").length);
  });

  it("a WAL that cannot be synced keeps every source in place, says why, and the next run retires them", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const spy = vi.spyOn(StateDatabase.prototype, "syncWal").mockImplementation(() => {
      throw new Error("EIO: i/o error, fsync");
    });
    const { run } = await migrate(paths, { removeSources: true });
    const imported = run.sources.filter((o) => o.rows);
    expect(imported.length).toBeGreaterThan(0);
    for (const o of imported) {
      expect(o.retired).toBeNull();
      expect(o.warnings.join("\n")).toMatch(/not retired: the new rows could not be synced to disk \(EIO/);
      expect(fs.existsSync(o.path)).toBe(true);
    }
    expect(rows<{ removed_source: number }>(paths.globalDbPath, "SELECT removed_source FROM migration_sources").every((r) => r.removed_source === 0)).toBe(true);

    spy.mockRestore();
    const again = await migrate(paths, { removeSources: true });
    expect(again.run.sources.filter((o) => o.rows || o.action === "already-imported").every((o) => o.retired === "deleted")).toBe(true);
    expect(fs.readdirSync(path.join(stateDir, "agents", "main")).includes("sessions")).toBe(false);
  });

  it("syncWal on a real database: with a WAL, and with none left after a checkpoint", () => {
    const { paths } = makeTempState();
    const global = openGlobalDatabase(paths, { mode: "write", create: true });
    global.handle.prepare("INSERT INTO schema_meta (meta_key, role, schema_version, created_at, updated_at) VALUES ('x', 'global', 1, 0, 0)").run();
    expect(fs.existsSync(`${paths.globalDbPath}-wal`)).toBe(true);
    expect(() => global.syncWal()).not.toThrow();
    global.handle.pragma("wal_checkpoint(TRUNCATE)");
    global.close();
    expect(fs.existsSync(`${paths.globalDbPath}-wal`)).toBe(false);
    const again = openGlobalDatabase(paths, { mode: "write" });
    expect(() => again.syncWal()).not.toThrow();
    again.close();
  });
});
