// `sessions tail` core: the newest messages of one session, then (follow) new ones as they are appended, by polling the cursor.
import fs from "node:fs";
import { NotFoundError, OperationError } from "../core/errors.js";
import type { SessionTranscriptMessageEntry } from "../runtime/message-rows.js";
import { readVisibleDeltaIn, tailStateIn } from "../runtime/visible-delta.js";
import { normalizeAgentId } from "../state/agent-id.js";
import { agentDbPath, DEFAULT_AGENT_ID, type StatePaths } from "../state/paths.js";
import { openSessionStore } from "../state/openclaw-session-reader.js";
import type { AgentDatabase } from "../state/state-databases.js";
import { TRANSCRIPT_DEFAULT_MAX_BYTES, TRANSCRIPT_MAX_BYTES_CAP } from "../state/transcript-reader.js";
import { findSession } from "./show-session.js";

export interface TailSessionOptions {
  paths: StatePaths;
  agentId?: string | undefined;
  /** A session key, an agent-relative key (`main`) or a session id. */
  ref: string;
  /** Messages shown first (the newest ones). */
  lines: number;
  follow: boolean;
  intervalMs: number;
  /** Ends a follow cleanly (Ctrl-C / SIGTERM in the CLI). */
  signal?: AbortSignal;
}

export type TailEvent =
  | { kind: "session"; agentId: string; sessionKey: string; sessionId: string; store: string; reason: "start" | "switched" }
  | { kind: "message"; sessionId: string; entry: SessionTranscriptMessageEntry }
  | { kind: "skipped"; bytes: number }
  | { kind: "reset"; reason: string }
  | { kind: "gone"; sessionId: string };

interface Target {
  agentId: string;
  sessionKey: string;
  sessionId: string;
  /** The ref named a key: follow the key's route to a new session after a reset. */
  followsKey: boolean;
}

function withDb<T>(paths: StatePaths, agentId: string, fn: (db: AgentDatabase) => T): T | undefined {
  if (!fs.existsSync(agentDbPath(paths, agentId))) return undefined;
  const db = openSessionStore(paths, agentId);
  try {
    const snapshot = db.readSnapshot();
    try {
      return fn(db);
    } finally {
      snapshot.end();
    }
  } finally {
    db.close();
  }
}

/**
 * Yields the session, its newest `lines` messages, then (with follow) every message appended afterwards, until
 * the signal aborts. A transcript rewrite yields `reset` and continues from its end; a key reset (its route
 * now names another session) yields `session` again and continues with the new session from its start.
 */
export async function* tailSession(options: TailSessionOptions): AsyncGenerator<TailEvent, void, undefined> {
  const agentId = normalizeAgentId(options.agentId ?? DEFAULT_AGENT_ID);
  const dbPath = agentDbPath(options.paths, agentId);
  const target = withDb(options.paths, agentId, (db) => {
    const match = findSession(db, agentId, options.ref.trim());
    if (!match) return null;
    const row = db.first(db.q.selectFrom("sessions").select("session_key").where("session_id", "=", match.sessionId));
    return row ? { agentId, sessionKey: row.session_key, sessionId: match.sessionId, followsKey: match.matchedBy !== "session-id" } : null;
  });
  if (target === undefined) throw new NotFoundError(`No session database for agent ${agentId} at ${dbPath}; run \`openclaw-state doctor\` to see whether legacy sessions are waiting to be migrated.`, { path: dbPath });
  if (target === null) throw new NotFoundError(`No session ${JSON.stringify(options.ref)} in agent ${agentId} (${dbPath}); run \`openclaw-state sessions list --agent ${agentId}\` to see the keys.`, { path: dbPath });
  let current: Target = target;
  yield { kind: "session", agentId, sessionKey: current.sessionKey, sessionId: current.sessionId, store: dbPath, reason: "start" };

  const start = (lines: number) => withDb(options.paths, agentId, (db) => tailStateIn(db, agentId, current.sessionId, lines, TRANSCRIPT_DEFAULT_MAX_BYTES));
  const first = start(options.lines);
  for (const bytes of first?.skipped ?? []) yield { kind: "skipped", bytes };
  for (const entry of first?.entries ?? []) yield { kind: "message", sessionId: current.sessionId, entry };
  if (!options.follow || !first) return;
  let cursor: string | undefined = first.cursor;
  let maxBytes = TRANSCRIPT_DEFAULT_MAX_BYTES;

  while (!options.signal?.aborted) {
    const r = withDb(options.paths, agentId, (db) => readVisibleDeltaIn(db, agentId, current.sessionKey, current.sessionId, { cursor, maxMessages: 1_000, maxBytes, start: "transcript" }));
    if (r === undefined || r.kind === "missing") {
      const next = current.followsKey ? routedSession(options.paths, agentId, current.sessionKey) : undefined;
      if (next === undefined || next === current.sessionId) {
        yield { kind: "gone", sessionId: current.sessionId };
        return;
      }
      current = { ...current, sessionId: next };
      cursor = undefined;
      yield { kind: "session", agentId, sessionKey: current.sessionKey, sessionId: next, store: dbPath, reason: "switched" };
      continue;
    }
    if (r.kind === "reset") {
      yield { kind: "reset", reason: r.reason };
      cursor = start(0)?.cursor;
      continue;
    }
    if (r.kind === "page") {
      for (const entry of r.entries) yield { kind: "message", sessionId: current.sessionId, entry };
      cursor = r.cursor;
      if (r.requiredBytes !== undefined) {
        if (r.requiredBytes > TRANSCRIPT_MAX_BYTES_CAP) {
          throw new OperationError("entry_too_large", `Session ${current.sessionId} has a message of ${r.requiredBytes} bytes, above the ${TRANSCRIPT_MAX_BYTES_CAP}-byte read cap; it cannot be followed past it.`);
        }
        maxBytes = r.requiredBytes;
        continue;
      }
      maxBytes = TRANSCRIPT_DEFAULT_MAX_BYTES;
      if (r.hasMore) continue;
      if (current.followsKey) {
        const next = routedSession(options.paths, agentId, current.sessionKey);
        if (next !== undefined && next !== current.sessionId) {
          current = { ...current, sessionId: next };
          cursor = undefined;
          yield { kind: "session", agentId, sessionKey: current.sessionKey, sessionId: next, store: dbPath, reason: "switched" };
          continue;
        }
      }
    }
    // `unavailable` (the projection is catching up) keeps the cursor and simply waits.
    await sleep(options.intervalMs, options.signal);
  }
}

function routedSession(paths: StatePaths, agentId: string, sessionKey: string): string | undefined {
  return withDb(paths, agentId, (db) => db.first(db.q.selectFrom("session_routes").select("session_id").where("session_key", "=", sessionKey))?.session_id);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
