// A config that does not parse fails `backup create` (exit 1, file:line named) instead of a backup silently
// without the workspaces; `--no-include-workspace` backs up the rest. JSON5 the gateway accepts is read. Real binary.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, runBin } from "../helpers/temp-state.js";

function archives(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".tar.gz") || n.endsWith(".tar.zst") || n.endsWith(".tar")) : [];
}

describe("backup create and the config's workspaces", () => {
  it("a broken config fails with exit 1 naming file:line:column; --no-include-workspace succeeds", async () => {
    const { env, paths, root } = makeTempState("legacy-state");
    fs.mkdirSync(path.join(root, "ws"));
    fs.writeFileSync(paths.configPath, '{\n  /* multi\n     line */\n  agents: { defaults: { workspace: "~/ws" } },\n  gateway: { port: 18789 oops },\n}\n');
    const failed = await runBin(["backup", "create"], env);
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toContain(`${paths.configPath}:5:26: the config does not parse as JSON5 (invalid character)`);
    expect(failed.stderr).toMatch(/--no-include-workspace/);
    expect(archives(paths.backupDir)).toEqual([]);

    const json = await runBin(["backup", "create", "--json"], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "config_unparseable" } });

    const without = await runBin(["backup", "create", "--no-include-workspace", "--json"], env);
    expect(without.code, without.stderr).toBe(0);
    const doc = JSON.parse(without.stdout);
    expect(doc.ok).toBe(true);
    expect(doc.manifest.assets.map((a: { kind: string }) => a.kind)).toEqual(["state"]);
    expect(archives(paths.backupDir)).toHaveLength(1);
  });

  it("JSON5 the gateway accepts (hex, .5, Infinity, a line continuation, comments, trailing commas) is read and its workspace backed up", async () => {
    const { env, paths, root } = makeTempState("legacy-state");
    fs.mkdirSync(path.join(root, "my ws"));
    fs.writeFileSync(paths.configPath, "{\n  // gateway\n  gateway: { port: 0x4A55, ratio: .5, timeout: Infinity, },\n  agents: { defaults: { workspace: '~/my \\\nws', }, },\n}\n");
    const run = await runBin(["backup", "create", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.warnings.join("\n")).not.toMatch(/openclaw\.json|workspace/);
    expect(doc.manifest.assets.map((a: { kind: string; sourcePath: string }) => [a.kind, a.sourcePath])).toEqual([
      ["state", paths.stateDir],
      ["workspace", path.join(root, "my ws")],
    ]);
  });
});
