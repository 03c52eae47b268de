// Row writes for a transcript whose session has no events yet: multi-row INSERTs, duplicates found in memory.
import type { AgentDatabase } from "../../state/state-databases.js";

/** Rows per INSERT: one statement per 32 lines instead of 32 (measured ~40% less time in the inserts). */
export const ROW_BATCH = 32;

/** event_json may be bound as bytes (a slice of the file, valid UTF-8): CAST stores them as TEXT, unchanged. */
export const EVENT_ROW = "(?, ?, CAST(? AS TEXT), ?)";
const IDENTITY_ROW = "(?, ?, ?, ?, ?, ?, ?, ?)";

export function eventsInsertSql(rows: number): string {
  return `INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ${Array(rows).fill(EVENT_ROW).join(", ")} ON CONFLICT (session_id, seq) DO UPDATE SET event_json = excluded.event_json, created_at = excluded.created_at`;
}

export function identitiesInsertSql(rows: number): string {
  return `INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, has_parent, parent_id, message_idempotency_key, created_at) VALUES ${Array(rows).fill(IDENTITY_ROW).join(", ")} ON CONFLICT (session_id, event_id) DO NOTHING`;
}

// Warnings name the line, never its content (ids and keys are copied from the file).
export function duplicateIdWarning(file: string, lineNo: number): string {
  return `${file}:${lineNo}: duplicate event id (an earlier line has it); the first one keeps the identity`;
}

export function reusedKeyWarning(file: string, lineNo: number): string {
  return `${file}:${lineNo}: idempotencyKey already used in this session; stored without it`;
}

/**
 * Buffers a new session's events and identities and writes them ROW_BATCH at a time. With no earlier rows
 * for the session, a duplicate event id or idempotency key can only come from this file, so the sets below
 * decide exactly what the one-row upserts decided (the first id keeps its identity; a re-used key is dropped).
 * Events are written before the identities that reference them (the foreign key is checked per statement).
 */
export class NewSessionRows {
  identities = 0;
  private events: unknown[] = [];
  private eventRows = 0;
  private ids: unknown[] = [];
  private idRows = 0;
  private readonly seenIds = new Set<string>();
  private readonly seenKeys = new Set<string>();

  constructor(
    private readonly db: AgentDatabase,
    private readonly sessionId: string,
    private readonly file: string,
    private readonly warn: (text: string) => void,
  ) {}

  add(seq: number, json: string | Uint8Array, createdAt: number, event: { id: string | null; parentId: string | null; type: string | null; idempotencyKey: string | null; lineNo: number }): void {
    this.events.push(this.sessionId, seq, json, createdAt);
    this.eventRows += 1;
    const { id } = event;
    if (id !== null) {
      if (this.seenIds.has(id)) {
        this.warn(duplicateIdWarning(this.file, event.lineNo));
      } else {
        this.seenIds.add(id);
        let key = event.idempotencyKey;
        if (key !== null) {
          if (this.seenKeys.has(key)) {
            this.warn(reusedKeyWarning(this.file, event.lineNo));
            key = null;
          } else {
            this.seenKeys.add(key);
          }
        }
        this.ids.push(this.sessionId, id, seq, event.type, event.parentId === null ? 0 : 1, event.parentId, key, createdAt);
        this.idRows += 1;
      }
    }
    if (this.eventRows === ROW_BATCH) this.flush();
  }

  /** Writes what is buffered; call once more after the last line. */
  flush(): void {
    if (this.eventRows > 0) this.db.prepare(eventsInsertSql(this.eventRows)).run(this.events);
    if (this.idRows > 0) this.identities += this.db.prepare(identitiesInsertSql(this.idRows)).run(this.ids).changes;
    this.events = [];
    this.ids = [];
    this.eventRows = 0;
    this.idRows = 0;
  }
}
