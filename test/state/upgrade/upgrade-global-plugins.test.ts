// upgradePluginState: legacy plugins/installs.json → our migration (design-v1) → upgradeGlobalDb → the row OpenClaw 2026.9.6's doctor writes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { upgradeGlobalDb } from "../../../src/state/upgrade/upgrade-global-db.js";
import { INDEX_WARNING } from "../../../src/state/upgrade/upgrade-global-plugins.js";
import { migrate } from "../../helpers/migration.js";
import { makeTempState } from "../../helpers/temp-state.js";

const NOW = 1_800_000_000_000;

/** An independent reader: the sqlite3 CLI, JSON mode. */
function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as T[]);
}

/** A legacy tree (a fixture, or just the given installs.json text) migrated by our importers, then upgraded. */
async function upgraded(options: { fixture?: string; installs?: string }) {
  const state = makeTempState(options.fixture);
  if (options.installs !== undefined) {
    fs.mkdirSync(path.join(state.stateDir, "plugins"), { recursive: true });
    fs.writeFileSync(path.join(state.stateDir, "plugins", "installs.json"), options.installs);
  }
  await migrate(state.paths);
  const source = state.paths.globalDbPath;
  expect(cli(source, "SELECT count(*) AS n FROM installed_plugin_index")).toEqual([{ n: 1 }]);
  const target = path.join(state.root, "upgraded", "openclaw.sqlite");
  const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir, now: NOW });
  const rows = cli<{ state_key: string; value_json: string; updated_at_ms: number }>(target, "SELECT state_key, value_json, updated_at_ms FROM config_machine_state WHERE state_key = 'plugins.installedIndex'");
  return { result, rows, target };
}

/** The placeholder header 9.6 writes when only the install records are usable. */
const LEGACY_HEADER = { version: 1, warning: INDEX_WARNING, hostContractVersion: "legacy", compatRegistryVersion: "legacy", migrationVersion: 1, policyHash: "legacy", generatedAtMs: 0 };

describe("upgradePluginState (installed plugin index)", () => {
  it("keeps a whole index 9.6 accepts: header, plugins and diagnostics, records sorted, unknown keys dropped", async () => {
    const installs = JSON.stringify({
      warning: "x", version: 1, hostContractVersion: "2026.4.25", compatRegistryVersion: "compat-v1", migrationVersion: 1, policyHash: "p", generatedAtMs: 5, refreshReason: "manual",
      installRecords: { "10": { source: "path" }, b: { installPath: "/x", custom: true, source: "npm", spec: " s@1 " }, "2": { source: "git", gitUrl: "u" }, a: { source: "archive" } },
      plugins: [{ rootDir: "/r", pluginId: "b", installOwner: "b", extraKey: 1, manifestPath: "/r/m.json", manifestHash: "h", origin: "global", enabled: false, startup: { memory: true, sidecar: false, agentHarnesses: ["x"], weird: 2 }, compat: ["c"], contributions: { channels: [], channelConfigs: [], providers: ["p"], modelCatalogProviders: [], modelSupportPrefixes: [], modelSupportPatterns: [], autoEnableProviderIds: [], commandAliases: [], contracts: { k: ["v"] }, zzz: 1 } }],
      diagnostics: [{ message: "m", level: "error", extra: 1 }],
    });
    const { result, rows } = await upgraded({ installs });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.updated_at_ms).toBe(NOW);
    // The exact text 9.6's doctor wrote for this file (revision = migration time).
    expect(rows[0]!.value_json).toBe(JSON.stringify({
      revision: NOW,
      index: {
        version: 1, warning: INDEX_WARNING, hostContractVersion: "2026.4.25", compatRegistryVersion: "compat-v1", migrationVersion: 1, policyHash: "p", generatedAtMs: 5, refreshReason: "manual",
        installRecords: { "2": { source: "git", gitUrl: "u" }, "10": { source: "path" }, a: { source: "archive" }, b: { source: "npm", spec: "s@1", installPath: "/x", custom: true } },
        plugins: [{ pluginId: "b", manifestPath: "/r/m.json", manifestHash: "h", rootDir: "/r", origin: "global", enabled: false, startup: { sidecar: false, memory: true, agentHarnesses: ["x"] }, contributions: { channels: [], channelConfigs: [], providers: ["p"], modelCatalogProviders: [], modelSupportPrefixes: [], modelSupportPatterns: [], autoEnableProviderIds: [], commandAliases: [], contracts: { k: ["v"] } }, compat: ["c"], installOwner: "b" }],
        diagnostics: [{ level: "error", message: "m" }],
      },
    }));
    expect(result.read.installed_plugin_index).toBe(1);
    expect(result.written.config_machine_state).toBeGreaterThanOrEqual(1);
    expect(result.unmapped.installed_plugin_index).toBeUndefined();
  });

  it("keeps only the records of an index whose manifest cache 9.6 rejects (the plugin-index fixture)", async () => {
    const { rows, result } = await upgraded({ fixture: "migration/plugin-index" });
    expect(JSON.parse(rows[0]!.value_json)).toEqual({
      revision: NOW,
      index: { ...LEGACY_HEADER, installRecords: { "voice-call": { source: "npm", spec: "@openclaw/voice-call@1.2.0", installPath: "/home/u/.openclaw/extensions/voice-call" } }, plugins: [], diagnostics: [] },
    });
    expect(Object.keys(JSON.parse(rows[0]!.value_json).index)).toEqual([...Object.keys(LEGACY_HEADER), "installRecords", "plugins", "diagnostics"]);
    expect(result.notes.map((n) => n.code)).toContain("global.plugins.index-records-only");
  });

  it("writes the records of a bare record map trimmed, blanks dropped, extra fields kept (9.6's `records` shape)", async () => {
    const { rows } = await upgraded({ installs: JSON.stringify({ installRecords: { zeta: { source: "path", sourcePath: " /home/u/src/zeta ", spec: "" }, alpha: { source: "npm", spec: "alpha@1.0.0", extra: { x: 1 } } } }) });
    expect(rows[0]!.value_json).toBe(JSON.stringify({
      revision: NOW,
      index: { ...LEGACY_HEADER, installRecords: { alpha: { source: "npm", spec: "alpha@1.0.0", extra: { x: 1 } }, zeta: { source: "path", sourcePath: "/home/u/src/zeta" } }, plugins: [], diagnostics: [] },
    }));
  });

  it("maps the v1 `{version, installs}` records the same way (9.6 refuses that key, but takes the same records under installRecords)", async () => {
    const { rows } = await upgraded({ fixture: "migration/small-state" });
    expect(JSON.parse(rows[0]!.value_json).index).toEqual({
      ...LEGACY_HEADER,
      installRecords: { "voice-call": { source: "npm", spec: "@openclaw/voice-call@1.2.0", installPath: "/home/u/.openclaw/extensions/voice-call", installedAt: "2026-01-01T00:00:00.000Z" } },
      plugins: [],
      diagnostics: [],
    });
  });

  it("leaves an index with a record 9.6 rejects unmapped, as its doctor refuses the whole file", async () => {
    const { rows, result } = await upgraded({ installs: JSON.stringify({ installRecords: { a: { source: "npm" }, b: { source: "weird" } } }) });
    expect(rows).toEqual([]);
    expect(result.unmapped.installed_plugin_index).toBe(1);
    expect(result.notes.find((n) => n.code === "global.plugins.index-invalid")?.message).toMatch(/^installed_plugin_index:/);
  });
});
