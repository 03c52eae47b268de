// Projects a legacy SessionEntry into typed rows: sessions columns, the delivery route's conversation, entry_json.
import crypto from "node:crypto";
import type { SessionsTable } from "../../state/generated/agent-db.js";
import { mainSessionKey } from "./session-keys.js";

export type ChatType = "direct" | "group" | "channel";
type Obj = Record<string, unknown>;

const CHAT_TYPES = new Set(["direct", "group", "channel"]);
const STATUSES = new Set(["running", "done", "failed", "killed", "timeout"]);
/** File-era pointers: transcript identity is {agentId, sessionId}, never a path. */
export const FILE_ERA_FIELDS = ["sessionFile", "sessionFilePath", "transcriptPath", "transcriptFile", "transcriptLocator", "storePath"] as const;

export function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const t = value.trim();
  return t === "" ? null : t;
}

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : null;
}

function idValue(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return str(value);
}

function chatType(value: unknown): ChatType | null {
  return typeof value === "string" && CHAT_TYPES.has(value) ? (value as ChatType) : null;
}

/**
 * OpenClaw's session-store migration: a string `provider` is the entry's channel when `channel` is not a string
 * (the oldest stores named the channel `provider`; a Slack session must not lose its channel).
 */
export function legacyProviderIsChannel(entry: Obj): boolean {
  return typeof entry.channel !== "string" && typeof entry.provider === "string";
}

/** Older aliases read as their current names: `provider` → `channel`, `lastProvider` → `lastChannel`, `room` → `groupChannel`. */
export function normalizeLegacyEntry(entry: Obj): Obj {
  const out: Obj = { ...entry };
  if (legacyProviderIsChannel(out)) {
    out.channel = out.provider;
    delete out.provider;
  }
  if (out.lastChannel === undefined && out.lastProvider !== undefined) out.lastChannel = out.lastProvider;
  delete out.lastProvider;
  if (out.groupChannel === undefined && out.room !== undefined) out.groupChannel = out.room;
  delete out.room;
  return out;
}

/** Every top-level field the projection reads (the writing pass builds only these; the rest streams into entry_json). */
export const PROJECTED_FIELDS = [
  "sessionId", "updatedAt", "agentHarnessId", "channel", "chatType", "deliveryContext", "displayName", "endedAt", "groupChannel", "room", "label",
  "lastAccountId", "lastChannel", "lastProvider", "lastThreadId", "lastTo", "model", "modelOverride", "modelProvider", "origin", "parentSessionKey",
  "provider", "providerOverride", "sessionEndedAt", "sessionStartedAt", "spawnedBy", "status", "subject",
] as const;

/**
 * Left out of entry_json as the file has it: file-era pointers and the fields re-added normalized. `origin` stays:
 * the format upgrade folds it with the other route fields into `delivery`, as OpenClaw's doctor does.
 */
export const ENTRY_JSON_OMITTED = new Set<string>([...FILE_ERA_FIELDS, "updatedAt", "sessionId", "provider", "lastProvider", "room"]);

/**
 * The keys entry_json gets at its end, normalized: the trimmed sessionId, a string `provider` renamed `channel`,
 * `lastProvider` renamed `lastChannel` and `room` renamed `groupChannel` (when the current name is absent), and
 * updatedAt. As a JSON fragment `"k":v,…`. `provider` is always taken out of the streamed text (whether it is
 * renamed is known only at the member's end): when not renamed it comes back here unchanged. With a non-string
 * `channel` already in the text the rename is left to the upgrade (src/state/upgrade/agent-entry-shape.ts), so
 * the text never holds `channel` twice.
 */
export function entryJsonTail(fields: Record<string, unknown>, sessionId: string, updatedAt: number): string {
  const extra: Obj = { sessionId };
  if (fields.channel === undefined && typeof fields.provider === "string") extra.channel = fields.provider;
  else if (fields.provider !== undefined) extra.provider = fields.provider;
  if (fields.lastChannel === undefined && fields.lastProvider !== undefined) extra.lastChannel = fields.lastProvider;
  if (fields.groupChannel === undefined && fields.room !== undefined) extra.groupChannel = fields.room;
  extra.updatedAt = updatedAt;
  return JSON.stringify(extra).slice(1, -1);
}

/** entry_json: the compatibility-shaped entry minus file-era pointers. */
export function entryJsonFor(entry: Obj, updatedAt: number): string {
  const out: Obj = { ...entry, updatedAt };
  for (const field of FILE_ERA_FIELDS) delete out[field];
  return JSON.stringify(out);
}

export interface DeliveryRoute {
  channel: string;
  to: string;
  accountId: string | null;
  threadId: string | null;
  chatType: ChatType | null;
  source: "deliveryContext" | "last" | "origin";
}

/** deliveryContext, else lastChannel (else channel)/lastTo/lastAccountId/lastThreadId, else origin (provider/surface, to ?? from). */
export function deliveryRouteOf(entry: Obj): DeliveryRoute | null {
  const dc = isObject(entry.deliveryContext) ? entry.deliveryContext : null;
  if (dc && str(dc.channel) && str(dc.to)) {
    return { channel: str(dc.channel)!.toLowerCase(), to: str(dc.to)!, accountId: str(dc.accountId), threadId: idValue(dc.threadId), chatType: chatType(dc.chatType), source: "deliveryContext" };
  }
  // As OpenClaw's importer: last* without a lastChannel take the entry's own channel (a renamed `provider` too).
  const lastChannel = str(entry.lastChannel) ?? str(entry.lastProvider) ?? str(entry.channel);
  if (lastChannel && str(entry.lastTo)) {
    return { channel: lastChannel.toLowerCase(), to: str(entry.lastTo)!, accountId: str(entry.lastAccountId), threadId: idValue(entry.lastThreadId), chatType: null, source: "last" };
  }
  const origin = isObject(entry.origin) ? entry.origin : null;
  const originChannel = origin ? (str(origin.provider) ?? str(origin.surface)) : null;
  const originPeer = origin ? (str(origin.to) ?? str(origin.from)) : null;
  if (origin && originChannel && originPeer) {
    return { channel: originChannel.toLowerCase(), to: originPeer, accountId: str(origin.accountId), threadId: idValue(origin.threadId), chatType: chatType(origin.chatType), source: "origin" };
  }
  return null;
}

function kindFromTarget(to: string): ChatType {
  const t = to.toLowerCase();
  if (t.startsWith("group:") || t.includes(":group:")) return "group";
  if (t.startsWith("channel:") || t.includes(":channel:")) return "channel";
  return "direct";
}

export interface ConversationValues {
  conversation_id: string;
  channel: string;
  account_id: string | null;
  kind: ChatType;
  peer_id: string;
  parent_conversation_id: null;
  thread_id: string | null;
  label: string | null;
  metadata_json: string;
}

/** A conversation keyed by its natural identity; the id is derived from it, so re-imports find the same row. */
export function conversationFor(route: DeliveryRoute, entry: Obj): ConversationValues {
  const kind = route.chatType ?? chatType(entry.chatType) ?? kindFromTarget(route.to);
  const identity = [route.channel, route.accountId ?? "", kind, route.to, "", route.threadId ?? ""];
  const id = `conv-${crypto.createHash("sha256").update(JSON.stringify(identity)).digest("hex").slice(0, 24)}`;
  return {
    conversation_id: id,
    channel: route.channel,
    account_id: route.accountId,
    kind,
    peer_id: route.to,
    parent_conversation_id: null,
    thread_id: route.threadId,
    label: str(entry.displayName) ?? str(entry.subject) ?? str(entry.groupChannel),
    metadata_json: JSON.stringify({ importedFrom: "sessions.json", routeSource: route.source }),
  };
}

/** The typed `sessions` columns (the primary conversation is resolved by the importer). */
export type SessionRowValues = Omit<SessionsTable, "primary_conversation_id">;

/** Typed `sessions` columns; session_scope is shared-main for the agent's main key, else from chatType. */
export function sessionRowFor(sessionId: string, key: string, agentId: string, entry: Obj, updatedAt: number, route: DeliveryRoute | null): SessionRowValues {
  const type = chatType(entry.chatType) ?? route?.chatType ?? null;
  const startedAt = num(entry.sessionStartedAt);
  const status = typeof entry.status === "string" && STATUSES.has(entry.status) ? entry.status : null;
  return {
    session_id: sessionId,
    session_key: key,
    session_scope: key === mainSessionKey(agentId) ? "shared-main" : type === "group" ? "group" : type === "channel" ? "channel" : "conversation",
    created_at: startedAt ?? updatedAt,
    updated_at: updatedAt,
    started_at: startedAt,
    ended_at: num(entry.endedAt) ?? num(entry.sessionEndedAt),
    status,
    chat_type: type,
    channel: (str(entry.channel) ?? route?.channel ?? null)?.toLowerCase() ?? null,
    account_id: route?.accountId ?? str(entry.lastAccountId),
    model_provider: str(entry.modelProvider) ?? str(entry.providerOverride),
    model: str(entry.model) ?? str(entry.modelOverride),
    agent_harness_id: str(entry.agentHarnessId),
    parent_session_key: str(entry.parentSessionKey),
    spawned_by: str(entry.spawnedBy),
    display_name: str(entry.displayName) ?? str(entry.label) ?? str(entry.subject),
  };
}
