// Per-agent session summary for `inspect`: counts, transcript volume, oldest and newest session.
import { sql } from "kysely";
import type { AgentDatabase } from "../state/state-databases.js";

export interface SessionRef {
  key: string;
  sessionId: string;
  updatedAt: number;
}

export interface AgentSessionStats {
  sessionCount: number;
  transcriptEvents: number;
  /** Sum of event_json byte lengths (the JSONL volume without newlines). */
  transcriptBytes: number;
  oldest: SessionRef | null;
  newest: SessionRef | null;
}

/**
 * Counts use the smallest index; oldest/newest walk sessions_updated_at_idx from either end. The byte
 * total is one pass over transcript_events, but octet_length reads no overflow pages, so its cost follows
 * the number of events rather than their size (figures in bench/sessions.mjs).
 */
export function agentSessionStats(db: AgentDatabase): AgentSessionStats {
  const sessions = db.first(db.q.selectFrom("sessions").select((eb) => eb.fn.countAll<number>().as("n")));
  const events = db.first(
    db.q.selectFrom("transcript_events").select((eb) => [eb.fn.countAll<number>().as("n"), sql<number | null>`sum(octet_length(event_json))`.as("bytes")]),
  );
  const edge = (direction: "asc" | "desc"): SessionRef | null => {
    const row = db.first(
      db.q
        .selectFrom("sessions")
        .select(["session_key", "session_id", "updated_at"])
        .orderBy("updated_at", direction)
        .orderBy("session_id", direction)
        .limit(1),
    );
    return row ? { key: row.session_key, sessionId: row.session_id, updatedAt: row.updated_at } : null;
  };
  return {
    sessionCount: sessions?.n ?? 0,
    transcriptEvents: events?.n ?? 0,
    transcriptBytes: events?.bytes ?? 0,
    oldest: edge("asc"),
    newest: edge("desc"),
  };
}
