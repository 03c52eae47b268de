// End to end: the real binary names rows an earlier openclaw-state keyed as design-v1 spelled them, --fix re-spells them; a rerun is a no-op.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createOpenclawDatabase } from "../../src/state/openclaw-database.js";
import { makeTempState, runBin } from "../helpers/temp-state.js";
import { doctorJson, type DoctorJson } from "../helpers/doctor-json.js";

const json = doctorJson;

const ACPX = 'plugin_state_entries {"plugin_id":"acpx","namespace":"gateway-instance","entry_key":"current"}';
const spellingIds = (doc: DoctorJson) => doc.findings.filter((f) => f.id === "storage.key-spelling").map((f) => f.severity);

describe("openclaw-state doctor on a 9.6-format state with design-v1 key spellings", () => {
  it("warns, --fix --yes re-spells behind a verified backup (exit 0), keeps the older copy, the rerun changes nothing", async () => {
    const state = makeTempState();
    fs.mkdirSync(state.stateDir, { recursive: true, mode: 0o700 });
    const db = createOpenclawDatabase({ path: state.paths.globalDbPath, role: "global" });
    db.prepare("INSERT INTO sandbox_registry_entries (registry_kind, container_name, image, entry_json, updated_at) VALUES ('containers', 'c1', 'old', '{}', 100), ('container', 'c1', 'runtime', '{}', 200), ('browsers', 'b1', 'img', '{}', 50)").run();
    db.prepare("INSERT INTO gateway_restart_sentinel (sentinel_key, version, kind, status, ts, payload_json, updated_at_ms) VALUES ('default', 1, 'restart', 'ok', 10, '{}', 10)").run();
    db.prepare(`INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at) VALUES ('acpx', 'gateway-instance', 'current', '{"version":1,"id":"gw-1"}', 1700)`).run();
    db.close();
    const env = { ...state.env, OPENCLAW_BACKUP_DIR: path.join(state.root, "archives") };

    const check = await runBin(["doctor", "--json"], env);
    expect(spellingIds(json(check))).toEqual(["warning"]);

    const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(fix.code).toBe(0);
    const fixed = json(fix);
    const repair = fixed.repairs.find((r) => r.id === "storage.key-spelling.respell")!;
    expect(repair.status).toBe("applied");
    expect(repair.rows!.moved.map((m) => [m.from, m.to, m.action])).toEqual([
      ['gateway_restart_sentinel {"sentinel_key":"default"}', 'gateway_restart_sentinel {"sentinel_key":"current"}', "moved"],
      ['sandbox_registry_entries {"registry_kind":"containers","container_name":"c1"}', 'sandbox_registry_entries {"registry_kind":"container","container_name":"c1"}', "superseded"],
      ['sandbox_registry_entries {"registry_kind":"browsers","container_name":"b1"}', 'sandbox_registry_entries {"registry_kind":"browser","container_name":"b1"}', "moved"],
      [`${ACPX} {"version":1,"id":…}`, `${ACPX} {"instanceId":"gw-1","createdAt":1700}`, "moved"],
    ]);
    expect(fs.existsSync(repair.rows!.backupPath!)).toBe(true);
    expect(spellingIds(fixed)).toEqual([]);
    const live = new Database(state.paths.globalDbPath, { readonly: true });
    expect(live.prepare("SELECT registry_kind, container_name, image FROM sandbox_registry_entries ORDER BY container_name").raw().all()).toEqual([
      ["browser", "b1", "img"],
      ["container", "c1", "runtime"],
    ]);
    expect(live.prepare("SELECT sentinel_key FROM gateway_restart_sentinel").pluck().all()).toEqual(["current"]);
    expect(live.prepare("SELECT value_json FROM plugin_state_entries WHERE plugin_id = 'acpx'").pluck().all()).toEqual(['{"instanceId":"gw-1","createdAt":1700}']);
    live.close();
    const keptDirs = fs.readdirSync(path.join(state.stateDir, "migrated")).filter((d) => d.startsWith("key-spellings-"));
    expect(keptDirs).toHaveLength(1);
    // One kept file: the superseded sandbox row and the ACPX row as it was.
    const kept = new Database(path.join(state.stateDir, "migrated", keptDirs[0]!, "global.sqlite"), { readonly: true });
    expect(kept.prepare("SELECT table_name, json_extract(row_json, '$.value_json') FROM merge_kept ORDER BY table_name").raw().all()).toEqual([
      ["plugin_state_entries", '{"version":1,"id":"gw-1"}'],
      ["sandbox_registry_entries", null],
    ]);
    kept.close();

    const before = fs.readFileSync(state.paths.globalDbPath);
    const again = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(again.code).toBe(0);
    expect(json(again).repairs.filter((r) => r.id === "storage.key-spelling.respell")).toEqual([]);
    expect(fs.readFileSync(state.paths.globalDbPath).equals(before)).toBe(true);
  });

  it("names an ACPX gateway instance row of neither shape (info) and --fix leaves it as it is", async () => {
    const state = makeTempState();
    fs.mkdirSync(state.stateDir, { recursive: true, mode: 0o700 });
    const db = createOpenclawDatabase({ path: state.paths.globalDbPath, role: "global" });
    db.prepare(`INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at) VALUES ('acpx', 'gateway-instance', 'current', '{"version":2,"id":"gw-1"}', 1700)`).run();
    db.close();
    const env = { ...state.env, OPENCLAW_BACKUP_DIR: path.join(state.root, "archives") };
    const check = json(await runBin(["doctor", "--json"], env));
    expect(check.findings.filter((f) => f.id.startsWith("storage.key-spelling")).map((f) => [f.id, f.severity])).toEqual([["storage.key-spelling.left", "info"]]);
    const before = fs.readFileSync(state.paths.globalDbPath);
    const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(fix.code).toBe(0);
    expect(json(fix).repairs.filter((r) => r.id === "storage.key-spelling.respell")).toEqual([]);
    expect(fs.readFileSync(state.paths.globalDbPath).equals(before)).toBe(true);
    expect(fs.existsSync(path.join(state.stateDir, "migrated"))).toBe(false);
  });
});
