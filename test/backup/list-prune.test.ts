// listBackups and pruneBackups: recorded runs merged with archives on disk; prune only ever deletes our archives.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup, type CreateBackupResult } from "../../src/backup/create-backup.js";
import { listBackups } from "../../src/backup/list-backups.js";
import { pruneBackups } from "../../src/backup/prune-backups.js";
import { UsageError } from "../../src/core/errors.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempState, runInProcess, snapshotTree, type TempState } from "../helpers/temp-state.js";

function insertMigrationRun(state: TempState, id: string, backupPath: string): void {
  const db = openGlobalDatabase(state.paths, { mode: "write" });
  try {
    db.handle.prepare("INSERT INTO migration_runs (id, started_at, finished_at, status, report_json) VALUES (?, ?, ?, 'completed', ?)").run(id, Date.now(), Date.now(), JSON.stringify({ backupPath }));
  } finally {
    db.close();
  }
}

function runRows(state: TempState): Array<{ id: string; archive_path: string | null; status: string }> {
  const db = openGlobalDatabase(state.paths, { mode: "read" });
  try {
    return db.handle.prepare("SELECT id, archive_path, status FROM backup_runs ORDER BY created_at").all() as Array<{ id: string; archive_path: string | null; status: string }>;
  } finally {
    db.close();
  }
}

describe("listBackups", () => {
  it("merges backup_runs rows with the archives found in the backup dir; runs whose archive is gone only with `all`", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const a = await createBackup({ paths: state.paths, verify: false });
    const b = await createBackup({ paths: state.paths, verify: false });
    fs.rmSync(a.archivePath);
    const copied = path.join(state.paths.backupDir, "copied-in.tar.gz");
    fs.copyFileSync(b.archivePath, copied);
    fs.writeFileSync(path.join(state.paths.backupDir, "junk.tar.gz"), "not an archive");
    const before = snapshotTree(state.stateDir);
    const result = await listBackups({ paths: state.paths });
    expect(snapshotTree(state.stateDir)).toEqual(before);
    expect(result.runsRead).toBe(true);
    const byPath = new Map(result.backups.map((x) => [x.archivePath, x]));
    expect(byPath.has(a.archivePath)).toBe(false);
    expect(result.hidden).toEqual({ missing: 1, failed: 0 });
    expect(byPath.get(b.archivePath)).toMatchObject({ status: "completed", exists: true, manifestOk: true, databases: 2, compression: b.compression });
    expect(byPath.get(copied)).toMatchObject({ status: "unrecorded", manifestOk: true, runId: b.runId });
    expect(byPath.get(path.join(state.paths.backupDir, "junk.tar.gz"))).toMatchObject({ status: "unrecorded", manifestOk: false, compression: null });
    expect(result.backups[0]!.createdAt).toBeGreaterThanOrEqual(result.backups[result.backups.length - 1]!.createdAt);

    const all = await listBackups({ paths: state.paths, all: true });
    expect(all.hidden).toEqual({ missing: 0, failed: 0 });
    expect(all.backups.find((x) => x.archivePath === a.archivePath)).toMatchObject({ status: "completed", exists: false, runId: a.runId });
  });

  it("keeps a failed run visible until a later backup succeeds", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const ok = await createBackup({ paths: state.paths, verify: false });
    await expect(createBackup({ paths: state.paths, output: path.join(state.stateDir, "x.tar.gz") })).rejects.toThrow();
    const listed = await listBackups({ paths: state.paths });
    expect(listed.backups.map((x) => x.status)).toEqual(["failed", "completed"]);
    expect(listed.backups[1]!.archivePath).toBe(ok.archivePath);
    await createBackup({ paths: state.paths, verify: false });
    const later = await listBackups({ paths: state.paths });
    expect(later.backups.map((x) => x.status)).toEqual(["completed", "completed"]);
    expect(later.hidden).toEqual({ missing: 0, failed: 1 });
  });

  it("works without a global DB and without a backup dir, creating neither", async () => {
    const state = makeTempState("legacy-state");
    const result = await listBackups({ paths: state.paths });
    expect(result).toMatchObject({ runsRead: false, backups: [] });
    expect(fs.existsSync(state.paths.globalDbPath)).toBe(false);
    expect(fs.existsSync(state.paths.backupDir)).toBe(false);
  });
});

describe("pruneBackups", () => {
  it("keeps what the rules keep, deletes older ones, never touches files it did not write, and forgets gone runs", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const made: CreateBackupResult[] = [];
    for (let i = 0; i < 4; i += 1) made.push(await createBackup({ paths: state.paths, verify: false }));
    const junk = path.join(state.paths.backupDir, "junk.tar.gz");
    const notes = path.join(state.paths.backupDir, "README.txt");
    fs.writeFileSync(junk, "not ours");
    fs.writeFileSync(notes, "keep me");

    const before = snapshotTree(state.paths.backupDir);
    const dry = await pruneBackups({ paths: state.paths, policy: { last: 2 }, dryRun: true });
    expect(snapshotTree(state.paths.backupDir)).toEqual(before);
    expect(dry.removed.map((r) => r.archivePath)).toEqual([made[1]!.archivePath, made[0]!.archivePath]);
    expect(dry.kept.map((k) => [k.archivePath, k.reasons])).toEqual([
      [made[3]!.archivePath, ["last"]],
      [made[2]!.archivePath, ["last"]],
    ]);
    expect(dry.forgotten.map((f) => f.runId).sort()).toEqual([made[0]!.runId, made[1]!.runId].sort());
    expect(runRows(state)).toHaveLength(4);

    const declined = await pruneBackups({ paths: state.paths, policy: { last: 2 }, confirm: async () => false });
    expect(declined.status).toBe("declined");
    expect(snapshotTree(state.paths.backupDir)).toEqual(before);

    const pruned = await pruneBackups({ paths: state.paths, policy: { last: 2 }, confirm: async () => true });
    expect(pruned.status).toBe("pruned");
    expect(pruned.kept.map((k) => k.archivePath)).toEqual([made[3]!.archivePath, made[2]!.archivePath]);
    expect(pruned.ignored.map((i) => i.path)).toEqual([junk]);
    expect(fs.readdirSync(state.paths.backupDir).sort()).toEqual(
      ["README.txt", "junk.tar.gz", path.basename(made[2]!.archivePath), path.basename(made[3]!.archivePath)].sort(),
    );
    // The removed archives' rows are forgotten, so `backup list` shows no "(missing)" rows.
    expect(runRows(state).map((r) => r.id).sort()).toEqual([made[2]!.runId, made[3]!.runId].sort());
    expect((await listBackups({ paths: state.paths })).hidden).toEqual({ missing: 0, failed: 0 });
  });

  it("never removes an archive a migration run references, unless includeMigrationBackups", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const made: CreateBackupResult[] = [];
    for (let i = 0; i < 3; i += 1) made.push(await createBackup({ paths: state.paths, verify: false }));
    insertMigrationRun(state, "run-1", made[0]!.archivePath);
    const kept = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(kept.removed.map((r) => r.archivePath)).toEqual([made[1]!.archivePath]);
    expect(kept.kept.find((k) => k.archivePath === made[0]!.archivePath)).toMatchObject({ reasons: ["migration run run-1"], migrationRuns: ["run-1"] });
    expect(fs.existsSync(made[0]!.archivePath)).toBe(true);

    const dropped = await pruneBackups({ paths: state.paths, policy: { last: 1 }, includeMigrationBackups: true, confirm: async () => true });
    expect(dropped.removed.map((r) => r.archivePath)).toEqual([made[0]!.archivePath]);
    expect(fs.existsSync(made[0]!.archivePath)).toBe(false);
  });

  it("leaves archives of another state dir alone, and groups config-only archives apart", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const other = makeTempState("legacy-state");
    seedState(other);
    const foreign = await createBackup({ paths: other.paths, output: `${state.paths.backupDir}/`, verify: false });
    const full = await createBackup({ paths: state.paths, verify: false });
    const configOnly = await createBackup({ paths: state.paths, onlyConfig: true, verify: false });
    const newer = await createBackup({ paths: state.paths, verify: false });
    const result = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(result.ignored).toEqual([{ path: foreign.archivePath, reason: `an archive of another state dir (${other.stateDir})` }]);
    expect(result.removed.map((r) => r.archivePath)).toEqual([full.archivePath]);
    expect(result.kept.map((k) => k.archivePath).sort()).toEqual([configOnly.archivePath, newer.archivePath].sort());
  });

  it("writes one line per deleted archive and names each in --json; links and FIFOs under archive names are named, never opened", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const made: CreateBackupResult[] = [];
    for (let i = 0; i < 3; i += 1) made.push(await createBackup({ paths: state.paths, verify: false }));
    const fifo = path.join(state.paths.backupDir, "pipe.tar.gz");
    execFileSync("mkfifo", [fifo]);
    const link = path.join(state.paths.backupDir, "link.tar.gz");
    fs.symlinkSync(made[2]!.archivePath, link);

    const dry = await runInProcess(["backup", "prune", "--keep-last", "2", "--dry-run", "--json"], state.env);
    expect(dry.code).toBe(0);
    const doc = JSON.parse(dry.stdout);
    expect(doc.removed.map((r: { archivePath: string; runId: string }) => [r.archivePath, r.runId])).toEqual([[made[0]!.archivePath, made[0]!.runId]]);
    expect(doc.ignored).toEqual([
      { path: link, reason: "not an openclaw-state archive (a symbolic link (never followed))" },
      { path: fifo, reason: "not an openclaw-state archive (not a regular file)" },
    ]);

    const human = await runInProcess(["backup", "prune", "--keep-last", "1", "--yes"], state.env);
    expect(human.code, human.stderr).toBe(0);
    const lines = human.stdout.split("\n").filter((l) => l.trimStart().startsWith("removed "));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`${made[1]!.archivePath} (`);
    expect(lines[0]).toContain(`run ${made[1]!.runId})`);
    expect(lines[1]).toContain(`run ${made[0]!.runId})`);
    expect(human.stdout).toContain(`not ours, kept ${fifo}: `);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it("refuses a policy without a rule, or with a count below 1", async () => {
    const state = makeTempState("legacy-state");
    await expect(pruneBackups({ paths: state.paths, policy: {} })).rejects.toThrow(/needs a retention rule/);
    await expect(pruneBackups({ paths: state.paths, policy: { last: 0 } })).rejects.toBeInstanceOf(UsageError);
    await expect(pruneBackups({ paths: state.paths, policy: { daily: Number.NaN } })).rejects.toBeInstanceOf(UsageError);
    await expect(pruneBackups({ paths: state.paths, policy: { within: "5x" } })).rejects.toThrow(/--keep-within/);
  });
});
