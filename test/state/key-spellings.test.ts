// Rows an earlier openclaw-state keyed as design-v1 spelled them, in a 9.6-format DB: found, re-spelled, the dropped copy kept.
import fs from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { findMisspelledRows, misspelledFingerprint, openclawSpelling, respellKeys } from "../../src/state/key-spellings.js";
import { createOpenclawDatabase } from "../../src/state/openclaw-database.js";
import { openLeaseDatabase } from "../../src/state/lease.js";
import { makeTempState, type TempState } from "../helpers/temp-state.js";

function seeded(seed: (db: Database.Database) => void): TempState {
  const state = makeTempState();
  fs.mkdirSync(state.stateDir, { recursive: true, mode: 0o700 });
  const db = createOpenclawDatabase({ path: state.paths.globalDbPath, role: "global" });
  try {
    seed(db);
  } finally {
    db.close();
  }
  return state;
}

const sandbox = (db: Database.Database, kind: string, name: string, updatedAt: number, image = "img"): void => {
  db.prepare("INSERT INTO sandbox_registry_entries (registry_kind, container_name, session_key, image, entry_json, updated_at) VALUES (?, ?, 'agent:main:main', ?, '{}', ?)").run(kind, name, image, updatedAt);
};
const sentinel = (db: Database.Database, key: string, ts: number, message: string): void => {
  db.prepare("INSERT INTO gateway_restart_sentinel (sentinel_key, version, kind, status, ts, message, payload_json, updated_at_ms) VALUES (?, 1, 'restart', 'ok', ?, ?, '{}', ?)").run(key, ts, message, ts);
};
const identity = (db: Database.Database, key: string, deviceId: string, at: number): void => {
  db.prepare("INSERT INTO device_identities (identity_key, device_id, public_key_pem, private_key_pem, created_at_ms, updated_at_ms) VALUES (?, ?, 'pub', 'priv', ?, ?)").run(key, deviceId, at, at);
};

function rows(file: string, sql: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).raw().all();
  } finally {
    db.close();
  }
}

describe("key spellings", () => {
  it("maps design-v1 spellings to OpenClaw's and leaves the rest", () => {
    expect(openclawSpelling("sandbox_registry_entries", "registry_kind", "browsers")).toBe("browser");
    expect(openclawSpelling("gateway_restart_sentinel", "sentinel_key", "default")).toBe("current");
    expect(openclawSpelling("gateway_restart_sentinel", "sentinel_key", "other")).toBe("other");
    expect(openclawSpelling("cron_jobs", "store_key", "default")).toBe("default");
  });

  it("renames a row alone under its key, and on a collision keeps the newer row and copies the other to the kept file", () => {
    const state = seeded((db) => {
      sandbox(db, "containers", "c-alone", 100);
      sandbox(db, "browsers", "b-newer", 300, "new-image");
      sandbox(db, "browser", "b-newer", 200, "runtime-image");
      sandbox(db, "containers", "c-older", 100, "old-image");
      sandbox(db, "container", "c-older", 500, "runtime-image");
      sentinel(db, "default", 700, "from the import");
      identity(db, "default", "dev-1", 10);
    });
    const db = openLeaseDatabase(state.paths, "write");
    try {
      const found = findMisspelledRows(db);
      expect(found.map((r) => [r.spelling.table, r.fromKey, r.action])).toEqual([
        ["device_identities", '{"identity_key":"default"}', "rename"],
        ["gateway_restart_sentinel", '{"sentinel_key":"default"}', "rename"],
        ["sandbox_registry_entries", '{"registry_kind":"containers","container_name":"c-alone"}', "rename"],
        ["sandbox_registry_entries", '{"registry_kind":"containers","container_name":"c-older"}', "keep-existing"],
        ["sandbox_registry_entries", '{"registry_kind":"browsers","container_name":"b-newer"}', "replace-older"],
      ]);
      const result = respellKeys(db, state.stateDir, 1_000, misspelledFingerprint(found));
      expect(result.changedSinceScan).toBe(false);
      expect(result.keptRowsPath).toMatch(/migrated\/key-spellings-1970-01-01T00-00-01-000Z\/global\.sqlite$/);
      expect(findMisspelledRows(db)).toEqual([]);
    } finally {
      db.close();
    }
    const file = state.paths.globalDbPath;
    expect(rows(file, "SELECT registry_kind, container_name, image, updated_at FROM sandbox_registry_entries ORDER BY container_name")).toEqual([
      ["browser", "b-newer", "new-image", 300],
      ["container", "c-alone", "img", 100],
      ["container", "c-older", "runtime-image", 500],
    ]);
    expect(rows(file, "SELECT sentinel_key, message FROM gateway_restart_sentinel")).toEqual([["current", "from the import"]]);
    expect(rows(file, "SELECT identity_key, device_id FROM device_identities")).toEqual([["primary", "dev-1"]]);
    // Both dropped copies, each whole, under the key it had.
    const kept = rows(fs.readdirSync(`${state.stateDir}/migrated`).map((d) => `${state.stateDir}/migrated/${d}/global.sqlite`)[0]!, "SELECT side, table_name, key_json, json_extract(row_json, '$.image'), live_updated_at, staged_updated_at FROM merge_kept ORDER BY key_json");
    expect(kept).toEqual([
      ["live-replaced", "sandbox_registry_entries", '{"registry_kind":"browser","container_name":"b-newer"}', "runtime-image", 200, 300],
      ["live-replaced", "sandbox_registry_entries", '{"registry_kind":"containers","container_name":"c-older"}', "old-image", 100, 500],
    ]);
  });

  it("keeps the runtime's row on a tie, and changes nothing when the rows changed since the scan", () => {
    const state = seeded((db) => {
      sentinel(db, "default", 700, "imported");
      sentinel(db, "current", 700, "runtime");
    });
    const db = openLeaseDatabase(state.paths, "write");
    try {
      const found = findMisspelledRows(db);
      expect(found.map((r) => r.action)).toEqual(["keep-existing"]);
      const stale = respellKeys(db, state.stateDir, 1_000, "not what was scanned");
      expect(stale).toMatchObject({ changedSinceScan: true, keptRowsPath: null });
      expect(fs.existsSync(`${state.stateDir}/migrated`)).toBe(false);
      expect(rows(state.paths.globalDbPath, "SELECT sentinel_key, message FROM gateway_restart_sentinel ORDER BY sentinel_key")).toEqual([
        ["current", "runtime"],
        ["default", "imported"],
      ]);
      respellKeys(db, state.stateDir, 1_000, misspelledFingerprint(found));
    } finally {
      db.close();
    }
    expect(rows(state.paths.globalDbPath, "SELECT sentinel_key, message FROM gateway_restart_sentinel")).toEqual([["current", "runtime"]]);
  });

  it("looks only at OpenClaw's current format (design-v1 is re-spelled by the format upgrade)", () => {
    const state = makeTempState();
    fs.mkdirSync(state.stateDir, { recursive: true, mode: 0o700 });
    const db = openLeaseDatabase(state.paths, "write");
    try {
      expect(db.format.id).not.toBe("openclaw");
      expect(findMisspelledRows(db)).toEqual([]);
    } finally {
      db.close();
    }
  });
});
