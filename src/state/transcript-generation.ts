// The transcript generation token a cursor is bound to: the trigger-maintained counter plus the first row's fingerprint.
import crypto from "node:crypto";
import { sql } from "kysely";
import type { AgentDatabase } from "./state-databases.js";

/** Only this much of the first row feeds the fingerprint, so checking it stays cheap. */
const GENERATION_SAMPLE_BYTES = 4096;

const hasCounterTable = new WeakMap<object, boolean>();

/**
 * `transcript_generations` (schema v1 @additive section) exists in databases created or written by this
 * version; older v1 files lack it until their next write open, and readers never add it.
 */
function counterTableExists(db: AgentDatabase): boolean {
  let known = hasCounterTable.get(db.handle);
  if (known === undefined) {
    known = db.handle.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'transcript_generations'").get() !== undefined;
    hasCounterTable.set(db.handle, known);
  }
  return known;
}

export function fingerprint(text: string): string {
  return crypto.createHash("sha256").update(text).digest("base64url").slice(0, 16);
}

export interface TranscriptGeneration {
  /** `<counter>.<first-row fingerprint>`: changes when a stored row is replaced, never on an append. */
  token: string;
  firstSeq: number;
}

/**
 * Null when the session has no transcript rows. The counter is bumped by triggers on every update or delete
 * of a transcript row or identity; the first-row fingerprint also catches replacements in older v1 files
 * that have no counter yet.
 */
export function transcriptGeneration(db: AgentDatabase, sessionId: string): TranscriptGeneration | null {
  const first = db.first(
    db.q
      .selectFrom("transcript_events")
      .select([sql<string>`substr(event_json, 1, ${GENERATION_SAMPLE_BYTES})`.as("sample"), "seq"])
      .where("session_id", "=", sessionId)
      .orderBy("seq", "asc")
      .limit(1),
  );
  if (!first) return null;
  let counter = 0;
  if (counterTableExists(db)) {
    const row = db.first(db.q.selectFrom("transcript_generations").select("generation").where("session_id", "=", sessionId));
    counter = row?.generation ?? 0;
  }
  return { token: `${counter}.${fingerprint(`${first.seq}:${first.sample}`)}`, firstSeq: first.seq };
}
