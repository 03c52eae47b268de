// `backup restore`: manifest → plan → consent → lease → verify-while-extracting into staging siblings → swap.
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { describeError, OperationError, OpenclawStateError, StateLockedError, UsageError } from "../core/errors.js";
import { interruptSignal, registerLeftover } from "../core/interrupt.js";
import { checkOwnedPath, ownedPathProblem } from "../state/owned-path.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { ensurePrivateDir, ensurePrivateDirBelow, fsyncDir, pathExists } from "../state/private-fs.js";
import { SMALL_DATABASE_BYTES, SqliteJobRunner } from "../state/sqlite-jobs.js";
import type { PathMove } from "../state/sqlite-snapshot.js";
import { checkDatabaseSnapshot, describeDatabaseProblem } from "./db-check.js";
import { FileWriterPool, syncStagedFiles } from "./file-writer.js";
import { realpathOrNull } from "./asset-plan.js";
import { archivePathInside } from "./manifest.js";
import { ArchiveProblem } from "./archive-source.js";
import { readArchive, readArchiveManifest, type ArchiveSink } from "./read-archive.js";
import { planRestore, type RestorePlan, type RestorePlanItem, type WorkspaceDestination } from "./restore-plan.js";
import { boundaryOf, checkDestinations, checkFreeSpace, pathMoves } from "./restore-checks.js";
import { carryKeptPaths, compactStamp, keptCopiesOf, removeStaging, stagingPrefix, swapIntoPlace, type KeptCopy, type StagedItem } from "./restore-swap.js";
import type { BackupManifest, ManifestDatabase, ProgressCallback, SkippedItem } from "./types.js";
import { withSpooledArchive, type SpoolOptions } from "./stdin-archive.js";
import { verifyBackup } from "./verify-archive.js";
import { precheckLease, takeLease, type HeldLease } from "./restore-lease.js";

export type { RestorePlan, RestorePlanItem, WorkspaceDestination } from "./restore-plan.js";
export type { KeptCopy } from "./restore-swap.js";

export interface RestoreBackupOptions {
  paths: StatePaths;
  archivePath: string;
  /** Verify and print the plan; write nothing. */
  dryRun?: boolean;
  /** Restore into this new or empty directory instead of the live paths (no lease needed). */
  target?: string;
  /** Default true: workspaces are restored where the current config (or workspaceDestinations) puts them. */
  includeWorkspace?: boolean;
  /** `--workspace <recorded>=<dir>`: destinations the operator names for archived workspaces. */
  workspaceDestinations?: WorkspaceDestination[];
  /** Also take a verified backup of the current state (createBackup, default backup dir) before anything is replaced; the kept copies stay either way. */
  backup?: boolean;
  /** Take the state lease even if another live process holds it. */
  force?: boolean;
  /** Asked once with the plan before anything is written; false ends with status "declined". */
  confirm?: (plan: RestorePlan) => Promise<boolean>;
  onProgress?: ProgressCallback;
  /** Test hook: fail after this many swaps, to exercise the rollback. */
  failAfterSwaps?: number;
}

export interface RestoredDatabase {
  archivePath: string;
  destination: string;
  role: ManifestDatabase["role"];
  agentId: string | null;
  leasesDropped: number;
  pathsRewritten: number;
}

export interface RestoreBackupResult {
  status: "restored" | "dry-run" | "declined";
  archivePath: string;
  target: string | null;
  /** The archive's runId and createdAt. */
  backupRunId: string;
  backupCreatedAt: string;
  plan: RestorePlanItem[];
  skipped: SkippedItem[];
  databases: RestoredDatabase[];
  removedSidecars: string[];
  /** Stored absolute paths moved to the restored location (agent_databases, store keys, …). */
  pathsRewritten: number;
  /** The backup of the replaced state taken with `backup: true` (null when none was taken). */
  preRestoreBackup: { archivePath: string; verified: boolean } | null;
  /**
   * Every replaced path and where its previous copy is kept (`<path>.pre-restore-<ts>`). Restore never deletes
   * them; `backup prune --pre-restore` does, when asked. Empty for a dry run (the plan's `keptAt` says where they would go).
   */
  keptCopies: KeptCopy[];
  warnings: string[];
}

function refused(archivePath: string, problem: string): OperationError {
  return new OperationError("archive_invalid", `Archive ${archivePath} was refused: ${problem}; nothing was restored.`, { path: archivePath });
}

function ownerOf(items: readonly RestorePlanItem[], archivePath: string): RestorePlanItem | undefined {
  let best: RestorePlanItem | undefined;
  for (const item of items) if (archivePathInside(item.archivePath, archivePath) && (!best || item.archivePath.length > best.archivePath.length)) best = item;
  return best;
}

interface StagedDatabase {
  staged: string;
  destination: string;
  /** The staging dir holding it, and that dir's boundary (its sidecars are removed only after checking both). */
  stagingRoot: string;
  root: string;
}

interface Extraction {
  staged: StagedItem[];
  databases: RestoredDatabase[];
  /** Where each restored database is staged, and where it goes. */
  stagedDatabases: StagedDatabase[];
}

/** Creates a destination's parent: below the real state dir component by component, never through a link. */
function ensureParentOf(destination: string, paths: StatePaths): void {
  const parent = path.dirname(destination);
  const stateReal = realpathOrNull(paths.stateDir);
  if (stateReal && isPathInside(stateReal, parent)) ensurePrivateDirBelow(stateReal, parent);
  else ensurePrivateDir(parent);
}

/** The single pass: every entry verified (readArchive) and each restored asset's entries written into staging. */
async function extractToStaging(
  plan: RestorePlan,
  manifest: BackupManifest,
  paths: StatePaths,
  stamp: string,
  runner: SqliteJobRunner,
  stopped: () => unknown,
  onProgress?: ProgressCallback,
): Promise<Extraction> {
  const staged: StagedItem[] = [];
  /** Where each plan item's content is staged: its own sibling dir, or inside its outer item's staged tree. */
  const location = new Map<string, string>();
  const stateReal = realpathOrNull(paths.stateDir);
  try {
    for (const item of plan.items) {
      if (item.nestedIn) {
        const outer = plan.items.find((o) => o.archivePath === item.nestedIn)!;
        location.set(item.archivePath, path.join(location.get(outer.archivePath)!, path.relative(outer.destination, item.destination)));
        continue;
      }
      ensureParentOf(item.destination, paths);
      const root = boundaryOf(item, plan, stateReal);
      checkOwnedPath(root, item.destination, { action: "restore over", allowMissing: true, expect: item.type });
      const stagingRoot = fs.mkdtempSync(stagingPrefix(item.destination, stamp));
      const entry: StagedItem = { item, staged: item.type === "dir" ? stagingRoot : path.join(stagingRoot, path.basename(item.destination)), stagingRoot, root };
      // Removed on Ctrl-C (with the same owned-path check), named on a second one: it holds archive data.
      entry.release = registerLeftover({ path: stagingRoot, what: `restore staging copy of ${item.destination}` }, () => {
        const warnings = removeStaging([{ root, stagingRoot }]);
        if (warnings.length > 0) throw new Error(warnings[0]);
      });
      staged.push(entry);
      checkOwnedPath(root, stagingRoot, { action: "stage the restore in", expect: "dir" });
      location.set(item.archivePath, entry.staged);
    }
  } catch (error) {
    removeStaging(staged);
    throw error;
  }
  const stagingOf = (file: string): StagedItem => staged.find((s) => isPathInside(s.stagingRoot, file))!;
  const stagedPathOf = (archivePath: string): string | null => {
    const item = ownerOf(plan.items, archivePath);
    if (!item) return null;
    const base = location.get(item.archivePath)!;
    const rel = archivePath.slice(item.archivePath.length + 1);
    return rel === "" ? base : path.join(base, ...rel.split("/"));
  };
  const moves = pathMoves(manifest, plan, paths);

  const pool = new FileWriterPool();
  const createdDirs = new Set<string>(staged.map((s) => s.stagingRoot));
  const ensureDir = (dir: string): void => {
    if (createdDirs.has(dir)) return;
    ensurePrivateDir(dir);
    createdDirs.add(dir);
  };
  const databases: RestoredDatabase[] = [];
  const stagedDatabases: StagedDatabase[] = [];
  const dbWork: Array<Promise<void>> = [];
  /** Plain files written: made durable together before the swap (syncStagedFiles), not one fsync each. */
  const plainFiles: string[] = [];
  let failure: string | undefined;

  const sink: ArchiveSink = {
    directory: (archivePath) => {
      const stop = stopped();
      if (stop) throw stop;
      const target = stagedPathOf(archivePath);
      if (target) ensureDir(target);
    },
    file: async (listed, database) => {
      if (failure) throw new ArchiveProblem(failure);
      const stop = stopped();
      if (stop) throw stop;
      const target = stagedPathOf(listed.archivePath);
      if (!target) return null;
      ensureDir(path.dirname(target));
      // Nothing is fsynced as it is written: a database once by finalize after its last change (so its
      // integrity_check need not wait for a flush of its whole file), plain files all together before the swap.
      const writer = await pool.open(target, { mode: listed.mode & 0o100 ? 0o700 : 0o600, mtimeMs: listed.mtimeMs, sync: false });
      if (!database) {
        plainFiles.push(target);
        return writer;
      }
      return {
        write: writer.write,
        abort: writer.abort,
        finish: async () => {
          await writer.finish();
          // Checked and made live-ready on the worker while the next entries stream in.
          const work = writer.closed.then(async () => {
            // The same checks as verify (a manifest's sha256 proves only that the manifest and the bytes agree).
            const checked = await checkDatabaseSnapshot(runner, target, database);
            if (checked.problems.length > 0) {
              failure ??= describeDatabaseProblem(checked);
              return;
            }
            const done = await runner.run({
              op: "finalize",
              file: target,
              // A lease in an archive belongs to a process on the machine that made it: every row goes.
              options: { dropLeases: true, rewritePaths: database.role === "global" ? moves : undefined },
            });
            const owner = ownerOf(plan.items, listed.archivePath)!;
            const rel = listed.archivePath.slice(owner.archivePath.length + 1);
            const destination = rel === "" ? owner.destination : path.join(owner.destination, ...rel.split("/"));
            const holder = stagingOf(target);
            stagedDatabases.push({ staged: target, destination, stagingRoot: holder.stagingRoot, root: holder.root });
            databases.push({
              archivePath: listed.archivePath,
              destination,
              role: database.role,
              agentId: database.agentId,
              leasesDropped: done.leasesDropped,
              pathsRewritten: done.pathsRewritten,
            });
          });
          work.catch(() => undefined);
          dbWork.push(work);
        },
      };
    },
  };

  try {
    await readArchive(plan.archivePath, sink, onProgress, "extract");
    await pool.drain();
    await Promise.all(dbWork);
    if (failure) throw new ArchiveProblem(failure);
    // Every plain file's bytes durable before any tree is renamed into place: one syncfs per file system (or an
    // fsync of each where syncfs cannot report errors), instead of one fsync per file as it was extracted.
    await syncStagedFiles(plainFiles, staged.map((s) => s.stagingRoot));
    for (const link of manifest.symlinks) {
      const target = stagedPathOf(link.archivePath);
      if (!target) continue;
      ensureDir(path.dirname(target));
      fs.symlinkSync(link.target, target);
    }
    // New names in every staged directory must be durable before the trees are renamed into place.
    for (const dir of createdDirs) fsyncDir(dir);
    return { staged, databases, stagedDatabases };
  } catch (error) {
    await pool.drain().catch(() => undefined);
    await Promise.allSettled(dbWork);
    removeStaging(staged);
    throw error;
  }
}

/**
 * Sidecars beside the staged databases are removed before the swap: a restored DB never meets a -wal/-shm
 * that is not its own. (Old sidecars leave with the tree they belong to; deleting files beside the live
 * path after the swap could hit a process that has just opened the new database.)
 */
function removeStaleSidecars(stagedDatabases: readonly StagedDatabase[]): string[] {
  const removed: string[] = [];
  for (const db of stagedDatabases) {
    checkOwnedPath(db.root, db.stagingRoot, { action: "remove sidecars in", expect: "dir" });
    for (const suffix of ["-wal", "-shm", "-journal"]) {
      const side = `${db.staged}${suffix}`;
      if (checkOwnedPath(db.stagingRoot, side, { action: "remove the stale sidecar", allowMissing: true, expect: "file" }).kind === "file") {
        fs.rmSync(side, { force: true });
        removed.push(`${db.destination}${suffix}`);
      }
    }
  }
  return removed;
}

/**
 * `--backup`: a verified archive of what the restore is about to replace, in the default backup dir. A
 * failure stops the restore before anything is swapped.
 */
async function backupCurrentState(plan: RestorePlan, paths: StatePaths, warnings: string[]): Promise<RestoreBackupResult["preRestoreBackup"]> {
  if (!plan.items.some((i) => i.action === "replace" && !i.nestedIn)) {
    warnings.push("--backup: nothing is replaced (every destination is new), so no backup was taken.");
    return null;
  }
  const { createBackup } = await import("./create-backup.js");
  try {
    const backup = await createBackup({ paths, verify: true, purpose: "pre-restore" });
    return { archivePath: backup.archivePath, verified: backup.verified };
  } catch (error) {
    throw new OperationError("pre_restore_backup_failed", `The backup of the current state (--backup) failed: ${describeError(error).replace(/\.$/, "")}; nothing was restored.`, { cause: error });
  }
}

export async function restoreBackup(options: RestoreBackupOptions): Promise<RestoreBackupResult> {
  const { paths } = options;
  const archivePath = path.resolve(options.archivePath);
  if (options.backup && options.target) throw new UsageError("--backup takes a backup of the state a restore replaces; with --target nothing is replaced, so leave --backup out.", "usage");
  let manifest: BackupManifest;
  try {
    manifest = await readArchiveManifest(archivePath, { acceptOpenclaw: true });
  } catch (error) {
    if (error instanceof ArchiveProblem) throw refused(archivePath, error.message);
    throw error;
  }
  // One stamp names this restore's staging dirs and kept copies; the plan (and so the prompt) shows the kept names.
  const stamp = compactStamp();
  const plan = planRestore(manifest, {
    paths,
    archivePath,
    target: options.target,
    includeWorkspace: options.includeWorkspace,
    workspaceDestinations: options.workspaceDestinations,
    stamp,
  });
  checkFreeSpace(plan);
  checkDestinations(plan, paths);
  const result: RestoreBackupResult = {
    status: "dry-run",
    archivePath,
    target: plan.target,
    backupRunId: manifest.runId,
    backupCreatedAt: manifest.createdAt,
    plan: plan.items,
    skipped: plan.skipped,
    databases: [],
    removedSidecars: [],
    pathsRewritten: 0,
    preRestoreBackup: null,
    keptCopies: [],
    warnings: [],
  };

  if (options.dryRun) {
    const check = await verifyBackup(archivePath, { onProgress: options.onProgress });
    if (!check.ok) throw refused(archivePath, check.problem ?? "verification failed");
    if (!plan.target) {
      await precheckLease(paths, Boolean(options.force)).catch((error: unknown) => {
        if (!(error instanceof StateLockedError)) throw error;
        result.warnings.push(`${error.message.replace(/ \(nothing was restored\)\.$/, ".")} The real restore would exit 75.`);
      });
    }
    return result;
  }
  if (options.confirm && !(await options.confirm(plan))) return { ...result, status: "declined" };

  // Two workers: database checks are the slowest part of a restore and run beside the inflate. A small database
  // (the global DB beside one large agent DB) is checked on this thread rather than starting the second worker; when
  // the manifest lists no database a worker would take, none starts unless a file turns out to need one.
  const runner = new SqliteJobRunner({ workers: 2, inlineBelowBytes: SMALL_DATABASE_BYTES });
  runner.warmFor(manifest.databases.map((d) => d.sizeBytes));
  // The read-only lease check runs beside the extraction (which only writes staging); a held lease stops it. It
  // starts once the first read is queued: loading the storage core for it takes ~0.2 s of the main thread, which
  // used to hold back the worker start-up and the first inflate.
  let lockError: unknown;
  const precheck = plan.target ? Promise.resolve() : new Promise<void>((resolve) => setImmediate(resolve)).then(() => precheckLease(paths, Boolean(options.force)));
  precheck.catch((error: unknown) => {
    lockError = error;
  });
  const createdTarget = plan.target !== null && !pathExists(plan.target);
  let lease: HeldLease | null = null;
  try {
    if (plan.target) ensurePrivateDir(plan.target);
    let extraction: Extraction;
    try {
      extraction = await extractToStaging(plan, manifest, paths, stamp, runner, () => lockError ?? interruptedError(), options.onProgress);
    } catch (error) {
      if (error instanceof ArchiveProblem) throw refused(archivePath, error.message);
      if (error instanceof OpenclawStateError) throw error;
      throw new OperationError("restore_failed", `Restore from ${archivePath} failed while extracting (${describeError(error)}); nothing was changed.`, { cause: error });
    }
    options.onProgress?.({ phase: "swap", bytesDone: 0 });
    let done;
    try {
      await precheck;
      result.removedSidecars = removeStaleSidecars(extraction.stagedDatabases);
      lease = plan.target ? null : await takeLease(paths, Boolean(options.force), result.warnings);
      if (options.backup) result.preRestoreBackup = await backupCurrentState(plan, paths, result.warnings);
      // Ctrl-C while waiting above: its cleanup is removing the staging copies; nothing is swapped.
      const interrupted = interruptedError();
      if (interrupted) throw interrupted;
      done = swapIntoPlace(extraction.staged, stamp, options.failAfterSwaps);
    } finally {
      result.warnings.push(...removeStaging(extraction.staged));
    }
    // Every replaced path stays beside the restored one; nothing the restore replaced is deleted.
    result.keptCopies = keptCopiesOf(done, plan);
    result.warnings.push(...carryKeptPaths(done));
    result.databases = extraction.databases.sort((a, b) => a.archivePath.localeCompare(b.archivePath));
    result.pathsRewritten = result.databases.reduce((n, d) => n + d.pathsRewritten, 0);
    lease?.release();
    lease = null;
    result.status = "restored";
    return result;
  } catch (error) {
    // Only a --target dir this run created goes, and only when it is still that real directory.
    if (createdTarget && plan.target && pathExists(plan.target)) {
      const problem = ownedPathProblem(path.dirname(path.resolve(plan.target)), plan.target, { action: "remove the unfinished --target", expect: "dir" });
      if (problem === null) fs.rmSync(plan.target, { recursive: true, force: true });
    }
    throw error;
  } finally {
    lease?.release();
    await runner.close();
  }
}

/**
 * `backup restore -`: the archive on `input` (stdin) is spooled to a private temp file (stdin-archive.ts) and restored
 * from there by restoreBackup, every check included — nothing is restored that was not verified. The spool is removed
 * on every exit path. `archivePath` in the result is "-"; `input` says what was read.
 */
export async function restoreBackupFromStream(
  input: Readable,
  options: Omit<RestoreBackupOptions, "archivePath">,
  spool: SpoolOptions = {},
): Promise<RestoreBackupResult & { input: { bytes: number; sha256: string } }> {
  return withSpooledArchive(
    input,
    async (s) => ({ ...(await restoreBackup({ ...options, archivePath: s.file })), archivePath: "-", input: { bytes: s.bytes, sha256: s.sha256 } }),
    spool,
  );
}

/** The error that stops a restore once Ctrl-C (or SIGTERM/SIGHUP) arrived; null while none did. */
function interruptedError(): OperationError | null {
  const signal = interruptSignal();
  return signal ? new OperationError("interrupted", `Interrupted by ${signal}; nothing was swapped.`, {}) : null;
}
