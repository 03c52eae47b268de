// One verdict per run, through the real binary: the last line, `--json` status/ok/exitCode and the exit code agree;
// `--quiet` is silent on a healthy state (archived leftovers included) and never hides an error.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, runBin, type CliRun } from "../helpers/temp-state.js";

const TIMEOUT = 60_000;

function lastLine(text: string): string {
  return text.trimEnd().split("\n").pop() ?? "";
}

function corruptState(): ReturnType<typeof makeTempState> {
  const state = makeTempState("legacy-state");
  fs.writeFileSync(path.join(state.stateDir, "cron", "jobs.json"), '{"jobs": [');
  return state;
}

function agree(human: CliRun, json: CliRun): void {
  const doc = JSON.parse(json.stdout);
  expect(json.code).toBe(human.code);
  expect(doc.exitCode).toBe(json.code);
  expect(doc.ok).toBe(json.code === 0);
  expect(doc.status === "errors").toBe(json.code !== 0);
  // The verdict is the last report line (on stdout; under --quiet, where only what needs action is printed, on stderr).
  const last = lastLine(human.stdout !== "" ? human.stdout : human.stderr);
  expect(last.startsWith("FAILED")).toBe(human.code !== 0);
}

describe("doctor: one verdict per run", () => {
  it("one corrupt source: check and --fix exit 1, say FAILED last, report status errors, and hint `migrate skip`", { timeout: TIMEOUT }, async () => {
    const { env } = corruptState();
    const check = await runBin(["doctor"], env);
    expect(check.code).toBe(1);
    expect(lastLine(check.stdout)).toMatch(/^FAILED: 1 error\(s\), \d+ warning\(s\), \d+ ok — run `openclaw-state doctor --fix`/);
    expect(check.stdout + check.stderr).toContain('fix: It fails on every `doctor --fix` as it is: repair it, or set it aside with `openclaw-state migrate skip cron/jobs.json --reason "…"`.');
    agree(check, await runBin(["doctor", "--json"], env));

    const fix = await runBin(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(fix.code).toBe(1);
    expect(lastLine(fix.stdout)).toMatch(/^FAILED \(\d+ repair\(s\) failed\): 1 error\(s\), \d+ warning\(s\), \d+ ok$/);
    const fixJson = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--json"], env);
    expect(JSON.parse(fixJson.stdout)).toMatchObject({ ok: false, exitCode: 1, status: "errors" });
    agree(fix, fixJson);

    // --quiet keeps the error, its hint and the verdict; nothing on stdout.
    const quiet = await runBin(["doctor", "--quiet"], env);
    expect(quiet.code).toBe(1);
    expect(quiet.stdout).toBe("");
    expect(quiet.stderr).toMatch(/✗ 1 legacy cron store: .*will fail as it is/);
    expect(quiet.stderr).toMatch(/migrate skip cron\/jobs\.json/);
    expect(lastLine(quiet.stderr)).toMatch(/^FAILED/);

    // Set aside as the hint says: the next run converges and agrees with itself.
    expect((await runBin(["migrate", "skip", "cron/jobs.json", "--reason", "corrupt"], env)).code).toBe(0);
    expect((await runBin(["migrate", "skip", "cron/jobs-state.json", "--reason", "its jobs file is corrupt"], env)).code).toBe(0);
    const settled = await runBin(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(settled.code, settled.stderr).toBe(0);
    agree(settled, await runBin(["doctor", "--json"], env));
  });

  it("a healthy state with an archived *.jsonl.reset.* leftover: --quiet prints nothing and exits 0; the footer never suggests a --fix that does nothing", { timeout: TIMEOUT }, async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    expect((await runBin(["doctor", "--fix", "--yes", "--no-backup", "--quiet"], env)).code).toBe(0);
    expect(fs.existsSync(path.join(stateDir, "agents", "main", "sessions", "s-main-old.jsonl.reset.2025-12-31T00-00-00.000Z"))).toBe(true);
    const quiet = await runBin(["doctor", "--quiet"], env);
    expect(quiet).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const human = await runBin(["doctor"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/✓ 1 archived leftover\(s\) .*never imported/);
    expect(lastLine(human.stdout)).toMatch(/^0 error\(s\), 0 warning\(s\), \d+ ok$/);
    const json = await runBin(["doctor", "--json"], env);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ ok: true, exitCode: 0, status: "ok", plannedRepairs: [] });
    expect(doc.findings.filter((f: { id: string }) => f.id === "legacy.archived")).toEqual([expect.objectContaining({ severity: "info" })]);
    agree(human, json);

    // --strict: a warning fails the run, and every output says so.
    fs.chmodSync(path.join(stateDir, "openclaw.json"), 0o644);
    const strict = await runBin(["doctor", "--strict"], env);
    expect(strict.code).toBe(1);
    expect(lastLine(strict.stdout)).toMatch(/^FAILED \(warnings fail under --strict\): 0 error\(s\), 1 warning\(s\)/);
    agree(strict, await runBin(["doctor", "--strict", "--json"], env));
  });
});
