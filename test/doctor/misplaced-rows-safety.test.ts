// The misplaced-rows repair as an attacker or a careless operator would meet it: rows under plugins/installs that
// the first release did not write are never touched, no row moves without a verified backup, every move is named.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { doctorExitCode, runDoctor, type DoctorResult } from "../../src/doctor/run-doctor.js";
import { ARCHIVE_NAME_PATTERN } from "../../src/backup/compression.js";
import { rows, stagedDbFile } from "../helpers/migration.js";
import { fixturesDir } from "../helpers/temp-state.js";
import { FIRST_RELEASE_MTIME, firstReleaseRows, firstReleaseState, type LegacyFiles } from "./first-release-state.js";
import type { StaleRow } from "../../src/doctor/checks/misplaced-rows-check.js";

const WHOLE_INDEX = fs.readFileSync(path.join(fixturesDir, "migration/plugin-index/plugins/installs.json"), "utf8");
const MAP = JSON.stringify({ version: 3, installs: { "voice-call": { source: "npm", spec: "@openclaw/voice-call@1.2.0" }, memory: { source: "path" } } });

/** A plugin_state_entries row as the first release wrote it (the check's own row type). */
type Entry = StaleRow;

const ALL = "SELECT plugin_id, namespace, entry_key, value_json, created_at, expires_at FROM plugin_state_entries ORDER BY plugin_id, namespace, entry_key";

/** Rows another writer (a plugin, a forger) put under plugins/installs, written past the helper that forces expires_at NULL. */
function addForeign(file: string, foreign: Entry[]): void {
  const db = new Database(file);
  try {
    const insert = db.prepare("INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)");
    for (const e of foreign) insert.run(e.plugin_id, e.namespace, e.entry_key, e.value_json, e.created_at, e.expires_at);
  } finally {
    db.close();
  }
}

const installsRow = (entry_key: string, value_json: string, extra: Partial<Entry> = {}): Entry => ({ plugin_id: "plugins", namespace: "installs", entry_key, value_json, created_at: FIRST_RELEASE_MTIME, expires_at: null, ...extra });
const label = (key: string) => `plugin_state_entries ("plugins", "installs", ${JSON.stringify(key)})`;
const move = (r: DoctorResult) => r.repairs.find((x) => x.id === "misplaced-rows.move");

describe("misplaced-rows repair: only the first release's rows, behind a verified backup", () => {
  it("rows under plugins/installs with another shape beside an install map are never moved nor deleted, each named with its reason", async () => {
    const files: LegacyFiles = { "plugins/installs.json": MAP };
    const { paths } = firstReleaseState(files);
    const foreign: Entry[] = [
      installsRow("runtime-cache", '{"source":"npm"}', { expires_at: FIRST_RELEASE_MTIME + 1 }),
      installsRow("spaced", '{ "source": "npm" }'),
      installsRow("counter", "42"),
      installsRow("version", '{"source":"npm"}'),
      installsRow("installs", '{"source":"npm"}'),
      installsRow("half-ms", '{"source":"npm"}', { created_at: 1.5 }),
    ];
    addForeign(paths.globalDbPath, foreign);
    const reasons: Record<string, string> = {
      "runtime-cache": "it has an expiry (the first release wrote none)",
      spaced: "its value is not compact JSON as the first release wrote it",
      "half-ms": "its created_at is not a file time in whole milliseconds",
      counter: "its value is not an install record (a JSON object)",
      version: 'the first release never wrote a "version" row for an install map (the importer drops that key)',
      installs: 'a plugin named "installs" would be read by the importer as the whole install map',
    };
    const expectedLeft = Object.entries(reasons).map(([k, reason]) => ({ row: label(k), reason }));

    const check = await runDoctor({ paths });
    const left = check.findings.find((f) => f.id === "misplaced-rows.plugin-installs.left")!;
    expect(left.severity).toBe("info");
    expect(left.title).toMatch(/^6 row\(s\) under plugin_state_entries \("plugins", "installs", every key\) do not have the shape the first release wrote/);
    expect(left.detail!.split("\n")).toEqual(expectedLeft.map((l) => `${l.row}: ${l.reason}`));
    expect(check.findings.find((f) => f.id === "misplaced-rows.plugin-installs")!.detail).toBe([label("voice-call"), label("memory")].join("\n"));

    const fixed = await runDoctor({ paths, fix: true });
    const repair = move(fixed)!;
    expect(repair.status).toBe("applied");
    expect(repair.rows!.moved.map((m) => m.from)).toEqual([label("voice-call"), label("memory")]);
    expect(repair.rows!.left).toEqual(expectedLeft);
    expect(repair.detail).toContain("moved 2 first-release row(s) to installed_plugin_index (\"default\"); left 6 other row(s) there that the first release did not write");
    // The six are exactly as they were (value, times, expiry) after the repair (the design-v1 file the upgrade kept).
    const sorted = [...foreign].sort((a, b) => (a.entry_key < b.entry_key ? -1 : 1));
    expect(rows<Entry>(stagedDbFile(paths), ALL)).toEqual(sorted);
    const [index] = rows<{ install_records_json: string }>(stagedDbFile(paths), "SELECT install_records_json FROM installed_plugin_index");
    expect(Object.keys(JSON.parse(index!.install_records_json))).toEqual(["voice-call", "memory"]);
  });

  it("beside a split plugin index, a row that is not one of its fields (or holds the wrong type) is left", async () => {
    const { paths } = firstReleaseState({ "plugins/installs.json": WHOLE_INDEX });
    // A plugin-id row forged beside the index fields; a field holding text where the index holds a number.
    addForeign(paths.globalDbPath, [installsRow("evil-plugin", '{"source":"npm","installPath":"/tmp/x"}')]);
    const db = new Database(paths.globalDbPath);
    db.prepare("UPDATE plugin_state_entries SET value_json = ? WHERE plugin_id = 'plugins' AND entry_key = 'generatedAtMs'").run('"soon"');
    db.close();
    const fixed = await runDoctor({ paths, fix: true });
    const repair = move(fixed)!;
    expect(repair.rows!.left).toEqual([
      { row: label("generatedAtMs"), reason: "its value is not the number the plugin index holds under this field" },
      { row: label("evil-plugin"), reason: "not a field of the plugin index the rows beside it were split from" },
    ]);
    expect(repair.rows!.moved).toHaveLength(8);
    expect(rows<Entry>(stagedDbFile(paths), ALL).map((e) => [e.entry_key, e.value_json])).toEqual([
      ["evil-plugin", '{"source":"npm","installPath":"/tmp/x"}'],
      ["generatedAtMs", '"soon"'],
    ]);
    const [index] = rows<{ install_records_json: string; generated_at_ms: number | null }>(stagedDbFile(paths), "SELECT install_records_json, generated_at_ms FROM installed_plugin_index");
    expect(Object.keys(JSON.parse(index!.install_records_json))).toEqual(["voice-call"]);
    expect(index!.generated_at_ms).toBeNull();
  });

  it("when the verified backup cannot be taken, the repair fails (exit 1) and no row is moved or deleted", async () => {
    const { paths, stateDir } = firstReleaseState({ "gateway-instance-id": "gw-1", "plugins/installs.json": MAP });
    const before = rows<Entry>(paths.globalDbPath, ALL);
    // A backup dir under a regular file: nothing can be written there.
    const blocker = path.join(path.dirname(stateDir), "not-a-dir");
    fs.writeFileSync(blocker, "x");
    const fixed = await runDoctor({ paths, fix: true, migration: { backupDir: path.join(blocker, "backups") } });
    const repair = move(fixed)!;
    expect(repair.status).toBe("failed");
    expect(repair.detail).toMatch(/^The verified backup before moving the first-release rows could not be taken \(.*\); no row was changed\./);
    expect(repair.rows).toBeUndefined();
    expect(doctorExitCode(fixed, false)).toBe(1);
    expect(rows<Entry>(stagedDbFile(paths), ALL)).toEqual(before);
    expect(rows(stagedDbFile(paths), "SELECT * FROM installed_plugin_index")).toEqual([]);
    expect(rows(stagedDbFile(paths), "SELECT count(*) AS n FROM plugin_state_entries WHERE plugin_id = 'acpx'")).toEqual([{ n: 0 }]);
  });

  it("the migration's verified archive of this run covers the move: no second backup, the result names it", async () => {
    const { paths, stateDir } = firstReleaseState({ "plugins/installs.json": MAP });
    // A legacy file the migration imports first (it takes the run's pre-migration backup).
    fs.writeFileSync(path.join(stateDir, "gateway-instance-id"), "gw-file\n", { mode: 0o600 });
    const backupDir = path.join(path.dirname(stateDir), "archives");
    const fixed = await runDoctor({ paths, fix: true, migration: { backupDir } });
    const runArchive = fixed.migration!.run!.backupPath;
    expect(runArchive).toBeTruthy();
    const repair = move(fixed)!;
    expect(repair.status).toBe("applied");
    expect(repair.rows!.backupPath).toBe(runArchive);
    expect(repair.detail).toMatch(new RegExp(`; covered by ${runArchive!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
    expect(fs.readdirSync(backupDir).filter((n) => ARCHIVE_NAME_PATTERN.test(n))).toEqual([path.basename(runArchive!)]);
  });

  it("without a migration in the run, a verified archive holding the rows is taken before they move", async () => {
    const { paths, stateDir } = firstReleaseState({ "gateway-instance-id": "gw-1" });
    const backupDir = path.join(path.dirname(stateDir), "archives");
    const fixed = await runDoctor({ paths, fix: true, migration: { backupDir } });
    const archive = move(fixed)!.rows!.backupPath!;
    expect(path.dirname(archive)).toBe(backupDir);
    expect(fs.statSync(archive).size).toBeGreaterThan(0);
    expect(move(fixed)!.rows!.moved).toEqual([{ from: 'plugin_state_entries ("gateway", "instance", "id")', to: 'plugin_state_entries ("acpx", "gateway-instance", "current")', action: "moved" }]);
  });

  it("a row at gateway/instance/id that the first release could not have written (padded, expiring) is left", async () => {
    const { paths } = firstReleaseState({}, firstReleaseRows({}));
    addForeign(paths.globalDbPath, [{ plugin_id: "gateway", namespace: "instance", entry_key: "id", value_json: '" gw-1 "', created_at: 5, expires_at: null }]);
    const check = await runDoctor({ paths });
    expect(check.findings.filter((f) => f.id.startsWith("misplaced-rows.gateway")).map((f) => [f.id, f.detail])).toEqual([
      ["misplaced-rows.gateway-instance-id.left", 'plugin_state_entries ("gateway", "instance", "id"): its value is not the text of an instance id'],
    ]);
    expect(check.repairs.map((r) => r.id)).not.toContain("misplaced-rows.move");
  });

  it("a location holding only rows of another shape is named as left while the other location's rows move", async () => {
    const { paths } = firstReleaseState({ "gateway-instance-id": "gw-1" });
    addForeign(paths.globalDbPath, [installsRow("plugin-cache", '{"hits":3}', { expires_at: 1 })]);
    const check = await runDoctor({ paths });
    expect(check.findings.filter((f) => f.id.startsWith("misplaced-rows.")).map((f) => f.id)).toEqual(["misplaced-rows.gateway-instance-id", "misplaced-rows.plugin-installs.left"]);
    const repair = move(await runDoctor({ paths, fix: true }))!;
    expect(repair.detail).toMatch(/^gateway-instance-id: moved 1 first-release row\(s\) to .*; plugins\/installs\.json: left 1 row\(s\) there that the first release did not write; covered by /);
    expect(repair.rows!.left).toEqual([{ row: label("plugin-cache"), reason: "it has an expiry (the first release wrote none)" }]);
    expect(rows<Entry>(stagedDbFile(paths), ALL)).toEqual([
      { plugin_id: "acpx", namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId: "gw-1", createdAt: FIRST_RELEASE_MTIME }), created_at: FIRST_RELEASE_MTIME, expires_at: null },
      installsRow("plugin-cache", '{"hits":3}', { expires_at: 1 }),
    ]);
  });
});
