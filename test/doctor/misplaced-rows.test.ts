// The misplaced-rows check: rows the first release imported under unread keys are reported, moved by --fix with the
// importer's own conversion, never over a newer row, and a rerun is clean.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { FIRST_RELEASE_LOCATIONS } from "../../src/doctor/checks/misplaced-rows-check.js";
import { runDoctor, type DoctorResult } from "../../src/doctor/run-doctor.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { rows, stagedDbFile } from "../helpers/migration.js";
import { fixturesDir } from "../helpers/temp-state.js";
import { FIRST_RELEASE_MTIME, firstReleaseRows, firstReleaseState, importedNow, insertEntries, type FirstReleaseRow, type LegacyFiles } from "./first-release-state.js";

const WHOLE_INDEX = fs.readFileSync(path.join(fixturesDir, "migration/plugin-index/plugins/installs.json"), "utf8");
const SECRET = "npm_SECRETtoken0123456789";
// An older install map, one record carrying a credential in its registry URL.
const OLD_MAP = JSON.stringify({ version: 3, installs: { "voice-call": { source: "npm", spec: "@openclaw/voice-call@1.2.0" }, private: { source: "npm", registry: `https://u:${SECRET}@npm.example` } } });
const FILES: LegacyFiles = { "gateway-instance-id": "gw-instance-42\n", "plugins/installs.json": WHOLE_INDEX };

// After --fix the state is in OpenClaw's format, where the check says it was skipped (an info line, not a finding).
const misplaced = (r: DoctorResult) => r.findings.filter((f) => f.id.startsWith("misplaced-rows.") && f.id !== "misplaced-rows.skipped");

function entries(file: string): FirstReleaseRow[] {
  return rows<FirstReleaseRow>(file, "SELECT plugin_id, namespace, entry_key, value_json, created_at FROM plugin_state_entries ORDER BY 1, 2, 3");
}

/** The sqlite3 CLI as a reader independent of better-sqlite3 and of this code. */
function sqlite3(file: string, sql: string): string {
  return execFileSync("sqlite3", ["-readonly", file, sql], { encoding: "utf8" }).trim();
}

describe("doctor: rows the first release imported under unread keys", () => {
  it("check mode names each row and where it belongs, and changes nothing", async () => {
    const { paths } = firstReleaseState(FILES);
    const before = fs.readFileSync(paths.globalDbPath);
    const result = await runDoctor({ paths });
    const found = misplaced(result);
    expect(found.map((f) => [f.id, f.severity])).toEqual([
      ["misplaced-rows.gateway-instance-id", "warning"],
      ["misplaced-rows.plugin-installs", "warning"],
    ]);
    expect(found[0]!.title).toContain('under plugin_state_entries ("gateway", "instance", "id")');
    expect(found[0]!.title).toContain('belong in plugin_state_entries ("acpx", "gateway-instance", "current")');
    expect(found[1]!.title).toMatch(/^9 row\(s\) .* from plugins\/installs\.json .*belong in installed_plugin_index \("default"\)$/);
    expect(found[1]!.detail).toContain('plugin_state_entries ("plugins", "installs", "installRecords")');
    expect(result.status).toBe("warnings");
    expect(fs.readFileSync(paths.globalDbPath).equals(before)).toBe(true);
    expect(fs.existsSync(`${paths.globalDbPath}-wal`)).toBe(false);
    // Values are never shown (an instance id, install records with credentials): only keys.
    expect(JSON.stringify(result)).not.toContain("gw-instance-42");
  });

  it("--fix builds the rows exactly as the importer does from the file, in their place; a rerun is clean", async () => {
    const { paths } = firstReleaseState(FILES);
    const fixed = await runDoctor({ paths, fix: true });
    const repair = fixed.repairs.find((r) => r.id === "misplaced-rows.move");
    expect(repair).toMatchObject({ status: "applied" });
    expect(repair!.detail).toBe(`gateway-instance-id: moved 1 first-release row(s) to plugin_state_entries ("acpx", "gateway-instance", "current"); plugins/installs.json: moved 9 first-release row(s) to installed_plugin_index ("default"); covered by ${repair!.rows!.backupPath}`);
    // Every row by name, from → to (in the typed result, hence in --json).
    const index = 'installed_plugin_index ("default")';
    expect(repair!.rows).toEqual({
      backupPath: expect.stringMatching(/\.tar\.(gz|zst)$/),
      moved: [
        { from: 'plugin_state_entries ("gateway", "instance", "id")', to: 'plugin_state_entries ("acpx", "gateway-instance", "current")', action: "moved" },
        ...["warning", "hostContractVersion", "compatRegistryVersion", "migrationVersion", "policyHash", "generatedAtMs", "installRecords", "plugins", "diagnostics"].map((k) => ({ from: `plugin_state_entries ("plugins", "installs", "${k}")`, to: index, action: "moved" })),
      ],
      left: [],
    });
    expect(misplaced(fixed)).toEqual([]);

    const now = await importedNow(FILES);
    expect(entries(stagedDbFile(paths))).toEqual(now.entries);
    expect(rows(stagedDbFile(paths), "SELECT * FROM installed_plugin_index")).toEqual(now.index);
    // Read back by the sqlite3 CLI: the runtime's keys hold the data, the first-release keys nothing.
    expect(sqlite3(stagedDbFile(paths), "SELECT json_extract(value_json, '$.instanceId') FROM plugin_state_entries WHERE plugin_id = 'acpx' AND namespace = 'gateway-instance' AND entry_key = 'current'")).toBe("gw-instance-42");
    expect(sqlite3(stagedDbFile(paths), "SELECT json_extract(install_records_json, '$.\"voice-call\".spec'), updated_at_ms FROM installed_plugin_index WHERE index_key = 'default'")).toBe(`@openclaw/voice-call@1.2.0|${FIRST_RELEASE_MTIME}`);
    expect(sqlite3(stagedDbFile(paths), "SELECT count(*) FROM plugin_state_entries WHERE plugin_id IN ('gateway', 'plugins')")).toBe("0");

    const again = await runDoctor({ paths, fix: true });
    expect(again.repairs.map((r) => r.id)).not.toContain("misplaced-rows.move");
    expect(misplaced(again)).toEqual([]);
    expect(misplaced(await runDoctor({ paths }))).toEqual([]);
    expect(entries(stagedDbFile(paths))).toEqual(now.entries);
  });

  it("an older {installs: {…}} map becomes installRecords as the importer makes it; no credential is printed", async () => {
    const files: LegacyFiles = { "plugins/installs.json": OLD_MAP };
    const { paths } = firstReleaseState(files);
    const check = await runDoctor({ paths });
    expect(misplaced(check)[0]!.detail).toBe(['plugin_state_entries ("plugins", "installs", "voice-call")', 'plugin_state_entries ("plugins", "installs", "private")'].join("\n"));
    const fixed = await runDoctor({ paths, fix: true });
    expect(JSON.stringify([check, fixed])).not.toContain(SECRET);
    const [index] = rows<Record<string, unknown>>(stagedDbFile(paths), "SELECT * FROM installed_plugin_index");
    // The first release dropped the map's "version" (3): the rebuilt row has the importer's default.
    expect((await importedNow({ "plugins/installs.json": JSON.stringify({ installs: JSON.parse(OLD_MAP).installs }) })).index).toEqual([index]);
    expect(Object.keys(JSON.parse(index!.install_records_json as string))).toEqual(["voice-call", "private"]);
    expect(index!.plugins_json).toBe("[]");
  });

  it("a newer row already where the runtime reads keeps its place: the stale rows are only removed, and it says so", async () => {
    const newer = FIRST_RELEASE_MTIME + 60_000;
    const { paths } = firstReleaseState(FILES, [{ plugin_id: "acpx", namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId: "gw-runtime-new", createdAt: newer }), created_at: newer }]);
    const db = openGlobalDatabase(paths, { mode: "write" });
    db.prepare("INSERT INTO installed_plugin_index (index_key, version, install_records_json, plugins_json, diagnostics_json, updated_at_ms) VALUES ('default', 1, '{\"runtime\":{}}', '[]', '[]', ?)").run(newer);
    db.close();
    const check = misplaced(await runDoctor({ paths }));
    expect(check.map((f) => f.detail!.split("\n").at(-1))).toEqual([
      `plugin_state_entries ("acpx", "gateway-instance", "current") already holds a row (written ${new Date(newer).toISOString()}): it is as new or newer and is kept`,
      `installed_plugin_index ("default") already holds a row (written ${new Date(newer).toISOString()}): it is as new or newer and is kept`,
    ]);
    const fixed = await runDoctor({ paths, fix: true });
    const repair = fixed.repairs.find((r) => r.id === "misplaced-rows.move")!;
    expect(repair.detail).toBe(
      `gateway-instance-id: kept the row already at plugin_state_entries ("acpx", "gateway-instance", "current") (as new or newer), removed the 1 first-release row(s) left behind; plugins/installs.json: kept the row already at installed_plugin_index ("default") (as new or newer), removed the 9 first-release row(s) left behind; covered by ${repair.rows!.backupPath}`,
    );
    expect(repair.rows!.moved.map((m) => m.action)).toEqual(Array(10).fill("superseded"));
    expect(entries(stagedDbFile(paths))).toEqual([{ plugin_id: "acpx", namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId: "gw-runtime-new", createdAt: newer }), created_at: newer }]);
    expect(rows(stagedDbFile(paths), "SELECT install_records_json, updated_at_ms FROM installed_plugin_index")).toEqual([{ install_records_json: '{"runtime":{}}', updated_at_ms: newer }]);
    expect(misplaced(await runDoctor({ paths }))).toEqual([]);
  });

  it("an older row at the target is replaced by the moved one", async () => {
    const { paths } = firstReleaseState({ "gateway-instance-id": "gw-instance-42" }, [{ plugin_id: "acpx", namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId: "gw-older", createdAt: FIRST_RELEASE_MTIME - 1 }), created_at: FIRST_RELEASE_MTIME - 1 }]);
    expect(misplaced(await runDoctor({ paths }))[0]!.detail).toMatch(/already holds a row \(written .*\): it is older and is replaced$/);
    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs.find((r) => r.id === "misplaced-rows.move")!.detail).toMatch(/^gateway-instance-id: moved 1 first-release row\(s\) to plugin_state_entries \("acpx", "gateway-instance", "current"\) \(replacing an older row there\); covered by /);
    expect(entries(stagedDbFile(paths))).toEqual([{ plugin_id: "acpx", namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId: "gw-instance-42", createdAt: FIRST_RELEASE_MTIME }), created_at: FIRST_RELEASE_MTIME }]);
  });

  it("reads the rows again under the lease: a newer row written after the check still wins", async () => {
    const { paths } = firstReleaseState({ "gateway-instance-id": "gw-instance-42" });
    const late = { plugin_id: "acpx", namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId: "gw-late", createdAt: FIRST_RELEASE_MTIME + 5 }), created_at: FIRST_RELEASE_MTIME + 5 };
    const fixed = await runDoctor({
      paths,
      fix: true,
      // Runs after the checks, before the lease and the repairs: the gateway writing its own row in between.
      confirm: async () => {
        insertEntries(paths, [late]);
        return true;
      },
    });
    expect(fixed.repairs.find((r) => r.id === "misplaced-rows.move")!.detail).toMatch(/^gateway-instance-id: kept the row already at .* \(as new or newer\)/);
    expect(entries(stagedDbFile(paths))).toEqual([late]);
  });

  it("a row without the first release's shape at gateway/instance/id is reported with its reason and left in place", async () => {
    const { paths } = firstReleaseState({}, [{ plugin_id: "gateway", namespace: "instance", entry_key: "id", value_json: '{"not":"an id"}', created_at: 1 }]);
    const check = misplaced(await runDoctor({ paths }));
    expect(check.map((f) => [f.id, f.severity])).toEqual([["misplaced-rows.gateway-instance-id.left", "info"]]);
    expect(check[0]!.detail).toBe('plugin_state_entries ("gateway", "instance", "id"): its value is not the text of an instance id');
    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs.map((r) => r.id)).not.toContain("misplaced-rows.move");
    expect(entries(stagedDbFile(paths))).toHaveLength(1);
    // The upgrade copies it as it is (plugin_state_entries means the same in OpenClaw's format): nothing is lost.
    expect(entries(paths.globalDbPath)).toEqual(entries(stagedDbFile(paths)));
  });

  it("keys from the database are quoted: a terminal escape in one is never printed raw", async () => {
    const { paths } = firstReleaseState({}, firstReleaseRows({ "plugins/installs.json": JSON.stringify({ "\u001b[2Jevil": { source: "npm" } }) }));
    const [f] = misplaced(await runDoctor({ paths }));
    expect(f!.detail).toBe('plugin_state_entries ("plugins", "installs", "\\u001b[2Jevil")');
    expect(JSON.stringify(f)).not.toContain("\u001b");
  });

  it("with the legacy file back in the state dir, the migration's re-import removes the rows and the move finds nothing left", async () => {
    const { paths, stateDir } = firstReleaseState({ "gateway-instance-id": "gw-old" });
    fs.writeFileSync(path.join(stateDir, "gateway-instance-id"), "gw-file\n", { mode: 0o600 });
    const fixed = await runDoctor({ paths, fix: true, migration: { backup: false } });
    expect(fixed.repairs.map((r) => [r.id, r.status, r.id === "misplaced-rows.move" ? r.detail : ""])).toEqual([
      ["legacy.migrate", "applied", ""],
      ["misplaced-rows.move", "applied", "nothing left to move"],
      ["format.upgrade", "applied", ""],
    ]);
    expect(entries(stagedDbFile(paths)).map((e) => [e.plugin_id, e.namespace, e.entry_key, JSON.parse(e.value_json).instanceId])).toEqual([["acpx", "gateway-instance", "current", "gw-file"]]);
  });

  it("a global DB it cannot search is a warning, never a silent pass", async () => {
    const { paths } = firstReleaseState({ "gateway-instance-id": "gw-1" });
    const db = new Database(paths.globalDbPath);
    db.exec("DROP TABLE plugin_state_entries");
    db.close();
    const found = misplaced(await runDoctor({ paths }));
    expect(found.map((f) => [f.id, f.severity])).toEqual([["misplaced-rows.unchecked", "warning"]]);
    expect(found[0]!.title).toMatch(/could not be looked for: .*no such table: plugin_state_entries/);
  });

  it("the locations it looks at are the ones the importer itself clears on re-import", () => {
    for (const loc of FIRST_RELEASE_LOCATIONS) {
      const value = loc.value(firstReleaseRows({ [loc.file]: loc.file === "gateway-instance-id" ? "gw-1" : OLD_MAP }).map((r) => ({ ...r, expires_at: null })));
      const built = loc.spec.rows(value, { path: loc.file, relativePath: loc.file, agentId: null, mtimeMs: 1 }, {} as never);
      expect(built.replace).toEqual([{ table: "plugin_state_entries", where: { plugin_id: loc.pluginId, namespace: loc.namespace, ...(loc.entryKey === null ? {} : { entry_key: loc.entryKey }) } }]);
    }
  });
});
