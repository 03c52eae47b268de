// End to end: the real binary (compiled dist/) spawned with no stdin, as cron or CI would run it.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { makeTempState, repoRoot, runBin } from "../helpers/temp-state.js";

describe("bin/openclaw-state.js", () => {
  it("--version prints the package version", async () => {
    const pkg = JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, "utf8")) as { version: string };
    const run = await runBin(["--version"], { PATH: process.env.PATH });
    expect(run).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });

  it("doctor, doctor --fix --yes and inspect --json on the legacy fixture", async () => {
    const { env, paths } = makeTempState("legacy-state");
    const doctor = await runBin(["doctor"], env);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/Global database does not exist/);
    expect(doctor.stderr).toBe("");

    const fix = await runBin(["doctor", "--fix", "--yes"], env);
    expect(fix.code).toBe(0);
    expect(fix.stdout).toMatch(/fixed create the global database/);
    expect(fs.existsSync(paths.globalDbPath)).toBe(true);

    const inspect = await runBin(["inspect", "--json"], env);
    expect(inspect.code).toBe(0);
    const doc = JSON.parse(inspect.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "inspect", stateDir: paths.stateDir });
    // --fix leaves the state in OpenClaw's current format (global v18), the format this tool writes: `ok`, `current`.
    expect(doc.databases[0]).toMatchObject({ role: "global", status: "ok", formatStatus: "current", schemaVersion: 18, format: { id: "openclaw", current: true } });
    expect(doc.databases[0].tables.schema_meta).toBe(1);
  });

  it("prints a usage error on stderr with exit 2", async () => {
    const run = await runBin(["frobnicate"], { PATH: process.env.PATH });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/unknown command 'frobnicate'/);
  });
});
