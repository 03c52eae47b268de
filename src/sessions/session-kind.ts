// Session kind from typed columns only (never by parsing the session key's segments); rules in docs/sessions.md.

export const SESSION_KINDS = ["direct", "group", "channel", "global", "cron", "spawn-child", "unknown"] as const;
export type SessionKind = (typeof SESSION_KINDS)[number];

/** The reserved key of the single shared session when `session.scope = "global"`; compared whole, never split. */
export const GLOBAL_SESSION_KEY = "global";

export interface SessionKindInput {
  sessionKey: string;
  /** sessions.session_scope: conversation | shared-main | group | channel. */
  sessionScope: string | null;
  /** sessions.chat_type: direct | group | channel | null. */
  chatType: string | null;
  spawnedBy: string | null;
  parentSessionKey: string | null;
  /** conversations.kind of the session's primary conversation, when it has one. */
  conversationKind: string | null;
  /** The session id appears in the global cron run history (cron_run_logs.session_id). */
  cronRun: boolean;
}

/**
 * First match wins: global (the reserved key) → spawn-child (spawned_by / parent_session_key set) →
 * cron (a cron run recorded this session id) → chat_type → session_scope → primary conversation kind → unknown.
 */
export function deriveSessionKind(input: SessionKindInput): SessionKind {
  if (input.sessionKey === GLOBAL_SESSION_KEY) return "global";
  if (nonEmpty(input.spawnedBy) || nonEmpty(input.parentSessionKey)) return "spawn-child";
  if (input.cronRun) return "cron";
  const fromChat = chatKind(input.chatType);
  if (fromChat) return fromChat;
  if (input.sessionScope === "group" || input.sessionScope === "channel") return input.sessionScope;
  if (input.sessionScope === "shared-main") return "direct";
  return chatKind(input.conversationKind) ?? "unknown";
}

function chatKind(value: string | null): "direct" | "group" | "channel" | null {
  return value === "direct" || value === "group" || value === "channel" ? value : null;
}

function nonEmpty(value: string | null): boolean {
  return typeof value === "string" && value.trim() !== "";
}
