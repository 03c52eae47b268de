// Design-v1 TUI pointers, update-check state and Voice Wake settings → OpenClaw 2026.9.6's config_machine_state rows.
import { type GlobalUpgradeContext, type Row, bump, insertRow, note, readAll } from "./upgrade-global-context.js";

const TUI_PREFIX = "tui.lastSession.";
const CONFIG_KEY = "default";

/** The legacy update-check.json fields, in the order 9.6 writes them; the `*At` ones are ISO strings there. */
const UPDATE_FIELDS: ReadonlyArray<readonly [string, string, "text" | "time"]> = [
  ["lastCheckedAt", "last_checked_at", "time"],
  ["lastNotifiedVersion", "last_notified_version", "text"],
  ["lastNotifiedTag", "last_notified_tag", "text"],
  ["lastAvailableVersion", "last_available_version", "text"],
  ["lastAvailableTag", "last_available_tag", "text"],
  ["autoInstallId", "auto_install_id", "text"],
  ["autoFirstSeenVersion", "auto_first_seen_version", "text"],
  ["autoFirstSeenTag", "auto_first_seen_tag", "text"],
  ["autoFirstSeenAt", "auto_first_seen_at", "time"],
  ["autoLastAttemptVersion", "auto_last_attempt_version", "text"],
  ["autoLastAttemptAt", "auto_last_attempt_at", "time"],
  ["autoLastSuccessVersion", "auto_last_success_version", "text"],
  ["autoLastSuccessAt", "auto_last_success_at", "time"],
];

export const MACHINE_STATE_TABLES = ["tui_last_sessions", "update_check_state", "voicewake_triggers", "voicewake_routing_config", "voicewake_routing_routes"] as const;

function machineState(ctx: GlobalUpgradeContext, key: string, value: unknown, updatedAtMs: number): void {
  insertRow(ctx, "config_machine_state", { state_key: key, value_json: JSON.stringify(value), updated_at_ms: updatedAtMs });
}

/** An epoch-ms column as the ISO string the legacy file held (design-v1 parsed it to ms; the instant is exact). */
export function isoOf(value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  const date = new Date(value);
  return Number.isFinite(date.getTime()) ? date.toISOString() : undefined;
}

function unmapped(ctx: GlobalUpgradeContext, table: string, code: string, message: string, by = 1): void {
  bump(ctx.unmapped, table, by);
  note(ctx, code, message);
}

/** tui_last_sessions → one `tui.lastSession.<scope>` row each; 9.6 drops heartbeat pointers and refuses malformed ones. */
function upgradeTuiLastSessions(ctx: GlobalUpgradeContext): void {
  for (const row of readAll(ctx, "tui_last_sessions", "scope_key")) {
    const scope = typeof row.scope_key === "string" ? row.scope_key : "";
    const sessionKey = typeof row.session_key === "string" ? row.session_key : "";
    const updatedAt = row.updated_at;
    if (sessionKey.toLowerCase().endsWith(":heartbeat")) {
      unmapped(ctx, "tui_last_sessions", "global.tui.heartbeat-dropped", `tui_last_sessions ${scope}: a heartbeat session pointer; OpenClaw 2026.9.6 discards these on import, so it stays in the design-v1 file only.`);
      continue;
    }
    const valid = scope !== "" && scope.trim() === scope && sessionKey !== "" && sessionKey.trim() === sessionKey && sessionKey !== "unknown" && Number.isSafeInteger(updatedAt) && (updatedAt as number) >= 0;
    if (!valid) {
      unmapped(ctx, "tui_last_sessions", "global.tui.invalid", `tui_last_sessions ${scope}: scope, session key or timestamp is not one OpenClaw 2026.9.6 accepts; kept in the design-v1 file only.`);
      continue;
    }
    machineState(ctx, `${TUI_PREFIX}${scope}`, sessionKey, updatedAt as number);
  }
}

/** update_check_state 'default' → `update.checkState` (string fields only, timestamps back to ISO strings). */
function upgradeUpdateCheck(ctx: GlobalUpgradeContext): void {
  for (const row of readAll(ctx, "update_check_state", "state_key")) {
    if (row.state_key !== CONFIG_KEY) {
      unmapped(ctx, "update_check_state", "global.update-check.extra-key", `update_check_state ${String(row.state_key)}: OpenClaw keeps one update-check state; only 'default' is upgraded.`);
      continue;
    }
    const value: Record<string, string> = {};
    for (const [field, column, type] of UPDATE_FIELDS) {
      const raw = row[column];
      const text = type === "time" ? isoOf(raw) : typeof raw === "string" && raw.trim() !== "" ? raw : undefined;
      if (text !== undefined) value[field] = text;
    }
    machineState(ctx, "update.checkState", value, ctx.now);
  }
}

function targetOf(mode: unknown, agentId: unknown, sessionKey: unknown): Record<string, string> | undefined {
  if (mode === "current") return { mode: "current" };
  if (mode === "agent" && typeof agentId === "string" && agentId !== "") return { agentId };
  if (mode === "session" && typeof sessionKey === "string" && sessionKey !== "") return { sessionKey };
  return undefined;
}

/** voicewake_triggers / voicewake_routing_* ('default') → `voicewake.triggers` and `voicewake.routing`. */
function upgradeVoiceWake(ctx: GlobalUpgradeContext): void {
  const split = (rows: Row[], table: string): Row[] => {
    const others = rows.filter((r) => r.config_key !== CONFIG_KEY);
    if (others.length > 0) unmapped(ctx, table, "global.voicewake.extra-key", `${table}: ${others.length} row(s) under a config key other than 'default'; OpenClaw keeps one Voice Wake config, so they stay in the design-v1 file only.`, others.length);
    return rows.filter((r) => r.config_key === CONFIG_KEY);
  };
  const triggers = split(readAll(ctx, "voicewake_triggers", "config_key, position"), "voicewake_triggers");
  if (triggers.length > 0) machineState(ctx, "voicewake.triggers", triggers.map((r) => String(r.trigger)), ctx.now);

  const configs = split(readAll(ctx, "voicewake_routing_config", "config_key"), "voicewake_routing_config");
  const routeRows = split(readAll(ctx, "voicewake_routing_routes", "config_key, position"), "voicewake_routing_routes");
  if (configs.length === 0 && routeRows.length === 0) return;
  const config = configs[0];
  let defaultTarget = config ? targetOf(config.default_target_mode, config.default_target_agent_id, config.default_target_session_key) : undefined;
  if (config && !defaultTarget) note(ctx, "global.voicewake.default-target", `voicewake_routing_config: default target ${String(config.default_target_mode)} is incomplete; written as {"mode":"current"}, as OpenClaw reads it.`);
  defaultTarget ??= { mode: "current" };
  const routes: Array<{ trigger: string; target: Record<string, string> }> = [];
  for (const r of routeRows) {
    const target = targetOf(r.target_mode, r.target_agent_id, r.target_session_key);
    if (typeof r.trigger !== "string" || r.trigger === "" || !target) {
      unmapped(ctx, "voicewake_routing_routes", "global.voicewake.route-invalid", `voicewake_routing_routes position ${String(r.position)}: no trigger or no valid target; OpenClaw drops such routes.`);
      continue;
    }
    routes.push({ trigger: r.trigger, target });
  }
  // One JSON value holds the config row and its routes; the config row counts as the written one.
  machineState(ctx, "voicewake.routing", { version: 1, defaultTarget, routes, updatedAtMs: ctx.now }, ctx.now);
}

/**
 * 9.6 keeps these as JSON values under fixed keys (observed from its own doctor --fix on the legacy files):
 * tui.lastSession.<scope> = "<sessionKey>" (updated_at_ms = the pointer's updatedAt); update.checkState = {<field>: string}
 * (import time); voicewake.triggers = [trigger, …] (import time); voicewake.routing = {version, defaultTarget, routes,
 * updatedAtMs = import time} (import time).
 */
export function upgradeMachineState(ctx: GlobalUpgradeContext): void {
  upgradeTuiLastSessions(ctx);
  upgradeUpdateCheck(ctx);
  upgradeVoiceWake(ctx);
}
