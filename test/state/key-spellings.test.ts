// Rows an earlier openclaw-state keyed as design-v1 spelled them, in a 9.6-format DB: found, re-spelled, the dropped copy kept.
import fs from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { classifyAcpxGatewayValue } from "../../src/state/acpx-gateway-record.js";
import { findAcpxGatewayRow, findMisspelledRows, misspelledFingerprint, openclawSpelling, respellKeys } from "../../src/state/key-spellings.js";
import { createOpenclawDatabase } from "../../src/state/openclaw-database.js";
import { openLeaseDatabase } from "../../src/state/open-lease-database.js";
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

const acpxGateway = (db: Database.Database, valueJson: string, createdAt: unknown = 1_700): void => {
  db.prepare("INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at) VALUES ('acpx', 'gateway-instance', 'current', ?, ?)").run(valueJson, createdAt);
};
const ACPX_KEY = '{"plugin_id":"acpx","namespace":"gateway-instance","entry_key":"current"}';

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
  it("rewrites the ACPX gateway instance id an earlier build stored as {version: 1, id}, the old row kept in the same file as the re-spelled rows", () => {
    const state = seeded((db) => {
      acpxGateway(db, '{"version":1,"id":" gw-1 "}');
      sentinel(db, "default", 700, "imported");
      sentinel(db, "current", 800, "runtime");
    });
    const db = openLeaseDatabase(state.paths, "write");
    try {
      const acpx = findAcpxGatewayRow(db);
      expect(acpx).toMatchObject({ key: ACPX_KEY, value: { kind: "earlier", valueJson: '{"instanceId":"gw-1","createdAt":1700}' } });
      const found = findMisspelledRows(db);
      // The fingerprint covers the ACPX row: one scanned without it does not match.
      expect(respellKeys(db, state.stateDir, 1_000, misspelledFingerprint(found))).toMatchObject({ changedSinceScan: true, keptRowsPath: null });
      const result = respellKeys(db, state.stateDir, 1_000, misspelledFingerprint(found, acpx));
      expect(result).toMatchObject({ changedSinceScan: false, acpx: { value: { kind: "earlier" } } });
      expect(findAcpxGatewayRow(db)).toBeNull();
    } finally {
      db.close();
    }
    expect(rows(state.paths.globalDbPath, "SELECT value_json, created_at FROM plugin_state_entries")).toEqual([['{"instanceId":"gw-1","createdAt":1700}', 1_700]]);
    const kept = rows(`${state.stateDir}/migrated/key-spellings-1970-01-01T00-00-01-000Z/global.sqlite`, "SELECT side, table_name, key_json, json_extract(row_json, '$.value_json') FROM merge_kept ORDER BY table_name");
    expect(kept).toEqual([
      ["live-replaced", "gateway_restart_sentinel", '{"sentinel_key":"default"}', null],
      ["live-replaced", "plugin_state_entries", ACPX_KEY, '{"version":1,"id":" gw-1 "}'],
    ]);
  });

  it("names an ACPX gateway instance row of any other shape and leaves it; the runtime's own shape is not named", () => {
    const cases: Array<[string, unknown, string | null]> = [
      ['{"instanceId":"gw-1","createdAt":5}', 1, null],
      ['{"instanceId":"gw-1"}', 1, null],
      ['{"version":1,"id":"gw-1","extra":true}', 1, "neither"],
      ['{"version":2,"id":"gw-1"}', 1, "neither"],
      ['{"version":1,"id":"  "}', 1, "neither"],
      ['{"instanceId":" "}', 1, "neither"],
      ['"gw-1"', 1, "neither"],
    ];
    for (const [valueJson, createdAt, reason] of cases) {
      const state = seeded((db) => acpxGateway(db, valueJson, createdAt));
      const db = openLeaseDatabase(state.paths, "write");
      try {
        const acpx = findAcpxGatewayRow(db);
        if (reason === null) expect(acpx, valueJson).toBeNull();
        else expect(acpx?.value.kind === "other" && acpx.value.reason, valueJson).toContain(reason);
        const result = respellKeys(db, state.stateDir, 1_000, misspelledFingerprint([], acpx));
        expect(result.keptRowsPath).toBeNull();
      } finally {
        db.close();
      }
      expect(rows(state.paths.globalDbPath, "SELECT value_json, created_at FROM plugin_state_entries")).toEqual([[valueJson, createdAt]]);
    }
  });

  it("leaves a {version: 1, id} whose created_at is no time (a table without STRICT may hold one)", () => {
    expect(classifyAcpxGatewayValue('{"version":1,"id":"gw-1"}', "yesterday")).toMatchObject({ kind: "other", reason: expect.stringContaining("created_at") });
    expect(classifyAcpxGatewayValue('{"id":"gw-1","version":1}', 5)).toEqual({ kind: "earlier", valueJson: '{"instanceId":"gw-1","createdAt":5}' });
  });

  it("names a value that is not JSON and leaves it", () => {
    const state = seeded((db) => {
      // The schema's CHECK (json_valid) stops such a row; a hostile file may have been written without it.
      db.pragma("ignore_check_constraints = ON");
      acpxGateway(db, "{version:1");
    });
    const db = openLeaseDatabase(state.paths, "write");
    try {
      expect(findAcpxGatewayRow(db)?.value).toEqual({ kind: "other", reason: "value_json is not valid JSON" });
      expect(respellKeys(db, state.stateDir, 1_000).keptRowsPath).toBeNull();
    } finally {
      db.close();
    }
    expect(rows(state.paths.globalDbPath, "SELECT value_json FROM plugin_state_entries")).toEqual([["{version:1"]]);
  });
});
