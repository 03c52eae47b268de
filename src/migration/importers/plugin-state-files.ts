// Importers for long-tail files with no typed table: plugin_state_entries under the owner's plugin id and namespace.
import path from "node:path";
import { OperationError } from "../../core/errors.js";
import { isObject, sha256Of, shapeError } from "../json-source.js";
import { dirSources, fileSource, jsonRowsImporter, readTextSource, row, type RowSpec, type SourceFacts } from "./json-rows.js";

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

/** `gateway-instance-id`: one line of text → plugin "gateway", namespace "instance", key "id". */
export const gatewayInstanceIdImporter = jsonRowsImporter({
  kind: "gateway-instance-id",
  label: { one: "legacy gateway instance id", many: "legacy gateway instance ids", records: "ids" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect: (ctx) => fileSource("gateway-instance-id", ctx.root, "gateway-instance-id"),
  read: readTextSource,
  rows(v, source) {
    const id = String(v).trim();
    if (!id || id.includes("\n")) throw new OperationError("invalid_shape", `${source.path}: expected one line holding the instance id; the file was left in place.`, { path: source.path });
    return { records: 1, rows: [entry("gateway", "instance", "id", id, source.mtimeMs)] };
  },
});

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

/** `plugins/installs.json`: `{installs: {<pluginId>: record}}` (or a bare map) → plugin "plugins", namespace "installs", one key per plugin. */
export const pluginInstallsImporter = jsonRowsImporter({
  kind: "plugin-installs",
  label: { one: "legacy plugin install index", many: "legacy plugin install indexes", records: "plugins" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect: (ctx) => fileSource("plugin-installs", ctx.root, "plugins/installs.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    const map = isObject(v.installs) ? v.installs : Object.fromEntries(Object.entries(v).filter(([k]) => k !== "version"));
    const rows = Object.entries(map).map(([id, rec]) => entry("plugins", "installs", id, rec, source.mtimeMs));
    return { records: rows.length, rows };
  },
});

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
