// Importer: agents/<id>/agent/models.json → agent_model_catalogs, keyed by the agent dir relative to the state dir.
import path from "node:path";
import { tryNormalizeAgentId } from "../../state/agent-id.js";
import { isObject, shapeError } from "../json-source.js";
import { fileSource, jsonRowsImporter, row } from "./json-rows.js";

export const modelCatalogsImporter = jsonRowsImporter({
  kind: "model-catalog",
  label: { one: "legacy model catalog", many: "legacy model catalogs", records: "providers" },
  targetTable: "agent_model_catalogs",
  targetTables: ["agent_model_catalogs"],
  detect: (ctx) => ctx.agentDirs.flatMap((a) => fileSource("model-catalog", ctx.root, `agents/${a.agentId}/agent/models.json`, a.agentId)),
  rows(value, source, paths) {
    if (!isObject(value)) throw shapeError(source.path, "an object", value);
    // catalog_key: the agent dir relative to the state dir (stable across moves of the state dir);
    // agent_dir: where that dir is now (a legacy ~/.clawdbot tree is moved to the state dir before import).
    const catalogKey = path.posix.dirname(source.relativePath);
    const providers = isObject(value.providers) ? Object.keys(value.providers).length : 0;
    return {
      records: providers,
      rows: [
        row("agent_model_catalogs", ["catalog_key"], {
          catalog_key: catalogKey,
          agent_dir: path.join(paths.stateDir, ...catalogKey.split("/")),
          raw_json: JSON.stringify(value),
          updated_at: source.mtimeMs,
        }),
      ],
    };
  },
});

/**
 * Where OpenClaw 2026.9.6 reads an agent's model catalog (a live file there, not a legacy source): the file this
 * importer retired, for `migrate upgrade` to put back. Null for a key that is not `agents/<valid id>/agent`.
 */
export function modelCatalogFile(stateDir: string, catalogKey: string): string | null {
  const parts = catalogKey.split("/");
  if (parts.length !== 3 || parts[0] !== "agents" || parts[2] !== "agent" || !parts[1] || tryNormalizeAgentId(parts[1]) !== parts[1]) return null;
  return path.join(stateDir, "agents", parts[1], "agent", "models.json");
}
