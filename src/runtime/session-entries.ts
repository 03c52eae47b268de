// Session rows by identity: entry by key or id, a streamed listing, updatedAt, and a channel conversation's current session.
import { UsageError } from "../core/errors.js";
import { FILE_ERA_FIELDS } from "../migration/importers/session-projection.js";
import type { AgentDatabase } from "../state/state-databases.js";
import { readAgentDb, requireString, type AgentParams } from "./store.js";

/** The public entry projection: the stored SessionEntry with `sessionId` and `updatedAt` taken from the row. */
export type SessionEntry = Record<string, unknown> & { sessionId: string; updatedAt: number };

export interface SessionKeyParams extends AgentParams {
  sessionKey: string;
}

export interface SessionIdParams extends AgentParams {
  sessionId: string;
  /**
   * `sessionKey` (default): the first exact id match in session-key order, else the first trimmed (legacy)
   * match. `updatedAt`: the most recently updated of the exact and trimmed matches, key order breaking ties.
   */
  orderBy?: "sessionKey" | "updatedAt";
}

export interface SessionEntryMatch {
  sessionKey: string;
  entry: SessionEntry;
}

interface EntryRow {
  session_key: string;
  session_id: string;
  entry_json: string;
  updated_at: number;
}

/** File-era pointers (sessionFile, …) are never part of the projection: a transcript is addressed by identity. */
export function entryFromRow(row: Pick<EntryRow, "session_id" | "entry_json" | "updated_at">): SessionEntry {
  let stored: unknown;
  try {
    stored = JSON.parse(row.entry_json);
  } catch {
    stored = {};
  }
  const fields = stored !== null && typeof stored === "object" && !Array.isArray(stored) ? { ...(stored as Record<string, unknown>) } : {};
  for (const name of FILE_ERA_FIELDS) delete fields[name];
  return { ...fields, sessionId: row.session_id, updatedAt: row.updated_at };
}

const ENTRY_COLUMNS = ["session_key", "session_id", "entry_json", "updated_at"] as const;

/** The entry stored under `sessionKey` (exact key), or undefined. */
export function sessionEntryIn(db: AgentDatabase, sessionKey: string): SessionEntry | undefined {
  const row = db.first(db.q.selectFrom("session_entries").select(ENTRY_COLUMNS).where("session_key", "=", sessionKey));
  return row ? entryFromRow(row) : undefined;
}

/** The entry of `sessionKey` when it belongs to `sessionId`, else the newest entry naming that session id. */
export function sessionEntryForSessionIn(db: AgentDatabase, sessionKey: string, sessionId: string): SessionEntry | undefined {
  const row =
    db.first(db.q.selectFrom("session_entries").select(ENTRY_COLUMNS).where("session_key", "=", sessionKey).where("session_id", "=", sessionId)) ??
    db.first(db.q.selectFrom("session_entries").select(ENTRY_COLUMNS).where("session_id", "=", sessionId).orderBy("updated_at", "desc").orderBy("session_key").limit(1));
  return row ? entryFromRow(row) : undefined;
}

export async function getSessionEntryAsync(params: SessionKeyParams): Promise<SessionEntry | undefined> {
  const key = requireString(params.sessionKey, "sessionKey");
  return readAgentDb(params, (db) => sessionEntryIn(db, key), () => undefined);
}

export async function getSessionEntryByIdAsync(params: SessionIdParams): Promise<SessionEntryMatch | undefined> {
  const sessionId = requireString(params.sessionId, "sessionId");
  const orderBy = params.orderBy ?? "sessionKey";
  if (orderBy !== "sessionKey" && orderBy !== "updatedAt") throw new UsageError(`orderBy must be "sessionKey" or "updatedAt" (got ${JSON.stringify(orderBy)}).`, "invalid_argument");
  const trimmed = sessionId.trim();
  return readAgentDb(
    params,
    (db) => {
      const base = db.q.selectFrom("session_entries").select(ENTRY_COLUMNS);
      let row: EntryRow | undefined;
      if (orderBy === "updatedAt") {
        // trim() cannot use the session_id index; a by-id lookup over entry rows is cheap next to a transcript read.
        row = db.first(
          base
            .where((eb) => eb.or([eb("session_id", "=", sessionId), eb(eb.fn("trim", ["session_id"]), "=", trimmed)]))
            .orderBy("updated_at", "desc")
            .orderBy("session_key")
            .limit(1),
        );
      } else {
        row =
          db.first(base.where("session_id", "=", sessionId).orderBy("session_key").limit(1)) ??
          db.first(base.where((eb) => eb(eb.fn("trim", ["session_id"]), "=", trimmed)).orderBy("session_key").limit(1));
      }
      return row ? { sessionKey: row.session_key, entry: entryFromRow(row) } : undefined;
    },
    () => undefined,
  );
}

/** Rows per read: each chunk is its own short read, so an abandoned iteration holds no database open. */
const LIST_CHUNK = 256;

/**
 * Every entry of the agent in session-key order, streamed in chunks (bounded memory). Each chunk is one read
 * snapshot; keyset paging on the key means no entry is returned twice even while the gateway writes.
 */
export function* listSessionEntries(params: AgentParams): Generator<SessionEntryMatch, void, undefined> {
  let after: string | null = null;
  for (;;) {
    const from = after;
    const rows: EntryRow[] = readAgentDb(
      params,
      (db) => {
        let query = db.q.selectFrom("session_entries").select(ENTRY_COLUMNS);
        if (from !== null) query = query.where("session_key", ">", from);
        return db.all(query.orderBy("session_key").limit(LIST_CHUNK));
      },
      () => [],
    );
    for (const row of rows) yield { sessionKey: row.session_key, entry: entryFromRow(row) };
    if (rows.length < LIST_CHUNK) return;
    after = rows[rows.length - 1]!.session_key;
  }
}

/** The entry's updatedAt for `sessionKey`, else its routed session row's; undefined when neither exists. */
export async function readSessionUpdatedAtAsync(params: SessionKeyParams): Promise<number | undefined> {
  const key = requireString(params.sessionKey, "sessionKey");
  return readAgentDb(
    params,
    (db) => {
      const entry = db.first(db.q.selectFrom("session_entries").select("updated_at").where("session_key", "=", key));
      if (entry) return entry.updated_at;
      const routed = db.first(
        db.q.selectFrom("session_routes as r").innerJoin("sessions as s", "s.session_id", "r.session_id").select("s.updated_at").where("r.session_key", "=", key),
      );
      return routed?.updated_at;
    },
    () => undefined,
  );
}

export interface ConversationAddressParams extends AgentParams {
  channel: string;
  accountId?: string | null | undefined;
  kind: "direct" | "group" | "channel";
  /** The ingress peer (the conversation's `peer_id`). */
  peerId: string;
  /** Selects that exact thread; omitted = the conversation without a thread. */
  threadId?: string | number | null | undefined;
}

export interface ConversationSession {
  sessionKey: string;
  sessionId: string;
}

/**
 * The session currently bound to one transport address. The conversation row is matched on its natural
 * identity (no parent address is inferred); its linked session (primary link first, newest first) gives the
 * key, and the key's route gives the current session id, so a reset is followed. Never creates anything.
 */
export async function getConversationSessionAsync(params: ConversationAddressParams): Promise<ConversationSession | undefined> {
  const channel = requireString(params.channel, "channel").trim().toLowerCase();
  const peerId = requireString(params.peerId, "peerId").trim();
  if (params.kind !== "direct" && params.kind !== "group" && params.kind !== "channel") {
    throw new UsageError(`kind must be direct, group or channel (got ${JSON.stringify(params.kind)}).`, "invalid_argument");
  }
  const accountId = params.accountId == null ? "" : String(params.accountId).trim();
  const threadId = params.threadId == null ? "" : String(params.threadId).trim();
  return readAgentDb(
    params,
    (db) => {
      // The same folded expressions as conversations_identity_uq, so the lookup is an index probe.
      const conversation = db.first(
        db.q
          .selectFrom("conversations")
          .select("conversation_id")
          .where("channel", "=", channel)
          .where((eb) => eb(eb.fn("ifnull", ["account_id", eb.val("")]), "=", accountId))
          .where("kind", "=", params.kind)
          .where((eb) => eb(eb.fn("ifnull", ["peer_id", eb.val("")]), "=", peerId))
          .where((eb) => eb(eb.fn("ifnull", ["parent_conversation_id", eb.val("")]), "=", ""))
          .where((eb) => eb(eb.fn("ifnull", ["thread_id", eb.val("")]), "=", threadId)),
      );
      if (!conversation) return undefined;
      const linked = db.first(
        db.q
          .selectFrom("session_conversations as sc")
          .innerJoin("sessions as s", "s.session_id", "sc.session_id")
          .select(["s.session_id", "s.session_key"])
          .where("sc.conversation_id", "=", conversation.conversation_id)
          .orderBy((eb) => eb.case().when("sc.role", "=", "primary").then(0).else(1).end())
          .orderBy("s.updated_at", "desc")
          .orderBy("s.session_id")
          .limit(1),
      );
      if (!linked) return undefined;
      const route = db.first(db.q.selectFrom("session_routes").select("session_id").where("session_key", "=", linked.session_key));
      return { sessionKey: linked.session_key, sessionId: route?.session_id ?? linked.session_id };
    },
    () => undefined,
  );
}
