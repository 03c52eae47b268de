// `backup verify`: one streaming pass over an archive plus integrity/row-count checks of every database snapshot.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { SMALL_DATABASE_BYTES, SqliteJobRunner } from "../state/sqlite-jobs.js";
import { checkDatabaseSnapshot, describeDatabaseProblem, type CheckedDatabase } from "./db-check.js";
import { FileWriterPool } from "./file-writer.js";
import { ArchiveProblem, checkArchiveFile, LentBodyMismatch, type PrecheckedRun } from "./archive-source.js";
import { readArchive, type ArchiveSink } from "./read-archive.js";
import { withSpooledArchive, type SpoolOptions } from "./stdin-archive.js";
import type { BackupManifest, ProgressCallback } from "./types.js";

export interface VerifyBackupOptions {
  /** Where database snapshots are unpacked one at a time for checking (default: the OS temp dir). */
  tempDir?: string;
  onProgress?: ProgressCallback;
  /** Shared SQLite worker (createBackup passes its own); one is started and stopped otherwise. */
  runner?: SqliteJobRunner;
  /**
   * Database archive paths → sha256 of bytes that already passed integrity_check and the row counts (createBackup:
   * the snapshots it just checked). Such a database is hashed like any file but not unpacked and checked again.
   */
  checkedDatabases?: ReadonlyMap<string, string>;
  /**
   * Database bodies proven to decode to their content when they were written (createBackup's own record, never
   * an archive's): checked by the sha256 of their compressed bytes instead of being decoded again. Each must also
   * be in `checkedDatabases`.
   */
  prechecked?: readonly PrecheckedRun[];
}

export interface VerifyBackupResult {
  ok: boolean;
  archivePath: string;
  sizeBytes: number;
  /** Present once the manifest was read and validated. */
  manifest?: BackupManifest;
  /** The first problem found (also problems[0]). */
  problem?: string;
  problems: string[];
  /** The first problem is a lent body that did not hash (see PrecheckedRun.lent): its archive path. */
  lentMismatch?: string;
  files: number;
  bytes: number;
  databases: CheckedDatabase[];
}

/** Database snapshots waiting for their check at once; bounds the temp space verify uses. */
const MAX_PENDING_CHECKS = 2;

export async function verifyBackup(archivePath: string, options: VerifyBackupOptions = {}): Promise<VerifyBackupResult> {
  const file = path.resolve(archivePath);
  const size = checkArchiveFile(file);
  const result: VerifyBackupResult = { ok: false, archivePath: file, sizeBytes: size, problems: [], files: 0, bytes: 0, databases: [] };
  // A small database (a global DB beside one large agent DB) is checked here rather than starting a second worker.
  const runner = options.runner ?? new SqliteJobRunner({ workers: 2, inlineBelowBytes: SMALL_DATABASE_BYTES });
  const tempRoot = fs.mkdtempSync(path.join(options.tempDir ?? os.tmpdir(), ".openclaw-verify-"));
  const pool = new FileWriterPool();
  const checks: Array<Promise<CheckedDatabase>> = [];
  const inflight = new Set<Promise<unknown>>();
  let failure: string | undefined;
  let n = 0;

  const sink: ArchiveSink = {
    manifest: (m) => {
      result.manifest = m;
    },
    file: async (listed, database) => {
      if (failure) throw new ArchiveProblem(failure);
      if (!database) return null;
      if (listed.sha256 !== null && options.checkedDatabases?.get(listed.archivePath) === listed.sha256) {
        checks.push(Promise.resolve({ archivePath: database.archivePath, role: database.role, agentId: database.agentId, integrity: "ok", rowCountsMatch: true, listed: database.record !== undefined, problems: [] }));
        return null;
      }
      while (inflight.size >= MAX_PENDING_CHECKS) await Promise.race(inflight);
      if (failure) throw new ArchiveProblem(failure);
      n += 1;
      const dbFile = path.join(tempRoot, `db-${n}.sqlite`);
      const writer = await pool.open(dbFile, { mode: 0o600, sync: false });
      return {
        write: writer.write,
        abort: writer.abort,
        finish: async () => {
          await writer.finish();
          const check = writer.closed
            .then(() => checkDatabaseSnapshot(runner, dbFile, database))
            .then((checked) => {
              if (checked.problems.length > 0) failure ??= describeDatabaseProblem(checked);
              return checked;
            })
            .finally(() => fs.promises.rm(dbFile, { force: true }));
          checks.push(check);
          const tracked = check.catch(() => undefined);
          inflight.add(tracked);
          void tracked.then(() => inflight.delete(tracked));
        },
      };
    },
  };

  try {
    const pass = await readArchive(file, sink, options.onProgress, "verify", options.prechecked);
    await pool.drain();
    result.databases = await Promise.all(checks);
    result.files = pass.files;
    result.bytes = pass.bytes;
    if (failure) throw new ArchiveProblem(failure);
    result.ok = true;
  } catch (error) {
    if (!(error instanceof ArchiveProblem)) throw error;
    result.problem = error.message;
    result.problems = [error.message];
    if (error instanceof LentBodyMismatch) result.lentMismatch = error.archivePath;
    // Let started checks finish before their files are removed with the temp dir.
    await Promise.allSettled(checks);
  } finally {
    await pool.drain().catch(() => undefined);
    fs.rmSync(tempRoot, { recursive: true, force: true });
    if (!options.runner) await runner.close();
  }
  return result;
}

/**
 * `backup verify -`: the archive on `input` (stdin) is spooled to a private temp file (stdin-archive.ts) and verified
 * there exactly like a file; the spool is removed on every exit path. `archivePath` in the result is "-".
 */
export async function verifyBackupFromStream(input: Readable, options: VerifyBackupOptions = {}, spool: SpoolOptions = {}): Promise<VerifyBackupResult & { input: { bytes: number; sha256: string } }> {
  return withSpooledArchive(
    input,
    async (s) => ({ ...(await verifyBackup(s.file, options)), archivePath: "-", input: { bytes: s.bytes, sha256: s.sha256 } }),
    spool,
  );
}
