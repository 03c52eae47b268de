// A FIFO at the config path (and a device or directory there) never blocks a command: doctor, migrate plan,
// backup create and reset --dry-run finish, name it, and carry on. Through the binary, with a hard timeout.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { makeTempState, runBin } from "../helpers/temp-state.js";

const TIMEOUT_MS = 30_000;

describe("a FIFO at the config path", () => {
  it("doctor, migrate plan, backup create, reset --dry-run finish and name it", async () => {
    const { env, paths } = makeTempState("legacy-state");
    fs.rmSync(paths.configPath);
    execFileSync("mkfifo", [paths.configPath]);
    const expectations: Array<[string[], number, RegExp]> = [
      [["doctor"], 0, /Config path is not a regular file[\s\S]*openclaw\.json is a FIFO \(named pipe\)/],
      [["migrate", "plan"], 0, /openclaw\.json is a FIFO \(named pipe\), not a regular file: it was not read/],
      [["backup", "create"], 0, /openclaw\.json is a FIFO \(named pipe\), not a regular file/],
      [["reset", "--scope", "config", "--dry-run"], 0, /openclaw\.json — a FIFO \(named pipe\), not a regular file, so not a config file; left in place/],
      [["reset", "--scope", "full", "--dry-run"], 0, /would remove/],
    ];
    for (const [args, code, said] of expectations) {
      const t0 = Date.now();
      const run = await runBin(args, env, { timeoutMs: TIMEOUT_MS });
      expect(Date.now() - t0, `${args.join(" ")} hung`).toBeLessThan(TIMEOUT_MS);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(code);
      expect(run.stdout + run.stderr, args.join(" ")).toMatch(said);
    }
    // The FIFO is still there, untouched by every command above.
    expect(fs.lstatSync(paths.configPath).isFIFO()).toBe(true);
  });

  it("a directory at OPENCLAW_CONFIG_PATH is named too; --json doctor carries it as a warning finding", async () => {
    const { env, root } = makeTempState("legacy-state");
    const run = await runBin(["doctor", "--json"], { ...env, OPENCLAW_CONFIG_PATH: root }, { timeoutMs: TIMEOUT_MS });
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.findings).toEqual(expect.arrayContaining([expect.objectContaining({ id: "config.not-a-file", severity: "warning", detail: expect.stringMatching(/is a directory/) })]));
  });
});
