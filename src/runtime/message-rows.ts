// Message rows of the entry tree, fetched with their size first (an oversized body is never loaded), and their public shape.
import type Database from "better-sqlite3";
import type { AgentDatabase } from "../state/state-databases.js";
import { MESSAGE_TYPE } from "./transcript-tree.js";

/** One active-path message, as read metadata plus the persisted message. */
export interface SessionTranscriptMessageEntry {
  /** The stable transcript entry id. */
  entryId: string;
  /** The preceding active-path entry (it may be a non-message entry the read does not return), or null. */
  parentId: string | null;
  /** One-based active-path message ordinal: read metadata, not a cursor. */
  seq: number;
  role: string;
  /** The persisted message object, as stored. */
  message: unknown;
  /** The entry's `timestamp`, when it has one. */
  createdAt?: string | number;
  idempotencyKey?: string;
  /** Only when a transcript rewrite re-appended this message: the entry id it immediately replaced. */
  supersedesEntryId?: string;
}

export interface MessageRow {
  seq: number;
  id: string;
  parent: string | null;
  idempotencyKey: string | null;
  /** UTF-8 length of the stored line (the unit of maxBytes). */
  bytes: number;
  /** The stored line, or null when it is larger than the fetch's byte limit (not loaded). */
  json: string | null;
}

const SELECT = `SELECT i.seq, i.event_id, i.parent_id, i.message_idempotency_key, octet_length(e.event_json),
  CASE WHEN octet_length(e.event_json) <= ? THEN e.event_json END
  FROM transcript_event_identities i JOIN transcript_events e ON e.session_id = i.session_id AND e.seq = i.seq
  WHERE i.session_id = ? AND i.event_type = '${MESSAGE_TYPE}'`;

type Raw = [number, string, string | null, string | null, number, string | null];

const toMessageRow = (r: Raw): MessageRow => ({ seq: r[0], id: r[1], parent: r[2], idempotencyKey: r[3], bytes: r[4], json: r[5] });

const cache = new WeakMap<object, Map<string, Database.Statement>>();
function stmt(db: AgentDatabase, sql: string): Database.Statement {
  let map = cache.get(db.handle);
  if (!map) cache.set(db.handle, (map = new Map()));
  let s = map.get(sql);
  if (!s) map.set(sql, (s = db.handle.prepare(sql).raw(true)));
  return s;
}

/** Message rows with afterSeq < seq <= toSeq, oldest first (bodies only for rows of at most maxBytes). */
export function* messagesInRange(db: AgentDatabase, sessionId: string, afterSeq: number, toSeq: number, maxBytes: number): Generator<MessageRow> {
  const it = stmt(db, `${SELECT} AND i.seq > ? AND i.seq <= ? ORDER BY i.seq`).iterate(maxBytes, sessionId, afterSeq, toSeq) as IterableIterator<Raw>;
  try {
    for (const raw of it) yield toMessageRow(raw);
  } finally {
    it.return?.();
  }
}

/** Message rows with seq < beforeSeq, newest first. */
export function* messagesBefore(db: AgentDatabase, sessionId: string, beforeSeq: number, maxBytes: number): Generator<MessageRow> {
  const it = stmt(db, `${SELECT} AND i.seq < ? ORDER BY i.seq DESC`).iterate(maxBytes, sessionId, beforeSeq) as IterableIterator<Raw>;
  try {
    for (const raw of it) yield toMessageRow(raw);
  } finally {
    it.return?.();
  }
}

export function messageAt(db: AgentDatabase, sessionId: string, seq: number, maxBytes: number): MessageRow | undefined {
  const raw = stmt(db, `${SELECT} AND i.seq = ?`).get(maxBytes, sessionId, seq) as Raw | undefined;
  return raw ? toMessageRow(raw) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The public entry for a loaded row; `ordinal` is its one-based active-path message position. */
export function toMessageEntry(row: MessageRow, json: string, ordinal: number): SessionTranscriptMessageEntry {
  let stored: unknown;
  try {
    stored = JSON.parse(json);
  } catch {
    stored = null;
  }
  const record = isRecord(stored) ? stored : {};
  const message = record.message ?? null;
  const role = isRecord(message) && typeof message.role === "string" ? message.role : "unknown";
  const entry: SessionTranscriptMessageEntry = { entryId: row.id, parentId: row.parent, seq: ordinal, role, message };
  if (typeof record.timestamp === "string" || typeof record.timestamp === "number") entry.createdAt = record.timestamp;
  const key = row.idempotencyKey ?? (isRecord(message) && typeof message.idempotencyKey === "string" ? message.idempotencyKey : null);
  if (key !== null) entry.idempotencyKey = key;
  if (typeof record.supersedesEntryId === "string") entry.supersedesEntryId = record.supersedesEntryId;
  return entry;
}
