// Test helper: writes session, route, entry, conversation, transcript and cron-run rows through the storage core.
import type { StatePaths } from "../../src/state/paths.js";
import { openAgentDatabase, openGlobalDatabase, type AgentDatabase } from "../../src/state/state-databases.js";

export interface SeedConversation {
  conversationId?: string;
  channel: string;
  kind: "direct" | "group" | "channel";
  accountId?: string | null;
  peerId?: string | null;
  threadId?: string | null;
  label?: string | null;
}

export interface SeedSession {
  sessionId: string;
  key: string;
  updatedAt: number;
  createdAt?: number;
  scope?: "conversation" | "shared-main" | "group" | "channel";
  status?: "running" | "done" | "failed" | "killed" | "timeout" | null;
  chatType?: "direct" | "group" | "channel" | null;
  channel?: string | null;
  accountId?: string | null;
  model?: string | null;
  modelProvider?: string | null;
  spawnedBy?: string | null;
  parentSessionKey?: string | null;
  displayName?: string | null;
  /** entry_json (the legacy SessionEntry shape); default `{sessionId, updatedAt}`; null = no entry row. */
  entry?: Record<string, unknown> | null;
  /** Write a session_routes row for the key pointing here (default true). */
  route?: boolean;
  conversation?: SeedConversation;
  /** Transcript lines (objects are JSON-encoded), stored at seq 0.. in order. */
  events?: Array<Record<string, unknown> | string>;
}

/** Inserts the sessions in one write transaction (creating the agent DB if needed). */
export function seedSessions(paths: StatePaths, agentId: string, sessions: SeedSession[]): void {
  withAgentDb(paths, agentId, (db) => {
    for (const s of sessions) insertSession(db, s);
  });
}

/** Appends transcript lines to an existing session, continuing after its last seq. */
export function appendTranscript(paths: StatePaths, agentId: string, sessionId: string, events: Array<Record<string, unknown> | string>): void {
  withAgentDb(paths, agentId, (db) => {
    const last = db.first(db.q.selectFrom("transcript_events").select((eb) => eb.fn.max("seq").as("m")).where("session_id", "=", sessionId));
    insertEvents(db, sessionId, events, (last?.m ?? -1) + 1);
  });
}

/** Replaces the whole transcript of a session (a "rewrite" as the runtime would do it). */
export function replaceTranscript(paths: StatePaths, agentId: string, sessionId: string, events: Array<Record<string, unknown> | string>): void {
  withAgentDb(paths, agentId, (db) => {
    db.run(db.q.deleteFrom("transcript_events").where("session_id", "=", sessionId));
    insertEvents(db, sessionId, events, 0);
  });
}

/** Points one more key at an existing session (legacy aliases canonicalized onto one session). */
export function seedRoute(paths: StatePaths, agentId: string, key: string, sessionId: string, updatedAt = 1): void {
  withAgentDb(paths, agentId, (db) => {
    db.run(
      db.q
        .insertInto("session_routes")
        .values({ session_key: key, session_id: sessionId, updated_at: updatedAt })
        .onConflict((oc) => oc.column("session_key").doUpdateSet({ session_id: sessionId, updated_at: updatedAt })),
    );
  });
}

/** Records a cron run in the global DB that produced `sessionId` (what makes a session kind `cron`). */
export function seedCronRun(paths: StatePaths, sessionId: string, sessionKey: string, jobId = "job-1"): void {
  const global = openGlobalDatabase(paths, { mode: "write", create: true });
  try {
    global.immediate(() => {
      const last = global.first(global.q.selectFrom("cron_run_logs").select((eb) => eb.fn.max("seq").as("m")).where("job_id", "=", jobId));
      const now = Date.now();
      global.run(
        global.q.insertInto("cron_run_logs").values({
          store_key: "default",
          job_id: jobId,
          seq: (last?.m ?? -1) + 1,
          ts: now,
          status: "ok",
          session_id: sessionId,
          session_key: sessionKey,
          entry_json: JSON.stringify({ jobId, sessionId, sessionKey, status: "ok" }),
          created_at: now,
        }),
      );
    });
  } finally {
    global.close();
  }
}

function withAgentDb(paths: StatePaths, agentId: string, fn: (db: AgentDatabase) => void): void {
  const db = openAgentDatabase(paths, agentId, { mode: "write", create: true });
  try {
    db.immediate(() => fn(db));
  } finally {
    db.close();
  }
}

function insertSession(db: AgentDatabase, s: SeedSession): void {
  let conversationId: string | null = null;
  if (s.conversation) {
    const c = s.conversation;
    conversationId = c.conversationId ?? `conv-${s.sessionId}`;
    db.run(
      db.q.insertInto("conversations").values({
        conversation_id: conversationId,
        channel: c.channel,
        account_id: c.accountId ?? null,
        kind: c.kind,
        peer_id: c.peerId ?? null,
        thread_id: c.threadId ?? null,
        label: c.label ?? null,
        created_at: s.createdAt ?? s.updatedAt,
        updated_at: s.updatedAt,
      }),
    );
  }
  db.run(
    db.q.insertInto("sessions").values({
      session_id: s.sessionId,
      session_key: s.key,
      session_scope: s.scope ?? "conversation",
      created_at: s.createdAt ?? s.updatedAt,
      updated_at: s.updatedAt,
      status: s.status ?? null,
      chat_type: s.chatType ?? null,
      channel: s.channel ?? null,
      account_id: s.accountId ?? null,
      primary_conversation_id: conversationId,
      model_provider: s.modelProvider ?? null,
      model: s.model ?? null,
      spawned_by: s.spawnedBy ?? null,
      parent_session_key: s.parentSessionKey ?? null,
      display_name: s.displayName ?? null,
    }),
  );
  if (conversationId) {
    db.run(db.q.insertInto("session_conversations").values({ session_id: s.sessionId, conversation_id: conversationId, role: "primary", first_seen_at: s.createdAt ?? s.updatedAt, last_seen_at: s.updatedAt }));
  }
  if (s.route !== false) {
    db.run(
      db.q
        .insertInto("session_routes")
        .values({ session_key: s.key, session_id: s.sessionId, updated_at: s.updatedAt })
        .onConflict((oc) => oc.column("session_key").doUpdateSet({ session_id: s.sessionId, updated_at: s.updatedAt })),
    );
  }
  const entry = s.entry === undefined ? { sessionId: s.sessionId, updatedAt: s.updatedAt } : s.entry;
  if (entry !== null) {
    db.run(
      db.q
        .insertInto("session_entries")
        .values({ session_key: s.key, session_id: s.sessionId, entry_json: JSON.stringify(entry), updated_at: s.updatedAt })
        .onConflict((oc) => oc.column("session_key").doUpdateSet({ session_id: s.sessionId, entry_json: JSON.stringify(entry), updated_at: s.updatedAt })),
    );
  }
  if (s.events) insertEvents(db, s.sessionId, s.events, 0);
}

function insertEvents(db: AgentDatabase, sessionId: string, events: Array<Record<string, unknown> | string>, firstSeq: number): void {
  events.forEach((event, i) => {
    db.run(
      db.q.insertInto("transcript_events").values({
        session_id: sessionId,
        seq: firstSeq + i,
        event_json: typeof event === "string" ? event : JSON.stringify(event),
        created_at: 1_767_225_600_000 + (firstSeq + i) * 1000,
      }),
    );
  });
}
