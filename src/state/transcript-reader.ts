// Bounded cursor reads of one session's transcript_events: page | reset | missing, never a whole transcript in memory.
import fs from "node:fs";
import { sql } from "kysely";
import { UsageError } from "../core/errors.js";
import { normalizeAgentId } from "./agent-id.js";
import { decodeCursor, encodeCursor, isInt, isStrOrNull } from "./cursor-codec.js";
import { agentDbPath, type StatePaths } from "./paths.js";
import { openAgentDatabase, type AgentDatabase } from "./state-databases.js";
import { fingerprint, transcriptGeneration } from "./transcript-generation.js";

/** Defaults and caps follow the runtime's raw transcript delta reader (seed 000). */
export const TRANSCRIPT_DEFAULT_MAX_EVENTS = 1_000;
export const TRANSCRIPT_DEFAULT_MAX_BYTES = 1_000_000;
export const TRANSCRIPT_MAX_EVENTS_CAP = 10_000;
export const TRANSCRIPT_MAX_BYTES_CAP = 64 * 1024 * 1024;

const CURSOR_PREFIX = "otc2.";

export interface ReadTranscriptEventsOptions {
  /** Opens the agent DB read-only for this call; give `db` instead to reuse an open one (and its snapshot). */
  paths?: StatePaths;
  db?: AgentDatabase;
  agentId: string;
  sessionId: string;
  /** Opaque cursor from an earlier page or reset; omitted = a fresh read. */
  cursor?: string | undefined;
  maxEvents?: number;
  maxBytes?: number;
  /**
   * Where a read without a cursor starts: `start` (default) drains from the first event; `end` returns the
   * newest events that fit the limits (oldest first), with a cursor that resumes after them.
   */
  from?: "start" | "end";
}

export interface TranscriptEvent {
  seq: number;
  /** Byte length of event_json (UTF-8), the unit of `maxBytes`. */
  bytes: number;
  createdAt: number;
  /** The stored transcript line, unparsed (exports write it back byte for byte). */
  json: string;
}

export interface TranscriptPage {
  kind: "page";
  /** Oldest first. */
  events: TranscriptEvent[];
  /** Resumes after the last returned event (or where this read started, when the page is empty). */
  nextCursor: string;
  /** More events exist after nextCursor. */
  hasMore: boolean;
  /** `from: "end"` only: older events were left out to respect the limits. */
  hasEarlier: boolean;
  bytes: number;
  /** Set when the page is empty because the next event alone is larger than maxBytes. */
  requiredBytes?: number;
}

export type TranscriptResetReason = "invalid_cursor" | "scope_mismatch" | "generation_mismatch" | "anchor_missing" | "anchor_moved";

export interface TranscriptReset {
  kind: "reset";
  reason: TranscriptResetReason;
  /** A fresh cursor that starts a complete drain from the first event. */
  cursor: string;
}

export interface TranscriptMissing {
  kind: "missing";
}

export type TranscriptReadResult = TranscriptPage | TranscriptReset | TranscriptMissing;

/**
 * Cursor payload (see cursor-codec). `q` is the last seq returned (-1 = before the first event); `g` is the
 * transcript generation (trigger counter + first-row fingerprint), so a replaced transcript is a generation
 * mismatch; `h`/`n` fingerprint and size the anchor row at `q`, so a rewritten or shortened transcript no
 * longer matches; `e` is the anchor's entry id (when it has one), which tells a moved anchor from a missing
 * one. Plain appends change none of them, so a cursor stays valid across appends.
 */
interface CursorState {
  v: 2;
  a: string;
  s: string;
  q: number;
  g: string;
  h: string | null;
  /** Byte length of the anchor row, compared before its body is fetched. */
  n: number | null;
  e: string | null;
}

/** A limit option: the default when omitted, else a whole number from 1 to the cap (a UsageError otherwise). */
export function readLimit(value: number | undefined, fallback: number, cap: number, name: string): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n < 1 || n > cap) {
    throw new UsageError(`${name} must be a whole number from 1 to ${cap} (got ${String(value)}).`, "invalid_limit");
  }
  return n;
}

function encodeTranscriptCursor(state: Omit<CursorState, "v">): string {
  return encodeCursor(CURSOR_PREFIX, { v: 2, ...state });
}

function decodeTranscriptCursor(cursor: string): CursorState | null {
  const value = decodeCursor(CURSOR_PREFIX, cursor) as Partial<CursorState> | null;
  if (
    value !== null &&
    typeof value === "object" &&
    value.v === 2 &&
    typeof value.a === "string" &&
    typeof value.s === "string" &&
    isInt(value.q, -1) &&
    typeof value.g === "string" &&
    isStrOrNull(value.h) &&
    (value.n === null || isInt(value.n, 0)) &&
    isStrOrNull(value.e) &&
    (value.q === -1) === (value.h === null) &&
    (value.h === null) === (value.n === null)
  ) {
    return value as CursorState;
  }
  return null;
}

/** Reads one bounded page; see TranscriptReadResult. Never creates or modifies a file. */
export function readTranscriptEvents(options: ReadTranscriptEventsOptions): TranscriptReadResult {
  const agentId = normalizeAgentId(options.agentId);
  const maxEvents = readLimit(options.maxEvents, TRANSCRIPT_DEFAULT_MAX_EVENTS, TRANSCRIPT_MAX_EVENTS_CAP, "maxEvents");
  const maxBytes = readLimit(options.maxBytes, TRANSCRIPT_DEFAULT_MAX_BYTES, TRANSCRIPT_MAX_BYTES_CAP, "maxBytes");
  if (options.db) return readWithin(options.db, agentId, options, maxEvents, maxBytes);
  if (!options.paths) throw new UsageError("readTranscriptEvents needs either `paths` or an open `db`.", "invalid_options");
  if (!fs.existsSync(agentDbPath(options.paths, agentId))) return { kind: "missing" };
  const db = openAgentDatabase(options.paths, agentId, { mode: "read" });
  try {
    return readWithin(db, agentId, options, maxEvents, maxBytes);
  } finally {
    db.close();
  }
}

function readWithin(db: AgentDatabase, agentId: string, options: ReadTranscriptEventsOptions, maxEvents: number, maxBytes: number): TranscriptReadResult {
  // One snapshot for the checks, the size scan and the body fetch, so a concurrent writer cannot tear a page.
  const snapshot = db.readSnapshot();
  try {
    return readPage(db, agentId, options, maxEvents, maxBytes);
  } finally {
    snapshot.end();
  }
}

function readPage(db: AgentDatabase, agentId: string, options: ReadTranscriptEventsOptions, maxEvents: number, maxBytes: number): TranscriptReadResult {
  const { sessionId } = options;
  const generation = transcriptGeneration(db, sessionId)?.token;
  if (generation === undefined) return { kind: "missing" };
  const fresh = encodeTranscriptCursor({ a: agentId, s: sessionId, q: -1, g: generation, h: null, n: null, e: null });

  let afterSeq = -1;
  if (options.cursor !== undefined) {
    const state = decodeTranscriptCursor(options.cursor);
    if (!state) return { kind: "reset", reason: "invalid_cursor", cursor: fresh };
    if (state.a !== agentId || state.s !== sessionId) return { kind: "reset", reason: "scope_mismatch", cursor: fresh };
    if (state.g !== generation) return { kind: "reset", reason: "generation_mismatch", cursor: fresh };
    if (state.q >= 0 && anchorFingerprint(db, sessionId, state.q, state.n) !== state.h) {
      const at = state.e === null ? undefined : entrySeq(db, sessionId, state.e);
      const moved = at !== undefined && at !== state.q;
      return { kind: "reset", reason: moved ? "anchor_moved" : "anchor_missing", cursor: fresh };
    }
    afterSeq = state.q;
  }

  const tail = options.cursor === undefined && options.from === "end";
  const picked = collectEvents(db, sessionId, tail ? null : afterSeq, maxEvents, maxBytes);
  if (tail) picked.events.reverse();
  const { events } = picked;
  const last = events[events.length - 1];
  const page: TranscriptPage = {
    kind: "page",
    events,
    nextCursor: last
      ? encodeTranscriptCursor({ a: agentId, s: sessionId, q: last.seq, g: generation, h: fingerprint(last.json), n: last.bytes, e: entryIdAt(db, sessionId, last.seq) })
      : afterSeq === -1
        ? fresh
        : (options.cursor as string),
    hasMore: tail ? false : picked.cutShort,
    hasEarlier: tail ? picked.cutShort : false,
    bytes: picked.bytes,
  };
  if (picked.requiredBytes !== undefined) page.requiredBytes = picked.requiredBytes;
  return page;
}

function entryIdAt(db: AgentDatabase, sessionId: string, seq: number): string | null {
  return db.first(db.q.selectFrom("transcript_event_identities").select("event_id").where("session_id", "=", sessionId).where("seq", "=", seq))?.event_id ?? null;
}

function entrySeq(db: AgentDatabase, sessionId: string, entryId: string): number | undefined {
  return db.first(db.q.selectFrom("transcript_event_identities").select("seq").where("session_id", "=", sessionId).where("event_id", "=", entryId))?.seq;
}

/**
 * Fingerprint of the row at `seq`, or null when it is gone or has another size. The body is fetched only
 * when its size matches the anchor's, so a row rewritten into something huge is never loaded.
 */
function anchorFingerprint(db: AgentDatabase, sessionId: string, seq: number, expectedBytes: number | null): string | null {
  const row = db.first(
    db.q
      .selectFrom("transcript_events")
      .select(sql<string | null>`CASE WHEN octet_length(event_json) = ${expectedBytes ?? -1} THEN event_json END`.as("json"))
      .where("session_id", "=", sessionId)
      .where("seq", "=", seq),
  );
  return row?.json == null ? null : fingerprint(row.json);
}

interface Collected {
  events: TranscriptEvent[];
  bytes: number;
  /** A row after the last collected one exists (it did not fit, or maxEvents was reached). */
  cutShort: boolean;
  requiredBytes?: number;
}

/**
 * One keyset pass: ascending after `afterSeq`, or descending from the end when `afterSeq` is null (tail
 * reads; the caller reverses). Each row's size comes from octet_length (the record header, no overflow
 * pages) and its body is selected only when the row fits maxBytes on its own, so an oversized event is
 * never loaded; the pass stops at the first row that breaks either limit (at most that one row, itself
 * no larger than maxBytes, is read past the page).
 */
function collectEvents(db: AgentDatabase, sessionId: string, afterSeq: number | null, maxEvents: number, maxBytes: number): Collected {
  let query = db.q
    .selectFrom("transcript_events")
    .select([
      "seq",
      "created_at",
      sql<number>`octet_length(event_json)`.as("bytes"),
      sql<string | null>`CASE WHEN octet_length(event_json) <= ${maxBytes} THEN event_json END`.as("json"),
    ])
    .where("session_id", "=", sessionId);
  query = afterSeq === null ? query.orderBy("seq", "desc") : query.where("seq", ">", afterSeq).orderBy("seq", "asc");
  const compiled = query.limit(maxEvents + 1).compile();
  // Hot path (exports drain whole transcripts through here): raw rows skip one object per event, and an
  // uncached statement keeps raw mode off the shared statement cache.
  const statement = db.handle.prepare(compiled.sql).raw(true);
  const events: TranscriptEvent[] = [];
  let bytes = 0;
  for (const [seq, createdAt, size, json] of statement.iterate(...(compiled.parameters as unknown[])) as IterableIterator<[number, number, number, string | null]>) {
    if (events.length === maxEvents || bytes + size > maxBytes || json === null) {
      return events.length === 0 ? { events, bytes, cutShort: true, requiredBytes: size } : { events, bytes, cutShort: true };
    }
    events.push({ seq, bytes: size, createdAt, json });
    bytes += size;
  }
  return { events, bytes, cutShort: false };
}
