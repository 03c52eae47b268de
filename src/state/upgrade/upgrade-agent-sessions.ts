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
  type Route,
} from "./agent-entry-shape.js";
import type { Selectable } from "kysely";
import type { ConversationsTable, SessionsTable } from "../generated/agent-db.js";
import { acpSessionRowFor } from "./upgrade-agent-acp.js";
import type { AgentUpgradeContext } from "./upgrade-agent-context.js";

type V1Session = Selectable<SessionsTable>;
interface V1Route { session_key: string; session_id: string; updated_at: number }
interface V1Entry { session_id: string; session_key: string; entry_json: string; updated_at: number }
type V1Conversation = Selectable<ConversationsTable>;
interface V1SessionConversation { session_id: string; conversation_id: string; role: string; first_seen_at: number | null; last_seen_at: number | null }

interface NodePlan { key: string; sessionId: string; updatedAt: number; entry: Entry }
interface Link { conversationId: string; role: string; firstSeen: number; lastSeen: number }

const STATUS = new Set(["running", "done", "failed", "killed", "timeout"]);
const CREATED_VIA = new Set(["operator", "spawn", "channel", "cron", "talk", "run", "plugin", "internal"]);
const ACTOR_TYPES = new Set(["human", "agent", "system"]);

function enumOrNull(value: unknown, allowed: Set<string>): string | null {
  return typeof value === "string" && allowed.has(value) ? value : null;
}

/** Returns the session ids that now have a window (transcript rows may only hang off those). */
export function upgradeSessions(ctx: AgentUpgradeContext): Set<string> {
  const sessions = ctx.rows<V1Session>("sessions", "session_id");
  const routes = ctx.rows<V1Route>("session_routes", "updated_at, session_key");
  const entries = ctx.rows<V1Entry>("session_entries", "updated_at, session_key");
  const conversations = ctx.rows<V1Conversation>("conversations", "conversation_id");
  const links = ctx.rows<V1SessionConversation>("session_conversations", "session_id, conversation_id, role");
  const sessionById = new Map(sessions.map((s) => [s.session_id, s]));
  const entryByKey = new Map(entries.map((e) => [e.session_key, e]));

  const fallback = primaryRoutes(conversations, links);
  const routeFields = new Map<string, Set<string>>();
  const nodes = planNodes(ctx, sessions, routes, entries, entryByKey, sessionById, fallback, routeFields);
  const windowKey = planWindowKeys(sessions, nodes);

  // Conversations first: session_windows.primary_conversation_id references them.
  const sessionLinks = new Map<string, Link[]>();
  const addLink = (sessionId: string, link: Link): void => {
    const list = sessionLinks.get(sessionId) ?? [];
    if (!list.some((l) => l.conversationId === link.conversationId)) list.push(link);
    sessionLinks.set(sessionId, list);
  };
  for (const node of [...nodes.values()].sort((a, b) => a.updatedAt - b.updatedAt)) {
    const identity = conversationFromEntry(node.entry);
    if (!identity) continue;
    const label = trimmedOrNull(node.entry.displayName) ?? trimmedOrNull(node.entry.label);
    ctx.insert("conversations", {
      conversation_id: identity.conversationId, channel: identity.channel, account_id: identity.accountId, kind: identity.kind,
      peer_id: identity.peerId, delivery_target: identity.deliveryTarget, parent_conversation_id: null, thread_id: identity.threadId,
      native_channel_id: null, native_direct_user_id: null, label, metadata_json: null, created_at: node.updatedAt, updated_at: node.updatedAt,
    }, "ignore");
    // 9.6 makes a shared main session a participant of a direct chat, not its primary (§5).
    const scope = sessionScope(effectiveChatType(node.entry, sessionById.get(node.sessionId)!), node.key);
    const role = scope === "shared-main" && identity.kind === "direct" ? "participant" : "primary";
    addLink(node.sessionId, { conversationId: identity.conversationId, role, firstSeen: node.updatedAt, lastSeen: node.updatedAt });
  }
  const fromEntry = entryDerivedConversations(conversations, links, routeFields);
  const newConversationId = upgradeV1Conversations(ctx, conversations, fromEntry);
  for (const link of links) {
    if (fromEntry.has(link.conversation_id)) continue;
    const id = newConversationId.get(link.conversation_id);
    if (!id || !sessionById.has(link.session_id)) {
      ctx.skip("session_conversations", "agent.session-conversation.no-conversation", `session_conversations (${link.session_id}, ${link.conversation_id}): its conversation could not be written (see the conversation's note); the link stays in the design-v1 file.`);
      continue;
    }
    const seen = link.first_seen_at ?? link.last_seen_at ?? sessionById.get(link.session_id)!.created_at;
    // The route the entry itself names (derived above) is the session's conversation in 9.6's eyes; a different
    // design-v1 primary (our importer preferred deliveryContext over last*) is kept beside it as 'related'.
    const derived = sessionLinks.get(link.session_id) ?? [];
    if (derived.some((l) => l.conversationId === id)) continue;
    let role = link.role;
    if (role === "primary" && derived.length > 0) {
      role = "related";
      ctx.note("agent.session-conversation.demoted", `session ${link.session_id}: design-v1 primary conversation ${link.conversation_id} kept as 'related' (${id}); the entry's own route names ${derived[0]!.conversationId}.`);
    }
    addLink(link.session_id, { conversationId: id, role, firstSeen: seen, lastSeen: link.last_seen_at ?? seen });
  }
  // One primary per session (unique index): the latest stays primary, earlier ones become 'related' as 9.6 demotes them.
  const primaryOf = new Map<string, string>();
  for (const [sessionId, list] of sessionLinks) {
    const primaries = list.filter((l) => l.role === "primary");
    for (const demoted of primaries.slice(0, -1)) {
      demoted.role = "related";
      ctx.note("agent.session-conversation.demoted", `session ${sessionId}: conversation ${demoted.conversationId} kept as 'related' because a later one is primary (one primary per session).`);
    }
    const primary = primaries.at(-1);
    if (primary) primaryOf.set(sessionId, primary.conversationId);
  }

  for (const node of nodes.values()) writeNode(ctx, node);
  const lastEvent = lastEventTimes(ctx);
  const keysPerSession = new Map<string, number>();
  for (const node of nodes.values()) keysPerSession.set(node.sessionId, (keysPerSession.get(node.sessionId) ?? 0) + 1);
  const windows = new Set<string>();
  for (const s of sessions) {
    const key = windowKey.get(s.session_id)!;
    const node = nodes.get(key)!;
    const current = node.sessionId === s.session_id;
    const entry = current ? node.entry : {};
    const last = lastEvent.get(s.session_id) ?? null;
    // The current window mirrors its entry as 9.6 projects it (scope from chat type + key, channel/account from
    // `delivery`); a historical window has no entry, so it keeps what the design-v1 row says.
    const chatType = current ? effectiveChatType(entry, s) : s.chat_type;
    const scope = current ? sessionScope(chatType, key) : s.session_scope;
    if (scope !== s.session_scope) ctx.note("agent.window.scope", `session ${s.session_id}: session_scope ${scope} (OpenClaw's rule for chat type ${chatType ?? "none"} on ${key}) instead of the design-v1 ${s.session_scope}.`);
    const projected = current ? deliveryProjection(entry) : { channel: s.channel, accountId: s.account_id };
    const fromEntry = current ? windowEntryColumns(entry, node.updatedAt) : null;
    // 9.6 writes a key's entry and then its transcript, each event moving the window's updated_at. A session a second
    // key names (a cron job's key and its `:run:` key) is written once more after its transcript is in: the window ends
    // at that entry's updatedAt, observed at the import's time.
    const rewritten = current && last !== null && (keysPerSession.get(s.session_id) ?? 0) > 1;
    ctx.insert("session_windows", {
      session_id: s.session_id, session_key: key, previous_session_id: trimmedOrNull(entry.previousSessionId), reason: null,
      session_scope: scope, created_at: fromEntry?.created_at ?? s.created_at,
      // 9.6's importer leaves a window at its last event's time; never earlier than our own row says.
      updated_at: rewritten ? node.updatedAt : last === null ? s.updated_at : Math.max(s.updated_at, last),
      transcript_updated_at: last, transcript_observed_at: rewritten ? ctx.now : current ? node.updatedAt : s.updated_at,
      session_entry_provenance: 1, acp_owned: isRecord(entry.acp) ? 1 : 0, plugin_owner_id: trimmedOrNull(entry.pluginOwnerId),
      hook_external_content_source: hookSource(entry.hookExternalContentSource), status: s.status, started_at: s.started_at, ended_at: s.ended_at,
      chat_type: chatType, channel: projected.channel, account_id: projected.accountId, primary_conversation_id: primaryOf.get(s.session_id) ?? null,
      model_provider: s.model_provider, model: s.model, agent_harness_id: s.agent_harness_id, parent_session_key: s.parent_session_key,
      spawned_by: s.spawned_by, display_name: s.display_name,
      ...fromEntry,
    });
    windows.add(s.session_id);
  }
  for (const [sessionId, list] of sessionLinks) {
    if (!windows.has(sessionId)) continue;
    for (const l of list) {
      ctx.insert("session_conversations", { session_id: sessionId, conversation_id: l.conversationId, role: l.role, route_context_json: null, first_seen_at: l.firstSeen, last_seen_at: l.lastSeen });
    }
  }
  return windows;
}

/** One node per session key: routed keys with their entry, entries without a route, and keys only a sessions row names. */
function planNodes(ctx: AgentUpgradeContext, sessions: V1Session[], routes: V1Route[], entries: V1Entry[], entryByKey: Map<string, V1Entry>, sessionById: Map<string, V1Session>, fallback: Map<string, Route>, routeFields: Map<string, Set<string>>): Map<string, NodePlan> {
  const nodes = new Map<string, NodePlan>();
  const plan = (key: string, sessionId: string, raw: Entry, fallbackUpdatedAt: number): void => {
    const updatedAt = finiteOrNull(raw.updatedAt) ?? fallbackUpdatedAt;
    const fields = routeFields.get(sessionId) ?? new Set<string>();
    for (const source of routeSourcesIn(raw)) fields.add(source);
    routeFields.set(sessionId, fields);
    const { entry, notes } = normalizeEntry(raw, sessionId, updatedAt, fallback.get(sessionId));
    for (const message of notes) ctx.note("agent.entry.normalized", `${key}: ${message}.`);
    takeAcpMetadata(ctx, key, entry);
    nodes.set(key, { key, sessionId, updatedAt, entry });
  };
  const parse = (e: V1Entry): Entry => {
    const value: unknown = JSON.parse(e.entry_json);
    return isRecord(value) ? value : {};
  };
  for (const r of routes) {
    const e = entryByKey.get(r.session_key);
    if (e) plan(r.session_key, r.session_id, parse(e), e.updated_at);
    else {
      ctx.note("agent.session.synthesized-entry", `${r.session_key}: a route without a session entry; wrote the minimal entry {sessionId, updatedAt, delivery:{kind:"none"}}.`);
      plan(r.session_key, r.session_id, {}, r.updated_at);
    }
  }
  for (const e of entries) if (!nodes.has(e.session_key)) plan(e.session_key, e.session_id, parse(e), e.updated_at);
  // A sessions row whose key has no node (a transcript nobody indexed, or history of a vanished key): 9.6 needs a
  // node for every window, so the newest such session becomes the key's current one.
  const byKey = new Map<string, V1Session[]>();
  for (const s of sessions) if (!nodes.has(s.session_key)) byKey.set(s.session_key, [...(byKey.get(s.session_key) ?? []), s]);
  for (const [key, list] of byKey) {
    const newest = list.reduce((a, b) => (b.updated_at >= a.updated_at ? b : a));
    ctx.note("agent.session.synthesized-entry", `${key}: no session entry or route (e.g. a transcript no index named); wrote the minimal entry {sessionId:${JSON.stringify(newest.session_id)}, updatedAt, delivery:{kind:"none"}} and kept the key as it was.`);
    plan(key, newest.session_id, {}, newest.updated_at);
  }
  for (const node of nodes.values()) {
    // 9.6 files a key under the agent its key names; the design-v1 file may hold another agent's key (kept here).
    const owner = /^agent:([^:]+):/.exec(node.key)?.[1];
    if (owner && owner !== ctx.agentId) ctx.note("agent.session.foreign-agent-key", `${node.key} names agent "${owner}" but lives in agent "${ctx.agentId}"'s database; kept here as it was (OpenClaw's own import would file it under agents/${owner}/).`);
    if (!sessionById.has(node.sessionId)) throw new Error(`session key ${node.key} points at session ${node.sessionId}, which the design-v1 file does not hold`);
  }
  return nodes;
}

/** A window belongs to the newest node whose current session it is, else to the key its sessions row names. */
function planWindowKeys(sessions: V1Session[], nodes: Map<string, NodePlan>): Map<string, string> {
  const owner = new Map<string, NodePlan>();
  for (const node of nodes.values()) {
    const prev = owner.get(node.sessionId);
    if (!prev || node.updatedAt >= prev.updatedAt) owner.set(node.sessionId, node);
  }
  return new Map(sessions.map((s) => [s.session_id, owner.get(s.session_id)?.key ?? s.session_key]));
}

/** The design-v1 route sources (session-projection's `routeSource`) a raw staged entry still holds. */
function routeSourcesIn(raw: Entry): string[] {
  const out: string[] = [];
  if (isRecord(raw.deliveryContext)) out.push("deliveryContext");
  if (raw.lastTo !== undefined) out.push("last");
  if (isRecord(raw.origin)) out.push("origin");
  return out;
}

/**
 * Design-v1 conversations our staging importer derived from sessions.json entries whose entry_json still holds the
 * route field they came from. The entry (folded into `delivery`, `origin` kept) is then the whole record, and 9.6
 * derives conversations from the entry alone, by its own precedence: writing ours too would add conversations 9.6
 * never makes (an internal webchat route, an origin with only `from`, the deliveryContext that lost to last*).
 * A conversation from an older staging file whose entry lost the field stays (it is the only record of the route).
 */
function entryDerivedConversations(conversations: V1Conversation[], links: V1SessionConversation[], routeFields: Map<string, Set<string>>): Set<string> {
  const linked = new Map<string, string[]>();
  for (const l of links) {
    const list = linked.get(l.conversation_id);
    if (list) list.push(l.session_id);
    else linked.set(l.conversation_id, [l.session_id]);
  }
  const out = new Set<string>();
  for (const c of conversations) {
    let meta: unknown;
    try {
      meta = c.metadata_json ? JSON.parse(c.metadata_json) : undefined;
    } catch {
      continue;
    }
    if (!isRecord(meta) || meta.importedFrom !== "sessions.json" || typeof meta.routeSource !== "string") continue; // legacy-name-ok: the provenance tag our staging importer writes into metadata_json (a value, never a path opened)
    const sessions = linked.get(c.conversation_id) ?? [];
    if (sessions.length > 0 && sessions.every((id) => routeFields.get(id)?.has(meta.routeSource as string))) out.add(c.conversation_id);
  }
  return out;
}

/** Design-v1 conversations under 9.6's ids; returns old id -> new id for those written (or already derived). */
function upgradeV1Conversations(ctx: AgentUpgradeContext, conversations: V1Conversation[], fromEntry: Set<string>): Map<string, string> {
  const map = new Map<string, string>();
  for (const c of conversations) {
    if (fromEntry.has(c.conversation_id)) {
      ctx.note("agent.conversation.entry-derived", `conversation ${c.conversation_id} (${c.channel}) was derived from session entries that still carry its route; OpenClaw derives the session's conversation from the entry (its delivery), so this row is not written.`);
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
    map.set(c.conversation_id, id);
  }
  return map;
}

function writeNode(ctx: AgentUpgradeContext, node: NodePlan): void {
  const e = node.entry;
  const actor = isRecord(e.createdActor) ? e.createdActor : {};
  const fork = isRecord(e.forkSource) ? e.forkSource : {};
  ctx.insert("session_nodes", {
    session_key: node.key, current_session_id: node.sessionId, entry_json: JSON.stringify(e), legacy_acp_migration_json: null,
    entry_valid: 1, updated_at: node.updatedAt, status: enumOrNull(e.status, STATUS), created_at: finiteOrNull(e.createdAt),
    created_via: enumOrNull(e.createdVia, CREATED_VIA), created_actor_type: enumOrNull(actor.type, ACTOR_TYPES), created_actor_id: trimmedOrNull(actor.id),
    owner_actor_type: null, owner_actor_id: null, owner_assigned_by_type: null, owner_assigned_by_id: null, owner_assigned_at: null,
    project_id: trimmedOrNull(e.projectId), parent_session_key: trimmedOrNull(e.parentSessionKey) ?? trimmedOrNull(e.spawnedBy),
    spawned_by: trimmedOrNull(e.spawnedBy), fork_source_session_key: trimmedOrNull(fork.sessionKey), fork_source_session_id: trimmedOrNull(fork.sessionId),
    fork_source_entry_id: trimmedOrNull(fork.entryId), label: trimmedOrNull(e.label), display_name: trimmedOrNull(e.displayName),
    category: trimmedOrNull(e.category), icon: trimmedOrNull(e.icon), pinned_at: finiteOrNull(e.pinnedAt), archived_at: finiteOrNull(e.archivedAt),
    last_read_at: finiteOrNull(e.lastReadAt), last_interaction_at: finiteOrNull(e.lastInteractionAt), last_activity_at: finiteOrNull(e.lastActivityAt),
  });
  // The AFTER INSERT trigger resets entry_valid to 0 ("pending validation"); 9.6's writer then marks the row valid
  // itself, and its readers refuse a 0 ("requires repair"). Updating only entry_valid does not re-fire a trigger.
  const sql = ctx.q.updateTable("session_nodes").set({ entry_valid: 1 }).where("session_key", "=", node.key).compile();
  ctx.target.prepare(sql.sql).run(...(sql.parameters as unknown[]));
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

/** Each session's design-v1 primary conversation as a route (its peer_id is the raw delivery target our importer saw). */
function primaryRoutes(conversations: V1Conversation[], links: V1SessionConversation[]): Map<string, Route> {
  const byId = new Map(conversations.map((c) => [c.conversation_id, c]));
  const out = new Map<string, Route>();
  for (const link of links) {
    const c = byId.get(link.conversation_id);
    if (link.role !== "primary" || !c?.peer_id) continue;
    out.set(link.session_id, { channel: c.channel.toLowerCase(), to: c.peer_id, ...(c.account_id ? { accountId: c.account_id } : {}), ...(c.thread_id ? { threadId: c.thread_id } : {}) });
  }
  return out;
}

/** The entry's chat type when it is one 9.6 knows, else the design-v1 row's (our importer may have moved it there). */
function effectiveChatType(entry: Entry, s: V1Session): string | null {
  const t = entry.chatType;
  return t === "direct" || t === "group" || t === "channel" ? t : s.chat_type;
}

/**
 * The columns 9.6 projects from a current window's entry (its `bindSessionRoot`): created_at from the first time it
 * finds (sessionStartedAt, startedAt, updatedAt), started_at/ended_at/status/model/display name from the entry's own
 * fields. The design-v1 row read some of them from other fields (sessionStartedAt, modelOverride), so the entry decides.
 */
function windowEntryColumns(entry: Entry, updatedAt: number) {
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

/** created_at of each session's last transcript row (9.6's window times follow the transcript). */
function lastEventTimes(ctx: AgentUpgradeContext): Map<string, number> {
  const exists = ctx.source.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'transcript_events'").get();
  if (!exists) return new Map();
  const rows = ctx.source
    .prepare("SELECT e.session_id, e.created_at FROM transcript_events e JOIN (SELECT session_id, max(seq) AS seq FROM transcript_events GROUP BY session_id) m ON m.session_id = e.session_id AND m.seq = e.seq")
    .all() as Array<{ session_id: string; created_at: number }>;
  return new Map(rows.map((r) => [r.session_id, r.created_at]));
}
