// listBackups and pruneBackups: recorded runs merged with archives on disk; prune only ever deletes our archives.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { listBackups } from "../../src/backup/list-backups.js";
import { pruneBackups } from "../../src/backup/prune-backups.js";
import { UsageError } from "../../src/core/errors.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempState, snapshotTree } from "../helpers/temp-state.js";

describe("listBackups", () => {
  it("merges backup_runs rows with the archives found in the backup dir", async () => {
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
    expect(byPath.get(a.archivePath)).toMatchObject({ status: "completed", exists: false, runId: a.runId });
    expect(byPath.get(b.archivePath)).toMatchObject({ status: "completed", exists: true, manifestOk: true, databases: 2 });
    expect(byPath.get(copied)).toMatchObject({ status: "unrecorded", manifestOk: true, runId: b.runId });
    expect(byPath.get(path.join(state.paths.backupDir, "junk.tar.gz"))).toMatchObject({ status: "unrecorded", manifestOk: false });
    expect(result.backups[0]!.createdAt).toBeGreaterThanOrEqual(result.backups[result.backups.length - 1]!.createdAt);
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
  it("keeps the N newest archives, deletes older ones, and never touches files it did not write", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const made = [];
    for (let i = 0; i < 4; i += 1) made.push(await createBackup({ paths: state.paths, verify: false }));
    const junk = path.join(state.paths.backupDir, "junk.tar.gz");
    const notes = path.join(state.paths.backupDir, "README.txt");
    fs.writeFileSync(junk, "not ours");
    fs.writeFileSync(notes, "keep me");

    const before = snapshotTree(state.paths.backupDir);
    const dry = await pruneBackups({ paths: state.paths, keep: 2, dryRun: true });
    expect(snapshotTree(state.paths.backupDir)).toEqual(before);
    expect(dry.removed.map((r) => r.archivePath)).toEqual([made[1]!.archivePath, made[0]!.archivePath]);

    const declined = await pruneBackups({ paths: state.paths, keep: 2, confirm: async () => false });
    expect(declined.status).toBe("declined");
    expect(snapshotTree(state.paths.backupDir)).toEqual(before);

    const pruned = await pruneBackups({ paths: state.paths, keep: 2, confirm: async () => true });
    expect(pruned.status).toBe("pruned");
    expect(pruned.kept.map((k) => k.archivePath)).toEqual([made[3]!.archivePath, made[2]!.archivePath]);
    expect(pruned.ignored.map((i) => i.path)).toEqual([junk]);
    expect(fs.readdirSync(state.paths.backupDir).sort()).toEqual(
      ["README.txt", "junk.tar.gz", path.basename(made[2]!.archivePath), path.basename(made[3]!.archivePath)].sort(),
    );
  });

  it("refuses --keep below 1", async () => {
    const state = makeTempState("legacy-state");
    await expect(pruneBackups({ paths: state.paths, keep: 0 })).rejects.toBeInstanceOf(UsageError);
    await expect(pruneBackups({ paths: state.paths, keep: Number.NaN })).rejects.toBeInstanceOf(UsageError);
  });
});
