// backup create's static import graph stays free of the Kysely-backed storage core (~0.2 CPU-s to load, a tenth of an unchanged create).
import path from "node:path";
import { describe, expect, it } from "vitest";
import { staticGraph, storageCoreIn } from "../helpers/static-graph.js";
import { repoRoot } from "../helpers/temp-state.js";

describe("backup create's imports", () => {
  it("reach neither kysely nor the storage core (state/database.ts)", () => {
    const graph = staticGraph(path.join(repoRoot, "src", "backup", "create-backup.ts"));
    expect(graph.has(path.join(repoRoot, "src", "backup", "record-backup-run.ts"))).toBe(true);
    expect(graph.has("better-sqlite3")).toBe(true);
    expect(storageCoreIn(graph)).toEqual([]);
  });
});
