// `sessions show` core: one session's row, routes, conversations, entry, transcript stats and its last events (bounded).
import fs from "node:fs";
import { sql } from "kysely";
import { NotFoundError, UsageError } from "../core/errors.js";
import { sessionEntryForSessionIn } from "../runtime/session-entries.js";
import { readEventsIn } from "../runtime/transcript-reads.js";
import { normalizeAgentId } from "../state/agent-id.js";
import { agentDbPath, DEFAULT_AGENT_ID, type StatePaths } from "../state/paths.js";
import { openGlobalForSessionReads, openSessionStore } from "../state/openclaw-session-reader.js";
import type { AgentDatabase } from "../state/state-databases.js";
import { TRANSCRIPT_DEFAULT_MAX_BYTES, TRANSCRIPT_MAX_BYTES_CAP, TRANSCRIPT_MAX_EVENTS_CAP } from "../state/transcript-reader.js";
import { exportTranscript, assertExportTarget, type ExportTranscriptResult } from "./export-transcript.js";
import { loadCronSessionIds, sessionRowQuery, toSessionSummary, type SessionSummary } from "./session-row.js";

export const DEFAULT_SHOW_EVENTS = 20;
/** Other sessions that once used the same key: enough to explain resets, bounded for huge histories. */
const OTHER_SESSIONS_SHOWN = 20;

export interface ShowSessionOptions {
  paths: StatePaths;
  agentId?: string | undefined;
  /** A session key, a session id, or a key relative to the agent (`main` → `agent:<id>:main`). */
  ref: string;
  /** Last N transcript events to return (0 = none; default 20). */
  events?: number;
  /** Byte budget for those events (default 1,000,000). */
  maxBytes?: number;
  /** Absolute path: also write the whole transcript there as JSONL. */
  exportPath?: string | undefined;
}

export type SessionMatch = "key" | "session-id" | "agent-relative-key" | "unrouted-key";

export interface SessionDetail extends SessionSummary {
  startedAt: number | null;
  endedAt: number | null;
  primaryConversationId: string | null;
  agentHarnessId: string | null;
}

export interface SessionConversationView {
  conversationId: string;
  role: string;
  channel: string;
  accountId: string | null;
  kind: string;
  peerId: string | null;
  parentConversationId: string | null;
  threadId: string | null;
  label: string | null;
  firstSeenAt: number | null;
  lastSeenAt: number | null;
}

export interface TranscriptStats {
  eventCount: number;
  bytes: number;
  firstSeq: number | null;
  lastSeq: number | null;
  firstAt: number | null;
  lastAt: number | null;
}

export interface ShownEvent {
  seq: number;
  createdAt: number;
  bytes: number;
  /** The parsed transcript line. */
  event: unknown;
}

export interface ShownEvents {
  requested: number;
  maxBytes: number;
  items: ShownEvent[];
  /** Older events exist before the first item (the usual case for a long transcript). */
  hasEarlier: boolean;
  /** The newest event alone is larger than maxBytes: nothing shown, raise --max-bytes to this. */
  requiredBytes?: number;
}

export interface ShowSessionResult {
  agentId: string;
  store: { path: string };
  matchedBy: SessionMatch;
  session: SessionDetail;
  routes: Array<{ key: string; updatedAt: number }>;
  otherSessionsForKey: { count: number; sessions: Array<{ sessionId: string; updatedAt: number }> };
  conversations: SessionConversationView[];
  entry: Record<string, unknown> | null;
  transcript: TranscriptStats;
  events: ShownEvents;
  export?: ExportTranscriptResult;
}

export function showSession(options: ShowSessionOptions): ShowSessionResult {
  const agentId = normalizeAgentId(options.agentId ?? DEFAULT_AGENT_ID);
  const requested = options.events ?? DEFAULT_SHOW_EVENTS;
  const maxBytes = options.maxBytes ?? TRANSCRIPT_DEFAULT_MAX_BYTES;
  if (!Number.isSafeInteger(requested) || requested < 0 || requested > TRANSCRIPT_MAX_EVENTS_CAP) {
    throw new UsageError(`Invalid event count ${String(requested)}: use 0 to ${TRANSCRIPT_MAX_EVENTS_CAP}.`, "invalid_events");
  }
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > TRANSCRIPT_MAX_BYTES_CAP) {
    throw new UsageError(`Invalid byte budget ${String(maxBytes)}: use 1 to ${TRANSCRIPT_MAX_BYTES_CAP}.`, "invalid_max_bytes");
  }
  const ref = options.ref.trim();
  if (ref === "") throw new UsageError("Name the session to show: a session key or id (for example `sessions show agent:main:main`).");
  if (options.exportPath) assertExportTarget(options.exportPath, options.paths);

  const dbPath = agentDbPath(options.paths, agentId);
  if (!fs.existsSync(dbPath)) {
    throw new NotFoundError(`No session database for agent ${agentId} at ${dbPath}; run \`openclaw-state doctor\` to see whether legacy sessions are waiting to be migrated.`, { path: dbPath });
  }
  const cronSessionIds = cronIdsFor(options.paths);
  const db = openSessionStore(options.paths, agentId);
  try {
    // One snapshot: the row, the stats, the events and the export all describe the same moment.
    const snapshot = db.readSnapshot();
    try {
      const match = findSession(db, agentId, ref);
      if (!match) {
        throw new NotFoundError(`No session ${JSON.stringify(ref)} in agent ${agentId} (${dbPath}); run \`openclaw-state sessions list --agent ${agentId}\` to see the keys.`, { path: dbPath });
      }
      const raw = db.first(sessionRowQuery(db).where("s.session_id", "=", match.sessionId));
      if (!raw) throw new NotFoundError(`Session ${match.sessionId} vanished while reading ${dbPath}; run the command again.`, { path: dbPath });
      const summary = toSessionSummary(agentId, raw, cronSessionIds);
      const result: ShowSessionResult = {
        agentId,
        store: { path: dbPath },
        matchedBy: match.matchedBy,
        session: { ...summary, startedAt: raw.started_at, endedAt: raw.ended_at, primaryConversationId: raw.primary_conversation_id, agentHarnessId: raw.agent_harness_id },
        routes: db
          .all(db.q.selectFrom("session_routes").select(["session_key", "updated_at"]).where("session_id", "=", match.sessionId).orderBy("session_key"))
          .map((r) => ({ key: r.session_key, updatedAt: r.updated_at })),
        otherSessionsForKey: otherSessions(db, summary.key, match.sessionId),
        conversations: conversationsOf(db, match.sessionId),
        entry: sessionEntryForSessionIn(db, summary.key, match.sessionId) ?? null,
        transcript: transcriptStats(db, match.sessionId),
        events: lastEvents(db, agentId, match.sessionId, requested, maxBytes),
      };
      if (options.exportPath) {
        result.export = exportTranscript({ db, paths: options.paths, agentId, sessionId: match.sessionId, file: options.exportPath });
      }
      return result;
    } finally {
      snapshot.end();
    }
  } finally {
    db.close();
  }
}

function cronIdsFor(paths: StatePaths): Set<string> {
  if (!fs.existsSync(paths.globalDbPath)) return new Set();
  try {
    const global = openGlobalForSessionReads(paths);
    if (!global) return new Set();
    try {
      return loadCronSessionIds(global);
    } finally {
      global.close();
    }
  } catch {
    // The kind falls back to the agent DB's own columns; show must still work with a broken global DB.
    return new Set();
  }
}

export function findSession(db: AgentDatabase, agentId: string, ref: string): { sessionId: string; matchedBy: SessionMatch } | null {
  const route = (key: string) => db.first(db.q.selectFrom("session_routes").select("session_id").where("session_key", "=", key));
  const byKey = route(ref);
  if (byKey) return { sessionId: byKey.session_id, matchedBy: "key" };
  const byId = db.first(db.q.selectFrom("sessions").select("session_id").where("session_id", "=", ref));
  if (byId) return { sessionId: byId.session_id, matchedBy: "session-id" };
  if (!ref.toLowerCase().startsWith("agent:")) {
    const relative = route(`agent:${agentId}:${ref.toLowerCase()}`);
    if (relative) return { sessionId: relative.session_id, matchedBy: "agent-relative-key" };
  }
  const unrouted = db.first(
    db.q.selectFrom("sessions").select("session_id").where("session_key", "=", ref).orderBy("updated_at", "desc").orderBy("session_id").limit(1),
  );
  return unrouted ? { sessionId: unrouted.session_id, matchedBy: "unrouted-key" } : null;
}

function otherSessions(db: AgentDatabase, key: string, sessionId: string): ShowSessionResult["otherSessionsForKey"] {
  const base = db.q.selectFrom("sessions").where("session_key", "=", key).where("session_id", "!=", sessionId);
  const count = db.first(base.select((eb) => eb.fn.countAll<number>().as("n")))?.n ?? 0;
  const sessions = db
    .all(base.select(["session_id", "updated_at"]).orderBy("updated_at", "desc").orderBy("session_id").limit(OTHER_SESSIONS_SHOWN))
    .map((r) => ({ sessionId: r.session_id, updatedAt: r.updated_at }));
  return { count, sessions };
}

function conversationsOf(db: AgentDatabase, sessionId: string): SessionConversationView[] {
  return db
    .all(
      db.q
        .selectFrom("session_conversations as sc")
        .innerJoin("conversations as c", "c.conversation_id", "sc.conversation_id")
        .select(["c.conversation_id", "sc.role", "c.channel", "c.account_id", "c.kind", "c.peer_id", "c.parent_conversation_id", "c.thread_id", "c.label", "sc.first_seen_at", "sc.last_seen_at"])
        .where("sc.session_id", "=", sessionId)
        .orderBy(sql`CASE sc.role WHEN 'primary' THEN 0 WHEN 'participant' THEN 1 ELSE 2 END`)
        .orderBy("c.conversation_id"),
    )
    .map((r) => ({
      conversationId: r.conversation_id,
      role: r.role,
      channel: r.channel,
      accountId: r.account_id,
      kind: r.kind,
      peerId: r.peer_id,
      parentConversationId: r.parent_conversation_id,
      threadId: r.thread_id,
      label: r.label,
      firstSeenAt: r.first_seen_at,
      lastSeenAt: r.last_seen_at,
    }));
}

/** One pass over the session's key range; octet_length reads no overflow pages, so big events cost little. */
function transcriptStats(db: AgentDatabase, sessionId: string): TranscriptStats {
  const row = db.first(
    db.q
      .selectFrom("transcript_events")
      .select((eb) => [
        eb.fn.countAll<number>().as("n"),
        sql<number | null>`sum(octet_length(event_json))`.as("bytes"),
        eb.fn.min("seq").as("first_seq"),
        eb.fn.max("seq").as("last_seq"),
        eb.fn.min("created_at").as("first_at"),
        eb.fn.max("created_at").as("last_at"),
      ])
      .where("session_id", "=", sessionId),
  );
  return {
    eventCount: row?.n ?? 0,
    bytes: row?.bytes ?? 0,
    firstSeq: row?.first_seq ?? null,
    lastSeq: row?.last_seq ?? null,
    firstAt: row?.first_at ?? null,
    lastAt: row?.last_at ?? null,
  };
}

/** The newest events through the runtime's event reader (a bounded tail read: a huge transcript never loads whole). */
function lastEvents(db: AgentDatabase, agentId: string, sessionId: string, requested: number, maxBytes: number): ShownEvents {
  const shown: ShownEvents = { requested, maxBytes, items: [], hasEarlier: false };
  const read = readEventsIn(db, agentId, sessionId, { last: requested, maxBytes });
  if (!read) return shown;
  shown.hasEarlier = read.hasEarlier;
  if (read.requiredBytes !== undefined) shown.requiredBytes = read.requiredBytes;
  shown.items = read.events;
  return shown;
}
