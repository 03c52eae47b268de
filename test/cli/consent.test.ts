// One consent wording for every destructive command, and the global --non-interactive accepted everywhere.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { consentMessage } from "../../src/cli/consent.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

const WORDING = /: it needs consent and cannot ask for it here \(no terminal, --json or --non-interactive\), so nothing was changed\. Re-run with --yes/;

describe("consent wording", () => {
  it("is one sentence shape: what would happen, why no prompt, nothing changed, the flags", () => {
    expect(consentMessage({ what: "backup prune would delete 2 archive(s) from /b", dryRun: true })).toBe(
      "backup prune would delete 2 archive(s) from /b: it needs consent and cannot ask for it here (no terminal, --json or --non-interactive), so nothing was changed. Re-run with --yes, or with --dry-run to see the plan.",
    );
    expect(consentMessage({ what: "reset has no scope", needs: ["--scope <x>", "--yes"] })).toMatch(/Re-run with --scope <x> and --yes\.$/);
  });

  it("every destructive command refuses with it: exit 2, code consent_required, nothing changed", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["doctor", "--fix"], /^error: doctor --fix would apply \d+ repair\(s\) to /],
      [["reset", "--scope", "full"], /^error: reset --scope full would remove state under /],
      [["sessions", "delete", "agent:main:old"], /^error: sessions delete would delete agent:main:old/],
      [["migrate", "upgrade"], /^error: migrate upgrade would rewrite the databases under /],
    ];
    for (const [args, head] of cases) {
      const { env, stateDir, root } = makeTempState();
      fs.mkdirSync(stateDir, { mode: 0o700 });
      const before = snapshotTree(root);
      const run = await runInProcess(args, env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(head);
      expect(run.stderr).toMatch(WORDING);
      const json = await runInProcess([...args, "--json"], env);
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "consent_required", message: expect.stringMatching(WORDING) } });
      expect(snapshotTree(root)).toEqual(before);
    }
  });
});

describe("global --non-interactive", () => {
  it("is accepted before or after any command and changes nothing where nothing asks", async () => {
    const { env, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { mode: 0o700 });
    for (const args of [["inspect"], ["doctor"], ["sessions", "list"], ["migrate", "plan"], ["backup", "list"]]) {
      const plain = await runInProcess([...args, "--json"], env);
      const after = await runInProcess([...args, "--json", "--non-interactive"], env);
      const before = await runInProcess(["--non-interactive", ...args, "--json"], env);
      expect(after.code, `${args.join(" ")}: ${after.stderr}`).toBe(plain.code);
      expect(before.code).toBe(plain.code);
      expect(after.stderr).not.toMatch(/unknown option/);
    }
  });

  it("turns prompting off even on a terminal: consent then needs --yes (exit 2), and --yes still works", async () => {
    const { env, root, paths } = makeTempState();
    const before = snapshotTree(root);
    // The answers make prompting possible (as on a terminal); --non-interactive must not ask.
    const refused = await runInProcess(["--non-interactive", "doctor", "--fix"], env, [true]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(WORDING);
    expect(snapshotTree(root)).toEqual(before);
    const asked = await runInProcess(["doctor", "--fix"], env, [true]);
    expect(asked.code).toBe(0);
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(root, { recursive: true });
    const yes = await runInProcess(["doctor", "--fix", "--yes", "--non-interactive"], env, [false]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(fs.existsSync(paths.globalDbPath)).toBe(true);
  });

  it("keeps reset --non-interactive: --scope and --yes required", async () => {
    const { env, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { mode: 0o700 });
    const noScope = await runInProcess(["reset", "--non-interactive"], env, [true, true]);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toMatch(/reset has no scope: .*Re-run with --scope <config \| config\+creds\+sessions \| full> and --yes/);
    expect(JSON.parse((await runInProcess(["reset", "--non-interactive", "--json"], env)).stdout).error.code).toBe("missing_scope");
  });
});
