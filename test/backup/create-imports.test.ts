// backup create's static import graph stays free of the Kysely-backed storage core (~0.2 CPU-s to load, a tenth of an unchanged create).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/temp-state.js";

/** Every module reachable from `entry` by static, value imports (type-only imports and dynamic import() are not followed). */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith(".ts")) continue;
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^;]*?\sfrom\s+)?"([^"]+)";/gms)) {
      const spec = m[1]!;
      if (spec.startsWith(".")) todo.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")));
      else seen.add(spec);
    }
  }
  return seen;
}

describe("backup create's imports", () => {
  it("reach neither kysely nor the storage core (state/database.ts)", () => {
    const graph = staticGraph(path.join(repoRoot, "src", "backup", "create-backup.ts"));
    expect(graph.has(path.join(repoRoot, "src", "backup", "record-backup-run.ts"))).toBe(true);
    expect(graph.has("better-sqlite3")).toBe(true);
    expect([...graph].filter((m) => m === "kysely" || m.endsWith(`${path.sep}state${path.sep}database.ts`) || m.endsWith("backup-runs.ts"))).toEqual([]);
  });
});
