// --quiet drops progress and success lines only: whatever needs action (error and warning findings, failed
// sources, broken databases, partial resets) still reaches stderr, so a cron mail is never empty on failure.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, runBin, runInProcess } from "../helpers/temp-state.js";

function notOurs(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, "this is not a database\n".repeat(100), { mode: 0o600 });
}

describe("--quiet", () => {
  it("doctor --quiet with errors prints the findings and the summary on stderr (through the binary), nothing on stdout", async () => {
    const { env, paths } = makeTempState("legacy-state");
    notOurs(paths.globalDbPath);
    const run = await runBin(["doctor", "--quiet"], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/✗ Global database (is not an openclaw-state database|cannot be opened)/);
    expect(run.stderr).toMatch(/fix: /);
    expect(run.stderr).toMatch(/1 error\(s\), \d+ warning\(s\)/);
    // Success lines (✓ …) are what --quiet drops.
    expect(run.stderr).not.toMatch(/✓/);
  });

  it("doctor --quiet on a healthy state prints nothing at all; warnings alone still print", async () => {
    const { env } = makeTempState("legacy-state");
    expect((await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env)).code).toBe(0);
    // The fixture's archived reset leftover stays in place: an info line, which --quiet drops.
    const healthy = await runBin(["doctor", "--quiet"], env);
    expect(healthy).toMatchObject({ code: 0, stdout: "", stderr: "" });
    fs.chmodSync(path.join(env.OPENCLAW_STATE_DIR!, "openclaw.json"), 0o644);
    const warned = await runBin(["doctor", "--quiet"], env);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toBe("");
    expect(warned.stderr).toMatch(/! 1 state path is readable by group/);
  });

  it("inspect --quiet names a broken database on stderr", async () => {
    const { env, paths } = makeTempState("legacy-state");
    notOurs(paths.globalDbPath);
    const run = await runBin(["inspect", "--quiet"], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(paths.globalDbPath);
  });

  it("successful commands print nothing under --quiet; refusals still explain themselves", async () => {
    const { env } = makeTempState("legacy-state");
    for (const args of [["doctor", "--fix", "--yes", "--no-backup"], ["backup", "create"], ["migrate", "history"], ["reset", "--scope", "config", "--yes"]]) {
      const run = await runInProcess([...args, "--quiet"], env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      expect(run.stdout, args.join(" ")).toBe("");
    }
    const refused = await runInProcess(["reset", "--scope", "full", "--quiet"], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
  });
});
