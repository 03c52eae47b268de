// One session row as list and show see it: sessions + route + entry fields + primary conversation, typed columns first.
import { sql } from "kysely";
import type { SessionsTable } from "../state/generated/agent-db.js";
import type { AgentDatabase, GlobalDatabase } from "../state/state-databases.js";
import { deriveSessionKind, type SessionKind } from "./session-kind.js";

/** `current`: the key's route points at this session; `superseded`: at another one; `unrouted`: no route. */
export type SessionRouteState = "current" | "superseded" | "unrouted";

export interface SessionSummary {
  agentId: string;
  key: string;
  sessionId: string;
  updatedAt: number;
  createdAt: number;
  kind: SessionKind;
  scope: string;
  status: string | null;
  chatType: string | null;
  channel: string | null;
  accountId: string | null;
  model: string | null;
  modelProvider: string | null;
  totalTokens: number | null;
  contextTokens: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  displayName: string | null;
  label: string | null;
  thinkingLevel: string | null;
  spawnedBy: string | null;
  parentSessionKey: string | null;
  route: SessionRouteState;
  flags: string[];
}

/** Entry fields read with json_extract, so a large entry_json (skills snapshots, prompts) never crosses into JS. */
const ENTRY_FIELDS = {
  e_total_tokens: "$.totalTokens",
  e_context_tokens: "$.contextTokens",
  e_input_tokens: "$.inputTokens",
  e_output_tokens: "$.outputTokens",
  e_model: "$.model",
  e_model_provider: "$.modelProvider",
  e_display_name: "$.displayName",
  e_label: "$.label",
  e_chat_type: "$.chatType",
  e_channel: "$.channel",
  e_last_channel: "$.lastChannel",
  e_thinking_level: "$.thinkingLevel",
  e_verbose_level: "$.verboseLevel",
  e_system_sent: "$.systemSent",
  e_aborted_last_run: "$.abortedLastRun",
} as const;

type EntryColumns = { [K in keyof typeof ENTRY_FIELDS]: unknown };

/** The joined select used by `sessions list` and `sessions show`; callers add where/order/limit. */
export function sessionRowQuery(db: AgentDatabase) {
  const entryColumns = Object.entries(ENTRY_FIELDS).map(([alias, jsonPath]) => sql<unknown>`json_extract(e.entry_json, ${jsonPath})`.as(alias));
  return db.q
    .selectFrom("sessions as s")
    .leftJoin("session_routes as r", "r.session_key", "s.session_key")
    // Matching on key and id: a session reached by several keys must still yield one row.
    .leftJoin("session_entries as e", (join) => join.onRef("e.session_key", "=", "s.session_key").onRef("e.session_id", "=", "s.session_id"))
    .leftJoin("conversations as c", "c.conversation_id", "s.primary_conversation_id")
    .selectAll("s")
    .select([
      "r.session_id as route_session_id",
      "c.kind as conversation_kind",
      "c.channel as conversation_channel",
      "c.account_id as conversation_account_id",
      ...entryColumns,
    ])
    .$castTo<SessionRowRaw>();
}

export interface SessionRowRaw extends SessionsTable, EntryColumns {
  route_session_id: string | null;
  conversation_kind: string | null;
  conversation_channel: string | null;
  conversation_account_id: string | null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** json_extract turns JSON true into 1. */
function truthy(value: unknown): boolean {
  return value === 1 || value === true;
}

/** Typed columns win; entry_json fills what they leave empty. */
export function toSessionSummary(agentId: string, raw: SessionRowRaw, cronSessionIds: ReadonlySet<string>): SessionSummary {
  const route: SessionRouteState = raw.route_session_id === null ? "unrouted" : raw.route_session_id === raw.session_id ? "current" : "superseded";
  const thinkingLevel = text(raw.e_thinking_level);
  const verboseLevel = text(raw.e_verbose_level);
  const flags: string[] = [];
  if (raw.status) flags.push(raw.status);
  if (route !== "current") flags.push(route);
  if (thinkingLevel) flags.push(`think:${thinkingLevel}`);
  if (verboseLevel) flags.push(`verbose:${verboseLevel}`);
  if (truthy(raw.e_system_sent)) flags.push("system");
  if (truthy(raw.e_aborted_last_run)) flags.push("aborted");
  return {
    agentId,
    key: raw.session_key,
    sessionId: raw.session_id,
    updatedAt: raw.updated_at,
    createdAt: raw.created_at,
    kind: deriveSessionKind({
      sessionKey: raw.session_key,
      sessionScope: raw.session_scope,
      chatType: raw.chat_type,
      spawnedBy: raw.spawned_by,
      parentSessionKey: raw.parent_session_key,
      conversationKind: raw.conversation_kind,
      cronRun: cronSessionIds.has(raw.session_id),
    }),
    scope: raw.session_scope,
    status: raw.status,
    chatType: raw.chat_type ?? text(raw.e_chat_type),
    channel: raw.channel ?? raw.conversation_channel ?? text(raw.e_channel) ?? text(raw.e_last_channel),
    accountId: raw.account_id ?? raw.conversation_account_id,
    model: raw.model ?? text(raw.e_model),
    modelProvider: raw.model_provider ?? text(raw.e_model_provider),
    totalTokens: count(raw.e_total_tokens),
    contextTokens: count(raw.e_context_tokens),
    inputTokens: count(raw.e_input_tokens),
    outputTokens: count(raw.e_output_tokens),
    displayName: raw.display_name ?? text(raw.e_display_name),
    label: text(raw.e_label),
    thinkingLevel,
    spawnedBy: raw.spawned_by,
    parentSessionKey: raw.parent_session_key,
    route,
    flags,
  };
}

/**
 * Session ids that cron runs recorded (global cron_run_logs.session_id): the typed link that makes a
 * session kind `cron`. Bounded by the cron run history, not by the session store.
 */
export function loadCronSessionIds(global: GlobalDatabase | undefined): Set<string> {
  const ids = new Set<string>();
  if (!global) return ids;
  const query = global.q.selectFrom("cron_run_logs").select("session_id").distinct().where("session_id", "is not", null);
  for (const row of global.iterate(query)) if (row.session_id) ids.add(row.session_id);
  return ids;
}
