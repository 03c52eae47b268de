// `migrate skip`: a broken source set aside under migrated/<run>/skipped/, recorded in the ledger, refused where it would lose data.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir, makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";
import { rows } from "../helpers/migration.js";

describe("migrate skip", () => {
  it("sets a failing source aside, records it, and the next doctor --fix is clean (exit 0)", async () => {
    const { env, stateDir, paths } = makeTempState("migration/corrupt-middle-line");
    const fix = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(fix.code).toBe(1);
    const skip = await runInProcess(["migrate", "skip", "agents/main/sessions/s-bad.jsonl", "--reason", "corrupt since the disk failure"], env);
    expect(skip.code, skip.stderr).toBe(0);
    const runId = /run (\S+) \(reason/.exec(skip.stdout)![1]!;
    const moved = path.join(stateDir, "migrated", runId, "skipped", "agents/main/sessions/s-bad.jsonl");
    expect(skip.stdout).toContain(`→ ${moved}`);
    expect(fs.existsSync(moved)).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-bad.jsonl"))).toBe(false);
    expect(rows(paths.globalDbPath, "SELECT status, removed_source, migration_kind, json_extract(report_json, '$.reason') AS reason FROM migration_sources WHERE last_run_id = ?", runId)).toEqual([
      { status: "skipped", removed_source: 1, migration_kind: "transcript", reason: "set aside by migrate skip: corrupt since the disk failure" },
    ]);
    const history = JSON.parse((await runInProcess(["migrate", "history", "--json"], env)).stdout);
    expect(history.runs[0]).toMatchObject({ id: runId, kind: "skip", status: "completed", sources: [{ relativePath: "agents/main/sessions/s-bad.jsonl", status: "skipped", retiredTo: moved }] });
    const again = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(again.code, again.stdout).toBe(0);
    expect((await runInProcess(["doctor", "--strict"], env)).code).toBe(0);
  });

  it("a file put back after a skip is planned again, with a note", async () => {
    const { env, stateDir } = makeTempState("migration/simple");
    const file = path.join(stateDir, "agents/main/sessions/s-ops.jsonl");
    const skip = JSON.parse((await runInProcess(["migrate", "skip", file, "--reason", "later", "--json"], env)).stdout);
    fs.renameSync(skip.skip.movedTo, file);
    const plan = JSON.parse((await runInProcess(["migrate", "plan", "--json"], env)).stdout).plan;
    const s = plan.sources.find((x: { relativePath: string }) => x.relativePath === "agents/main/sessions/s-ops.jsonl");
    expect(s.action).toBe("import");
    expect(s.notes.join("\n")).toMatch(/set aside before by `migrate skip` \(run \S+: set aside by migrate skip: later\) and put back: planned again/);
  });

  it("also sets aside unknown, cache and archived files; --dry-run changes nothing", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    fs.writeFileSync(path.join(stateDir, "notes.txt"), "mine\n");
    const before = snapshotTree(stateDir);
    const dry = await runInProcess(["migrate", "skip", "notes.txt", "--reason", "mine", "--dry-run"], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/Would set aside notes\.txt \(unknown\) → .*migrated\/<run id>\/skipped\/notes\.txt/);
    expect(snapshotTree(stateDir)).toEqual(before);
    expect((await runInProcess(["migrate", "skip", "agents/main/sessions/s-main-old.jsonl.reset.2025-12-31T00-00-00.000Z", "--reason", "old"], env)).code).toBe(0);
    expect((await runInProcess(["migrate", "skip", "notes.txt", "--reason", "mine"], env)).code).toBe(0);
    const doctor = await runInProcess(["doctor"], env);
    expect(doctor.stdout).not.toMatch(/notes\.txt|s-main-old/);
  });

  it("refuses without a reason (exit 2), and for current state, plugin-owned files and missing paths (exit 1), changing nothing", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    fs.mkdirSync(path.join(stateDir, "telegram"));
    fs.writeFileSync(path.join(stateDir, "telegram/update-offset-default.json"), "{}");
    const before = snapshotTree(path.dirname(stateDir));
    const noReason = await runInProcess(["migrate", "skip", "cron/jobs.json"], env);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/--reason/);
    const blank = await runInProcess(["migrate", "skip", "cron/jobs.json", "--reason", "  "], env);
    expect(blank.code).toBe(2);
    const current = await runInProcess(["migrate", "skip", "openclaw.json", "--reason", "x"], env);
    expect(current.code).toBe(1);
    expect(current.stderr).toMatch(/openclaw\.json is current state .* not a legacy file/);
    const plugin = await runInProcess(["migrate", "skip", "telegram/update-offset-default.json", "--reason", "x"], env);
    expect(plugin.code).toBe(1);
    expect(plugin.stderr).toMatch(/belongs to the Telegram plugin's own migration/);
    const missing = await runInProcess(["migrate", "skip", "nope.json", "--reason", "x", "--json"], env);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(snapshotTree(path.dirname(stateDir))).toEqual(before);
  });
});

describe("migrate skip against the boundary (attacks)", () => {
  /** agents/evil/sessions → a directory outside the state dir holding a file named like a legacy transcript. */
  function linkedParent(): { env: NodeJS.ProcessEnv; stateDir: string; victim: string; outside: string } {
    const { env, stateDir } = makeTempState("legacy-state");
    const outside = makeTempDir("ocs-elsewhere-");
    const victim = path.join(outside, "victim.jsonl");
    fs.writeFileSync(victim, '{"type":"session","id":"victim"}\n');
    fs.mkdirSync(path.join(stateDir, "agents", "evil"), { recursive: true });
    fs.symlinkSync(outside, path.join(stateDir, "agents", "evil", "sessions"));
    return { env, stateDir, victim, outside };
  }

  it("a symlinked parent is refused (exit 1, unsafe_path): the outside file stays, nothing is moved or recorded", async () => {
    const { env, stateDir, victim, outside } = linkedParent();
    const outsideBefore = snapshotTree(outside);
    const stateBefore = snapshotTree(stateDir);
    for (const extra of [[], ["--dry-run"]]) {
      const run = await runInProcess(["migrate", "skip", "agents/evil/sessions/victim.jsonl", "--reason", "x", "--json", ...extra], env);
      expect(run.code, run.stdout).toBe(1);
      const doc = JSON.parse(run.stdout);
      expect(doc).toMatchObject({ ok: false, error: { code: "unsafe_path" } });
      expect(doc.error.message).toMatch(/its parent .*agents\/evil\/sessions is a symbolic link/);
    }
    // The absolute form through the link is refused the same way.
    const abs = await runInProcess(["migrate", "skip", path.join(stateDir, "agents/evil/sessions/victim.jsonl"), "--reason", "x"], env);
    expect(abs.code).toBe(1);
    expect(abs.stderr).toMatch(/Refusing to set aside .*victim\.jsonl: its parent .* is a symbolic link.*nothing was touched there/);
    expect(fs.readFileSync(victim, "utf8")).toBe('{"type":"session","id":"victim"}\n');
    expect(snapshotTree(outside)).toEqual(outsideBefore);
    expect(snapshotTree(stateDir)).toEqual(stateBefore);
    expect(fs.existsSync(path.join(stateDir, "migrated"))).toBe(false);
  });

  it("a FIFO is refused without being opened (the command returns at once, exit 1)", { timeout: 15_000 }, async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    const fifo = path.join(stateDir, "agents", "main", "sessions", "s-fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    for (const extra of [[], ["--dry-run"]]) {
      const started = Date.now();
      const run = await runInProcess(["migrate", "skip", "agents/main/sessions/s-fifo.jsonl", "--reason", "x", ...extra], env);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/Refusing to set aside .*s-fifo\.jsonl: it is a FIFO; nothing was touched there/);
    }
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "migrated"))).toBe(false);
  });

  it("migrated/ as a link out of the state dir: refused, nothing written where it points", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    fs.writeFileSync(path.join(stateDir, "notes.txt"), "mine\n");
    const outside = makeTempDir("ocs-elsewhere-");
    fs.symlinkSync(outside, path.join(stateDir, "migrated"));
    for (const extra of [["--dry-run"], []]) {
      const run = await runInProcess(["migrate", "skip", "notes.txt", "--reason", "mine", ...extra], env);
      expect(run.code, run.stdout).toBe(1);
      expect(run.stderr).toMatch(/its parent .*migrated is a symbolic link|migrated is a symbolic link/);
    }
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readFileSync(path.join(stateDir, "notes.txt"), "utf8")).toBe("mine\n");
  });
});

describe("migrate skip of the state dir itself", () => {
  it("is refused as the boundary itself (exit 1, unsafe_path), nothing created or moved", async () => {
    const { env, stateDir } = makeTempState();
    fs.mkdirSync(stateDir);
    fs.writeFileSync(path.join(stateDir, "notes.txt"), "mine\n");
    const before = snapshotTree(stateDir);
    const run = await runInProcess(["migrate", "skip", stateDir, "--reason", "x", "--json"], env);
    expect(run.code, run.stdout).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: "unsafe_path", message: expect.stringMatching(/is the boundary .* itself/) } });
    expect(snapshotTree(stateDir)).toEqual(before);
  });
});
