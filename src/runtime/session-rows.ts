// What one session owns in its agent DB: the tables keyed by session_id, its conversations, and digests to compare copies.
import crypto from "node:crypto";
import type Database from "better-sqlite3";

/** Tables whose rows belong to one session through `session_id`, parents first, with their key order. */
export const SESSION_TABLES: ReadonlyArray<{ table: string; order: string }> = [
  { table: "sessions", order: "session_id" },
  { table: "session_conversations", order: "session_id, conversation_id, role" },
  { table: "session_routes", order: "session_key" },
  { table: "session_entries", order: "session_key" },
  { table: "transcript_events", order: "seq" },
  { table: "transcript_event_identities", order: "event_id" },
  { table: "transcript_snapshots", order: "snapshot_id" },
  { table: "trajectory_runtime_events", order: "run_id, seq" },
  { table: "transcript_generations", order: "session_id" },
];

/** Row filter per table; conversations are selected by the id list (a JSON array bound as one parameter). */
export function filterFor(table: string): string {
  return table === "conversations" ? "conversation_id IN (SELECT value FROM json_each(?))" : "session_id = ?";
}

export function tableExists(handle: Database.Database, schema: string, table: string): boolean {
  return handle.prepare(`SELECT 1 FROM ${schema}.sqlite_master WHERE type = 'table' AND name = ?`).get(table) !== undefined;
}

/** Conversations the session links to (any role, or as its primary conversation). */
export function linkedConversations(handle: Database.Database, sessionId: string): string[] {
  const rows = handle
    .prepare(
      `SELECT conversation_id FROM session_conversations WHERE session_id = ?
       UNION SELECT primary_conversation_id FROM sessions WHERE session_id = ? AND primary_conversation_id IS NOT NULL
       ORDER BY 1`,
    )
    .all(sessionId, sessionId) as Array<{ conversation_id: string }>;
  return rows.map((r) => r.conversation_id);
}

/** Of `ids`, those no other session links to: they go with the session. */
export function orphanedConversations(handle: Database.Database, sessionId: string, ids: string[]): string[] {
  const stillUsed = handle.prepare(
    `SELECT 1 WHERE EXISTS (SELECT 1 FROM session_conversations WHERE conversation_id = @c AND session_id != @s)
       OR EXISTS (SELECT 1 FROM sessions WHERE primary_conversation_id = @c AND session_id != @s)`,
  );
  return ids.filter((id) => stillUsed.get({ c: id, s: sessionId }) === undefined);
}

/** The argument bound to filterFor(table). */
export function filterArg(table: string, sessionId: string, conversationIds: string[]): string {
  return table === "conversations" ? JSON.stringify(conversationIds) : sessionId;
}

export interface TableDigest {
  rows: number;
  sha256: string;
}

/** Row count and a SHA-256 over the rows in key order: equal digests mean equal rows. */
export function digestRows(handle: Database.Database, schema: string, table: string, order: string, columns: string[], filter: string, arg: string): TableDigest {
  const hash = crypto.createHash("sha256");
  let rows = 0;
  const list = columns.map((c) => `"${c}"`).join(", ");
  const it = handle.prepare(`SELECT ${list} FROM ${schema}.${table} WHERE ${filter} ORDER BY ${order}`).raw(true).iterate(arg) as IterableIterator<unknown[]>;
  for (const row of it) {
    hash.update(JSON.stringify(row.map((v) => (Buffer.isBuffer(v) ? `b64:${v.toString("base64")}` : v))));
    hash.update("\n");
    rows += 1;
  }
  return { rows, sha256: hash.digest("hex") };
}

export function columnsOf(handle: Database.Database, schema: string, table: string): string[] {
  return (handle.prepare(`PRAGMA ${schema}.table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
}
