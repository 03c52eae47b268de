// Retire checks every source and destination against the boundary at move time: a parent swapped for a link after the plan is not followed.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { StateDatabase } from "../../src/state/database.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";
import { makeTempDir, makeTempState, snapshotTree } from "../helpers/temp-state.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs `swap` once, after the rows are committed and before the first source is retired (the WAL sync precedes it). */
function beforeRetire(swap: () => void): void {
  const sync = StateDatabase.prototype.syncWal;
  let done = false;
  vi.spyOn(StateDatabase.prototype, "syncWal").mockImplementation(function (this: StateDatabase<unknown>) {
    if (!done) {
      done = true;
      swap();
    }
    sync.call(this);
  });
}

describe("retire against the boundary", () => {
  for (const removeSources of [false, true]) {
    it(`a sessions dir swapped for a link between plan and retire: nothing ${removeSources ? "deleted" : "moved"}, each source named, the import committed`, async () => {
      const { paths, stateDir } = makeTempState("migration/simple");
      const sessions = path.join(stateDir, "agents", "main", "sessions");
      const elsewhere = path.join(makeTempDir("ocs-elsewhere-"), "sessions");
      beforeRetire(() => {
        fs.renameSync(sessions, elsewhere);
        fs.symlinkSync(elsewhere, sessions);
      });
      const { run } = await migrate(paths, { removeSources });
      const inSessions = run.sources.filter((o) => o.relativePath.startsWith("agents/main/sessions/"));
      expect(inSessions.length).toBe(3);
      for (const o of inSessions) {
        expect(o.retired, o.relativePath).toBeNull();
        expect(o.status).toBe("warning");
        expect(o.warnings.join("\n")).toMatch(/not retired: Refusing to retire .*: its parent .*sessions is a symbolic link/);
      }
      // Every file is still where the link points; nothing of it reached migrated/.
      expect(Object.keys(snapshotTree(elsewhere)).sort()).toEqual(["s-main.jsonl", "s-ops.jsonl", "sessions.json"]);
      expect(fs.existsSync(path.join(stateDir, "migrated"))).toBe(false);
      // The import stays committed, and the ledger says the sources stayed.
      expect(rows<{ n: number }>(agentDbFile(paths), "SELECT count(*) AS n FROM sessions")[0]!.n).toBeGreaterThan(0);
      const ledger = rows<{ removed_source: number; status: string }>(paths.globalDbPath, "SELECT removed_source, status FROM migration_sources WHERE source_path LIKE 'agents/main/sessions/%'");
      expect(ledger).toHaveLength(3);
      expect(ledger.every((r) => r.removed_source === 0)).toBe(true);
    });
  }

  it("migrated/ swapped for a link to elsewhere: nothing is moved through it, each source kept and named", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const elsewhere = makeTempDir("ocs-elsewhere-");
    beforeRetire(() => fs.symlinkSync(elsewhere, path.join(stateDir, "migrated")));
    const { run } = await migrate(paths);
    const moved = run.sources.filter((o) => o.retired === "moved");
    expect(moved).toEqual([]);
    const kept = run.sources.filter((o) => o.relativePath.startsWith("agents/main/sessions/"));
    for (const o of kept) {
      expect(o.warnings.join("\n")).toMatch(/not retired: Refusing to retire into .*migrated is a symbolic link/);
      expect(fs.existsSync(o.path)).toBe(true);
    }
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it("an untouched tree still retires every source under migrated/ (the check passes real directories)", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const { run } = await migrate(paths);
    const moved = run.sources.filter((o) => o.retired === "moved");
    expect(moved.length).toBe(3);
    for (const o of moved) {
      expect(fs.existsSync(o.retiredTo!)).toBe(true);
      expect(o.retiredTo!.startsWith(path.join(stateDir, "migrated") + path.sep)).toBe(true);
    }
  });
});
