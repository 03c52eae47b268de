// Design-v1 sessions/session_routes/session_entries/conversations -> OpenClaw 2026.9.6's session_nodes, session_windows, conversations, session_conversations.
import {
  conversationFromEntry,
  conversationId,
  deliveryProjection,
  finiteOrNull,
  isRecord,
  normalizeEntry,
  normalizePeerId,
  sessionScope,
  trimmedOrNull,
  type Entry,
} from "./agent-entry-shape.js";
import type { Insertable, Selectable } from "kysely";
import type { ConversationsTable } from "../generated/agent-db.js";
import type { OpenclawAgentDB } from "../generated/openclaw-agent-db.js";
import { ROUTE_SOURCE_BITS, SessionLookups, type V1Session } from "./session-lookups.js";
import { acpSessionRowFor } from "./upgrade-agent-acp.js";
import type { AgentUpgradeContext } from "./upgrade-agent-context.js";

interface V1Route { session_key: string; session_id: string; updated_at: number }
/** An entry's key columns; its entry_json is read when its node is planned and not held after. */
interface V1EntryKey { session_id: string; session_key: string; updated_at: number }
type V1Conversation = Selectable<ConversationsTable>;
interface V1SessionConversation { session_id: string; conversation_id: string; role: string; first_seen_at: number | null; last_seen_at: number | null }

const STATUS = new Set(["running", "done", "failed", "killed", "timeout"]);
const CREATED_VIA = new Set(["operator", "spawn", "channel", "cron", "talk", "run", "plugin", "internal"]);
const ACTOR_TYPES = new Set(["human", "agent", "system"]);

/**
 * The entry fields the conversation and window passes read once a node is written, recorded beside it when it is
 * planned: those passes used to parse the whole entry_json again (a 50 MB entry twice more). The passes take an
 * EntryView, so reading a field not listed here does not compile.
 */
const VIEW_FIELDS = [
  "delivery", "chatType", "displayName", "label", "subject", "groupId", "previousSessionId", "pluginOwnerId", "hookExternalContentSource",
  "sessionStartedAt", "startedAt", "updatedAt", "endedAt", "status", "modelProvider", "model", "agentHarnessId", "parentSessionKey", "spawnedBy",
] as const;
type EntryView = { [K in (typeof VIEW_FIELDS)[number]]?: unknown } & { acp?: Record<string, never> };

/** The view of a normalized entry (its `acp` only as present or not: the windows read nothing else of it). */
function entryView(entry: Entry): string {
  const view: Entry = {};
  for (const field of VIEW_FIELDS) if (field in entry) view[field] = entry[field];
  if (isRecord(entry.acp)) view.acp = {};
  return JSON.stringify(view);
}

function enumOrNull(value: unknown, allowed: Set<string>): string | null {
  return typeof value === "string" && allowed.has(value) ? value : null;
}

/** Returns the session ids that now have a window (transcript rows may only hang off those). */
export function upgradeSessions(ctx: AgentUpgradeContext): Set<string> {
  // On an error the caller closes the connection and removes the file: the TEMP tables go with the connection.
  const look = new SessionLookups(ctx);
  // Each key's session_nodes row is written as it is planned (that table references nothing written below).
  planNodes(ctx, look);
  // Conversations before windows: session_windows.primary_conversation_id references them. The links wait in a
  // scratch table until the windows they reference are written.
  entryConversations(ctx, look);
  upgradeV1Conversations(ctx, look);
  for (const link of ctx.iterate<V1SessionConversation>("session_conversations", "session_id, conversation_id, role")) {
    const mapped = look.mappedConversation(link.conversation_id);
    if (mapped && mapped.newId === null) continue;
    const session = look.session(link.session_id);
    if (!mapped || !session) {
      ctx.skip("session_conversations", "agent.session-conversation.no-conversation", `session_conversations (${link.session_id}, ${link.conversation_id}): its conversation could not be written (see the conversation's note); the link stays in the design-v1 file.`);
      continue;
    }
    const id = mapped.newId!;
    const seen = link.first_seen_at ?? link.last_seen_at ?? session.created_at;
    // The route the entry itself names (derived above) is the session's conversation in 9.6's eyes; a different
    // design-v1 primary (our importer preferred deliveryContext over last*) is kept beside it as 'related'.
    const derived = look.links(link.session_id);
    if (derived.some((l) => l.conversationId === id)) continue;
    let role = link.role;
    if (role === "primary" && derived.length > 0) {
      role = "related";
      ctx.note("agent.session-conversation.demoted", `session ${link.session_id}: design-v1 primary conversation ${link.conversation_id} kept as 'related' (${id}); the entry's own route names ${derived[0]!.conversationId}.`);
    }
    look.addLink(link.session_id, { conversationId: id, role, firstSeen: seen, lastSeen: link.last_seen_at ?? seen });
  }
  // One primary per session (unique index): the latest stays primary, earlier ones become 'related' as 9.6 demotes them.
  for (const demoted of look.supersededPrimaries()) {
    look.setLinkRole(demoted.session_id, demoted.conversation_id, "related");
    ctx.note("agent.session-conversation.demoted", `session ${demoted.session_id}: conversation ${demoted.conversation_id} kept as 'related' because a later one is primary (one primary per session).`);
  }
  const windows = writeWindows(ctx, look);
  const links = look.writeLinks();
  if (links > 0) ctx.count("session_conversations", links);
  look.close();
  return windows;
}

/** One window per design-v1 session, under the key that owns it; returns the session ids written. */
function writeWindows(ctx: AgentUpgradeContext, look: SessionLookups): Set<string> {
  const windows = new Set<string>();
  for (const s of ctx.iterate<V1Session>("sessions", "session_id")) {
    // A window belongs to the newest node whose current session it is, else to the key its sessions row names.
    const key = look.windowOwner(s.session_id) ?? s.session_key;
    const node = look.node(key);
    if (!node) throw new Error(`session ${s.session_id} has no session key node (${key}) after planning`);
    const current = node.current_session_id === s.session_id;
    const entry: EntryView = current ? parseEntry(node.view_json) : {};
    const last = look.lastEventAt(s.session_id);
    // The current window mirrors its entry as 9.6 projects it (scope from chat type + key, channel/account from
    // `delivery`); a historical window has no entry, so it keeps what the design-v1 row says.
    const chatType = current ? effectiveChatType(entry, s) : s.chat_type;
    const scope = current ? sessionScope(chatType, key) : s.session_scope;
    if (scope !== s.session_scope) ctx.note("agent.window.scope", `session ${s.session_id}: session_scope ${scope} (OpenClaw's rule for chat type ${chatType ?? "none"} on ${key}) instead of the design-v1 ${s.session_scope}.`);
    const projected = current ? deliveryProjection(entry) : { channel: s.channel, accountId: s.account_id };
    const fromEntry = current ? windowEntryColumns(entry, node.updated_at) : null;
    // 9.6 writes a key's entry and then its transcript, each event moving the window's updated_at. A session a second
    // key names (a cron job's key and its `:run:` key) is written once more after its transcript is in: the window ends
    // at that entry's updatedAt, observed at the import's time.
    const rewritten = current && last !== null && look.keysOf(s.session_id) > 1;
    const primary = look.links(s.session_id).find((l) => l.role === "primary");
    ctx.insert("session_windows", {
      session_id: s.session_id, session_key: key, previous_session_id: trimmedOrNull(entry.previousSessionId), reason: null,
      session_scope: scope, created_at: fromEntry?.created_at ?? s.created_at,
      // 9.6's importer leaves a window at its last event's time; never earlier than our own row says.
      updated_at: rewritten ? node.updated_at : last === null ? s.updated_at : Math.max(s.updated_at, last),
      transcript_updated_at: last, transcript_observed_at: rewritten ? ctx.now : current ? node.updated_at : s.updated_at,
      session_entry_provenance: 1, acp_owned: isRecord(entry.acp) ? 1 : 0, plugin_owner_id: trimmedOrNull(entry.pluginOwnerId),
      hook_external_content_source: hookSource(entry.hookExternalContentSource), status: s.status, started_at: s.started_at, ended_at: s.ended_at,
      chat_type: chatType, channel: projected.channel, account_id: projected.accountId, primary_conversation_id: primary?.conversationId ?? null,
      model_provider: s.model_provider, model: s.model, agent_harness_id: s.agent_harness_id, parent_session_key: s.parent_session_key,
      spawned_by: s.spawned_by, display_name: s.display_name,
      ...fromEntry,
    });
    windows.add(s.session_id);
  }
  return windows;
}

/**
 * The conversation each written entry names, in the order 9.6 imports entries (oldest first; the first writer of a
 * conversation id keeps its label and times), linked to the entry's session.
 */
function entryConversations(ctx: AgentUpgradeContext, look: SessionLookups): void {
  // Only the keys are held (sorted by SQLite); each node is read back as its turn comes.
  const keys = ctx.target.prepare("SELECT session_key FROM session_nodes ORDER BY updated_at, rowid").pluck().all() as string[];
  for (const key of keys) {
    const node = look.node(key)!;
    const entry: EntryView = parseEntry(node.view_json);
    const identity = conversationFromEntry(entry);
    if (!identity) continue;
    const label = trimmedOrNull(entry.displayName) ?? trimmedOrNull(entry.label);
    ctx.insert("conversations", {
      conversation_id: identity.conversationId, channel: identity.channel, account_id: identity.accountId, kind: identity.kind,
      peer_id: identity.peerId, delivery_target: identity.deliveryTarget, parent_conversation_id: null, thread_id: identity.threadId,
      native_channel_id: null, native_direct_user_id: null, label, metadata_json: null, created_at: node.updated_at, updated_at: node.updated_at,
    }, "ignore");
    // 9.6 makes a shared main session a participant of a direct chat, not its primary (§5).
    const scope = sessionScope(effectiveChatType(entry, look.session(node.current_session_id)!), key);
    const role = scope === "shared-main" && identity.kind === "direct" ? "participant" : "primary";
    look.addLink(node.current_session_id, { conversationId: identity.conversationId, role, firstSeen: node.updated_at, lastSeen: node.updated_at });
  }
}

/** One node per session key: routed keys with their entry, entries without a route, and keys only a sessions row names. */
function planNodes(ctx: AgentUpgradeContext, look: SessionLookups): void {
  // The entry is parsed and normalized in a frame of its own, which returns only the row: once it returns, the
  // entry's text (let go of by takeEntry) and its parsed object are garbage, and a 50 MB one is collected before
  // SQLite makes its copies of the row.
  const nodeFor = (key: string, sessionId: string, load: () => LoadedEntry, fallbackUpdatedAt: number): { row: NodeRow; chars: number } => {
    const { raw, chars } = load();
    const updatedAt = finiteOrNull(raw.updatedAt) ?? fallbackUpdatedAt;
    look.addRouteFields(sessionId, routeSourcesIn(raw));
    const { entry, notes } = normalizeEntry(raw, sessionId, updatedAt, look.primaryRoute(sessionId));
    for (const message of notes) ctx.note("agent.entry.normalized", `${key}: ${message}.`);
    takeAcpMetadata(ctx, key, entry);
    look.setEntryView(key, entryView(entry));
    return { row: nodeRow(key, sessionId, updatedAt, entry), chars };
  };
  const plan = (key: string, sessionId: string, load: () => LoadedEntry, fallbackUpdatedAt: number): void => {
    if (!look.session(sessionId)) throw new Error(`session key ${key} points at session ${sessionId}, which the design-v1 file does not hold`);
    const { row, chars } = nodeFor(key, sessionId, load, fallbackUpdatedAt);
    ctx.handled(chars);
    writeNode(ctx, row);
  };
  for (const r of ctx.iterate<V1Route>("session_routes", "updated_at, session_key")) {
    // The entry's text is read per key and dropped once parsed: at most one entry is held as text at a time.
    const e = look.entry(r.session_key);
    if (e) {
      plan(r.session_key, r.session_id, () => takeEntry(e), e.updated_at);
    } else {
      ctx.note("agent.session.synthesized-entry", `${r.session_key}: a route without a session entry; wrote the minimal entry {sessionId, updatedAt, delivery:{kind:"none"}}.`);
      plan(r.session_key, r.session_id, noEntry, r.updated_at);
    }
  }
  for (const e of ctx.iterate<V1EntryKey>("session_entries", "updated_at, session_key", "session_id, session_key, updated_at")) {
    if (look.hasNode(e.session_key)) continue;
    const entry = look.entry(e.session_key)!;
    plan(e.session_key, e.session_id, () => takeEntry(entry), entry.updated_at);
  }
  // A sessions row whose key has no node (a transcript nobody indexed, or history of a vanished key): 9.6 needs a
  // node for every window, so the newest such session becomes the key's current one. Only those rows are held.
  const byKey = new Map<string, { session_id: string; updated_at: number }>();
  for (const s of ctx.iterate<{ session_id: string; session_key: string; updated_at: number }>("sessions", "session_id", "session_id, session_key, updated_at")) {
    if (look.hasNode(s.session_key)) continue;
    const newest = byKey.get(s.session_key);
    if (!newest || s.updated_at >= newest.updated_at) byKey.set(s.session_key, { session_id: s.session_id, updated_at: s.updated_at });
  }
  delete ctx.read.sessions; // counted once, by the window pass
  for (const [key, newest] of byKey) {
    ctx.note("agent.session.synthesized-entry", `${key}: no session entry or route (e.g. a transcript no index named); wrote the minimal entry {sessionId:${JSON.stringify(newest.session_id)}, updatedAt, delivery:{kind:"none"}} and kept the key as it was.`);
    plan(key, newest.session_id, noEntry, newest.updated_at);
  }
  for (const key of ctx.target.prepare("SELECT session_key FROM session_nodes ORDER BY rowid").pluck().iterate() as IterableIterator<string>) {
    // 9.6 files a key under the agent its key names; the design-v1 file may hold another agent's key (kept here).
    const owner = /^agent:([^:]+):/.exec(key)?.[1];
    if (owner && owner !== ctx.agentId) ctx.note("agent.session.foreign-agent-key", `${key} names agent "${owner}" but lives in agent "${ctx.agentId}"'s database; kept here as it was (OpenClaw's own import would file it under agents/${owner}/).`);
  }
}

interface LoadedEntry { raw: Entry; chars: number }
type NodeRow = Insertable<OpenclawAgentDB["session_nodes"]>;

const noEntry = (): LoadedEntry => ({ raw: {}, chars: 0 });

/** Parses a row's entry text and lets go of it, so nothing holds the text once it is parsed. */
function takeEntry(row: { entry_json: string }): LoadedEntry {
  const chars = row.entry_json.length;
  const raw = parseEntry(row.entry_json);
  row.entry_json = "";
  return { raw, chars };
}

function parseEntry(text: string): Entry {
  const value: unknown = JSON.parse(text);
  return isRecord(value) ? value : {};
}

/** The design-v1 route sources (session-projection's `routeSource`) a raw staged entry still holds, as ROUTE_SOURCE_BITS. */
function routeSourcesIn(raw: Entry): number {
  let mask = 0;
  if (isRecord(raw.deliveryContext)) mask |= ROUTE_SOURCE_BITS.get("deliveryContext")!;
  if (raw.lastTo !== undefined) mask |= ROUTE_SOURCE_BITS.get("last")!;
  if (isRecord(raw.origin)) mask |= ROUTE_SOURCE_BITS.get("origin")!;
  return mask;
}

/**
 * Whether a design-v1 conversation was derived by our staging importer from sessions.json entries whose entry_json
 * still holds the route field it came from. The entry (folded into `delivery`, `origin` kept) is then the whole
 * record, and 9.6 derives conversations from the entry alone, by its own precedence: writing ours too would add
 * conversations 9.6 never makes (an internal webchat route, an origin with only `from`, the deliveryContext that lost
 * to last*). A conversation from an older staging file whose entry lost the field stays (the only record of the route).
 */
function isEntryDerived(look: SessionLookups, c: V1Conversation): boolean {
  let meta: unknown;
  try {
    meta = c.metadata_json ? JSON.parse(c.metadata_json) : undefined;
  } catch {
    return false;
  }
  if (!isRecord(meta) || meta.importedFrom !== "sessions.json" || typeof meta.routeSource !== "string") return false; // legacy-name-ok: the provenance tag our staging importer writes into metadata_json (a value, never a path opened)
  const bit = ROUTE_SOURCE_BITS.get(meta.routeSource);
  const sessions = look.linkedSessions(c.conversation_id);
  return bit !== undefined && sessions.length > 0 && sessions.every((id) => (look.routeFields(id) & bit) !== 0);
}

/** Design-v1 conversations under 9.6's ids; what became of each is recorded in the lookups (new id, or derived). */
function upgradeV1Conversations(ctx: AgentUpgradeContext, look: SessionLookups): void {
  for (const c of ctx.iterate<V1Conversation>("conversations", "conversation_id")) {
    if (isEntryDerived(look, c)) {
      ctx.note("agent.conversation.entry-derived", `conversation ${c.conversation_id} (${c.channel}) was derived from session entries that still carry its route; OpenClaw derives the session's conversation from the entry (its delivery), so this row is not written.`);
      look.mapConversation(c.conversation_id, null);
      continue;
    }
    if (!c.peer_id) {
      ctx.skip("conversations", "agent.conversation.no-target", `conversation ${c.conversation_id} (${c.channel}) has no peer id, and OpenClaw's conversations need a delivery target; kept in the design-v1 file only.`);
      continue;
    }
    const channel = c.channel.toLowerCase();
    const accountId = c.account_id ?? "default";
    const peerId = normalizePeerId(channel, c.peer_id);
    const id = conversationId(channel, accountId, c.kind, peerId, c.parent_conversation_id, c.thread_id);
    const inserted = ctx.insert("conversations", {
      conversation_id: id, channel, account_id: accountId, kind: c.kind, peer_id: peerId, delivery_target: c.peer_id,
      parent_conversation_id: c.parent_conversation_id, thread_id: c.thread_id, native_channel_id: c.native_channel_id,
      native_direct_user_id: c.native_direct_user_id, label: c.label, metadata_json: null, created_at: c.created_at, updated_at: c.updated_at,
    }, "ignore");
    // Only our importer's provenance lives in metadata_json; OpenClaw's own import leaves the column NULL.
    if (inserted) ctx.note("agent.conversation.from-v1-row", `conversation ${c.conversation_id} is not any session entry's route; written as ${id} with delivery_target = its design-v1 peer_id ${JSON.stringify(c.peer_id)}.`);
    look.mapConversation(c.conversation_id, id);
  }
}

function nodeRow(key: string, sessionId: string, updatedAt: number, e: Entry): NodeRow {
  const actor = isRecord(e.createdActor) ? e.createdActor : {};
  const fork = isRecord(e.forkSource) ? e.forkSource : {};
  return {
    session_key: key, current_session_id: sessionId, entry_json: JSON.stringify(e), legacy_acp_migration_json: null,
    entry_valid: 1, updated_at: updatedAt, status: enumOrNull(e.status, STATUS), created_at: finiteOrNull(e.createdAt),
    created_via: enumOrNull(e.createdVia, CREATED_VIA), created_actor_type: enumOrNull(actor.type, ACTOR_TYPES), created_actor_id: trimmedOrNull(actor.id),
    owner_actor_type: null, owner_actor_id: null, owner_assigned_by_type: null, owner_assigned_by_id: null, owner_assigned_at: null,
    project_id: trimmedOrNull(e.projectId), parent_session_key: trimmedOrNull(e.parentSessionKey) ?? trimmedOrNull(e.spawnedBy),
    spawned_by: trimmedOrNull(e.spawnedBy), fork_source_session_key: trimmedOrNull(fork.sessionKey), fork_source_session_id: trimmedOrNull(fork.sessionId),
    fork_source_entry_id: trimmedOrNull(fork.entryId), label: trimmedOrNull(e.label), display_name: trimmedOrNull(e.displayName),
    category: trimmedOrNull(e.category), icon: trimmedOrNull(e.icon), pinned_at: finiteOrNull(e.pinnedAt), archived_at: finiteOrNull(e.archivedAt),
    last_read_at: finiteOrNull(e.lastReadAt), last_interaction_at: finiteOrNull(e.lastInteractionAt), last_activity_at: finiteOrNull(e.lastActivityAt),
  };
}

function writeNode(ctx: AgentUpgradeContext, row: NodeRow): void {
  ctx.insert("session_nodes", row);
  // The AFTER INSERT trigger resets entry_valid to 0 ("pending validation"); 9.6's writer then marks the row valid
  // itself, and its readers refuse a 0 ("requires repair"). Updating only entry_valid does not re-fire a trigger.
  const sql = ctx.q.updateTable("session_nodes").set({ entry_valid: 1 }).where("session_key", "=", row.session_key).compile();
  ctx.prepared(sql.sql).run(...(sql.parameters as unknown[]));
}

/**
 * 9.6's doctor moves an entry's `acp` into the global acp_sessions table (keyed by the session key, bound to the
 * entry's session) and rewrites the entry without it before importing the session, so its node has no `acp`,
 * `acp_owned` 0 and `legacy_acp_migration_json` NULL. Metadata 9.6 could not store (a NOT NULL field missing) stays
 * in entry_json, where 9.6's runtime still reads an entry's own `acp`.
 */
function takeAcpMetadata(ctx: AgentUpgradeContext, key: string, entry: Entry): void {
  if (entry.acp === undefined) return;
  const row = acpSessionRowFor(key, entry, ctx.now);
  if (!row) {
    ctx.note("agent.entry.acp-kept", `${key}: ACP metadata lacks a field OpenClaw's acp_sessions requires (backend, agent, runtimeSessionName, mode, state as text, lastActivityAt as an integer); kept in entry_json, where its runtime reads an entry's own acp.`);
    return;
  }
  delete entry.acp;
  ctx.acpSessions.push(row);
}

/** The entry's chat type when it is one 9.6 knows, else the design-v1 row's (our importer may have moved it there). */
function effectiveChatType(entry: EntryView, s: V1Session): string | null {
  const t = entry.chatType;
  return t === "direct" || t === "group" || t === "channel" ? t : s.chat_type;
}

/**
 * The columns 9.6 projects from a current window's entry (its `bindSessionRoot`): created_at from the first time it
 * finds (sessionStartedAt, startedAt, updatedAt), started_at/ended_at/status/model/display name from the entry's own
 * fields. The design-v1 row read some of them from other fields (sessionStartedAt, modelOverride), so the entry decides.
 */
function windowEntryColumns(entry: EntryView, updatedAt: number) {
  const firstTime = [entry.sessionStartedAt, entry.startedAt, entry.updatedAt].find((t): t is number => typeof t === "number" && Number.isFinite(t) && t >= 0);
  return {
    created_at: firstTime ?? updatedAt,
    started_at: finiteOrNull(entry.startedAt),
    ended_at: finiteOrNull(entry.endedAt),
    status: enumOrNull(entry.status, STATUS),
    model_provider: trimmedOrNull(entry.modelProvider),
    model: trimmedOrNull(entry.model),
    agent_harness_id: trimmedOrNull(entry.agentHarnessId),
    parent_session_key: trimmedOrNull(entry.parentSessionKey),
    spawned_by: trimmedOrNull(entry.spawnedBy),
    display_name: trimmedOrNull(entry.displayName) ?? trimmedOrNull(entry.label) ?? trimmedOrNull(entry.subject) ?? trimmedOrNull(entry.groupId),
  };
}

function hookSource(value: unknown): string | null {
  if (value === "email") return "webhook";
  return value === "gmail" || value === "webhook" ? value : null;
}
