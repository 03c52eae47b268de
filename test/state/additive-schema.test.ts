// Schema v1's @additive section: an older v1 file is read as it is (never repaired) and gains the objects on a write open.
import { describe, expect, it } from "vitest";
import { AGENT_SCHEMA_ADDITIVE_OBJECTS } from "../../src/state/generated/ddl.js";
import { openAgentDatabase } from "../../src/state/state-databases.js";
import { readSessionTranscriptVisibleMessageDelta } from "../../src/runtime/index.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";
import { append, asLegacyV1, chain, createSession } from "../helpers/transcripts.js";

function objects(state: ReturnType<typeof makeTempState>): string[] {
  const db = openAgentDatabase(state.paths, "main", { mode: "read" });
  try {
    const names = AGENT_SCHEMA_ADDITIVE_OBJECTS.map((n) => `'${n}'`).join(", ");
    return (db.handle.prepare(`SELECT name FROM sqlite_master WHERE name IN (${names}) ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
  } finally {
    db.close();
  }
}

describe("@additive schema objects", () => {
  it("are created with a new database and counted by the trigger on replacement, not on append", () => {
    const state = makeTempState();
    createSession(state.paths, "main", "s1", "agent:main:main");
    expect(objects(state)).toEqual([...AGENT_SCHEMA_ADDITIVE_OBJECTS].sort());
    append(state.paths, "main", "s1", chain("m", 3, null));
    const db = openAgentDatabase(state.paths, "main", { mode: "write" });
    try {
      const generation = () => (db.handle.prepare("SELECT generation FROM transcript_generations WHERE session_id = 's1'").get() as { generation: number } | undefined)?.generation;
      expect(generation()).toBeUndefined();
      db.handle.prepare("UPDATE transcript_events SET event_json = event_json WHERE session_id = 's1'").run();
      expect(generation()).toBeUndefined(); // identical content is no change
      db.handle.prepare("DELETE FROM transcript_events WHERE session_id = 's1' AND seq = 3").run();
      expect(generation()).toBeGreaterThan(0);
      db.handle.prepare("DELETE FROM sessions WHERE session_id = 's1'").run();
      expect(generation()).toBeUndefined(); // the session's delete leaves no generation row
    } finally {
      db.close();
    }
  });

  it("an older v1 file is read without them (readers never repair), and a write open adds them", async () => {
    const state = makeTempState();
    createSession(state.paths, "main", "s1", "agent:main:main");
    append(state.paths, "main", "s1", chain("m", 2, null));
    asLegacyV1(state.paths, "main");
    expect(objects(state)).toEqual([]);
    const before = snapshotTree(state.stateDir);
    const r = await readSessionTranscriptVisibleMessageDelta({ stateDir: state.stateDir, agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" });
    expect(r.kind === "page" && r.entries.map((e) => e.entryId)).toEqual(["m1", "m2"]);
    expect(snapshotTree(state.stateDir)).toEqual(before);
    expect(objects(state)).toEqual([]);
    // The cursor issued on the older file stays valid once the counter exists (its value starts at 0).
    openAgentDatabase(state.paths, "main", { mode: "write" }).close();
    expect(objects(state)).toEqual([...AGENT_SCHEMA_ADDITIVE_OBJECTS].sort());
    const again = await readSessionTranscriptVisibleMessageDelta({ stateDir: state.stateDir, agentId: "main", sessionKey: "agent:main:main", sessionId: "s1", cursor: r.kind === "page" ? r.cursor : "" });
    expect(again).toMatchObject({ kind: "page", entries: [] });
  });
});

describe("@additive objects of the global database", () => {
  it("an older v1 global database gains them on the next write open, so the ACP ledger imports into it", async () => {
    const { GLOBAL_SCHEMA_ADDITIVE_OBJECTS } = await import("../../src/state/generated/ddl.js");
    const { openGlobalDatabase } = await import("../../src/state/state-databases.js");
    const state = makeTempState("migration/acp-ledger");
    // An existing v1 global database written before the @additive section existed.
    const names = GLOBAL_SCHEMA_ADDITIVE_OBJECTS.map((n) => `'${n}'`).join(", ");
    const old = openGlobalDatabase(state.paths, { mode: "write", create: true });
    for (const name of GLOBAL_SCHEMA_ADDITIVE_OBJECTS.filter((n) => !n.endsWith("_idx")).reverse()) old.handle.exec(`DROP TABLE ${name}`);
    const count = (db: typeof old) => (db.handle.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name IN (${names})`).get() as { n: number }).n;
    expect(count(old)).toBe(0);
    old.close();
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], state.env);
    expect(run.code).toBe(0);
    // The import ran into the design-v1 file, which the run's last step kept when it wrote OpenClaw's format.
    const { stagedDbFile } = await import("../helpers/migration.js");
    const { openDatabase } = await import("../../src/state/database.js");
    const after = openDatabase<never>({ path: stagedDbFile(state.paths), role: "global", mode: "read" }) as unknown as typeof old;
    try {
      expect(count(after)).toBe(GLOBAL_SCHEMA_ADDITIVE_OBJECTS.length);
      expect((after.handle.prepare("SELECT count(*) AS n FROM acp_replay_sessions").get() as { n: number }).n).toBeGreaterThan(0);
    } finally {
      after.close();
    }
  });
});
