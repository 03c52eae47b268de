// Importers for long-tail files: plugin_state_entries under the owner's plugin id and namespace, and the
// installed-plugin index (its typed singleton row).
import fs from "node:fs";
import path from "node:path";
import { OperationError } from "../../core/errors.js";
import { isObject, sha256Of, shapeError } from "../json-source.js";
import { dirSources, fileSource, jsonRowsImporter, readTextSource, row, type JsonRowsSpec, type RowSpec, type SourceFacts } from "./json-rows.js";

function entry(pluginId: string, namespace: string, key: string, value: unknown, createdAt: number): RowSpec {
  return row("plugin_state_entries", ["plugin_id", "namespace", "entry_key"], {
    plugin_id: pluginId,
    namespace,
    entry_key: key,
    value_json: JSON.stringify(value),
    created_at: createdAt,
    expires_at: null,
  });
}

/** The ACPX runtime's plugin id: its gateway instance id and process leases live under it. */
export const ACPX_PLUGIN_ID = "acpx";

/**
 * The gateway instance record as the ACPX runtime reads it from `gateway-instance/current`: {instanceId, createdAt}.
 * Any other value (one without a non-blank `instanceId`) it discards and mints a new id over, which orphans every
 * lease of the old one. `keep`: a row already there wins (the lease importer only fills a missing one).
 */
export function acpxGatewayInstanceRow(instanceId: string, createdAt: number, mode: "upsert" | "keep" = "upsert"): RowSpec {
  return row(
    "plugin_state_entries",
    ["plugin_id", "namespace", "entry_key"],
    { plugin_id: ACPX_PLUGIN_ID, namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId, createdAt }), created_at: createdAt, expires_at: null },
    { mode },
  );
}

/** The id a `gateway-instance-id` file holds (its one trimmed line), or null when it is missing or not one line. */
export function readGatewayInstanceId(file: string): string | null {
  try {
    if (!fs.lstatSync(file).isFile()) return null;
    const id = String(readTextSource(file).value).trim();
    return id && !id.includes("\n") ? id : null;
  } catch {
    return null;
  }
}

/**
 * `gateway-instance-id`: one line of text → plugin "acpx", namespace "gateway-instance", key "current", value
 * {instanceId, createdAt: the file's mtime} (where and how the ACPX runtime reads it). Earlier versions of this tool
 * wrote it under gateway/instance/id, where nothing reads it: that row is removed in the same transaction.
 */
export const gatewayInstanceIdSpec: JsonRowsSpec = {
  kind: "gateway-instance-id",
  label: { one: "legacy gateway instance id", many: "legacy gateway instance ids", records: "ids" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect: (ctx) => fileSource("gateway-instance-id", ctx.root, "gateway-instance-id"),
  read: readTextSource,
  rows(v, source) {
    const id = String(v).trim();
    if (!id || id.includes("\n")) throw new OperationError("invalid_shape", `${source.path}: expected one line holding the instance id; the file was left in place.`, { path: source.path });
    return {
      records: 1,
      rows: [acpxGatewayInstanceRow(id, source.mtimeMs)],
      replace: [{ table: "plugin_state_entries", where: { plugin_id: "gateway", namespace: "instance", entry_key: "id" } }],
    };
  },
};
export const gatewayInstanceIdImporter = jsonRowsImporter(gatewayInstanceIdSpec);

/** `settings/tts.json`: the default TTS preferences → plugin "speech-core", namespace "tts-preferences", key "default". */
export const ttsSettingsImporter = jsonRowsImporter({
  kind: "tts-settings",
  label: { one: "legacy TTS settings file", many: "legacy TTS settings files", records: "settings" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect: (ctx) => fileSource("tts-settings", ctx.root, "settings/tts.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    return { records: 1, rows: [entry("speech-core", "tts-preferences", "default", v, source.mtimeMs)] };
  },
});

/**
 * `plugins/installs.json` → the installed_plugin_index singleton row (where the runtime reads it). Current files
 * are the whole index ({version, hostContractVersion, …, installRecords:{<pluginId>: record}, plugins:[…],
 * diagnostics:[…]}); older ones a bare `{installs:{…}}` or `{<pluginId>: record}` map, kept as installRecords (the
 * manifest cache is rebuilt by the runtime). Rows earlier versions of this tool wrote under plugins/installs/*
 * (where nothing reads them) are removed in the same transaction.
 */
export const pluginInstallsSpec: JsonRowsSpec = {
  kind: "plugin-installs",
  label: { one: "legacy plugin install index", many: "legacy plugin install indexes", records: "plugins" },
  targetTable: "installed_plugin_index",
  targetTables: ["installed_plugin_index"],
  detect: (ctx) => fileSource("plugin-installs", ctx.root, "plugins/installs.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    const whole = Array.isArray(v.plugins) || isObject(v.installRecords);
    const records = whole ? (isObject(v.installRecords) ? v.installRecords : {}) : isObject(v.installs) ? v.installs : Object.fromEntries(Object.entries(v).filter(([k, r]) => k !== "version" && isObject(r)));
    const text = (x: unknown): string | null => (typeof x === "string" && x !== "" ? x : null);
    const int = (x: unknown): number | null => (typeof x === "number" && Number.isFinite(x) ? Math.trunc(x) : null);
    return {
      records: Object.keys(records).length,
      rows: [
        row("installed_plugin_index", ["index_key"], {
          index_key: "default",
          version: int(v.version) ?? 1,
          host_contract_version: text(v.hostContractVersion),
          compat_registry_version: text(v.compatRegistryVersion),
          migration_version: int(v.migrationVersion),
          policy_hash: text(v.policyHash),
          generated_at_ms: int(v.generatedAtMs),
          refresh_reason: text(v.refreshReason),
          install_records_json: JSON.stringify(records),
          plugins_json: JSON.stringify(whole && Array.isArray(v.plugins) ? v.plugins : []),
          diagnostics_json: JSON.stringify(Array.isArray(v.diagnostics) ? v.diagnostics : []),
          warning: text(v.warning),
          updated_at_ms: source.mtimeMs,
        }),
      ],
      replace: [{ table: "plugin_state_entries", where: { plugin_id: "plugins", namespace: "installs" } }],
      ...(whole ? {} : { notes: ["an older install map without the manifest cache: the runtime rebuilds that part of the index"] }),
    };
  },
};
export const pluginInstallsImporter = jsonRowsImporter(pluginInstallsSpec);

/**
 * JSONL audit lines: one entry per non-blank line keyed by `<line number>:<sha256 of the line, 16 hex>`, so
 * re-importing the same (or a grown) file never duplicates a line. A line that is not JSON fails the file.
 */
function auditRows(pluginId: string, namespace: string, text: string, source: SourceFacts): { records: number; rows: RowSpec[]; warnings: string[] } {
  const lines = text.split("\n");
  const rows: RowSpec[] = [];
  const warnings: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (i === lines.length - 1) {
        // A truncated final line (crash while appending) is dropped, as for transcripts.
        warnings.push(`${source.relativePath}:${i + 1}: truncated final line dropped`);
        return;
      }
      throw new OperationError("invalid_jsonl", `${source.path}:${i + 1}: not a JSON line; the file was left in place.`, { path: source.path });
    }
    const ts = isObject(value) && typeof value.ts === "number" ? value.ts : source.mtimeMs;
    rows.push(entry(pluginId, namespace, `${String(i + 1).padStart(8, "0")}:${sha256Of(line).slice(0, 16)}`, value, Math.trunc(ts)));
  });
  return { records: rows.length, rows, warnings };
}

/** `logs/config-audit.jsonl` → plugin "core", namespace "config-audit". */
export const configAuditImporter = jsonRowsImporter({
  kind: "config-audit",
  label: { one: "legacy config audit log", many: "legacy config audit logs", records: "lines" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect: (ctx) => fileSource("config-audit", ctx.root, "logs/config-audit.jsonl"),
  read: readTextSource,
  rows: (v, source) => auditRows("core", "config-audit", String(v), source),
});

/** `audit/<owner>.jsonl` → plugin `<owner>` (e.g. crestodian, file-transfer), namespace "audit". */
export const auditLogsImporter = jsonRowsImporter({
  kind: "audit-log",
  label: { one: "legacy audit log", many: "legacy audit logs", records: "lines" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect: (ctx) => dirSources("audit-log", ctx.root, "audit", (n) => n.endsWith(".jsonl")),
  read: readTextSource,
  rows: (v, source) => auditRows(path.posix.basename(source.relativePath, ".jsonl"), "audit", String(v), source),
});
