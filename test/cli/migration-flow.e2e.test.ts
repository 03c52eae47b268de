// Unattended `doctor --fix` through the binary: exit codes and `ok` agree, no needless backups, loud unreadable paths, honest history.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ARCHIVE_NAME_PATTERN } from "../../src/backup/compression.js";
import { MAINTENANCE_SCOPE } from "../../src/state/lease.js";
import { openLedgerDatabase } from "../../src/state/state-databases.js";
import { insertLease } from "../helpers/leases.js";
import { binPath, chownToNobody, makeTempState, NOBODY, runBin, type CliRun } from "../helpers/temp-state.js";

const isRoot = process.getuid?.() === 0;

function archives(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => ARCHIVE_NAME_PATTERN.test(n)) : [];
}

/** Runs the binary as a user that permissions apply to (root reads everything): `nobody` when we are root. */
function runUnprivileged(args: string[], env: NodeJS.ProcessEnv, root: string): Promise<CliRun> {
  if (!isRoot) return runBin(args, env);
  chownToNobody(root);
  return new Promise((resolve, reject) => {
    const child = spawn("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, binPath, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

describe("doctor --fix exit codes", () => {
  it("exits 1 with ok:false when every planned source failed (run status failed)", async () => {
    // The only source is a transcript whose first line is not JSON (a header-less one imports as version 1).
    const { env, stateDir } = makeTempState("migration/missing-header");
    fs.writeFileSync(path.join(stateDir, "agents/main/sessions/s-nohead.jsonl"), 'not json\n{"type":"message","message":{"role":"user"}}\n');
    const r = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--json"], env);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ ok: false, exitCode: 1 });
    expect(doc.migration.run.status).toBe("failed");
  });

  it("exits 1 with ok:false when one source failed and the others imported", async () => {
    const { env } = makeTempState("migration/corrupt-middle-line");
    const r = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--json"], env);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.migration.run.status).toBe("warning");
    expect(doc.migration.run.totals).toMatchObject({ imported: 1, failed: 1 });
    const human = await runBin(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^failed import 1 legacy source/m);
  });
});

describe("backups on re-runs", () => {
  it("a re-run with nothing new to import takes no backup (the failed source is held by the first archive)", async () => {
    const { env, paths } = makeTempState("migration/corrupt-middle-line");
    const first = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(first.code).toBe(1);
    expect(archives(paths.backupDir)).toHaveLength(1);
    const plan = JSON.parse((await runBin(["migrate", "plan", "--json"], env)).stdout).plan;
    expect(plan.sources[0]).toMatchObject({ relativePath: "agents/main/sessions/s-bad.jsonl", action: "import", coveredByBackup: path.join(paths.backupDir, archives(paths.backupDir)[0]!) });
    for (let i = 0; i < 2; i += 1) {
      const again = await runBin(["doctor", "--fix", "--yes", "--json"], env);
      expect(again.code).toBe(1);
      expect(JSON.parse(again.stdout).migration.run.backupPath).toBeNull();
    }
    expect(archives(paths.backupDir)).toHaveLength(1);
    // The archive is gone: a retry is backed up again.
    fs.rmSync(path.join(paths.backupDir, archives(paths.backupDir)[0]!));
    expect((await runBin(["doctor", "--fix", "--yes"], env)).code).toBe(1);
    expect(archives(paths.backupDir)).toHaveLength(1);
  });
});

describe("migrate plan marks sources that will fail", () => {
  it("a transcript with a broken middle line is `import (will fail)`, not a plain import", async () => {
    const { env } = makeTempState("migration/corrupt-middle-line");
    const human = await runBin(["migrate", "plan"], env);
    expect(human.stdout).toMatch(/import \(will fail\) agents\/main\/sessions\/s-bad\.jsonl/);
    expect(human.stdout).toMatch(/s-bad\.jsonl:3: not a JSON object line/);
    expect(human.stdout).toMatch(/1 source\(s\) will fail as they are/);
    const json = JSON.parse((await runBin(["migrate", "plan", "--json"], env)).stdout).plan;
    const bad = json.sources.find((s: { relativePath: string }) => s.relativePath.endsWith("s-bad.jsonl"));
    expect(bad.willFail).toMatch(/s-bad\.jsonl:3: not a JSON object line/);
    expect(json.sources.find((s: { relativePath: string }) => s.relativePath.endsWith("s-good.jsonl")).willFail).toBeUndefined();
  });
});

describe("unreadable legacy state", () => {
  it("an unreadable legacy file is named with the fix; --fix refuses before the backup and imports nothing", async () => {
    const { env, stateDir, root, paths } = makeTempState("migration/simple");
    fs.chmodSync(path.join(stateDir, "agents/main/sessions/s-ops.jsonl"), 0o000);
    const doctor = await runUnprivileged(["doctor"], env, root);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/s-ops\.jsonl: cannot be read: EACCES.*make it readable by this user \(chmod u\+r .*s-ops\.jsonl\) or move it out of the state dir/);
    expect(doctor.stdout).toMatch(/✗ 1 path\(s\) in the state dir cannot be read/);
    const fix = await runUnprivileged(["doctor", "--fix", "--yes"], env, root);
    expect(fix.code).toBe(1);
    expect(fix.stdout).toMatch(/the pre-migration backup cannot read 1 path\(s\): .*s-ops\.jsonl; make them readable by this user \(chmod -R u\+rX <path>\)/);
    expect(fix.stdout).not.toMatch(/backup: .*\(verified\)/);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-main.jsonl"))).toBe(true);
    expect(archives(paths.backupDir)).toEqual([]);
  });

  it("an unreadable directory is named, and never left out of a backup that says verified", async () => {
    const { env, stateDir, root, paths } = makeTempState("migration/simple");
    fs.mkdirSync(path.join(stateDir, "private"));
    fs.writeFileSync(path.join(stateDir, "private/keys.txt"), "x");
    fs.chmodSync(path.join(stateDir, "private"), 0o000);
    const doctor = await runUnprivileged(["doctor"], env, root);
    expect(doctor.stdout).toMatch(/private\/ \(dir\) — directory cannot be read \(EACCES.*make it readable \(chmod u\+rx\) or move it out of the state dir \[UNREADABLE\]/);
    const fix = await runUnprivileged(["doctor", "--fix", "--yes", "--json"], env, root);
    expect(fix.code).toBe(1);
    const doc = JSON.parse(fix.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.migration.run).toMatchObject({ status: "failed", backupPath: null, error: expect.stringMatching(/cannot read 1 path\(s\): .*private; .*nothing was imported/) });
    expect(archives(paths.backupDir)).toEqual([]);
    fs.chmodSync(path.join(stateDir, "private"), 0o700);
    const fixed = await runUnprivileged(["doctor", "--fix", "--yes"], env, root);
    expect(fixed.code, fixed.stdout).toBe(0);
    expect(fixed.stdout).toMatch(/backup: .* \(verified\)/);
  });
});

describe("migrate history", () => {
  it("shows a running row no process holds as interrupted (a rolled-back or killed run), running while the lease is live", async () => {
    const { env, paths } = makeTempState("migration/simple");
    expect((await runBin(["doctor", "--fix", "--yes", "--no-backup"], env)).code).toBe(0);
    // The ledger is now OpenClaw's own migration_runs (same columns).
    const db = openLedgerDatabase(paths, { mode: "write" });
    try {
      db.run(db.q.insertInto("migration_runs").values({ id: "20990101T000000000Z-phantom", started_at: Date.UTC(2099, 0, 1), status: "running", report_json: JSON.stringify({ kind: "legacy-state", stateDir: paths.stateDir, backupPath: "/nowhere/pre.tar.gz", backupSkipped: false, phase: "importing" }) }));
    } finally {
      db.close();
    }
    const human = await runBin(["migrate", "history"], env);
    expect(human.stdout).toMatch(/20990101T000000000Z-phantom {2}interrupted/);
    expect(human.stdout).toMatch(/interrupted: no process is running it/);
    expect(human.stdout).toMatch(/backup \/nowhere\/pre\.tar\.gz \(MISSING\)/);
    const json = JSON.parse((await runBin(["migrate", "history", "--json"], env)).stdout);
    expect(json.runs[0]).toMatchObject({ status: "interrupted", recordedStatus: "running", interrupted: true, backupMissing: true });
    expect(JSON.parse((await runBin(["inspect", "--json"], env)).stdout).lastMigrationRuns[0]).toMatchObject({ id: "20990101T000000000Z-phantom", status: "interrupted" });
    const live = openLedgerDatabase(paths, { mode: "write" });
    try {
      insertLease(live, MAINTENANCE_SCOPE, process.pid, Date.now() + 60_000);
    } finally {
      live.close();
    }
    expect(JSON.parse((await runBin(["migrate", "history", "--json"], env)).stdout).runs[0].status).toBe("running");
  });

  it("the pre-migration archive holds no `running` row of its own run, and a pruned archive shows as missing", async () => {
    const { env, root, paths } = makeTempState("migration/simple");
    const fix = JSON.parse((await runBin(["doctor", "--fix", "--yes", "--json"], env)).stdout);
    const archive = fix.migration.run.backupPath as string;
    const target = path.join(root, "restored");
    const restore = await runBin(["backup", "restore", archive, "--yes", "--target", target], env);
    expect(restore.code, restore.stderr).toBe(0);
    const restoredHistory = JSON.parse((await runBin(["migrate", "history", "--json", "--state-dir", target], env)).stdout);
    expect(restoredHistory.runs.filter((r: { recordedStatus: string }) => r.recordedStatus === "running")).toEqual([]);
    fs.rmSync(archive);
    const history = JSON.parse((await runBin(["migrate", "history", "--json"], env)).stdout);
    expect(history.runs[0]).toMatchObject({ id: fix.migration.run.runId, backupPath: archive, backupMissing: true });
    expect(paths.stateDir).toBeTruthy();
  });
});

describe("a copied state dir", () => {
  it("OpenClaw's registry holds paths relative to the state dir: a copy opens its own databases with nothing to re-point (read back with sqlite3)", async () => {
    const { env, stateDir, root } = makeTempState("migration/simple");
    expect((await runBin(["doctor", "--fix", "--yes", "--no-backup"], env)).code).toBe(0);
    const copy = path.join(root, "copy", ".openclaw");
    fs.cpSync(stateDir, copy, { recursive: true });
    const copyEnv = { ...env, OPENCLAW_STATE_DIR: copy };
    const registered = execFileSync("sqlite3", [path.join(copy, "state/openclaw.sqlite"), "SELECT path FROM agent_databases WHERE agent_id = 'main'"], { encoding: "utf8" }).trim();
    expect(registered).toBe("agents/main/agent/openclaw-agent.sqlite");
    const doctor = await runBin(["doctor", "--strict"], copyEnv);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect((await runBin(["doctor"], copyEnv)).stdout).not.toMatch(/Registry row/);
  });
});
