// planAssets: what a backup holds, what it skips and why, workspaces read from a JSON5-ish config.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planAssets } from "../../src/backup/asset-plan.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { makeTempState } from "../helpers/temp-state.js";

function writeConfig(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

describe("planAssets", () => {
  it("backs up the state dir and lists the config and credentials inside it as covered", () => {
    const state = makeTempState("legacy-state");
    fs.mkdirSync(path.join(state.stateDir, "credentials"));
    const plan = planAssets({ paths: state.paths });
    expect(plan.assets.map((a) => [a.kind, a.archivePath])).toEqual([["state", "payload/state"]]);
    expect(plan.skipped).toEqual(
      expect.arrayContaining([
        { kind: "config", path: state.paths.configPath, reason: "covered by the state dir" },
        { kind: "credentials", path: state.paths.credentialsDir, reason: "covered by the state dir" },
      ]),
    );
  });

  it("adds config and credentials that live outside the state dir, and lists missing ones", () => {
    const state = makeTempState("legacy-state");
    const env = { ...state.env, OPENCLAW_CONFIG_PATH: path.join(state.root, "etc", "openclaw.json"), OPENCLAW_OAUTH_DIR: path.join(state.root, "oauth") };
    const paths = resolveStatePaths({ env });
    writeConfig(paths.configPath, "{}");
    const plan = planAssets({ paths });
    expect(plan.assets.map((a) => a.kind)).toEqual(["state", "config"]);
    expect(plan.assets[1]).toMatchObject({ type: "file", archivePath: "payload/config/openclaw.json", sourcePath: paths.configPath });
    expect(plan.skipped).toContainEqual({ kind: "credentials", path: paths.credentialsDir, reason: "missing" });
  });

  it("reads workspaces from a config with comments and trailing commas; skips missing, covered and nested ones", () => {
    const state = makeTempState("legacy-state");
    const ws = path.join(state.root, "ws");
    fs.mkdirSync(path.join(ws, "inner"), { recursive: true });
    fs.mkdirSync(path.join(state.stateDir, "workspace"));
    writeConfig(
      state.paths.configPath,
      `{
        // workspaces
        agents: {
          defaults: { workspace: "~/ws", },
          list: [
            { id: "a", workspace: "~/ws/inner" },
            { id: "b", workspace: "~/missing" },
            { id: "c", workspace: "${state.stateDir}/workspace" },
            { id: "d", workspace: "~" },
          ],
        },
      }`,
    );
    const plan = planAssets({ paths: state.paths });
    expect(plan.assets.map((a) => [a.kind, a.sourcePath, a.archivePath])).toEqual([
      ["state", state.stateDir, "payload/state"],
      ["workspace", ws, "payload/workspaces/1-ws"],
    ]);
    const reasons = Object.fromEntries(plan.skipped.filter((s) => s.kind === "workspace").map((s) => [s.path, s.reason]));
    expect(reasons[path.join(state.root, "missing")]).toMatch(/^missing \(from agents\.list\[1\]\.workspace \(b\)\)/);
    expect(reasons[path.join(ws, "inner")]).toMatch(/covered by the workspace asset/);
    expect(reasons[path.join(state.stateDir, "workspace")]).toMatch(/covered by the state asset/);
    expect(reasons[state.root]).toMatch(/contains the state asset/);
  });

  it("reads workspaces from a config in any JSON5 the gateway accepts (hex, .5, Infinity, line continuations)", () => {
    const state = makeTempState("legacy-state");
    fs.mkdirSync(path.join(state.root, "long name"), { recursive: true });
    writeConfig(
      state.paths.configPath,
      "{\n  gateway: { port: 0x4A55, ratio: .5, retries: +3, timeout: Infinity, },\n  /* agents */ agents: { defaults: { workspace: '~/long \\\nname', }, },\n}\n",
    );
    const plan = planAssets({ paths: state.paths, failOnUnparseableConfig: true });
    expect(plan.warnings).toEqual([]);
    expect(plan.assets.map((a) => [a.kind, a.sourcePath])).toEqual([
      ["state", state.stateDir],
      ["workspace", path.join(state.root, "long name")],
    ]);
  });

  it("--no-include-workspace and --only-config narrow the plan", () => {
    const state = makeTempState("legacy-state");
    fs.mkdirSync(path.join(state.root, "ws"));
    writeConfig(state.paths.configPath, '{"agents":{"defaults":{"workspace":"~/ws"}}}');
    expect(planAssets({ paths: state.paths, includeWorkspace: false }).assets.map((a) => a.kind)).toEqual(["state"]);
    const only = planAssets({ paths: state.paths, onlyConfig: true });
    expect(only.assets.map((a) => [a.kind, a.archivePath])).toEqual([["config", "payload/config/openclaw.json"]]);
  });

  it("an unparsable config is a warning for the safety backups (restore, reset), with the position in the file as written", () => {
    const state = makeTempState("legacy-state");
    writeConfig(state.paths.configPath, "{\n  // the gateway reads this\n  agents: @\n}\n");
    const plan = planAssets({ paths: state.paths });
    expect(plan.assets.map((a) => a.kind)).toEqual(["state"]);
    expect(plan.warnings[0]).toMatch(/openclaw\.json:3:11: the config does not parse as JSON5 \(invalid character\); workspaces were not included\./);
  });

  it("an unparsable config fails a plain backup (failOnUnparseableConfig) unless the workspaces are left out", () => {
    const state = makeTempState("legacy-state");
    writeConfig(state.paths.configPath, "{ agents: { defaults: { workspace: '/w' } },\n  port: 0x1G }");
    expect(() => planAssets({ paths: state.paths, failOnUnparseableConfig: true })).toThrow(
      expect.objectContaining({ code: "config_unparseable", exitCode: 1, message: expect.stringMatching(/openclaw\.json:2:12: the config does not parse as JSON5 .*--no-include-workspace/) }),
    );
    const without = planAssets({ paths: state.paths, failOnUnparseableConfig: true, includeWorkspace: false });
    expect(without.assets.map((a) => a.kind)).toEqual(["state"]);
    expect(without.warnings).toEqual([]);
  });

  it("excludes a backup dir inside the state dir from the state asset", () => {
    const state = makeTempState("legacy-state");
    fs.mkdirSync(path.join(state.stateDir, "backups"));
    const plan = planAssets({ paths: state.paths });
    expect(plan.assets[0]!.excludedAbsolute).toEqual([path.join(state.stateDir, "backups")]);
  });
});
