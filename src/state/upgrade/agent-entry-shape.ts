// Session entry_json in OpenClaw 2026.9.6's shape (legacy route fields -> `delivery`) and its conversation identity, as its doctor writes them (docs/openclaw-format/agent-db.md §2, §5).
import crypto from "node:crypto";

export type Entry = Record<string, unknown>;

export interface NormalizedEntry {
  entry: Entry;
  /** Why something in the entry could not be carried over exactly (becomes an UpgradeNote). */
  notes: string[];
}

export interface ConversationIdentity {
  conversationId: string;
  channel: string;
  accountId: string;
  kind: "direct" | "group" | "channel";
  peerId: string;
  deliveryTarget: string;
  threadId: string | null;
}

/** Fields 9.6 folds into `delivery`; they never survive in its entry_json (§2.1 "Removed keys"). */
const ROUTE_FIELDS = ["deliveryContext", "lastChannel", "lastTo", "lastAccountId", "lastThreadId", "channel", "origin"] as const;
/** Retired file-era pointers: 9.6 drops them because the transcript now lives in the same database. */
const RETIRED_FIELDS = ["sessionFile", "transcriptPath"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function threadText(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return str(value);
}

export interface Route {
  channel: string;
  to: string;
  accountId?: string;
  threadId?: string;
}

/**
 * The legacy route groups in the precedence 9.6 showed: `last*` beats `deliveryContext`, which beats a bare
 * `origin`. A group is taken whole (never mixing fields of two routes), and only with both a channel and a target.
 */
function pickRoute(entry: Entry): Route | undefined {
  const dc = isRecord(entry.deliveryContext) ? entry.deliveryContext : {};
  const origin = isRecord(entry.origin) ? entry.origin : {};
  const candidates: Array<Record<string, unknown>> = [
    { channel: entry.lastChannel ?? entry.channel, to: entry.lastTo, accountId: entry.lastAccountId, threadId: entry.lastThreadId },
    { channel: dc.channel, to: dc.to, accountId: dc.accountId, threadId: dc.threadId },
    { channel: origin.provider, to: origin.to, accountId: origin.accountId, threadId: origin.threadId },
  ];
  for (const c of candidates) {
    const channel = str(c.channel)?.toLowerCase();
    const to = str(c.to);
    if (!channel || !to) continue;
    const accountId = str(c.accountId);
    const threadId = threadText(c.threadId);
    return { channel, to, ...(accountId ? { accountId } : {}), ...(threadId ? { threadId } : {}) };
  }
  return undefined;
}

/**
 * OpenClaw's session-store migration (`applySessionStoreMigrations`): a string `provider` becomes `channel` when
 * `channel` is not a string — set in place (appended when absent) and `provider` removed; otherwise unchanged.
 */
export function withLegacyProviderAsChannel(raw: Entry): Entry {
  if (typeof raw.channel === "string" || typeof raw.provider !== "string") return raw;
  const out: Entry = { ...raw, channel: raw.provider };
  delete out.provider;
  return out;
}

/**
 * entry_json as 9.6's importer stores it: `sessionId`/`updatedAt` forced to the row's identity (9.6's readers
 * reject a row whose JSON disagrees with its columns), file pointers dropped, legacy route fields replaced by a
 * `delivery` object (`{"kind":"none"}` when there is no complete route). Every other field is kept as it was.
 */
export function normalizeEntry(raw: Entry, sessionId: string, updatedAt: number, fallbackRoute?: Route): NormalizedEntry {
  const notes: string[] = [];
  raw = withLegacyProviderAsChannel(raw);
  if (raw.sessionId !== undefined && raw.sessionId !== sessionId) notes.push(`entry sessionId ${JSON.stringify(raw.sessionId)} replaced by the routed session id ${sessionId}`);
  if (raw.updatedAt !== undefined && raw.updatedAt !== updatedAt) notes.push(`entry updatedAt ${JSON.stringify(raw.updatedAt)} replaced by the row's ${updatedAt}`);
  const entry: Entry = { sessionId, updatedAt };
  for (const [key, value] of Object.entries(raw)) {
    if (key === "sessionId" || key === "updatedAt") continue;
    if ((RETIRED_FIELDS as readonly string[]).includes(key)) continue;
    if (isRecord(raw.delivery)) {
      entry[key] = value;
      continue;
    }
    if ((ROUTE_FIELDS as readonly string[]).includes(key)) continue;
    entry[key] = value;
  }
  if (isRecord(raw.delivery)) return { entry, notes };
  const hadRouteFields = ROUTE_FIELDS.some((f) => raw[f] !== undefined);
  // Our design-v1 importer consumed some route fields (a bare `origin`) into the session's primary conversation
  // and left none in the entry; that conversation is then the only record of the route.
  let route = pickRoute(raw);
  if (!route && !hadRouteFields && fallbackRoute) {
    route = fallbackRoute;
    notes.push(`delivery rebuilt from the session's design-v1 primary conversation (${route.channel} ${JSON.stringify(route.to)}), the entry itself holding no route`);
  }
  if (!route) {
    if (hadRouteFields) notes.push(`route fields without both a channel and a target were dropped (delivery {"kind":"none"}), as OpenClaw's importer does`);
    entry.delivery = { kind: "none" };
    return { entry, notes };
  }
  const origin = isRecord(raw.origin)
    ? raw.origin
    : { provider: route.channel, to: route.to, ...(route.accountId ? { accountId: route.accountId } : {}), ...(route.threadId ? { threadId: route.threadId } : {}) };
  entry.delivery = {
    kind: "external",
    route: {
      channel: route.channel,
      ...(route.accountId ? { accountId: route.accountId } : {}),
      target: { to: route.to },
      ...(route.threadId ? { thread: { id: route.threadId } } : {}),
    },
    context: { channel: route.channel, to: route.to, ...(route.accountId ? { accountId: route.accountId } : {}), ...(route.threadId ? { threadId: route.threadId } : {}) },
    origin,
  };
  // 9.6 copies the chat type a bare origin carried when the entry itself had none.
  if (entry.chatType === undefined && isRecord(raw.origin) && typeof raw.origin.chatType === "string") entry.chatType = raw.origin.chatType;
  return { entry, notes };
}

const PEER_PREFIXES = ["user:", "channel:", "group:", "conversation:", "room:", "dm:", "thread:"];

/** 9.6's peer id: the target without a leading `<channel>:` and then one kind prefix (`group:ops` -> `ops`). */
export function normalizePeerId(channel: string, target: string): string {
  let peer = target.trim();
  if (peer.toLowerCase().startsWith(`${channel.toLowerCase()}:`)) peer = peer.slice(channel.length + 1);
  const prefix = PEER_PREFIXES.find((p) => peer.toLowerCase().startsWith(p));
  return prefix ? peer.slice(prefix.length) : peer;
}

/** 9.6's conversation id: a hash of the identity columns, so the same chat gets the same id in every agent DB. */
export function conversationId(channel: string, accountId: string, kind: string, peerId: string, parentRef: string | null, threadId: string | null): string {
  const digest = crypto.createHash("sha256").update(JSON.stringify([channel, accountId, kind, peerId, parentRef ?? "", threadId ?? ""])).digest("hex");
  return `conv_${digest.slice(0, 32)}`;
}

export function conversationKind(chatType: unknown): "direct" | "group" | "channel" {
  return chatType === "group" || chatType === "channel" ? chatType : "direct";
}

/** 9.6's window scope: a direct chat on a main key is the shared main session; group/channel chats are their own. */
export function sessionScope(chatType: unknown, key: string): "shared-main" | "group" | "channel" | "conversation" {
  if (chatType === "direct" && (key === "main" || key.endsWith(":main"))) return "shared-main";
  return chatType === "group" || chatType === "channel" ? chatType : "conversation";
}

/** The conversation 9.6 derives from a normalized entry, or undefined when the entry has no external route. */
export function conversationFromEntry(entry: Entry): ConversationIdentity | undefined {
  const delivery = entry.delivery;
  if (!isRecord(delivery) || delivery.kind !== "external" || !isRecord(delivery.context)) return undefined;
  const channel = str(delivery.context.channel)?.toLowerCase();
  const target = str(delivery.context.to);
  if (!channel || !target) return undefined;
  const accountId = str(delivery.context.accountId) ?? "default";
  const kind = conversationKind(entry.chatType);
  const peerId = normalizePeerId(channel, target);
  const threadId = threadText(delivery.context.threadId) ?? null;
  return { conversationId: conversationId(channel, accountId, kind, peerId, null, threadId), channel, accountId, kind, peerId, deliveryTarget: target, threadId };
}

/** The delivery channel/account 9.6 projects onto session_windows (account stays NULL when absent, never 'default'). */
export function deliveryProjection(entry: Entry): { channel: string | null; accountId: string | null } {
  const delivery = entry.delivery;
  if (!isRecord(delivery) || !isRecord(delivery.context)) return { channel: null, accountId: null };
  return { channel: str(delivery.context.channel)?.toLowerCase() ?? null, accountId: str(delivery.context.accountId) ?? null };
}

export function finiteOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export function trimmedOrNull(value: unknown): string | null {
  return str(value) ?? null;
}

export { isRecord };
