// `doctor --fix --dry-run` through the binary: nothing written, and what it names is exactly what the real --fix then does.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DRY_RUN_ID } from "../../src/doctor/dry-run.js";
import { migrate } from "../helpers/migration.js";
import { makeTempState, runBin, runInProcess, snapshotTree } from "../helpers/temp-state.js";

interface DrySource {
  relativePath: string;
  action: string;
  then: "moved" | "deleted" | "left";
  retiredTo?: string;
  reason?: string;
}

describe("doctor --fix --dry-run", () => {
  it("writes nothing, and each legacy file goes where the dry run said once --fix runs", async () => {
    const { env, root, stateDir } = makeTempState("legacy-state");
    const before = snapshotTree(root);
    const dry = await runBin(["doctor", "--fix", "--dry-run", "--json"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(snapshotTree(root)).toEqual(before);
    expect(fs.existsSync(`${stateDir}-backups`)).toBe(false);
    const doc = JSON.parse(dry.stdout);
    expect(doc).toMatchObject({ ok: true, exitCode: 0, mode: "check", dryRun: { backup: { dir: `${stateDir}-backups` }, backupSkipped: false } });
    expect(doc.dryRun.repairs.map((r: { id: string }) => r.id)).toContain("legacy.migrate");
    expect(doc.dryRun.moves).toEqual([{ path: path.join(stateDir, "agent"), target: path.join(stateDir, "agents/main/agent") }]);
    const sources = doc.dryRun.sources as DrySource[];
    expect(sources.length).toBeGreaterThanOrEqual(11);
    for (const x of sources) {
      expect(x.then).toBe("moved");
      expect(x.retiredTo).toBe(path.join(stateDir, "migrated", DRY_RUN_ID, x.relativePath));
    }

    const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(fix.code, fix.stderr).toBe(0);
    const run = JSON.parse(fix.stdout).migration.run as { runId: string; sources: Array<{ relativePath: string; retired?: string; retiredTo?: string }> };
    const actual = new Map(run.sources.map((o) => [o.relativePath, o.retiredTo]));
    for (const x of sources) {
      const expected = x.retiredTo!.replace(DRY_RUN_ID, run.runId);
      expect(actual.get(x.relativePath), x.relativePath).toBe(expected);
      expect(fs.existsSync(expected), expected).toBe(true);
    }
    expect(fs.readdirSync(`${stateDir}-backups`).length).toBeGreaterThan(0);
  });

  it("names deletions under --remove-sources, a skipped file with its reason, a source that will fail, and --no-backup", async () => {
    const { env, root, stateDir } = makeTempState("legacy-state");
    // Will fail as it is: a transcript whose first line is not JSON.
    fs.writeFileSync(path.join(stateDir, "agents/main/sessions/s-nohead.jsonl"), 'not json\n{"type":"message","message":{"role":"user"}}\n');
    // Skipped: an empty run log.
    fs.writeFileSync(path.join(stateDir, "cron/runs/empty.jsonl"), "");
    const before = snapshotTree(root);
    const dry = await runBin(["doctor", "--dry-run", "--remove-sources", "--no-backup", "--json"], env);
    // The verdict is check mode's: a source --fix would fail on is an error now (exit 1), as --fix would end.
    expect(dry.code, dry.stderr).toBe(1);
    expect(snapshotTree(root)).toEqual(before);
    const doc = JSON.parse(dry.stdout);
    expect(doc).toMatchObject({ ok: false, exitCode: 1, status: "errors" });
    expect(doc.dryRun).toMatchObject({ backup: null, backupSkipped: true });
    const sources = doc.dryRun.sources as DrySource[];
    const failing = sources.find((x) => x.relativePath === "agents/main/sessions/s-nohead.jsonl");
    expect(failing).toMatchObject({ then: "left", reason: expect.stringMatching(/^will fail: /) });
    expect(sources.find((x) => x.relativePath === "cron/runs/empty.jsonl")).toMatchObject({ action: "skip", then: "left", reason: expect.stringMatching(/^empty file/) });
    const rest = sources.filter((s) => s !== failing && s.action !== "skip");
    expect(rest.length).toBeGreaterThanOrEqual(11);
    for (const x of rest) expect(x).toMatchObject({ then: "deleted" });

    const human = await runBin(["doctor", "--fix", "--dry-run", "--remove-sources", "--no-backup"], env);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^Dry run: doctor --fix would \(nothing was changed\):$/m);
    expect(human.stdout).toMatch(/^ {2}import agents\/main\/sessions\/s-main\.jsonl \(transcript → .*\), then DELETE it$/m);
    expect(human.stdout).toMatch(/^ {2}import agents\/main\/sessions\/s-nohead\.jsonl .*leave it in place — will fail: /m);
    expect(human.stdout).toMatch(/^ {2}skip cron\/runs\/empty\.jsonl .*leave it in place — empty file/m);
    expect(human.stdout + human.stderr).toMatch(/take NO pre-migration backup \(--no-backup\)/);
    expect(snapshotTree(root)).toEqual(before);
  });

  it("names the backup the format upgrade takes when only the upgrade is planned (an earlier openclaw-state's databases)", async () => {
    const { env, root, stateDir, paths } = makeTempState("legacy-state");
    await migrate(paths); // the importers' design-v1 state, every source retired
    const before = snapshotTree(root);
    const dry = await runBin(["doctor", "--dry-run", "--json"], env);
    expect(snapshotTree(root)).toEqual(before);
    const doc = JSON.parse(dry.stdout);
    expect(doc.dryRun.repairs.map((r: { id: string }) => r.id)).toContain("format.upgrade");
    expect(doc.dryRun.repairs.map((r: { id: string }) => r.id)).not.toContain("legacy.migrate");
    expect(doc.dryRun).toMatchObject({ backup: { dir: `${stateDir}-backups` }, sources: [] });
  });

  it("names the database each file's rows go into, another agent's too when a store's keys name it", async () => {
    const { env, root } = makeTempState("migration/agent-main-keys");
    const before = snapshotTree(root);
    const dry = await runBin(["doctor", "--dry-run", "--json"], env);
    expect(snapshotTree(root)).toEqual(before);
    const sources = JSON.parse(dry.stdout).dryRun.sources as Array<DrySource & { databases: string[] }>;
    const db = (agent: string): string => `agents/${agent}/agent/openclaw-agent.sqlite`;
    expect(Object.fromEntries(sources.map((x) => [x.relativePath, x.databases]))).toEqual({
      // No entry has ACP metadata (2026.9.6 keeps acp_sessions in the global database): read from the file, not named.
      "agents/ops/sessions/sessions.json": [db("ops"), db("main"), db("other")],
      "agents/ops/sessions/s-ops-main.jsonl": [db("ops")],
      "agents/ops/sessions/s-ops-dm-newer.jsonl": [db("ops")],
      "agents/ops/sessions/s-ops-dm.jsonl": [db("main")],
      "agents/ops/sessions/s-other.jsonl": [db("other")],
    });
    const human = await runBin(["doctor", "--dry-run"], env);
    expect(human.stdout).toMatch(/^ {2}import agents\/ops\/sessions\/s-ops-dm\.jsonl \(transcript → transcript_events, transcript_rewrite_watermarks, transcript_event_identities in agents\/main\/agent\/openclaw-agent\.sqlite\), then move it to /m);
  });

  it("on a healthy state says --fix would change nothing", async () => {
    const { env, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { mode: 0o700 });
    expect((await runInProcess(["doctor", "--fix", "--yes"], env)).code).toBe(0);
    const dry = await runInProcess(["doctor", "--fix", "--dry-run"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^Dry run: doctor --fix would change nothing\.$/m);
  });

  it("the consent refusal points at it", async () => {
    const { env } = makeTempState("legacy-state");
    const run = await runInProcess(["doctor", "--fix"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Re-run with --yes, or with --dry-run to see the plan\.$/m);
  });
});
