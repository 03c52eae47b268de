// deleteSessionEntry: a standalone verified copy (checked with the sqlite3 shell), then one transaction removing the session and all it owns.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NotFoundError, OperationError, StateLockedError, UsageError } from "../../src/core/errors.js";
import { deleteSessionEntry, readSessionTranscriptVisibleMessageDelta } from "../../src/runtime/index.js";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { insertLease } from "../helpers/leases.js";
import { seedSessions } from "../helpers/seed-sessions.js";
import { makeTempDir, makeTempState, modeOf, snapshotTree } from "../helpers/temp-state.js";
import { agentDbFile, append, chain, createSession, replace, withDb } from "../helpers/transcripts.js";

const KEY = "agent:main:doomed";

function sqlite(file: string, query: string): string {
  return execFileSync("sqlite3", ["-readonly", file, query], { encoding: "utf8" }).trim();
}

function seeded() {
  const state = makeTempState();
  seedSessions(state.paths, "main", [
    { sessionId: "keep", key: "agent:main:main", updatedAt: 10, conversation: { conversationId: "conv-shared", channel: "telegram", kind: "direct", peerId: "+1" } },
    { sessionId: "old-doomed", key: KEY, updatedAt: 5, route: false },
  ]);
  createSession(state.paths, "main", "doomed", KEY, 20);
  append(state.paths, "main", "doomed", chain("m", 50, null));
  replace(state.paths, "main", "doomed", chain("m", 60, null)); // leaves a transcript_generations row
  withDb(state.paths, "main", (db) => {
    db.handle.prepare("INSERT INTO conversations (conversation_id, channel, kind, peer_id, created_at, updated_at) VALUES ('conv-own', 'slack', 'channel', 'C1', 1, 1)").run();
    db.handle.prepare("UPDATE sessions SET primary_conversation_id = 'conv-own' WHERE session_id = 'doomed'").run();
    db.handle.prepare("INSERT INTO session_conversations (session_id, conversation_id, role) VALUES ('doomed', 'conv-own', 'primary'), ('doomed', 'conv-shared', 'participant')").run();
    db.handle.prepare("INSERT INTO transcript_snapshots (session_id, snapshot_id, created_at) VALUES ('doomed', 'snap-1', 1)").run();
    db.handle.prepare("INSERT INTO trajectory_runtime_events (session_id, run_id, seq, event_json, created_at) VALUES ('doomed', 'run-1', 0, '{}', 1)").run();
    db.handle.prepare("INSERT INTO session_routes (session_key, session_id, updated_at) VALUES ('agent:main:alias', 'doomed', 1)").run();
  });
  return state;
}

function count(state: ReturnType<typeof makeTempState>, table: string, where = "session_id = 'doomed'"): number {
  return Number(sqlite(agentDbFile(state.paths), `SELECT count(*) FROM ${table} WHERE ${where}`));
}

describe("deleteSessionEntry", () => {
  it("writes a standalone verified copy, then deletes the session and everything it owns (nothing else)", async () => {
    const state = seeded();
    const backupDir = path.join(makeTempDir(), "session-backups");
    const result = await deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, backupDir });
    expect(result).toMatchObject({ sessionKey: KEY, sessionId: "doomed", dryRun: false, otherSessionsForKey: 1 });
    expect(result.rows).toMatchObject({ sessions: 1, transcript_events: 61, transcript_event_identities: 60, session_routes: 2, session_conversations: 2, conversations: 1, transcript_generations: 1 });

    // The copy, read by an independent reader: standalone (no sidecars, rollback journal), complete, consistent.
    const copy = result.backup!.path;
    expect(path.dirname(copy)).toBe(backupDir);
    expect(fs.readdirSync(backupDir)).toEqual([path.basename(copy)]);
    expect(modeOf(copy)).toBe(0o600);
    expect(sqlite(copy, "PRAGMA integrity_check")).toBe("ok");
    expect(sqlite(copy, "PRAGMA journal_mode")).toBe("delete");
    expect(sqlite(copy, "PRAGMA user_version")).toBe("1");
    expect(sqlite(copy, "SELECT role || ' ' || agent_id FROM schema_meta")).toBe("agent main");
    expect(sqlite(copy, "SELECT session_id || ' ' || session_key FROM sessions")).toBe(`doomed ${KEY}`);
    expect(sqlite(copy, "SELECT count(*) FROM transcript_events")).toBe("61");
    expect(sqlite(copy, "SELECT json_extract(event_json, '$.id') FROM transcript_events WHERE seq = 60")).toBe("m60");
    expect(sqlite(copy, "SELECT group_concat(conversation_id) FROM (SELECT conversation_id FROM conversations ORDER BY 1)")).toBe("conv-own,conv-shared");
    expect(sqlite(copy, "SELECT count(*) FROM session_routes")).toBe("2");
    expect(sqlite(copy, "PRAGMA foreign_key_check")).toBe("");
    expect(result.backup!.rows.transcript_events).toBe(61);

    // The live DB: the session and everything it owns are gone; the older session of the key, the other session and the shared conversation stay.
    for (const table of ["sessions", "session_entries", "session_routes", "session_conversations", "transcript_events", "transcript_event_identities", "transcript_snapshots", "trajectory_runtime_events", "transcript_generations"]) {
      expect(count(state, table)).toBe(0);
    }
    expect(count(state, "conversations", "conversation_id = 'conv-own'")).toBe(0);
    expect(count(state, "conversations", "conversation_id = 'conv-shared'")).toBe(1);
    expect(count(state, "sessions", "session_id IN ('keep', 'old-doomed')")).toBe(2);
    expect(sqlite(agentDbFile(state.paths), "PRAGMA integrity_check")).toBe("ok");
    expect(sqlite(state.paths.globalDbPath, "SELECT count(*) FROM state_leases")).toBe("0");
    expect(await readSessionTranscriptVisibleMessageDelta({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, sessionId: "doomed" })).toEqual({ kind: "missing" });
  });

  it("dry run counts and changes nothing; without backupDir it deletes without a copy", async () => {
    const state = seeded();
    const before = snapshotTree(state.stateDir);
    const dry = await deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, dryRun: true, backupDir: path.join(makeTempDir(), "b") });
    expect(dry).toMatchObject({ dryRun: true, sessionId: "doomed", backup: null, rows: { transcript_events: 61 } });
    expect(snapshotTree(state.stateDir)).toEqual(before);
    const done = await deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: "doomed", relativeKey: true });
    expect(done).toMatchObject({ sessionId: "doomed", backup: null });
    expect(count(state, "transcript_events")).toBe(0);
  });

  it("refuses before deleting anything: existing backup file, backup dir inside the state dir, changed session, unknown key, held lease", async () => {
    const state = seeded();
    const untouched = () => expect(count(state, "transcript_events")).toBe(61);
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, "session-main-doomed.sqlite"), "precious");
    await expect(deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, backupDir: dir })).rejects.toThrow(/already exists/);
    expect(fs.readFileSync(path.join(dir, "session-main-doomed.sqlite"), "utf8")).toBe("precious");
    expect(fs.readdirSync(dir)).toEqual(["session-main-doomed.sqlite"]);
    untouched();
    await expect(deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, backupDir: path.join(state.stateDir, "bk") })).rejects.toThrow(UsageError);
    await expect(deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, backupDir: "" })).rejects.toThrow(UsageError);
    await expect(deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, expectedSessionId: "other" })).rejects.toThrow(OperationError);
    await expect(deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY, expectedUpdatedAt: 1 })).rejects.toThrow(/updated at/);
    await expect(deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: "agent:main:nope" })).rejects.toThrow(NotFoundError);
    expect(sqlite(state.paths.globalDbPath, "SELECT count(*) FROM state_leases")).toBe("0"); // failures released the lease
    const global = openGlobalDatabase(state.paths, { mode: "write", create: true });
    try {
      insertLease(global, GATEWAY_SCOPE, process.pid, Date.now() + 60_000);
    } finally {
      global.close();
    }
    await expect(deleteSessionEntry({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY })).rejects.toThrow(StateLockedError);
    untouched();
    expect(sqlite(agentDbFile(state.paths), "PRAGMA integrity_check")).toBe("ok");
  });
});
