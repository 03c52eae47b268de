// The static import graph of a source file: what a command loads before any dynamic import() runs.
import fs from "node:fs";
import path from "node:path";

/** Every module reachable from `entry` by static, value imports (type-only imports and dynamic import() are not followed). */
export function staticGraph(entry: string): Set<string> {
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

/** The modules of `graph` that are Kysely or the Kysely-backed storage core (state/database.ts, the backup ledger reader). */
export function storageCoreIn(graph: Set<string>): string[] {
  return [...graph].filter((m) => m === "kysely" || m.endsWith(`${path.sep}state${path.sep}database.ts`) || m.endsWith("backup-runs.ts"));
}
