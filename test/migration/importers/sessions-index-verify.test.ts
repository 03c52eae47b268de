// The sessions.json importer's verify: member by member against the committed rows, spellings of one key included.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sessionsIndexImporter } from "../../../src/migration/importers/sessions-index.js";
import type { AgentImportContext, ImportCounts, PlannedSource } from "../../../src/migration/types.js";
import { openAgentDatabase, type AgentDatabase } from "../../../src/state/state-databases.js";
import { migrate } from "../../helpers/migration.js";
import { makeTempState } from "../../helpers/temp-state.js";

let db: AgentDatabase | null = null;
afterEach(() => {
  db?.close();
  db = null;
});

/** The fixture migrated, with the index it came from kept aside (the import retires the original). */
async function migrated(): Promise<{ verify: () => string | null; db: AgentDatabase }> {
  const { paths, stateDir, root } = makeTempState("migration/canonical-keys");
  const copy = path.join(root, "sessions.json");
  fs.copyFileSync(path.join(stateDir, "agents/main/sessions/sessions.json"), copy);
  const { run } = await migrate(paths);
  // The real run's verify passed, with "main" losing to "agent:main:main" and two spellings of group:abc.
  expect(run.status).toBe("completed");
  db = openAgentDatabase(paths, "main", { mode: "write" });
  const source = { path: copy, routedAgents: [] } as unknown as PlannedSource;
  const ctx = { agentId: "main", mainKey: "main" } as unknown as AgentImportContext;
  const opened = db;
  return { db: opened, verify: () => sessionsIndexImporter.verify(opened, source, {} as ImportCounts, ctx) };
}

describe("sessions.json verify", () => {
  it("passes on what the import wrote, and names each missing entry, route and session once", async () => {
    const { db, verify } = await migrated();
    expect(verify()).toBeNull();

    db.handle.prepare("DELETE FROM session_routes WHERE session_key = 'agent:main:work'").run();
    expect(verify()).toBe("1 row(s) missing after commit: route agent:main:work");

    // Two members of the file ("main" and "agent:main:main") name this key: it is reported once.
    db.handle.prepare("DELETE FROM session_entries WHERE session_key = 'agent:main:main'").run();
    expect(verify()).toBe("2 row(s) missing after commit: entry agent:main:main, route agent:main:work");

    db.handle.pragma("foreign_keys = OFF");
    db.handle.prepare("DELETE FROM sessions WHERE session_id = 's-sub'").run();
    expect(verify()).toBe("3 row(s) missing after commit: entry agent:main:main, route agent:main:work, session s-sub");
  });
});
