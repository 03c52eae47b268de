// Importer: agents/<id>/agent/models.json → agent_model_catalogs, keyed by the agent dir relative to the state dir.
import path from "node:path";
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
