// Retired config keys: reported with their replacement; --fix rewrites only their spans, after the backup.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseJson5 } from "../../src/core/json5-text.js";
import { applyConfigFix, planConfig, readLegacyConfig } from "../../src/migration/legacy-config.js";
import { makeTempState, runInProcess } from "../helpers/temp-state.js";
import { fakeBackup, migrate, rows } from "../helpers/migration.js";

const JSON5_CONFIG = `{
  // Operator notes: keep these comments.
  agents: {
    defaults: {
      model: 'anthropic/claude-sonnet-4', // default model
      memorySearch: { enabled: true, store: { path: '~/.openclaw/memory/main.sqlite' } },
    },
    list: [
      { id: 'main' },
      { id: 'ops', memorySearch: { store: { path: '/srv/ops.sqlite', vector: true } } },
    ],
  },
  session: {
    mainKey: 'main',
    idleMinutes: 45, /* legacy */
    resetByType: { dm: { mode: 'idle' }, group: { mode: 'daily' } },
    writeLock: { timeoutMs: 5000 },
  },
  hooks: {
    internal: {
      enabled: true,
      handlers: [{ event: 'command:new', module: './hooks/log.js' }],
    },
  },
  gateway: { port: 18789 },
}
`;

function stateWithConfig(text: string): ReturnType<typeof makeTempState> {
  const state = makeTempState();
  fs.mkdirSync(state.stateDir, { recursive: true });
  fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), text, { mode: 0o640 });
  return state;
}

describe("legacy config keys", () => {
  it("lists every retired key with its replacement", () => {
    const { paths, stateDir } = stateWithConfig(JSON5_CONFIG);
    const plan = planConfig(paths, stateDir);
    expect(plan.keys.map((k) => [k.key, k.replacement.split(" ")[0], k.blocked])).toEqual([
      ["session.idleMinutes", "session.reset.idleMinutes", null],
      ["session.resetByType.dm", "session.resetByType.direct", null],
      ["session.writeLock", "nothing:", null],
      ["hooks.internal.handlers", "hook", null],
      ["agents.defaults.memorySearch.store.path", "nothing:", null],
      ["agents.list[1].memorySearch.store.path", "nothing:", null],
    ]);
  });

  it("--fix rewrites only those spans: comments, quoting, order and mode are kept", () => {
    const { paths, stateDir } = stateWithConfig(JSON5_CONFIG);
    const file = path.join(stateDir, "openclaw.json");
    const before = readLegacyConfig(paths, stateDir)!;
    const result = applyConfigFix(paths, stateDir);
    expect(result.warnings).toEqual([]);
    expect(result.changes).toHaveLength(6);
    const text = fs.readFileSync(file, "utf8");
    expect(text).toContain("// Operator notes: keep these comments.");
    expect(text).toContain("model: 'anthropic/claude-sonnet-4', // default model");
    expect(text).toContain("reset: { idleMinutes: 45 }, /* legacy */");
    expect(text).toContain("resetByType: { direct: { mode: 'idle' }, group: { mode: 'daily' } },");
    expect(text).toContain("{ id: 'ops', memorySearch: { store: { vector: true } } },");
    expect(text).toContain("memorySearch: { enabled: true, store: { } },");
    expect(text).not.toMatch(/writeLock|handlers|main\.sqlite/);
    const after = parseJson5(text) as typeof before;
    const expected = structuredClone(before) as Record<string, any>;
    expected.session.reset = { idleMinutes: 45 };
    delete expected.session.idleMinutes;
    expected.session.resetByType = { direct: { mode: "idle" }, group: { mode: "daily" } };
    delete expected.session.writeLock;
    delete expected.hooks.internal.handlers;
    delete expected.agents.defaults.memorySearch.store.path;
    delete expected.agents.list[1].memorySearch.store.path;
    expect(after).toEqual(expected);
    // Only the edited lines changed.
    const diff = text.split("\n").filter((l) => !JSON5_CONFIG.split("\n").includes(l));
    expect(diff).toHaveLength(4);
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    expect(planConfig(paths, stateDir).keys).toEqual([]);
  });

  it("a strict-JSON config stays strict JSON, in its own indentation", () => {
    const original = JSON.stringify({ session: { resetByType: { dm: { mode: "idle" } } }, diagnostics: { cacheTrace: { enabled: true, filePath: "/tmp/t.jsonl" } }, memory: { qmd: { sessions: true, paths: ["a"] } } }, null, 4);
    const { paths, stateDir } = stateWithConfig(`${original}\n`);
    applyConfigFix(paths, stateDir);
    const text = fs.readFileSync(path.join(stateDir, "openclaw.json"), "utf8");
    expect(JSON.parse(text)).toEqual({ session: { resetByType: { direct: { mode: "idle" } } }, diagnostics: { cacheTrace: { enabled: true } }, memory: { qmd: { paths: ["a"] } } });
    expect(text).toContain('\n    "session": {\n        "resetByType": {\n            "direct": {');
  });

  it("wraps or merges into session.reset, and refuses a conflicting value", () => {
    const merge = stateWithConfig('{ "session": { "reset": { "mode": "idle" }, "idleMinutes": 30 } }\n');
    applyConfigFix(merge.paths, merge.stateDir);
    expect(JSON.parse(fs.readFileSync(path.join(merge.stateDir, "openclaw.json"), "utf8"))).toEqual({ session: { reset: { mode: "idle", idleMinutes: 30 } } });

    const conflict = stateWithConfig('{ "session": { "reset": { "idleMinutes": 10 }, "idleMinutes": 30 } }\n');
    const before = fs.readFileSync(path.join(conflict.stateDir, "openclaw.json"), "utf8");
    const plan = planConfig(conflict.paths, conflict.stateDir);
    expect(plan.keys[0]!.blocked).toMatch(/session\.reset\.idleMinutes is also set, to another value/);
    expect(applyConfigFix(conflict.paths, conflict.stateDir).warnings[0]).toMatch(/left as is/);
    expect(fs.readFileSync(path.join(conflict.stateDir, "openclaw.json"), "utf8")).toBe(before);
  });

  it("says so and writes nothing when the text cannot be edited safely (a duplicate key)", () => {
    const text = '{ "session": { "idleMinutes": 5, "idleMinutes": 6 } }\n';
    const { paths, stateDir } = stateWithConfig(text);
    const plan = planConfig(paths, stateDir);
    expect(plan.keys[0]!.blocked).toMatch(/cannot be rewritten without losing its formatting .* change it by hand/);
    applyConfigFix(paths, stateDir);
    expect(fs.readFileSync(path.join(stateDir, "openclaw.json"), "utf8")).toBe(text);
  });

  it("never blocks on a FIFO at the config path: reported, not read", async () => {
    const { env, stateDir } = makeTempState("migration/simple");
    fs.rmSync(path.join(stateDir, "openclaw.json"));
    expect(spawnSync("mkfifo", [path.join(stateDir, "openclaw.json")]).status).toBe(0);
    const doctor = await runInProcess(["doctor"], env);
    expect(doctor.stdout).toMatch(/Config not checked: .*openclaw\.json is a FIFO \(named pipe\), not a regular file/);
    const plan = await runInProcess(["migrate", "plan"], env);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/config: .*a FIFO/);
  });

  it("doctor reports them; doctor --fix rewrites after the verified backup and imports plugins.installs in the same run", async () => {
    const { env, stateDir, paths } = stateWithConfig('{\n  "session": { "idleMinutes": 20 },\n  "plugins": {\n    "installs": { "voice-call": { "source": "npm", "spec": "@openclaw/voice-call@1.2.0" } },\n    "entries": {}\n  }\n}\n');
    const doctor = await runInProcess(["doctor"], env);
    expect(doctor.stdout).toMatch(/! Legacy config key session\.idleMinutes in .*openclaw\.json: replaced by session\.reset\.idleMinutes/);
    expect(doctor.stdout).toMatch(/! Legacy config key plugins\.installs .*plugins\/installs\.json/);
    const backup = fakeBackup(path.join(path.dirname(stateDir), "backups"));
    const { run } = await migrate(paths, { backup: true, takeBackup: backup });
    expect(backup.calls).toBe(1);
    expect(run.status).toBe("completed");
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, "openclaw.json"), "utf8"))).toEqual({ session: { reset: { idleMinutes: 20 } }, plugins: { entries: {} } });
    expect(run.changes.join("\n")).toMatch(/wrote plugins\.installs to .*plugins\/installs\.json/);
    expect(run.sources.map((s) => [s.relativePath, s.status])).toEqual([["plugins/installs.json", "imported"]]);
    expect(rows(paths.globalDbPath, "SELECT json_extract(install_records_json, '$.\"voice-call\".spec') AS spec FROM installed_plugin_index")).toEqual([{ spec: "@openclaw/voice-call@1.2.0" }]);
    // Nothing left: the next run has no config key, no source, and takes no backup.
    const again = await migrate(paths, { backup: true, takeBackup: backup });
    expect(again.run.sources).toEqual([]);
    expect(backup.calls).toBe(1);
  });
});
