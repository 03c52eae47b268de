// Only a verified archive carries its final name: written and verified as `<name>.partial` in the staging dir, swept when a killed run left it.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createBackup, PARTIAL_SUFFIX, sweepStaleStaging } from "../../src/backup/create-backup.js";
import { ARCHIVE_NAME_PATTERN } from "../../src/backup/compression.js";
import { scanBackupDir } from "../../src/backup/list-backups.js";
import { OperationError } from "../../src/core/errors.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState } from "../helpers/temp-state.js";

const hook = vi.hoisted(() => ({ during: null as null | ((archivePath: string) => Promise<void>), fail: false }));

// The real verify, with a look at the disk while it runs and an injectable failure (a disk that corrupts the file).
vi.mock("../../src/backup/verify-archive.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/backup/verify-archive.js")>();
  return {
    ...real,
    verifyBackup: async (archivePath: string, options?: Parameters<typeof real.verifyBackup>[1]) => {
      await hook.during?.(archivePath);
      const result = await real.verifyBackup(archivePath, options);
      return hook.fail ? { ...result, ok: false, problem: "injected: the disk returned other bytes", problems: ["injected: the disk returned other bytes"] } : result;
    },
  };
});

/** A pid that is certainly gone: a child that already exited. */
function deadPid(): number {
  const child = spawnSync("true");
  return child.pid!;
}

describe("backup create publishes only verified archives", () => {
  it("verifies `<name>.partial` inside its staging dir; the final name appears only afterwards, and backup list never shows the partial", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const dir = state.paths.backupDir;
    let seen: { path: string; archives: string[]; listed: number } | undefined;
    hook.during = async (archivePath) => {
      seen = { path: archivePath, archives: fs.readdirSync(dir).filter((n) => ARCHIVE_NAME_PATTERN.test(n)), listed: (await scanBackupDir(dir)).length };
    };
    try {
      const made = await createBackup({ paths: state.paths });
      expect(made.verified).toBe(true);
      expect(seen!.path).toBe(path.join(path.dirname(seen!.path), `${path.basename(made.archivePath)}${PARTIAL_SUFFIX}`));
      expect(path.basename(path.dirname(seen!.path))).toMatch(new RegExp(`^\\.openclaw-backup-staging-${process.pid}-`));
      expect(path.dirname(path.dirname(seen!.path))).toBe(dir);
      // While it was being verified nothing carried an archive name, and `backup list` saw nothing.
      expect(seen!.archives).toEqual([]);
      expect(seen!.listed).toBe(0);
      expect(fs.readdirSync(dir)).toEqual([path.basename(made.archivePath)]);
    } finally {
      hook.during = null;
    }
  });

  it("an archive that fails verification never gets its final name, and nothing is left behind", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    hook.fail = true;
    try {
      const error = await createBackup({ paths: state.paths }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperationError);
      expect((error as OperationError).code).toBe("backup_verify_failed");
      expect((error as Error).message).toMatch(/failed verification \(injected.*\); it was not published/);
    } finally {
      hook.fail = false;
    }
    expect(fs.readdirSync(state.paths.backupDir)).toEqual([]);
    const failed = spawnSync("sqlite3", [state.paths.globalDbPath, "SELECT status FROM backup_runs"], { encoding: "utf8" }).stdout.trim();
    expect(failed).toBe("failed");
    // --no-verify is the operator's explicit choice: published at once and reported as not verified.
    const unverified = await createBackup({ paths: state.paths, verify: false });
    expect(unverified.verified).toBe(false);
    expect(fs.existsSync(unverified.archivePath)).toBe(true);
  });

  it("the next create sweeps only stale staging dirs of its own: never a link, a FIFO, a live run's dir or an operator's file", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const dir = state.paths.backupDir;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const dead = deadPid();
    // A killed run's leftovers: its staging dir with the unverified archive inside.
    const stale = path.join(dir, `.openclaw-backup-staging-${dead}-AbC123`);
    fs.mkdirSync(stale);
    fs.writeFileSync(path.join(stale, `2025-01-01T00-00-00.000Z-openclaw-backup.tar.gz${PARTIAL_SUFFIX}`), "half an archive");
    // Look-alikes that are not ours to delete.
    const outside = makeTempDir();
    fs.writeFileSync(path.join(outside, "precious.txt"), "keep");
    const link = path.join(dir, `.openclaw-backup-staging-${dead}-Link01`);
    fs.symlinkSync(outside, link);
    const fifo = path.join(dir, `.openclaw-backup-staging-${dead}-Fifo01`);
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const live = path.join(dir, `.openclaw-backup-staging-${process.ppid}-Live01`);
    fs.mkdirSync(live);
    const operator = path.join(dir, "KEEP-before-upgrade.tar.gz.partial");
    fs.writeFileSync(operator, "the operator's");
    const odd = path.join(dir, `.openclaw-backup-staging-${dead}-abc`);
    fs.mkdirSync(odd);

    const made = await createBackup({ paths: state.paths });
    expect(made.verified).toBe(true);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(outside, "precious.txt"), "utf8")).toBe("keep");
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(fs.existsSync(live)).toBe(true);
    expect(fs.readFileSync(operator, "utf8")).toBe("the operator's");
    expect(fs.existsSync(odd)).toBe(true);
    // backup list shows the one archive, never a partial or a staging dir.
    expect((await scanBackupDir(dir)).map((f) => f.archivePath)).toEqual([made.archivePath]);
    // The sweep itself reports what it removed (nothing more is stale now).
    expect(sweepStaleStaging(dir)).toEqual([]);
  });
});
