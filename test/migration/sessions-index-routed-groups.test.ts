// A session index naming more other agents than one connection attaches: imported a group at a time, the ledger last.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MAX_ROUTED_AGENTS } from "../../src/migration/agent-routes.js";
import type { StatePaths } from "../../src/state/paths.js";
import { openAgentDatabase } from "../../src/state/state-databases.js";
import { makeTempState } from "../helpers/temp-state.js";
import { expectReimportIdempotent, ledgerOf } from "../helpers/control-plane.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

/** a00 … a11: more than one group, and the zero-padded names keep the groups' order obvious (a00–a08, then a09–a11). */
const AGENTS = Array.from({ length: MAX_ROUTED_AGENTS + 3 }, (_, i) => `a${String(i).padStart(2, "0")}`);
const LATER = "a10";

function writeStore(stateDir: string, transcripts: boolean): string {
  const dir = path.join(stateDir, "agents/ops/sessions");
  fs.mkdirSync(dir, { recursive: true });
  const store: Record<string, unknown> = { own: { sessionId: "s-own", updatedAt: 50 } };
  for (const [i, agent] of AGENTS.entries()) store[`agent:${agent}:x`] = { sessionId: `s-${agent}`, updatedAt: 100 + i };
  fs.writeFileSync(path.join(dir, "sessions.json"), JSON.stringify(store));
  if (transcripts) {
    for (const id of ["s-own", ...AGENTS.map((a) => `s-${a}`)]) {
      const header = { type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" };
      const message = { type: "message", id: "m1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `hi ${id}`, timestamp: 1767225601000 } };
      fs.writeFileSync(path.join(dir, `${id}.jsonl`), `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`);
    }
  }
  return path.join(dir, "sessions.json");
}

function keysOf(paths: StatePaths, agent: string): Array<Record<string, unknown>> {
  return rows(agentDbFile(paths, agent), "SELECT r.session_key, r.session_id, (SELECT count(*) FROM transcript_events e WHERE e.session_id = r.session_id) AS events FROM session_routes r ORDER BY r.session_key");
}

function exec(file: string, sql: string): void {
  const db = new Database(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

describe("a session index naming more other agents than one connection attaches", () => {
  it("files every key in its agent's database, a group at a time, with its transcript; re-imported, changes nothing", async () => {
    const { paths, stateDir } = makeTempState();
    writeStore(stateDir, true);
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.find((s) => s.kind === "sessions-index")!.routedAgents).toEqual(AGENTS);
    expect(run.status).toBe("completed");
    expect(run.sources.every((o) => o.status === "imported" && o.retired === "moved")).toBe(true);
    const index = run.sources.find((o) => o.kind === "sessions-index")!;
    // The counts and notes of every group, recorded once in the ledger row the last transaction wrote.
    expect(index.rows).toMatchObject({ sessions: AGENTS.length + 1, session_entries: AGENTS.length + 1, session_routes: AGENTS.length + 1 });
    expect(index.notes.filter((n) => n.startsWith("filed "))).toHaveLength(AGENTS.length);
    expect(ledgerOf(paths, "sessions-index").map((r) => [r.status, r.removed_source])).toEqual([["imported", 1]]);
    expect(keysOf(paths, "ops")).toEqual([{ session_key: "agent:ops:own", session_id: "s-own", events: 2 }]);
    // Each agent's database holds its key alone: the reused schema names never pointed a statement at the wrong file.
    for (const agent of AGENTS) expect(keysOf(paths, agent)).toEqual([{ session_key: `agent:${agent}:x`, session_id: `s-${agent}`, events: 2 }]);
    await expectReimportIdempotent(paths, run);
  });

  it("the same file back: checked in every group's databases; a row missing in a later group is imported again", async () => {
    const { paths, stateDir } = makeTempState();
    const file = writeStore(stateDir, false);
    const bytes = fs.readFileSync(file);
    // The file back as it was (its directory went with it, empty).
    const putBack = (): void => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, bytes);
    };
    await migrate(paths);
    putBack();
    const again = await migrate(paths);
    expect(again.run.sources.map((o) => [o.status, o.retired])).toEqual([["already-imported", "moved"]]);
    putBack();
    exec(agentDbFile(paths, LATER), `DELETE FROM session_routes WHERE session_key = 'agent:${LATER}:x'`);
    const third = await migrate(paths);
    expect(third.run.sources.map((o) => [o.status, o.retired])).toEqual([["imported", "moved"]]);
    expect(third.run.sources[0]!.notes.join("\n")).toMatch(new RegExp(`the ledger said imported, but 1 row\\(s\\) missing after commit: route agent:${LATER}:x: imported again`));
    expect(keysOf(paths, LATER)).toEqual([{ session_key: `agent:${LATER}:x`, session_id: `s-${LATER}`, events: 0 }]);
  });

  it("a later group that fails leaves the file in place and the ledger not imported; the re-run finishes it, keeping newer rows", async () => {
    const { paths, stateDir } = makeTempState();
    const file = writeStore(stateDir, false);
    // The later group's database refuses the write: the first group has committed by then.
    openAgentDatabase(paths, LATER, { mode: "write", create: true }).close();
    exec(agentDbFile(paths, LATER), "CREATE TRIGGER refuse BEFORE INSERT ON session_routes BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
    const { run } = await migrate(paths);
    const index = run.sources[0]!;
    expect([index.status, index.retired]).toEqual(["failed", null]);
    expect(index.reason).toMatch(/injected failure \(the keys naming agents "a00", .*"a08" were filed before it; the next import of this file files the rest\)/);
    expect(fs.existsSync(file)).toBe(true);
    expect(ledgerOf(paths, "sessions-index").map((r) => [r.status, r.removed_source])).toEqual([["failed", 0]]);
    expect(keysOf(paths, "a00")).toEqual([{ session_key: "agent:a00:x", session_id: "s-a00", events: 0 }]);
    expect(keysOf(paths, LATER)).toEqual([]);
    // The store's own rows go in the last transaction, with the ledger row: not written.
    expect(keysOf(paths, "ops")).toEqual([]);

    // The runtime moves a00's session on before the re-run; the trigger is gone.
    exec(agentDbFile(paths, "a00"), "UPDATE session_routes SET updated_at = 9000; UPDATE session_entries SET updated_at = 9000, entry_json = json_set(entry_json, '$.label', 'runtime')");
    exec(agentDbFile(paths, LATER), "DROP TRIGGER refuse");
    const again = await migrate(paths);
    expect(again.run.sources.map((o) => [o.status, o.retired])).toEqual([["imported", "moved"]]);
    expect(again.run.sources[0]!.notes.join("\n")).toMatch(/1 row\(s\) kept as they were in the databases of agents "a00", .*: they hold newer data/);
    expect(ledgerOf(paths, "sessions-index").map((r) => [r.status, r.removed_source])).toEqual([["imported", 1]]);
    expect(rows(agentDbFile(paths, "a00"), "SELECT json_extract(entry_json, '$.label') AS label, updated_at FROM session_entries")).toEqual([{ label: "runtime", updated_at: 9000 }]);
    for (const agent of AGENTS) expect(rows(agentDbFile(paths, agent), "SELECT session_key FROM session_routes")).toEqual([{ session_key: `agent:${agent}:x` }]);
    expect(keysOf(paths, "ops")).toEqual([{ session_key: "agent:ops:own", session_id: "s-own", events: 0 }]);
  });

  it("a database set aside in a later group fails the index before any group is written", async () => {
    const { paths, stateDir } = makeTempState();
    const file = writeStore(stateDir, false);
    fs.mkdirSync(path.dirname(agentDbFile(paths, LATER)), { recursive: true });
    fs.writeFileSync(agentDbFile(paths, LATER), "not a database, but someone's file".repeat(200));
    const { run } = await migrate(paths);
    const index = run.sources[0]!;
    expect(index.status).toBe("failed");
    expect(index.reason).toMatch(new RegExp(`agent "${LATER}", whose database agents/${LATER}/agent/openclaw-agent\\.sqlite cannot be opened`));
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.existsSync(agentDbFile(paths, "a00"))).toBe(false);
    expect(fs.readFileSync(agentDbFile(paths, LATER), "utf8")).toMatch(/^not a database/);
  });
});
