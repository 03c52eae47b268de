// Importers: device identity (identity/device.json), device auth tokens (identity/device-auth.json),
// device pairing (devices/{paired,pending,bootstrap}.json) and node pairing (nodes/*.json).
// Private keys and tokens go into the database only: notes and warnings carry ids and counts.
import path from "node:path";
import { isObject, sha256Of, shapeError } from "../json-source.js";
import { parseJsonObject } from "../../state/upgrade/upgrade-global-context.js";
import { pairedDeviceRecord } from "../../state/upgrade/upgrade-global-devices.js";
import { dirSources, fileSource, json, jsonRowsImporter, ms, row, str, type RowSpec } from "./json-rows.js";

/** Pairing files are maps id → record; an array of records (older writers) is read by each record's id. */
function recordsOf(file: string, value: unknown, idField: string): Array<[string, Record<string, unknown>]> {
  if (Array.isArray(value)) {
    return value.filter(isObject).map((r, i) => [str(r[idField]) ?? String(i), r]);
  }
  if (!isObject(value)) throw shapeError(file, "an object map of records", value);
  return Object.entries(value).filter((e): e is [string, Record<string, unknown>] => isObject(e[1]));
}

export const deviceIdentityImporter = jsonRowsImporter({
  kind: "device-identity",
  label: { one: "legacy device identity", many: "legacy device identities", records: "identities" },
  targetTable: "device_identities",
  targetTables: ["device_identities"],
  detect: (ctx) => fileSource("device-identity", ctx.root, "identity/device.json"),
  rows(value, source) {
    if (!isObject(value)) throw shapeError(source.path, "an object", value);
    const deviceId = str(value.deviceId);
    if (!deviceId) throw shapeError(source.path, 'an object with a "deviceId" string', value.deviceId);
    return {
      records: 1,
      rows: [
        row("device_identities", ["identity_key"], {
          identity_key: "default",
          device_id: deviceId,
          // PEMs as written: OpenClaw 2026.9.6 requires canonical framing (a trailing newline) and rejects a trimmed key.
          public_key_pem: str(value.publicKeyPem) === null ? null : (value.publicKeyPem as string),
          private_key_pem: typeof value.privateKeyPem === "string" ? value.privateKeyPem : null,
          created_at_ms: ms(value.createdAtMs),
          updated_at_ms: source.mtimeMs,
        }),
      ],
    };
  },
});

export const deviceAuthImporter = jsonRowsImporter({
  kind: "device-auth",
  label: { one: "legacy device auth store", many: "legacy device auth stores", records: "tokens" },
  targetTable: "device_auth_tokens",
  targetTables: ["device_auth_tokens"],
  detect: (ctx) => fileSource("device-auth", ctx.root, "identity/device-auth.json"),
  rows(value, source) {
    if (!isObject(value) || !isObject(value.tokens)) throw shapeError(source.path, 'an object with a "tokens" map', value);
    const deviceId = str(value.deviceId);
    if (!deviceId) throw shapeError(source.path, 'an object with a "deviceId" string', value.deviceId);
    const rows: RowSpec[] = [];
    let skipped = 0;
    for (const [roleKey, entry] of Object.entries(value.tokens)) {
      const token = isObject(entry) && typeof entry.token === "string" && entry.token !== "" ? entry.token : null;
      if (!isObject(entry) || token === null) {
        skipped += 1;
        continue;
      }
      rows.push(
        row("device_auth_tokens", ["device_id", "role"], {
          device_id: deviceId,
          role: str(entry.role) ?? roleKey.trim(),
          token,
          scopes_json: json(Array.isArray(entry.scopes) ? entry.scopes : []),
          updated_at_ms: ms(entry.updatedAtMs) ?? source.mtimeMs,
        }),
      );
    }
    const warnings = skipped > 0 ? [`${skipped} role(s) without a token were skipped`] : [];
    return { records: Object.keys(value.tokens).length, rows, skipped, warnings };
  },
});

const PAIRING_LISTS = ["paired", "pending", "bootstrap"] as const;

export const devicePairingImporter = jsonRowsImporter({
  kind: "device-pairing",
  label: { one: "legacy device pairing file", many: "legacy device pairing files", records: "entries" },
  targetTable: "device_pairing_entries",
  targetTables: ["device_pairing_entries"],
  detect: (ctx) => PAIRING_LISTS.flatMap((l) => fileSource("device-pairing", ctx.root, `devices/${l}.json`)),
  rows(value, source) {
    const list = path.posix.basename(source.relativePath, ".json") as (typeof PAIRING_LISTS)[number];
    const records = recordsOf(source.path, value, "deviceId");
    const rows: RowSpec[] = [];
    const notes: string[] = [];
    let hashedKeys = 0;
    for (const [key, r] of records) {
      let deviceId = str(r.deviceId);
      if (!deviceId && list === "bootstrap") {
        // Bootstrap maps may be keyed by their one-time token: never use that key as an id.
        deviceId = `bootstrap:${sha256Of(key).slice(0, 16)}`;
        hashedKeys += 1;
      }
      deviceId ??= key;
      const roles = Array.isArray(r.roles) ? r.roles.filter((x): x is string => typeof x === "string") : [];
      const created = ms(r.createdAtMs) ?? ms(r.ts);
      rows.push(
        row(
          "device_pairing_entries",
          ["list_kind", "device_id"],
          {
            list_kind: list,
            device_id: deviceId,
            role: str(r.role) ?? roles[0] ?? null,
            entry_json: JSON.stringify(r),
            created_at_ms: created,
            updated_at_ms: ms(r.approvedAtMs) ?? ms(r.ts) ?? created ?? source.mtimeMs,
          },
          // Two pending requests of one device: the newest one stays.
          { newerColumn: "updated_at_ms" },
        ),
      );
    }
    if (hashedKeys > 0) notes.push(`${hashedKeys} bootstrap entr(ies) without a deviceId are keyed by a hash of their map key`);
    return { records: records.length, rows, notes };
  },
  // 2026.9.6 keeps only valid paired devices (the upgrade's own test): pending and bootstrap files reach nothing.
  reaches: (result) => ({ device_pairing_entries: result.rows.some((r) => r.values.list_kind === "paired" && pairedDeviceRecord(r.values.device_id, r.values.entry_json) !== null) }),
});

export const nodePairingImporter = jsonRowsImporter({
  kind: "node-pairing",
  label: { one: "legacy node pairing file", many: "legacy node pairing files", records: "nodes" },
  targetTable: "node_pairing_entries",
  targetTables: ["node_pairing_entries"],
  detect: (ctx) => dirSources("node-pairing", ctx.root, "nodes", (n) => n.endsWith(".json")),
  rows(value, source) {
    const records = recordsOf(source.path, value, "nodeId");
    // A paired node is authoritative; other lists (pending requests) only fill nodes not paired yet.
    const paired = path.posix.basename(source.relativePath) === "paired.json";
    const rows = records.map(([key, r]) =>
      row(
        "node_pairing_entries",
        ["node_id"],
        {
          node_id: str(r.nodeId) ?? key,
          entry_json: JSON.stringify(r),
          updated_at_ms: ms(r.approvedAtMs) ?? ms(r.ts) ?? ms(r.createdAtMs) ?? source.mtimeMs,
        },
        paired ? {} : { mode: "keep" },
      ),
    );
    return { records: records.length, rows };
  },
  // A pending request (a record with a requestId) is dropped; a paired node lands only if devices/paired.json pairs
  // its device as a node: another file, so with any paired node here the `(if …)` stays.
  reaches: (result): Record<string, boolean> => (result.rows.some((r) => typeof parseJsonObject(r.values.entry_json)?.requestId !== "string") ? {} : { node_pairing_entries: false }),
});
