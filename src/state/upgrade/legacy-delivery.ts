// A file-era session entry's route fields folded into one canonical `delivery` state, by the rules OpenClaw 2026.9.6's doctor applies before it imports an entry (docs/openclaw-format/agent-db.md §2.1).

/** The legacy keys 9.6 folds into `delivery` and then removes from the entry. */
export const LEGACY_DELIVERY_KEYS = ["route", "deliveryContext", "origin", "channel", "lastChannel", "lastTo", "lastAccountId", "lastThreadId"] as const;

type Obj = Record<string, unknown>;

/** A normalized delivery context: every field optional, absent fields never written (JSON key order channel, to, accountId, threadId). */
export interface DeliveryContext {
  channel?: string;
  to?: string;
  accountId?: string;
  threadId?: string | number;
}

interface RouteRef {
  channel?: string;
  accountId?: string;
  target?: { to: string; rawTo?: string; chatType?: unknown };
  thread?: { id: string | number; kind?: unknown; source?: unknown };
}

export type DeliveryState = { kind: "none" } | { kind: "internal" } | { kind: "external"; route: RouteRef; context: DeliveryContext; origin: Obj };

/** Channels 9.6 treats as its own plumbing: a route through them never delivers anywhere. */
const INTERNAL_CHANNELS = new Set(["webchat", "heartbeat", "cron", "webhook", "voice", "sessions_send"]);
/** Aliases of 9.6's built-in chat channels (its generated channel catalog), read as the canonical id. */
const CHANNEL_ALIASES: Record<string, string> = {
  lark: "feishu",
  gchat: "googlechat",
  "google-chat": "googlechat",
  imsg: "imessage",
  "internet-relay-chat": "irc",
  teams: "msteams",
  nc: "nextcloud-talk",
  "nc-talk": "nextcloud-talk",
  "twitch-chat": "twitch",
  zl: "zalo",
  zlu: "zalouser",
};
const BLOCKED_KEYS = new Set(["__proto__", "prototype", "constructor"]);

function isRecord(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function text(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** 9.6's account ids: lower-case `[a-z0-9_-]`, anything else collapsed to `-`, at most 64 characters. */
function accountId(value: unknown): string | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const lower = raw.toLowerCase();
  const id = /^[a-z0-9][a-z0-9_-]{0,63}$/i.test(raw) ? lower : lower.replace(/[^a-z0-9_-]+/g, "-").replace(/^-+/, "").replace(/-+$/, "").slice(0, 64);
  return id === "" || BLOCKED_KEYS.has(id) ? undefined : id;
}

/** A thread id stays a number when it was one (truncated), else a trimmed string. */
function threadValue(value: unknown): string | number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? Math.trunc(value) : undefined;
  return text(value);
}

interface LooseRoute {
  channel?: unknown;
  to?: unknown;
  rawTo?: unknown;
  chatType?: unknown;
  accountId?: unknown;
  threadId?: unknown;
  threadKind?: unknown;
  threadSource?: unknown;
}

function routeRef(input: LooseRoute): RouteRef | undefined {
  const channel = text(input.channel)?.toLowerCase();
  const account = accountId(input.accountId);
  const to = text(input.to);
  const rawTo = text(input.rawTo);
  const threadId = threadValue(input.threadId);
  if (!channel && !to && !account && threadId === undefined) return undefined;
  const out: RouteRef = {};
  if (channel) out.channel = channel;
  if (account) out.accountId = account;
  if (to) out.target = { to, ...(rawTo && rawTo !== to ? { rawTo } : {}), ...(input.chatType ? { chatType: input.chatType } : {}) };
  if (threadId !== undefined) out.thread = { id: threadId, ...(input.threadKind ? { kind: input.threadKind } : {}), ...(input.threadSource ? { source: input.threadSource } : {}) };
  return out;
}

/** A context from loose fields; undefined when nothing of a route is there. Channel aliases become canonical ids. */
export function deliveryContext(input: { channel?: unknown; to?: unknown; accountId?: unknown; threadId?: unknown } | undefined): DeliveryContext | undefined {
  if (!input) return undefined;
  const channel = text(input.channel)?.toLowerCase();
  const ref = routeRef({ channel: channel === undefined ? undefined : (CHANNEL_ALIASES[channel] ?? channel), to: input.to, accountId: input.accountId, threadId: input.threadId });
  if (!ref) return undefined;
  const out: DeliveryContext = {};
  if (ref.channel) out.channel = ref.channel;
  if (ref.target) out.to = ref.target.to;
  if (ref.accountId) out.accountId = ref.accountId;
  if (ref.thread) out.threadId = ref.thread.id;
  return out;
}

function contextOfRoute(route: RouteRef | undefined): DeliveryContext | undefined {
  return deliveryContext({ channel: route?.channel, to: route?.target?.to, accountId: route?.accountId, threadId: route?.thread?.id });
}

function parseRoute(value: unknown): RouteRef | undefined {
  if (!isRecord(value)) return undefined;
  const target = value.target;
  const thread = value.thread;
  return routeRef({
    channel: value.channel, to: field(target, "to"), rawTo: field(target, "rawTo"), chatType: field(target, "chatType"),
    accountId: value.accountId, threadId: field(thread, "id"), threadKind: field(thread, "kind"), threadSource: field(thread, "source"),
  });
}

function isInternal(c: DeliveryContext | undefined): boolean {
  return c?.channel !== undefined && INTERNAL_CHANNELS.has(c.channel);
}

function hasExternalTarget(c: DeliveryContext | undefined): boolean {
  return c?.channel !== undefined && !INTERNAL_CHANNELS.has(c.channel) && c.to !== undefined;
}

/** The primary's fields win; when the two name different channels or accounts, nothing of the fallback's route is mixed in. */
function merge(primary: DeliveryContext | undefined, fallback: DeliveryContext | undefined): DeliveryContext | undefined {
  const p = deliveryContext(primary);
  const f = deliveryContext(fallback);
  if (!p && !f) return undefined;
  const accountsConflict = p?.accountId !== undefined && f?.accountId !== undefined && p.accountId !== f.accountId;
  const conflict = (p?.channel !== undefined && f?.channel !== undefined && p.channel !== f.channel) || accountsConflict;
  return deliveryContext({
    channel: accountsConflict ? p?.channel : (p?.channel ?? f?.channel),
    to: conflict ? p?.to : (p?.to ?? f?.to),
    accountId: conflict ? p?.accountId : (p?.accountId ?? f?.accountId),
    threadId: conflict ? p?.threadId : (p?.threadId ?? f?.threadId),
  });
}

function externalOverInternal(external: DeliveryContext | undefined, internal: DeliveryContext | undefined): DeliveryContext | undefined {
  return deliveryContext({ channel: external?.channel, to: external?.to, accountId: external?.accountId ?? internal?.accountId, threadId: external?.threadId ?? internal?.threadId });
}

function originContext(origin: Obj): DeliveryContext | undefined {
  return deliveryContext({ channel: origin.provider, to: origin.to, accountId: origin.accountId, threadId: origin.threadId });
}

/** One delivery state from a route, a context and the origin; the origin is completed from the merged context. */
function deliveryState(routeIn: RouteRef | undefined, contextIn: DeliveryContext | undefined, originIn: Obj): DeliveryState {
  const route = parseRoute(routeIn);
  const routeContext = contextOfRoute(route);
  const fromOrigin = originContext(originIn);
  const context = deliveryContext(contextIn);
  const internalRouteFallback = isInternal(routeContext) && hasExternalTarget(context);
  const merged = internalRouteFallback ? externalOverInternal(context, merge(routeContext, fromOrigin)) : merge(routeContext, merge(context, fromOrigin));
  if (!merged) return { kind: "none" };
  if (isInternal(merged)) return { kind: "internal" };
  const base = internalRouteFallback ? undefined : route;
  const outRoute = base
    ? routeRef({
        channel: base.channel ?? merged.channel, to: base.target?.to ?? merged.to, rawTo: base.target?.rawTo, chatType: base.target?.chatType,
        accountId: base.accountId ?? merged.accountId, threadId: base.thread?.id ?? merged.threadId, threadKind: base.thread?.kind, threadSource: base.thread?.source,
      })
    : routeRef({ channel: merged.channel, to: merged.to, accountId: merged.accountId, threadId: merged.threadId });
  if (!outRoute) return { kind: "none" };
  const origin: Obj = { ...originIn };
  const fill = (key: string, value: unknown): void => {
    if ((origin[key] === undefined || origin[key] === null) && value !== undefined) origin[key] = value;
  };
  fill("provider", merged.channel);
  fill("to", merged.to);
  fill("accountId", merged.accountId);
  fill("threadId", merged.threadId);
  fill("chatType", outRoute.target?.chatType);
  return { kind: "external", route: outRoute, context: merged, origin };
}

/** Whether a value is already a delivery state 9.6 accepts as canonical. */
export function isCanonicalDelivery(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (value.kind === "none" || value.kind === "internal") return true;
  return value.kind === "external" && isRecord(value.route) && isRecord(value.context) && isRecord(value.origin);
}

/**
 * The delivery state 9.6 derives from an entry's legacy fields. Precedence: `last*` (with the entry's channel or
 * the origin's provider when no lastChannel), then `deliveryContext`, the bare `channel`, then `origin`; an explicit
 * `route` leads. A route through an internal channel yields to an explicit external deliveryContext.
 */
export function legacyDelivery(entry: Obj): DeliveryState {
  const origin = isRecord(entry.origin) ? entry.origin : {};
  const route = parseRoute(entry.route);
  const routeContext = contextOfRoute(route);
  const explicit = isRecord(entry.deliveryContext) ? deliveryContext(entry.deliveryContext) : undefined;
  const lastChannel = deliveryContext({ channel: entry.lastChannel })?.channel;
  const storedChannel = deliveryContext({ channel: entry.channel })?.channel;
  const originChannel = deliveryContext({ channel: origin.provider })?.channel;
  const lastFields = deliveryContext({ to: entry.lastTo, accountId: entry.lastAccountId, threadId: entry.lastThreadId });
  const hasLastFields = lastFields?.to !== undefined || lastFields?.accountId !== undefined || lastFields?.threadId !== undefined;
  const lastCandidate = deliveryContext({ channel: lastChannel ?? (hasLastFields ? (storedChannel ?? originChannel) : undefined), to: lastFields?.to, accountId: lastFields?.accountId, threadId: lastFields?.threadId });
  const keepLast =
    isInternal(lastCandidate) || hasExternalTarget(lastCandidate) || (lastChannel !== undefined && lastCandidate?.channel !== undefined) ||
    (lastCandidate?.channel !== undefined && lastCandidate.channel === explicit?.channel);
  const last = keepLast ? lastCandidate : undefined;
  const channelContext = deliveryContext({ channel: entry.channel });
  const fallback = merge(last, merge(explicit, merge(channelContext, originContext(origin))));
  const internalFallback = isInternal(routeContext) ? merge(routeContext, last) : isInternal(last) ? last : isInternal(channelContext) ? merge(channelContext, last) : undefined;
  const useInternalFallback = internalFallback !== undefined && hasExternalTarget(explicit);
  const context = useInternalFallback ? externalOverInternal(explicit, internalFallback) : merge(routeContext, fallback);
  return deliveryState(useInternalFallback ? undefined : route, context, origin);
}
