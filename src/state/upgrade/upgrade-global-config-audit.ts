// Staged config-audit lines (plugin_state_entries core/config-audit) → OpenClaw 2026.9.6's diagnostic_events rows (scope config-audit).
//
// Observed from 9.6's doctor (state-migrations audit records, sqlite-audit-record store) on logs/config-audit.jsonl:
//   event_key  `legacy:config:<generation>:<n>:<digest>`: generation = sha256 (16 hex) of the retired file's path
//              relative to the state dir, `logs/config-audit.jsonl.migrated.raw` on a first import; n counts the
//              file's records from 1; digest = sha256 (16 hex) of the stored payload;
//   payload    the record sanitized as its runtime does (config-audit-record.ts);
//   created_at Date.parse of the record's `ts` (0 when it is not a date string);
//   sequence   legacy rows count up from Number.MIN_SAFE_INTEGER + 1 (below the runtime's own rows, which start at 1);
//   a key already present is left as it is (ON CONFLICT DO NOTHING).
// The design-v1 importer (src/migration/importers/plugin-state-files.ts) keyed each line `<line number, 8 digits>:<hash>`
// and stored the parsed line, so key order is file order and the value is the record JSON.parse gave.
import { createHash } from "node:crypto";
import { sanitizeConfigAuditRecord } from "./config-audit-record.js";
import { type GlobalUpgradeContext, type Row, bump, isRecord, note } from "./upgrade-global-context.js";

export const CONFIG_AUDIT_PLUGIN = "core";
export const CONFIG_AUDIT_NAMESPACE = "config-audit";
const SCOPE = "config-audit";
/** What 9.6 hashes for the generation of a log retired once: the raw archive's path relative to the state dir. */
export const FIRST_GENERATION_PATH = "logs/config-audit.jsonl.migrated.raw";

const sha16 = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16);

/** A staged row this step owns (left out of the plain plugin_state_entries copy). */
export function isStagedConfigAudit(row: Row): boolean {
  return row.plugin_id === CONFIG_AUDIT_PLUGIN && row.namespace === CONFIG_AUDIT_NAMESPACE;
}

export interface LegacyConfigAuditEvent {
  eventKey: string;
  payloadJson: string;
  createdAt: number;
}

/** The diagnostic_events row 9.6 writes for the `ordinal`-th record (from 1) of a log in `generation`. */
export function legacyConfigAuditEvent(record: Record<string, unknown>, ordinal: number, generation = sha16(FIRST_GENERATION_PATH)): LegacyConfigAuditEvent {
  const sanitized = sanitizeConfigAuditRecord(record);
  const payloadJson = JSON.stringify(sanitized);
  const parsed = typeof sanitized.ts === "string" ? Date.parse(sanitized.ts) : Number.NaN;
  return { eventKey: `legacy:config:${generation}:${ordinal}:${sha16(payloadJson)}`, payloadJson, createdAt: Number.isFinite(parsed) ? parsed : 0 };
}

export function upgradeConfigAudit(ctx: GlobalUpgradeContext): void {
  if (!ctx.sourceTables.has("plugin_state_entries")) return;
  // Read counts: plugin_state_entries is counted whole by the copy step (copySameMeaningTable), which skips these rows.
  const staged = ctx.src
    .prepare("SELECT entry_key, value_json FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? ORDER BY entry_key")
    .iterate(CONFIG_AUDIT_PLUGIN, CONFIG_AUDIT_NAMESPACE) as IterableIterator<{ entry_key: string; value_json: string }>;
  const last = ctx.dst.prepare("SELECT max(sequence) AS s FROM diagnostic_events WHERE scope = ? AND sequence < 0").get(SCOPE) as { s: number | null };
  let sequence = (last.s ?? Number.MIN_SAFE_INTEGER) + 1;
  const insert = ctx.dst.prepare("INSERT INTO diagnostic_events (scope, event_key, payload_json, created_at, sequence) VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, event_key) DO NOTHING");
  let ordinal = 0;
  let notRecords = 0;
  for (const row of staged) {
    let record: unknown;
    try {
      record = JSON.parse(row.value_json);
    } catch {
      record = undefined;
    }
    // 9.6 stores objects only (it refuses a log holding anything else); the design-v1 row stays in the kept file.
    if (!isRecord(record)) {
      notRecords += 1;
      continue;
    }
    ordinal += 1;
    const event = legacyConfigAuditEvent(record, ordinal);
    // The sequence advances for every record, stored or already present, as 9.6's legacy import does.
    if (insert.run(SCOPE, event.eventKey, event.payloadJson, event.createdAt, sequence).changes > 0) bump(ctx.written, "diagnostic_events");
    sequence += 1;
  }
  if (ordinal > 0) {
    note(ctx, "global.config-audit", `plugin_state_entries ${CONFIG_AUDIT_PLUGIN}/${CONFIG_AUDIT_NAMESPACE}: ${ordinal} legacy config audit record(s) moved to diagnostic_events (scope ${SCOPE}, keys legacy:config:…), sanitized as OpenClaw 2026.9.6 stores them.`);
  }
  if (notRecords > 0) {
    bump(ctx.unmapped, "plugin_state_entries", notRecords);
    note(ctx, "global.kept-unmapped", `plugin_state_entries ${CONFIG_AUDIT_PLUGIN}/${CONFIG_AUDIT_NAMESPACE}: ${notRecords} line(s) that are not JSON objects not copied (OpenClaw's config audit holds objects only); they stay in the design-v1 file.`);
  }
}
