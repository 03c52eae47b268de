// Importers for gateway settings files: Voice Wake triggers and routing (`settings/voicewake.json`,
// `settings/voicewake-routing.json`), plugin binding approvals (`plugin-binding-approvals.json`) and the
// restart sentinel (`restart-sentinel.json`) → their typed tables.
//
// Shapes (OpenClaw src/infra/voicewake.ts, voicewake-routing.ts, plugin binding approvals, restart sentinel):
// {triggers:[…], updatedAtMs}; {version, defaultTarget:{mode:"current"}|{agentId}|{sessionKey}, routes:[{trigger,
// target}], updatedAtMs}; {version:1, approvals:[{pluginRoot, pluginId, pluginName, channel, accountId,
// approvedAt}]}; {version:1, payload:{kind, status, ts, sessionKey, deliveryContext:{channel, to, accountId},
// threadId, message, continuation, doctorHint, stats}}. Normalization follows the runtime's own.
import { isObject, shapeError } from "../json-source.js";
import { fileSource, json, jsonRowsImporter, ms, num, row, str, type RowSpec } from "./json-rows.js";
import { DEFAULT_ACCOUNT_ID } from "./channel-pairing.js";

const CONFIG_KEY = "default";

/** Lower-case words without surrounding punctuation, single-spaced: how the runtime matches wake phrases. */
export function normalizeTriggerWord(value: string): string {
  return value
    .toLowerCase()
    .split(/\s+/)
    .map((token) => token.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, ""))
    .filter(Boolean)
    .join(" ");
}

/** An agent id as the runtime normalizes it: lower case, anything else than [a-z0-9_-] becomes "-". */
function normalizeAgentId(value: string): string {
  return value.trim().toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "main";
}

export const voicewakeTriggersImporter = jsonRowsImporter({
  kind: "voicewake-triggers",
  label: { one: "legacy Voice Wake trigger file", many: "legacy Voice Wake trigger files", records: "triggers" },
  targetTable: "voicewake_triggers",
  targetTables: ["voicewake_triggers"],
  detect: (ctx) => fileSource("voicewake-triggers", ctx.root, "settings/voicewake.json"),
  rows(v, source) {
    const list = isObject(v) && Array.isArray(v.triggers) ? v.triggers : Array.isArray(v) ? v : null;
    if (!list) throw shapeError(source.path, 'an object with a "triggers" array', v);
    const triggers = list.map((t) => (typeof t === "string" ? t.trim() : "")).filter((t) => t !== "");
    const updatedAt = (isObject(v) ? ms(v.updatedAtMs) : null) ?? source.mtimeMs;
    const rows = triggers.map((trigger, position) => row("voicewake_triggers", ["config_key", "position"], { config_key: CONFIG_KEY, position, trigger, updated_at_ms: updatedAt > 0 ? updatedAt : source.mtimeMs }));
    const skipped = list.length - triggers.length;
    // The list replaces the stored one: a shorter list must not keep the old tail.
    return { records: list.length, rows, skipped, replace: [{ table: "voicewake_triggers", where: { config_key: CONFIG_KEY } }], ...(skipped ? { notes: [`${skipped} empty trigger(s) dropped`] } : {}) };
  },
});

interface Target {
  mode: string;
  agentId: string | null;
  sessionKey: string | null;
}

function targetOf(value: unknown): Target | null {
  if (!isObject(value)) return null;
  if (str(value.mode) === "current") return { mode: "current", agentId: null, sessionKey: null };
  const agentId = str(value.agentId);
  const sessionKey = str(value.sessionKey);
  if (agentId && !sessionKey) return { mode: "agent", agentId: normalizeAgentId(agentId), sessionKey: null };
  if (sessionKey && !agentId) return { mode: "session", agentId: null, sessionKey };
  return null;
}

export const voicewakeRoutingImporter = jsonRowsImporter({
  kind: "voicewake-routing",
  label: { one: "legacy Voice Wake routing file", many: "legacy Voice Wake routing files", records: "routes" },
  targetTable: "voicewake_routing_config",
  targetTables: ["voicewake_routing_config", "voicewake_routing_routes"],
  detect: (ctx) => fileSource("voicewake-routing", ctx.root, "settings/voicewake-routing.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    const updatedAt = ms(v.updatedAtMs) || source.mtimeMs;
    const fallback = targetOf(v.defaultTarget) ?? { mode: "current", agentId: null, sessionKey: null };
    const list = Array.isArray(v.routes) ? v.routes : [];
    const rows: RowSpec[] = [
      row("voicewake_routing_config", ["config_key"], {
        config_key: CONFIG_KEY,
        version: num(v.version) ?? 1,
        default_target_mode: fallback.mode,
        default_target_agent_id: fallback.agentId,
        default_target_session_key: fallback.sessionKey,
        updated_at_ms: updatedAt,
      }),
    ];
    let position = 0;
    for (const r of list) {
      const trigger = isObject(r) && typeof r.trigger === "string" ? normalizeTriggerWord(r.trigger) : "";
      const target = isObject(r) ? targetOf(r.target) : null;
      if (trigger === "" || target === null) continue;
      rows.push(
        row("voicewake_routing_routes", ["config_key", "position"], {
          config_key: CONFIG_KEY,
          position: position++,
          trigger,
          target_mode: target.mode,
          target_agent_id: target.agentId,
          target_session_key: target.sessionKey,
          updated_at_ms: updatedAt,
        }),
      );
    }
    const skipped = list.length - position;
    return {
      records: list.length,
      rows,
      skipped,
      replace: [{ table: "voicewake_routing_routes", where: { config_key: CONFIG_KEY } }],
      ...(skipped ? { warnings: [`${skipped} route(s) without a trigger or a valid target were dropped (as the runtime drops them)`] } : {}),
    };
  },
});

export const pluginBindingApprovalsImporter = jsonRowsImporter({
  kind: "plugin-binding-approvals",
  label: { one: "legacy plugin binding approval file", many: "legacy plugin binding approval files", records: "approvals" },
  targetTable: "plugin_binding_approvals",
  targetTables: ["plugin_binding_approvals"],
  detect: (ctx) => fileSource("plugin-binding-approvals", ctx.root, "plugin-binding-approvals.json"),
  rows(v, source) {
    const list = isObject(v) && Array.isArray(v.approvals) ? v.approvals : Array.isArray(v) ? v : null;
    if (!list) throw shapeError(source.path, 'an object with an "approvals" array', v);
    const rows: RowSpec[] = [];
    for (const a of list) {
      const root = isObject(a) ? str(a.pluginRoot) : null;
      const channel = isObject(a) ? str(a.channel) : null;
      if (!isObject(a) || root === null || channel === null) continue;
      rows.push(
        row("plugin_binding_approvals", ["plugin_root", "channel", "account_id"], {
          plugin_root: root,
          channel: channel.toLowerCase(),
          // Trimmed, never case-folded: 2026.9.6's runtime (and the legacy one) match an approval by
          // `accountId.trim() || "default"`, so a lower-cased "Work" would never match again.
          account_id: str(a.accountId) ?? DEFAULT_ACCOUNT_ID,
          plugin_id: str(a.pluginId),
          // As written, as 2026.9.6's doctor stores it (the name is only displayed).
          plugin_name: typeof a.pluginName === "string" ? a.pluginName : null,
          approved_at: ms(a.approvedAt) ?? source.mtimeMs,
        }),
      );
    }
    const skipped = list.length - rows.length;
    return { records: list.length, rows, skipped, ...(skipped ? { warnings: [`${skipped} approval(s) without a pluginRoot or channel were skipped`] } : {}) };
  },
});

export const restartSentinelImporter = jsonRowsImporter({
  kind: "restart-sentinel",
  label: { one: "legacy restart sentinel", many: "legacy restart sentinels", records: "sentinels" },
  targetTable: "gateway_restart_sentinel",
  targetTables: ["gateway_restart_sentinel"],
  detect: (ctx) => fileSource("restart-sentinel", ctx.root, "restart-sentinel.json"),
  rows(v, source) {
    const payload = isObject(v) && isObject(v.payload) ? v.payload : null;
    if (!isObject(v) || !payload) throw shapeError(source.path, 'an object with a "payload" object', v);
    const delivery = isObject(payload.deliveryContext) ? payload.deliveryContext : {};
    const threadId = typeof payload.threadId === "number" ? String(payload.threadId) : str(payload.threadId);
    return {
      records: 1,
      rows: [
        row("gateway_restart_sentinel", ["sentinel_key"], {
          sentinel_key: CONFIG_KEY,
          version: num(v.version) ?? 1,
          kind: str(payload.kind),
          status: str(payload.status),
          ts: ms(payload.ts),
          session_key: str(payload.sessionKey),
          thread_id: threadId,
          delivery_channel: str(delivery.channel),
          delivery_to: str(delivery.to),
          delivery_account_id: str(delivery.accountId),
          message: str(payload.message),
          continuation_json: json(payload.continuation),
          doctor_hint: str(payload.doctorHint),
          stats_json: json(payload.stats),
          payload_json: JSON.stringify(payload),
          updated_at_ms: ms(payload.ts) ?? source.mtimeMs,
        }),
      ],
    };
  },
});
