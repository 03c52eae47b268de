// backup prune by identity, written as the attacks: a renamed copy, an archive dated 2099, a manifest-only stub,
// no global DB and a corrupt one. Prune deletes only archives proven ours; everything else is kept and named.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createBackup, type CreateBackupResult } from "../../src/backup/create-backup.js";
import { pruneBackups } from "../../src/backup/prune-backups.js";
import { takePreMigrationBackup } from "../../src/migration/backup-step.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { seedState } from "../helpers/backup-state.js";
import { manifestOf, readRawEntries, withManifest, writeRawArchive } from "../helpers/tar-tools.js";
import { makeTempState, snapshotTree, type TempState } from "../helpers/temp-state.js";

function seeded(): TempState {
  const state = makeTempState("legacy-state");
  seedState(state);
  return state;
}

async function archives(state: TempState, n: number): Promise<CreateBackupResult[]> {
  const made: CreateBackupResult[] = [];
  // verify: false keeps these fast (identity without a ledger row runs its own verify pass); gzip on every Node, as
  // the attacks below rewrite the archives with the gzip tar tools.
  for (let i = 0; i < n; i += 1) made.push(await createBackup({ paths: state.paths, verify: false, compression: "gzip" }));
  return made;
}

/** Removes the global DB (and its sidecars): the state as a reset or an operator's `rm` leaves it. */
function dropGlobalDb(state: TempState): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(`${state.paths.globalDbPath}${suffix}`, { force: true });
}

const removedPaths = (r: Awaited<ReturnType<typeof pruneBackups>>): string[] => r.removed.map((x) => x.archivePath);
const ignoredReason = (r: Awaited<ReturnType<typeof pruneBackups>>, p: string): string | undefined => r.ignored.find((i) => i.path === p)?.reason;

afterEach(() => {
  vi.useRealTimers();
});

describe("backup prune: renamed copies are the operator's", () => {
  it("keeps a copy renamed KEEP-before-upgrade.tar.gz, with the ledger and without it", async () => {
    const state = seeded();
    const made = await archives(state, 3);
    const keep = path.join(state.paths.backupDir, "KEEP-before-upgrade.tar.gz");
    fs.copyFileSync(made[0]!.archivePath, keep);
    const moved = path.join(state.paths.backupDir, "KEEP-moved.tar.gz");
    fs.renameSync(made[1]!.archivePath, moved);

    const result = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(removedPaths(result)).toEqual([made[0]!.archivePath]);
    expect(fs.existsSync(keep)).toBe(true);
    expect(fs.existsSync(moved)).toBe(true);
    expect(ignoredReason(result, keep)).toMatch(/renamed or copied by hand/);
    expect(ignoredReason(result, moved)).toMatch(/renamed or copied by hand/);

    // Without a ledger the name the manifest was written for still gives the copy away.
    dropGlobalDb(state);
    const again = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(again.removed).toEqual([]);
    expect(fs.readdirSync(state.paths.backupDir).sort()).toEqual([path.basename(made[2]!.archivePath), "KEEP-before-upgrade.tar.gz", "KEEP-moved.tar.gz"].sort());
  });

  it("keeps a same-named copy in another directory that backup_runs records elsewhere", async () => {
    const state = seeded();
    const made = await archives(state, 2);
    const other = path.join(state.root, "usb");
    fs.mkdirSync(other);
    for (const m of made) fs.copyFileSync(m.archivePath, path.join(other, path.basename(m.archivePath)));
    const before = snapshotTree(other);
    const result = await pruneBackups({ paths: state.paths, dir: other, policy: { last: 1 }, confirm: async () => true });
    expect(result.removed).toEqual([]);
    expect(result.ignored).toHaveLength(2);
    expect(ignoredReason(result, path.join(other, path.basename(made[0]!.archivePath)))).toMatch(/a copy of run .* which backup_runs records at /);
    expect(snapshotTree(other)).toEqual(before);
  });
});

describe("backup prune: time is the manifest's, and the future never counts", () => {
  it("an archive dated 2099 with --keep-last 1 keeps the newest real archive (ledger and no ledger)", async () => {
    const state = seeded();
    const made = await archives(state, 3);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2099-01-01T00:00:00Z"));
    const future = await createBackup({ paths: state.paths, verify: false, compression: "gzip" });
    vi.useRealTimers();
    expect(path.basename(future.archivePath)).toMatch(/^2099-/);

    const dry = await pruneBackups({ paths: state.paths, policy: { last: 1 }, dryRun: true });
    expect(removedPaths(dry)).toEqual([made[1]!.archivePath, made[0]!.archivePath]);
    expect(dry.kept.map((k) => [k.archivePath, k.reasons])).toEqual([
      [future.archivePath, ["dated in the future"]],
      [made[2]!.archivePath, ["last"]],
    ]);
    expect(dry.warnings.join("\n")).toMatch(/2099-01-01T00:00:00.000Z, in the future: it was kept and not counted/);

    // --keep-within is measured from the newest real archive, not from 2099.
    const within = await pruneBackups({ paths: state.paths, policy: { within: "1d" }, dryRun: true });
    expect(within.removed).toEqual([]);

    dropGlobalDb(state);
    const pruned = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(pruned.kept.map((k) => k.identity)).toEqual(["verified", "verified"]);
    expect(fs.existsSync(made[2]!.archivePath)).toBe(true);
    expect(fs.existsSync(future.archivePath)).toBe(true);
    expect(fs.existsSync(made[0]!.archivePath)).toBe(false);
  });

  it("orders by the manifest's createdAt, not the file's mtime", async () => {
    const state = seeded();
    const made = await archives(state, 2);
    // The older archive touched last (a copy back from a USB stick, `touch`): still the older one.
    fs.utimesSync(made[0]!.archivePath, new Date(), new Date(Date.now() + 3600_000));
    fs.utimesSync(made[1]!.archivePath, new Date(0), new Date(0));
    const dry = await pruneBackups({ paths: state.paths, policy: { last: 1 }, dryRun: true });
    expect(removedPaths(dry)).toEqual([made[0]!.archivePath]);
  });
});

describe("backup prune: a manifest-only stub never shadows the archive it copies", () => {
  it("keeps the full archive and lists the stub as not ours (ledger, then no ledger)", async () => {
    const state = seeded();
    const made = await archives(state, 3);
    const real = made[2]!.archivePath;
    const entries = readRawEntries(real);
    // The same manifest under a name that gives the same archive root (`.tgz`): only the bytes tell them apart.
    const stub = real.replace(/\.tar\.gz$/, ".tgz");
    writeRawArchive(stub, entries.slice(0, 1));
    // A forged manifest: fresh run id, a newer time and a name that matches its archiveRoot; no files behind it.
    const m = manifestOf(entries);
    const forgedName = "2098-12-31T00-00-00.000Z-openclaw-backup";
    const forged = path.join(state.paths.backupDir, `${forgedName}.tar.gz`);
    const assets = (m.assets as Array<{ archivePath: string }>).map((x) => ({ ...x, archivePath: x.archivePath.replace(`${m.archiveRoot}/`, `${forgedName}/`) }));
    const forgedManifest = { ...m, assets, runId: "00000000-0000-4000-8000-000000000000", createdAt: new Date(Date.now() - 1000).toISOString(), archiveRoot: forgedName };
    writeRawArchive(forged, withManifest(entries, forgedManifest).slice(0, 1).map((e) => ({ ...e, path: `${forgedName}/manifest.json` })));

    const result = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(removedPaths(result).sort()).toEqual([made[0]!.archivePath, made[1]!.archivePath].sort());
    expect(result.kept.map((k) => k.archivePath)).toEqual([real]);
    expect(ignoredReason(result, stub)).toMatch(/a copy of run .* which backup_runs records at/);
    expect(ignoredReason(result, forged)).toMatch(/no backup_runs row and it does not verify .*never pruned/);
    expect(fs.existsSync(real) && fs.existsSync(stub) && fs.existsSync(forged)).toBe(true);

    dropGlobalDb(state);
    const again = await pruneBackups({ paths: state.paths, policy: { last: 1 }, dryRun: true });
    expect(again.kept.map((k) => [k.archivePath, k.identity])).toEqual([[real, "verified"]]);
    expect(ignoredReason(again, stub)).toMatch(/does not verify/);
    expect(ignoredReason(again, forged)).toMatch(/does not verify/);
  });
});

describe("backup prune: pre-migration archives without a readable ledger", () => {
  async function withPreMigration(): Promise<{ state: TempState; pre: string; made: CreateBackupResult[] }> {
    const state = seeded();
    const pre = (await takePreMigrationBackup({ paths: state.paths })).archivePath;
    const made = await archives(state, 2);
    return { state, pre, made };
  }

  it("no global DB: the pre-migration archive is still protected by its manifest", async () => {
    const { state, pre, made } = await withPreMigration();
    dropGlobalDb(state);
    const result = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(removedPaths(result)).toEqual([made[0]!.archivePath]);
    expect(result.kept.find((k) => k.archivePath === pre)).toMatchObject({ preMigration: true, reasons: ["pre-migration backup (by its manifest)"] });
    expect(fs.existsSync(pre)).toBe(true);
    expect(fs.existsSync(state.paths.globalDbPath)).toBe(false);

    const dropped = await pruneBackups({ paths: state.paths, policy: { last: 1 }, includeMigrationBackups: true, dryRun: true });
    expect(removedPaths(dropped)).toEqual([pre]);
  });

  it("corrupt global DB: prune still works by manifest, warns, and leaves the DB file as it was", async () => {
    const { state, pre, made } = await withPreMigration();
    dropGlobalDb(state);
    fs.writeFileSync(state.paths.globalDbPath, Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(4080, 0x5a)]));
    const corrupt = fs.readFileSync(state.paths.globalDbPath);
    const result = await pruneBackups({ paths: state.paths, policy: { last: 1 }, confirm: async () => true });
    expect(result.status).toBe("pruned");
    expect(removedPaths(result)).toEqual([made[0]!.archivePath]);
    expect(result.kept.map((k) => k.archivePath).sort()).toEqual([pre, made[1]!.archivePath].sort());
    expect(result.warnings.join("\n")).toMatch(/Cannot read backup_runs|Could not read backup_runs/);
    expect(result.warnings.join("\n")).toMatch(/identifies archives by their manifest and a verify pass/);
    expect(result.forgotten).toEqual([]);
    expect(fs.readFileSync(state.paths.globalDbPath)).toEqual(corrupt);
  });

  it("the manifest's purpose decides: an ordinary --no-include-workspace archive is not taken for a pre-migration one", async () => {
    const { state, pre } = await withPreMigration();
    expect(manifestOf(readRawEntries(pre)).options).toMatchObject({ purpose: "pre-migration", includeWorkspace: false });
    const plain = await createBackup({ paths: state.paths, verify: true, includeWorkspace: false });
    expect(manifestOf(readRawEntries(plain.archivePath)).options).toMatchObject({ purpose: "backup", includeWorkspace: false });
    dropGlobalDb(state);
    const dry = await pruneBackups({ paths: state.paths, policy: { last: 1 }, dryRun: true });
    expect(dry.kept.find((k) => k.archivePath === pre)?.reasons).toEqual(["pre-migration backup (by its manifest)"]);
    expect(dry.kept.find((k) => k.archivePath === plain.archivePath)?.preMigration).toBe(false);
  });

  it("with a readable ledger the migration run's reference and the manifest both protect it", async () => {
    const { state, pre } = await withPreMigration();
    const db = openGlobalDatabase(state.paths, { mode: "write" });
    try {
      db.handle.prepare("INSERT INTO migration_runs (id, started_at, finished_at, status, report_json) VALUES ('run-1', 1, 2, 'completed', ?)").run(JSON.stringify({ backupPath: pre }));
    } finally {
      db.close();
    }
    const dry = await pruneBackups({ paths: state.paths, policy: { last: 1 }, dryRun: true });
    expect(dry.kept.find((k) => k.archivePath === pre)?.reasons).toEqual(["pre-migration backup (by its manifest)", "migration run run-1"]);
  });
});

describe("backup prune: every deletion goes through the boundary check", () => {
  it("a backup dir entry swapped for a symlink after the scan is refused, not followed", async () => {
    const state = seeded();
    const made = await archives(state, 2);
    const victim = path.join(state.root, "victim.tar.gz");
    fs.writeFileSync(victim, "operator's file");
    const result = await pruneBackups({
      paths: state.paths,
      policy: { last: 1 },
      confirm: async (remove) => {
        // Between the decision and the delete: the archive becomes a link to a file outside the backup dir.
        for (const r of remove) {
          fs.rmSync(r.archivePath);
          fs.symlinkSync(victim, r.archivePath);
        }
        return true;
      },
    });
    expect(result.removed).toEqual([]);
    expect(result.warnings.join("\n")).toMatch(/Refusing to delete .*symbolic link/);
    expect(fs.readFileSync(victim, "utf8")).toBe("operator's file");
    expect(fs.lstatSync(made[0]!.archivePath).isSymbolicLink()).toBe(true);
  });
});
