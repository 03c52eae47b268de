// Session entry_json in OpenClaw 2026.9.6's shape (legacy route fields -> `delivery`) and its conversation identity, as its doctor writes them (docs/openclaw-format/agent-db.md §2, §5).
import crypto from "node:crypto";
import { isCanonicalDelivery, LEGACY_DELIVERY_KEYS, legacyDelivery } from "./legacy-delivery.js";

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
 * reject a row whose JSON disagrees with its columns), file pointers and `skillsSnapshot.resolvedSkills` (a runtime
 * cache 9.6 never persists) dropped, legacy route fields folded into one `delivery` state as 9.6's doctor folds
 * them (./legacy-delivery.ts). Every other field is kept as it was.
 */
export function normalizeEntry(raw: Entry, sessionId: string, updatedAt: number, fallbackRoute?: Route): NormalizedEntry {
  const notes: string[] = [];
  raw = withLegacyProviderAsChannel(raw);
  if (raw.sessionId !== undefined && raw.sessionId !== sessionId) notes.push(`entry sessionId ${JSON.stringify(raw.sessionId)} replaced by the routed session id ${sessionId}`);
  if (raw.updatedAt !== undefined && raw.updatedAt !== updatedAt) notes.push(`entry updatedAt ${JSON.stringify(raw.updatedAt)} replaced by the row's ${updatedAt}`);
  const hadRouteFields = LEGACY_DELIVERY_KEYS.some((f) => f in raw);
  const entry: Entry = { sessionId, updatedAt };
  for (const [key, value] of Object.entries(raw)) {
    if (key === "sessionId" || key === "updatedAt") continue;
    if ((RETIRED_FIELDS as readonly string[]).includes(key)) continue;
    if ((LEGACY_DELIVERY_KEYS as readonly string[]).includes(key)) continue;
    entry[key] = value;
  }
  if (isRecord(entry.skillsSnapshot) && entry.skillsSnapshot.resolvedSkills !== undefined) {
    const { resolvedSkills: _cache, ...snapshot } = entry.skillsSnapshot;
    entry.skillsSnapshot = snapshot;
  }
  const existing = raw.delivery;
  if (isCanonicalDelivery(existing) && !hadRouteFields) return { entry, notes };
  // Our design-v1 importer (before it kept `origin`) consumed a bare origin into the session's primary conversation
  // and left no route field in the entry; that conversation is then the only record of the route.
  let source: Entry = raw;
  if (!hadRouteFields && !isCanonicalDelivery(existing) && fallbackRoute) {
    source = { lastChannel: fallbackRoute.channel, lastTo: fallbackRoute.to, lastAccountId: fallbackRoute.accountId, lastThreadId: fallbackRoute.threadId };
    notes.push(`delivery rebuilt from the session's design-v1 primary conversation (${fallbackRoute.channel} ${JSON.stringify(fallbackRoute.to)}), the entry itself holding no route`);
  }
  const migrated = legacyDelivery(source);
  // As 9.6: a canonical delivery the entry already has wins, unless the legacy fields recover a route it lacks.
  const recover = isCanonicalDelivery(existing) && (((existing as Entry).kind === "none" && migrated.kind !== "none") || ((existing as Entry).kind === "internal" && migrated.kind === "external"));
  entry.delivery = isCanonicalDelivery(existing) && !recover ? existing : migrated;
  if (hadRouteFields && migrated.kind === "none" && entry.delivery === migrated) notes.push(`route fields without a channel or target were dropped (delivery {"kind":"none"}), as OpenClaw's importer does`);
  // 9.6 copies the chat type a bare origin carried when the entry itself had none.
  const originChatType = isRecord(raw.origin) ? raw.origin.chatType : undefined;
  if ((entry.chatType === undefined || entry.chatType === null) && (originChatType === "direct" || originChatType === "group" || originChatType === "channel")) entry.chatType = originChatType;
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
export function conversationFromEntry(entry: { delivery?: unknown; chatType?: unknown }): ConversationIdentity | undefined {
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
export function deliveryProjection(entry: { delivery?: unknown }): { channel: string | null; accountId: string | null } {
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
