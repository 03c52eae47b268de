// Same-named tables whose columns mean the same in both formats: copied column by column, every gap named in a note.
import { createHash } from "node:crypto";
import { isStagedConfigAudit } from "./upgrade-global-config-audit.js";
import { type GlobalUpgradeContext, bump, note, readAll } from "./upgrade-global-context.js";
import { ACPX_GATEWAY_INSTANCE, classifyAcpxGatewayValue } from "../acpx-gateway-record.js";
import { OPENCLAW_KEY_SPELLINGS } from "../key-spellings.js";

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: unknown;
  pk: number;
}

/**
 * Tables copied by column name. Each was compared with `PRAGMA table_info` of both schemas: same meaning, at most
 * new nullable/defaulted columns in OpenClaw's or extra columns in ours (dropped, and named in a note).
 */
export const SAME_MEANING_TABLES = [
  "plugin_state_entries",
  "plugin_blob_entries",
  "plugin_binding_approvals",
  "config_health_entries",
  "channel_pairing_allow_entries",
  "device_identities",
  "device_auth_tokens",
  "delivery_queue_entries",
  "subagent_runs",
  "exec_approvals_config",
  "sandbox_registry_entries",
  "apns_registrations",
  "web_push_subscriptions",
  "gateway_restart_sentinel",
  "native_hook_relay_bridges",
  "skill_uploads",
  "acp_replay_sessions",
  "acp_replay_events",
  "macos_port_guardian_records",
] as const;

/**
 * The design-v1 status of a delivery entry held for review (src/migration/importers/delivery-queue.ts). OpenClaw
 * 2026.9.6 has no such status: its doctor holds a stale legacy entry by keeping it out of `delivery_queue_entries`
 * and retaining the original for review, so a held row is not copied — it stays in the kept design-v1 file, its
 * source file under migrated/<run>/.
 */
export const DELIVERY_HELD_STATUS = "held";

/** Held delivery rows, set aside before the copy: counted and named, never put in OpenClaw's queue. */
function withoutHeldDeliveries(ctx: GlobalUpgradeContext, table: string, rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  if (table !== "delivery_queue_entries") return rows;
  const held = rows.filter((r) => r.status === DELIVERY_HELD_STATUS);
  if (held.length === 0) return rows;
  bump(ctx.unmapped, table, held.length);
  const named = held.slice(0, 5).map((r) => `${String(r.queue_name)}/${String(r.id)}`).join(", ");
  note(
    ctx,
    "global.delivery.held",
    `${table}: ${held.length} entr${held.length === 1 ? "y" : "ies"} held for review (${named}${held.length > 5 ? ", …" : ""}) left out of OpenClaw's queue, as OpenClaw 2026.9.6 holds a stale legacy entry, so it is never sent; they stay in the design-v1 file (and their source files where the migration retired them).`,
  );
  return rows.filter((r) => r.status !== DELIVERY_HELD_STATUS);
}

/** Staged config-audit lines go to diagnostic_events, where OpenClaw 2026.9.6 keeps them (upgrade-global-config-audit.ts). */
function withoutConfigAudit(table: string, rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return table === "plugin_state_entries" ? rows.filter((r) => !isStagedConfigAudit(r)) : rows;
}

/**
 * Keys whose spelling differs between the formats (OPENCLAW_KEY_SPELLINGS says why each matters): a row under the
 * design-v1 spelling would be invisible to OpenClaw's runtime. Design-v1 holds only its own spelling, so a rename
 * cannot collide here; in a database already in OpenClaw's format the doctor's key-spelling repair re-spells them.
 */
function withOpenclawKeys(ctx: GlobalUpgradeContext, table: string, rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const spellings = OPENCLAW_KEY_SPELLINGS.filter((s) => s.table === table);
  const respelled =
    spellings.length === 0
      ? rows
      : rows.map((r) => {
          const spelling = spellings.find((s) => s.from === r[s.column]);
          return spelling === undefined ? r : { ...r, [spelling.column]: spelling.to };
        });
  return table === "exec_approvals_config" ? respelled.map((r) => withAllowlistIds(ctx, r)) : respelled;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * 2026.9.6 gives every exec allowlist entry an id when it normalizes the file (ensureAllowlistIds: a random UUID for
 * an entry with none), and its doctor stores them so: the same here, so the stored file is the one its runtime keeps.
 * raw_json is rewritten (2-space JSON, as OpenClaw writes it) only when an id was added; an unparsable one is left as is.
 */
function withAllowlistIds(ctx: GlobalUpgradeContext, row: Record<string, unknown>): Record<string, unknown> {
  let file: unknown;
  try {
    file = JSON.parse(String(row.raw_json));
  } catch {
    return row;
  }
  if (!isObject(file) || !isObject(file.agents)) return row;
  let added = 0;
  for (const [agentId, agent] of Object.entries(file.agents)) {
    if (!isObject(agent) || !Array.isArray(agent.allowlist)) continue;
    agent.allowlist = agent.allowlist.map((entry: unknown, index: number) => {
      if (!isObject(entry) || entry.id) return entry;
      added += 1;
      return { ...entry, id: allowlistId(agentId, index, entry) };
    });
  }
  if (added === 0) return row;
  note(ctx, "global.exec-approvals.ids", `exec_approvals_config: ${added} allowlist entr${added === 1 ? "y" : "ies"} without an id given one (a UUID), as OpenClaw 2026.9.6 stores them.`);
  return { ...row, raw_json: `${JSON.stringify(file, null, 2)}\n` };
}

/**
 * 9.6 draws a random UUID; ours is derived from the entry (agent, position, content) in the same shape, so importing
 * the same file twice gives the same ids — a re-import (the merge path) then finds the row it wrote, not a new one.
 */
function allowlistId(agentId: string, index: number, entry: Record<string, unknown>): string {
  const h = createHash("sha256").update(`${agentId}\u0000${index}\u0000${JSON.stringify(entry)}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Earlier builds of this tool stored the ACPX gateway instance id as {"version":1,"id":…}, which the ACPX runtime
 * never reads (it mints a new id, orphaning every imported lease): that exact shape is rewritten as it reads it; any
 * other value is copied as it is (the doctor's key-spelling check does the same in a state already in this format).
 */
function withAcpxGatewayRecord(ctx: GlobalUpgradeContext, table: string, rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  if (table !== "plugin_state_entries") return rows;
  let rewritten = 0;
  const out = rows.map((r) => {
    if (r.plugin_id !== ACPX_GATEWAY_INSTANCE.pluginId || r.namespace !== ACPX_GATEWAY_INSTANCE.namespace || r.entry_key !== ACPX_GATEWAY_INSTANCE.entryKey) return r;
    const value = classifyAcpxGatewayValue(r.value_json, r.created_at);
    if (value.kind !== "earlier") return r;
    rewritten += 1;
    return { ...r, value_json: value.valueJson };
  });
  if (rewritten > 0) note(ctx, "global.acpx-gateway-instance", `plugin_state_entries: the ACPX gateway instance id an earlier openclaw-state stored as {"version":1,"id":…} is written as {instanceId, createdAt}, the shape the ACPX runtime reads.`);
  return out;
}

/** Type changes where SQLite's STRICT conversion keeps the value exactly (an integer stored in a REAL column). */
const SAFE_TYPE_CHANGES = new Set(["INTEGER>REAL"]);

function columns(handle: GlobalUpgradeContext["src"], table: string): ColumnInfo[] {
  return handle.prepare(`PRAGMA table_info("${table}")`).all() as ColumnInfo[];
}

export function copySameMeaningTable(ctx: GlobalUpgradeContext, table: string): void {
  if (!ctx.sourceTables.has(table)) return;
  const rows = withAcpxGatewayRecord(ctx, table, withOpenclawKeys(ctx, table, withoutHeldDeliveries(ctx, table, withoutConfigAudit(table, readAll(ctx, table)))));
  if (rows.length === 0) return;
  const src = new Map(columns(ctx.src, table).map((c) => [c.name, c]));
  const dst = columns(ctx.dst, table);
  const shared = dst.filter((c) => src.has(c.name));
  const missingRequired = dst.filter((c) => !src.has(c.name) && c.notnull === 1 && c.dflt_value === null && c.pk === 0);
  const typeChanges = shared.filter((c) => src.get(c.name)!.type !== c.type && !SAFE_TYPE_CHANGES.has(`${src.get(c.name)!.type}>${c.type}`));
  if (missingRequired.length > 0 || typeChanges.length > 0) {
    bump(ctx.unmapped, table, rows.length);
    const why = [
      missingRequired.length > 0 ? `OpenClaw requires ${missingRequired.map((c) => c.name).join(", ")}, which design-v1 does not hold` : "",
      typeChanges.length > 0 ? `column types differ (${typeChanges.map((c) => `${c.name}: ${src.get(c.name)!.type} → ${c.type}`).join(", ")})` : "",
    ].filter(Boolean).join("; ");
    note(ctx, "global.kept-unmapped", `${table}: ${rows.length} row(s) not copied: ${why}; they stay in the design-v1 file.`);
    return;
  }
  const dropped = [...src.keys()].filter((name) => !dst.some((c) => c.name === name));
  if (dropped.length > 0) note(ctx, "global.columns-dropped", `${table}: design-v1 column(s) ${dropped.join(", ")} have no OpenClaw column; their values stay in the design-v1 file only.`);
  const added = dst.filter((c) => !src.has(c.name)).map((c) => c.name);
  if (added.length > 0) note(ctx, "global.columns-defaulted", `${table}: OpenClaw column(s) ${added.join(", ")} left at their default (design-v1 has no such data).`);
  // Column names come from both schemas' PRAGMA table_info, never from row data.
  const list = shared.map((c) => `"${c.name}"`).join(", ");
  const insert = ctx.dst.prepare(`INSERT INTO "${table}" (${list}) VALUES (${shared.map(() => "?").join(", ")})`);
  let failed = 0;
  let firstError = "";
  for (const row of rows) {
    const nullRequired = shared.find((c) => c.notnull === 1 && (row[c.name] === null || row[c.name] === undefined));
    if (nullRequired) {
      failed += 1;
      firstError ||= `${nullRequired.name} is NULL, OpenClaw requires a value`;
      continue;
    }
    try {
      insert.run(...shared.map((c) => row[c.name]));
      bump(ctx.written, table);
    } catch (error) {
      // A constraint failure rolls back this one statement only; the row is counted and named, never dropped silently.
      failed += 1;
      firstError ||= error instanceof Error ? error.message : String(error);
    }
  }
  if (failed > 0) {
    bump(ctx.unmapped, table, failed);
    note(ctx, "global.row-rejected", `${table}: ${failed} row(s) not copied (first: ${firstError}); they stay in the design-v1 file.`);
  }
}
