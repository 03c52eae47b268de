// Raw transcript reads by identity: the bounded raw delta (page | reset | missing), complete or newest-N event reads, visible entries.
import { OperationError, UsageError } from "../core/errors.js";
import type { AgentDatabase } from "../state/state-databases.js";
import {
  readLimit,
  readTranscriptEvents,
  TRANSCRIPT_DEFAULT_MAX_BYTES,
  TRANSCRIPT_MAX_BYTES_CAP,
  TRANSCRIPT_MAX_EVENTS_CAP,
  type TranscriptEvent,
  type TranscriptResetReason,
} from "../state/transcript-reader.js";
import type { SessionTranscriptMessageEntry } from "./message-rows.js";
import { readAgentDb, requireString, sessionMatchesKey } from "./store.js";
import { readAllVisibleIn, type TranscriptIdentityParams, type TranscriptMissingResult, type TranscriptStart } from "./visible-delta.js";

export interface RawDeltaParams extends TranscriptIdentityParams {
  cursor?: string | undefined;
  /** Default 1,000, cap 10,000. */
  maxEvents?: number;
  /** Default 1,000,000, cap 64 MiB. */
  maxBytes?: number;
}

/** One stored transcript line. */
export type RawTranscriptEvent = TranscriptEvent;

export interface RawDeltaPage {
  kind: "page";
  /** Oldest first: every stored row after the cursor (header, entries, reset rows…). */
  events: RawTranscriptEvent[];
  cursor: string;
  hasMore: boolean;
  bytes: number;
  requiredBytes?: number;
}

export interface RawDeltaReset {
  kind: "reset";
  reason: TranscriptResetReason;
  cursor: string;
}

export type RawDeltaResult = RawDeltaPage | RawDeltaReset | TranscriptMissingResult;

export async function readSessionTranscriptRawDelta(params: RawDeltaParams): Promise<RawDeltaResult> {
  const sessionKey = requireString(params.sessionKey, "sessionKey");
  const sessionId = requireString(params.sessionId, "sessionId");
  const maxEvents = readLimit(params.maxEvents, 1_000, TRANSCRIPT_MAX_EVENTS_CAP, "maxEvents");
  const maxBytes = readLimit(params.maxBytes, TRANSCRIPT_DEFAULT_MAX_BYTES, TRANSCRIPT_MAX_BYTES_CAP, "maxBytes");
  return readAgentDb<RawDeltaResult>(
    params,
    (db, agentId) => {
      if (!sessionMatchesKey(db, sessionKey, sessionId)) return { kind: "missing" };
      const r = readTranscriptEvents({ db, agentId, sessionId, cursor: params.cursor, maxEvents, maxBytes });
      if (r.kind !== "page") return r;
      const page: RawDeltaPage = { kind: "page", events: r.events, cursor: r.nextCursor, hasMore: r.hasMore, bytes: r.bytes };
      if (r.requiredBytes !== undefined) page.requiredBytes = r.requiredBytes;
      return page;
    },
    () => ({ kind: "missing" }),
  );
}

export interface SessionTranscriptEvent {
  seq: number;
  createdAt: number;
  bytes: number;
  /** The parsed transcript line (the raw text when it does not parse). */
  event: unknown;
}

export interface TranscriptEventsParams extends TranscriptIdentityParams {
  /** Only the newest N events (up to 10,000) that fit `maxBytes`; omitted = every event (a complete read). */
  last?: number;
  /** With `last`: the byte budget (default 1,000,000, cap 64 MiB). */
  maxBytes?: number;
}

export interface SessionTranscriptEvents {
  /** Oldest first. */
  events: SessionTranscriptEvent[];
  /** `last` only: older events were left out. */
  hasEarlier: boolean;
  /** `last` only: nothing fit because the newest event alone is this large. */
  requiredBytes?: number;
}

export async function readSessionTranscriptEvents(params: TranscriptEventsParams): Promise<SessionTranscriptEvents | undefined> {
  const sessionKey = requireString(params.sessionKey, "sessionKey");
  const sessionId = requireString(params.sessionId, "sessionId");
  return readAgentDb(
    params,
    (db, agentId) => (sessionMatchesKey(db, sessionKey, sessionId) ? readEventsIn(db, agentId, sessionId, params) : undefined),
    () => undefined,
  );
}

/** On an open database (one snapshot): the newest `last` events within `maxBytes`, or every event. */
export function readEventsIn(db: AgentDatabase, agentId: string, sessionId: string, options: { last?: number; maxBytes?: number }): SessionTranscriptEvents | undefined {
  if (options.last !== undefined) {
    const maxBytes = readLimit(options.maxBytes, TRANSCRIPT_DEFAULT_MAX_BYTES, TRANSCRIPT_MAX_BYTES_CAP, "maxBytes");
    if (!Number.isSafeInteger(options.last) || options.last < 0 || options.last > TRANSCRIPT_MAX_EVENTS_CAP) {
      throw new UsageError(`last must be a whole number from 0 to ${TRANSCRIPT_MAX_EVENTS_CAP} (got ${String(options.last)}).`, "invalid_limit");
    }
    if (options.last === 0) {
      const any = db.first(db.q.selectFrom("transcript_events").select("seq").where("session_id", "=", sessionId).limit(1));
      return any ? { events: [], hasEarlier: true } : undefined;
    }
    const page = readTranscriptEvents({ db, agentId, sessionId, from: "end", maxEvents: options.last, maxBytes });
    if (page.kind !== "page") return undefined;
    const out: SessionTranscriptEvents = { events: page.events.map(toEvent), hasEarlier: page.hasEarlier };
    if (page.requiredBytes !== undefined) out.requiredBytes = page.requiredBytes;
    return out;
  }
  const events: SessionTranscriptEvent[] = [];
  let cursor: string | undefined;
  let maxBytes = TRANSCRIPT_DEFAULT_MAX_BYTES * 8;
  for (;;) {
    const r = readTranscriptEvents({ db, agentId, sessionId, cursor, maxEvents: TRANSCRIPT_MAX_EVENTS_CAP, maxBytes });
    if (r.kind === "missing") return events.length > 0 ? { events, hasEarlier: false } : undefined;
    if (r.kind === "reset") throw new OperationError("transcript_changed", `The transcript of session ${sessionId} changed during the read (${r.reason}); read it again.`);
    events.push(...r.events.map(toEvent));
    cursor = r.nextCursor;
    if (r.requiredBytes !== undefined) {
      if (r.requiredBytes > TRANSCRIPT_MAX_BYTES_CAP) {
        throw new OperationError("event_too_large", `Session ${sessionId} has a transcript event of ${r.requiredBytes} bytes, above the ${TRANSCRIPT_MAX_BYTES_CAP}-byte read cap.`);
      }
      maxBytes = r.requiredBytes;
      continue;
    }
    maxBytes = TRANSCRIPT_DEFAULT_MAX_BYTES * 8;
    if (!r.hasMore) return { events, hasEarlier: false };
  }
}

function toEvent(e: TranscriptEvent): SessionTranscriptEvent {
  let event: unknown;
  try {
    event = JSON.parse(e.json) as unknown;
  } catch {
    event = e.json;
  }
  return { seq: e.seq, createdAt: e.createdAt, bytes: e.bytes, event };
}

export interface VisibleEntriesParams extends TranscriptIdentityParams {
  start?: TranscriptStart;
}

/** Every active-path message in order (ordered read metadata; `seq` is not a resumable cursor). */
export async function readVisibleSessionTranscriptMessageEntries(params: VisibleEntriesParams): Promise<SessionTranscriptMessageEntry[] | undefined> {
  const sessionKey = requireString(params.sessionKey, "sessionKey");
  const sessionId = requireString(params.sessionId, "sessionId");
  return readAgentDb(params, (db, agentId) => readAllVisibleIn(db, agentId, sessionKey, sessionId, params.start ?? "transcript"), () => undefined);
}
