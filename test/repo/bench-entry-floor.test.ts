// bench/migrate-shapes.mjs's entry floor writes the one-entry shape's entry into 9.6's session_nodes as the upgrade does, so the floor is the same work.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { makeTempDir, repoRoot } from "../helpers/temp-state.js";

const shapes = path.join(repoRoot, "bench", "migrate-shapes.mjs");

describe("bench/migrate-shapes.mjs --floor-entry", () => {
  it("inserts the index's one entry, byte for byte, into a file of 9.6's agent schema and leaves it valid", () => {
    const dir = makeTempDir();
    const state = path.join(dir, "state");
    const make = spawnSync(process.execPath, [shapes, "--make", "index-one-entry", state], { encoding: "utf8", env: { ...process.env, BENCH_SHAPES_SCALE: "0.01" } });
    expect(make.status, make.stderr).toBe(0);
    const index = path.join(state, "agents", "main", "sessions", "sessions.json");
    const floor = spawnSync(process.execPath, ["--expose-gc", shapes, "--floor-entry", index, dir], { encoding: "utf8" });
    expect(floor.status, floor.stderr).toBe(0);
    const db = new Database(path.join(dir, "floor.sqlite"), { readonly: true });
    try {
      const row = db.prepare("SELECT entry_json, entry_valid FROM session_nodes").get() as { entry_json: string; entry_valid: number };
      expect(row.entry_valid).toBe(1);
      expect(JSON.parse(row.entry_json)).toEqual(Object.values(JSON.parse(fs.readFileSync(index, "utf8")) as object)[0]);
      // 9.6's triggers fired as they do for the upgrade's insert (a pending-validation row per node).
      expect(db.prepare("SELECT count(*) FROM session_canonical_validation_pending").pluck().get()).toBe(1);
    } finally {
      db.close();
    }
  });
});
