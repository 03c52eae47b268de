// End to end: the real binary on a state the first release migrated; exit codes and --json `ok` agree.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fixturesDir, runBin } from "../helpers/temp-state.js";
import { doctorJson, type DoctorJson } from "../helpers/doctor-json.js";
import { firstReleaseState } from "./first-release-state.js";

const json = doctorJson;

// After --fix the state is in OpenClaw's format, where the check only says it was skipped.
const misplaced = (doc: DoctorJson) => doc.findings.filter((f) => f.id.startsWith("misplaced-rows.") && f.id !== "misplaced-rows.skipped").map((f) => [f.id, f.severity]);

describe("openclaw-state doctor on first-release rows", () => {
  it("warns (exit 0, 1 with --strict), --fix --yes moves them (exit 0), the rerun is clean under --strict", async () => {
    const installs = fs.readFileSync(path.join(fixturesDir, "migration/plugin-index/plugins/installs.json"), "utf8");
    const { env } = firstReleaseState({ "gateway-instance-id": "gw-instance-42\n", "plugins/installs.json": installs });
    const expected = [
      ["misplaced-rows.gateway-instance-id", "warning"],
      ["misplaced-rows.plugin-installs", "warning"],
    ];

    const check = await runBin(["doctor", "--json"], env);
    expect(check.code).toBe(0);
    expect(misplaced(json(check))).toEqual(expected);

    const strict = await runBin(["doctor", "--strict", "--json"], env);
    expect(strict.code).toBe(1);
    expect(misplaced(json(strict))).toEqual(expected);

    const human = await runBin(["doctor"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('! 1 row(s) an earlier openclaw-state imported from gateway-instance-id under plugin_state_entries ("gateway", "instance", "id")');
    expect(human.stdout + human.stderr).not.toContain("gw-instance-42");

    const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(fix.code).toBe(0);
    const fixed = json(fix);
    expect(fixed.repairs.filter((r) => r.id === "misplaced-rows.move").map((r) => r.status)).toEqual(["applied"]);
    // --json names every row moved, from → to, and the verified archive taken before.
    const rows = fixed.repairs.find((r) => r.id === "misplaced-rows.move")!.rows!;
    expect(rows.moved).toHaveLength(10);
    expect(rows.moved[0]).toEqual({ from: 'plugin_state_entries ("gateway", "instance", "id")', to: 'plugin_state_entries ("acpx", "gateway-instance", "current")', action: "moved" });
    expect(rows.left).toEqual([]);
    expect(fs.existsSync(rows.backupPath!)).toBe(true);
    expect(misplaced(fixed)).toEqual([]);

    const rerun = await runBin(["doctor", "--strict", "--json"], env);
    expect(rerun.stdout).not.toContain("gw-instance-42");
    expect(rerun.code).toBe(0);
    expect(json(rerun)).toMatchObject({ ok: true, status: "ok", findings: expect.not.arrayContaining([expect.objectContaining({ severity: "warning" })]) });
  });

  it("the human --fix output prints one from → to line per moved row and one line per row left, with its reason", async () => {
    const { env, paths } = firstReleaseState({ "gateway-instance-id": "gw-7\n", "plugins/installs.json": JSON.stringify({ "voice-call": { source: "npm" }, odd: 42 }) });
    expect(fs.existsSync(paths.globalDbPath)).toBe(true);
    const fix = await runBin(["doctor", "--fix", "--yes"], env);
    expect(fix.code, fix.stderr).toBe(0);
    expect(fix.stdout).toContain('plugin_state_entries ("gateway", "instance", "id") → plugin_state_entries ("acpx", "gateway-instance", "current")');
    expect(fix.stdout).toContain('plugin_state_entries ("plugins", "installs", "voice-call") → installed_plugin_index ("default")');
    expect(fix.stdout).toContain('left plugin_state_entries ("plugins", "installs", "odd"): its value is not an install record (a JSON object)');
    expect(fix.stdout).toMatch(/covered by .*\.tar\.(gz|zst)/);
  });
});
