// Test helper: transcripts written the way a writer does (event rows plus identity rows), resets, rewrites, legacy v1 files.
import path from "node:path";
import Database from "better-sqlite3";
import { AGENT_SCHEMA_ADDITIVE_OBJECTS } from "../../src/state/generated/ddl.js";
import type { StatePaths } from "../../src/state/paths.js";
import { openAgentDatabase, type AgentDatabase } from "../../src/state/state-databases.js";

export type Entry = Record<string, unknown> & { type: string; id: string; parentId: string | null };

export const header = (sessionId: string): Record<string, unknown> => ({ type: "session", version: 3, id: sessionId, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" });

/** A message entry; `content` defaults to a text string. */
export function msg(id: string, parentId: string | null, role: string, content: unknown = `${role} ${id}`, extra: Record<string, unknown> = {}): Entry {
  return { type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message: { role, content, ...extra }, ...(extra.entry as object | undefined) };
}

export function entry(type: string, id: string, parentId: string | null, extra: Record<string, unknown> = {}): Entry {
  return { type, id, parentId, timestamp: "2026-01-01T00:00:02.000Z", ...extra };
}

/** A linear chain of `count` user/assistant messages with ids `${prefix}1..`, the first child of `parentId`. */
export function chain(prefix: string, count: number, parentId: string | null): Entry[] {
  const out: Entry[] = [];
  let parent = parentId;
  for (let i = 1; i <= count; i += 1) {
    const id = `${prefix}${i}`;
    out.push(msg(id, parent, i % 2 === 1 ? "user" : "assistant"));
    parent = id;
  }
  return out;
}

export function withDb<T>(paths: StatePaths, agentId: string, fn: (db: AgentDatabase) => T): T {
  const db = openAgentDatabase(paths, agentId, { mode: "write", create: true });
  try {
    return db.immediate(() => fn(db));
  } finally {
    db.close();
  }
}

/** A session row, its route and entry, and the transcript header at seq 0. */
export function createSession(paths: StatePaths, agentId: string, sessionId: string, key: string, updatedAt = 1_000): void {
  withDb(paths, agentId, (db) => {
    db.handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', ?, ?)").run(sessionId, key, updatedAt, updatedAt);
    db.handle.prepare("INSERT INTO session_routes (session_key, session_id, updated_at) VALUES (?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id").run(key, sessionId, updatedAt);
    db.handle
      .prepare("INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, entry_json = excluded.entry_json")
      .run(key, sessionId, JSON.stringify({ sessionId, updatedAt }), updatedAt);
    insertRows(db.handle, sessionId, [header(sessionId)], 0);
  });
}

/** Appends entries after the last seq, each with its identity row (as the gateway and the importer write them). */
export function append(paths: StatePaths, agentId: string, sessionId: string, entries: Array<Record<string, unknown>>): void {
  withDb(paths, agentId, (db) => insertRows(db.handle, sessionId, entries, nextSeq(db.handle, sessionId)));
}

/** Deletes every row and writes `entries` (after a fresh header) again: a replaced transcript. */
export function replace(paths: StatePaths, agentId: string, sessionId: string, entries: Array<Record<string, unknown>>, head = header(sessionId)): void {
  withDb(paths, agentId, (db) => {
    db.handle.prepare("DELETE FROM transcript_events WHERE session_id = ?").run(sessionId);
    insertRows(db.handle, sessionId, [head, ...entries], 0);
  });
}

export function nextSeq(handle: Database.Database, sessionId: string): number {
  const row = handle.prepare("SELECT max(seq) AS m FROM transcript_events WHERE session_id = ?").get(sessionId) as { m: number | null };
  return (row.m ?? -1) + 1;
}

export function insertRows(handle: Database.Database, sessionId: string, entries: Array<Record<string, unknown>>, firstSeq: number): void {
  const ev = handle.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
  const id = handle.prepare(
    "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, has_parent, parent_id, message_idempotency_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  entries.forEach((e, i) => {
    const seq = firstSeq + i;
    const at = 1_767_225_600_000 + seq * 1000;
    ev.run(sessionId, seq, JSON.stringify(e), at);
    if (e.type !== "session" && typeof e.id === "string") {
      const parent = typeof e.parentId === "string" ? e.parentId : null;
      const key = typeof e.idempotencyKey === "string" ? e.idempotencyKey : null;
      id.run(sessionId, e.id, seq, e.type, parent === null ? 0 : 1, parent, key, at);
    }
  });
}

export function agentDbFile(paths: StatePaths, agentId = "main"): string {
  return path.join(paths.agentsDir, agentId, "agent", "openclaw-agent.sqlite");
}

/**
 * Turns the agent DB into an older v1 file (no @additive objects) and runs `fn` on a raw handle, so the
 * write-open upgrade does not put them back.
 */
export function asLegacyV1(paths: StatePaths, agentId: string, fn: (handle: Database.Database) => void = () => {}): void {
  const handle = new Database(agentDbFile(paths, agentId));
  try {
    handle.pragma("foreign_keys = ON");
    handle.transaction(() => {
      for (const name of [...AGENT_SCHEMA_ADDITIVE_OBJECTS].reverse()) {
        const row = handle.prepare("SELECT type FROM sqlite_master WHERE name = ?").get(name) as { type: string } | undefined;
        if (row) handle.exec(`DROP ${row.type.toUpperCase()} ${name}`);
      }
      fn(handle);
    })();
    handle.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    handle.close();
  }
}
