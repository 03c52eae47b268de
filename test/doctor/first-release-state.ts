// Test state as the first release (commit b9e032d) left it: legacy files retired, their contents under unread keys.
import fs from "node:fs";
import path from "node:path";
import type { StatePaths } from "../../src/state/paths.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { migrate, rows } from "../helpers/migration.js";
import { makeTempState } from "../helpers/temp-state.js";

/** The legacy files' mtime: the first release stored it as created_at, the current importer as the target's time. */
export const FIRST_RELEASE_MTIME = 1_767_000_000_000;

export type LegacyFiles = Partial<Record<"gateway-instance-id" | "plugins/installs.json", string>>;

export interface FirstReleaseRow {
  plugin_id: string;
  namespace: string;
  entry_key: string;
  value_json: string;
  created_at: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The rows b9e032d's importers wrote, written out independently of the code under test (checked against a real
 * run of that commit's binary on fixtures/migration/{acpx,plugin-index}).
 */
export function firstReleaseRows(files: LegacyFiles, createdAt = FIRST_RELEASE_MTIME): FirstReleaseRow[] {
  const out: FirstReleaseRow[] = [];
  const id = files["gateway-instance-id"];
  if (id !== undefined) out.push({ plugin_id: "gateway", namespace: "instance", entry_key: "id", value_json: JSON.stringify(id.trim()), created_at: createdAt });
  const installs = files["plugins/installs.json"];
  if (installs !== undefined) {
    const v = JSON.parse(installs) as Record<string, unknown>;
    const map = isObject(v.installs) ? v.installs : Object.fromEntries(Object.entries(v).filter(([k]) => k !== "version"));
    for (const [key, rec] of Object.entries(map)) out.push({ plugin_id: "plugins", namespace: "installs", entry_key: key, value_json: JSON.stringify(rec), created_at: createdAt });
  }
  return out;
}

/** Writes rows through the real schema (its CHECKs and keys), creating the global DB when needed. */
export function insertEntries(paths: StatePaths, entries: FirstReleaseRow[]): void {
  const db = openGlobalDatabase(paths, { mode: "write", create: true });
  try {
    for (const e of entries) db.run(db.q.insertInto("plugin_state_entries").values({ ...e, expires_at: null }));
  } finally {
    db.close();
  }
}

/** A state the first release migrated: the files moved under migrated/<run>/, their rows under the unread keys. */
export function firstReleaseState(files: LegacyFiles, extra: FirstReleaseRow[] = []) {
  const state = makeTempState();
  fs.mkdirSync(state.stateDir, { recursive: true, mode: 0o700 });
  insertEntries(state.paths, [...firstReleaseRows(files), ...extra]);
  for (const [rel, text] of Object.entries(files)) {
    const retired = path.join(state.stateDir, "migrated", "20261202T122543000Z-first", ...rel.split("/"));
    fs.mkdirSync(path.dirname(retired), { recursive: true, mode: 0o700 });
    fs.writeFileSync(retired, text, { mode: 0o600 });
  }
  return state;
}

/** What the current importer writes for the same files (same mtime), read back from a fresh state. */
export async function importedNow(files: LegacyFiles): Promise<{ entries: FirstReleaseRow[]; index: Record<string, unknown>[] }> {
  const { paths, stateDir } = makeTempState();
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(stateDir, ...rel.split("/"));
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, text, { mode: 0o600 });
    fs.utimesSync(file, FIRST_RELEASE_MTIME / 1000, FIRST_RELEASE_MTIME / 1000);
  }
  await migrate(paths);
  return {
    entries: rows<FirstReleaseRow>(paths.globalDbPath, "SELECT plugin_id, namespace, entry_key, value_json, created_at FROM plugin_state_entries ORDER BY 1, 2, 3"),
    index: rows(paths.globalDbPath, "SELECT * FROM installed_plugin_index"),
  };
}
