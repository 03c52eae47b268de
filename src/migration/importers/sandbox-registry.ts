// Importer: sandbox/containers.json, sandbox/browsers.json and their sharded dirs → sandbox_registry_entries.
import path from "node:path";
import { isObject, shapeError } from "../json-source.js";
import { dirSources, fileSource, jsonRowsImporter, ms, num, row, str, type RowSpec } from "./json-rows.js";

const KINDS = ["containers", "browsers"] as const;

function entriesOf(file: string, value: unknown, sharded: boolean): Record<string, unknown>[] {
  if (sharded) {
    if (!isObject(value)) throw shapeError(file, "a registry entry object", value);
    return [value];
  }
  if (!isObject(value) || !Array.isArray(value.entries)) throw shapeError(file, 'an object with an "entries" array', value);
  return value.entries.filter(isObject);
}

export const sandboxRegistryImporter = jsonRowsImporter({
  kind: "sandbox-registry",
  label: { one: "legacy sandbox registry file", many: "legacy sandbox registry files", records: "entries" },
  targetTable: "sandbox_registry_entries",
  targetTables: ["sandbox_registry_entries"],
  detect: (ctx) =>
    KINDS.flatMap((k) => [
      ...fileSource("sandbox-registry", ctx.root, `sandbox/${k}.json`),
      ...dirSources("sandbox-registry", ctx.root, `sandbox/${k}`, (n) => n.endsWith(".json")),
    ]),
  rows(value, source) {
    const rel = source.relativePath.split("/");
    const sharded = rel.length === 3;
    const kind = sharded ? rel[1]! : path.posix.basename(source.relativePath, ".json");
    const entries = entriesOf(source.path, value, sharded);
    const rows: RowSpec[] = [];
    let skipped = 0;
    for (const e of entries) {
      const name = str(e.containerName);
      if (!name) {
        skipped += 1;
        continue;
      }
      const container = kind === "containers";
      rows.push(
        row(
          "sandbox_registry_entries",
          ["registry_kind", "container_name"],
          {
            registry_kind: kind,
            container_name: name,
            session_key: str(e.sessionKey),
            // The runtime's defaults for container entries written before these fields existed.
            backend_id: str(e.backendId) ?? (container ? "docker" : null),
            runtime_label: str(e.runtimeLabel) ?? (container ? name : null),
            image: str(e.image),
            created_at_ms: ms(e.createdAtMs),
            last_used_at_ms: ms(e.lastUsedAtMs),
            config_label_kind: str(e.configLabelKind) ?? (container ? "Image" : null),
            config_hash: str(e.configHash),
            cdp_port: num(e.cdpPort),
            no_vnc_port: num(e.noVncPort),
            entry_json: JSON.stringify(e),
            updated_at: ms(e.lastUsedAtMs) ?? source.mtimeMs,
          },
          // The monolithic file and a shard may both hold a container: the most recently used one wins.
          { newerColumn: "last_used_at_ms" },
        ),
      );
    }
    const warnings = skipped > 0 ? [`${skipped} entr(ies) without a containerName were skipped`] : [];
    return { records: entries.length, rows, skipped, warnings };
  },
});
