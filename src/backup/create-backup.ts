// `backup create` / createBackup(): plan → walk → snapshot + archive → verify → publish → record in backup_runs.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Writable } from "node:stream";
import { collectGarbage } from "../core/heap.js";
import { interruptSignal } from "../core/interrupt.js";
import { describeError, NotFoundError, OperationError, UsageError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import { ensurePrivateDir } from "../state/private-fs.js";
import { SMALL_DATABASE_BYTES, SqliteJobRunner } from "../state/sqlite-jobs.js";
import { checkOutputLocation, checkOutputWritable, resolveArchiveOutput, resolveStreamOutput, streamArchiveFile, type ArchiveOutput } from "./archive-output.js";
import { planAssets, type AssetPlan } from "./asset-plan.js";
import { ARCHIVE_EXTENSIONS, sniffCompression, type Compression } from "./compression.js";
import { MAX_MISMATCHES, payloadStartHint, PLAIN_SEGMENT_MIN, PlainFileReuse } from "./file-reuse.js";
import { LentCopyMismatch } from "./parallel-compress.js";
import { createPrivateStaging, type PrivateStaging } from "./private-temp.js";
import { findReuseCandidates, type LedgerReuseRow, type ReuseRefusal, type ReuseRecord, type ReuseSearch } from "./snapshot-reuse.js";
import { buildManifest, databaseRecord, summarizeManifest } from "./manifest.js";
import { readArchiveManifest } from "./read-archive.js";
import { ledgerPathProblem, recordBackupRun } from "./record-backup-run.js";
import type { BackupAsset, BackupManifest, BackupProgressEvent, BackupPurpose, ManifestDatabase, ManifestFile, SkippedItem } from "./types.js";
import { verifyBackup, type VerifyBackupResult } from "./verify-archive.js";
import { archiveOrder, walkAssets, type WalkEntry, type WalkResult } from "./walk-assets.js";
import { publishNoClobber, writeArchive, type WriteArchiveResult } from "./write-archive.js";
export type { BackupProgressEvent } from "./types.js";
export { sweepStaleStaging } from "./private-temp.js";

export interface CreateBackupOptions {
  paths: StatePaths;
  /**
   * Archive file path, or a directory (existing, or ending with '/') to hold the default-named archive.
   * Default: paths.backupDir (created 0700). A new path without an archive extension is also a directory.
   */
  output?: string;
  /**
   * `--output -`: instead of publishing a file, write the archive to this stream (stdout) once it is verified. It is
   * staged in a private dir in the OS temp dir (`TMPDIR`: room for the archive plus the largest database snapshot),
   * removed on every exit path; nothing is written beside the state or in the backup dir. Not with `output`.
   */
  stream?: Writable;
  /** Default: the output name's (`.tar.gz` / `.tar.zst`), else zstd where the runtime has it, else gzip. */
  compression?: Compression;
  /**
   * Default true: a database whose files did not change since the last verified archive gets that archive's
   * snapshot bytes copied (checked by sha256) instead of a new VACUUM INTO. False always snapshots afresh.
   */
  reuse?: boolean;
  /** Default true: re-open and fully verify the written archive. */
  verify?: boolean;
  /** Plan + same rules/failures, writes nothing. */
  dryRun?: boolean;
  onlyConfig?: boolean;
  /** Default true. */
  includeWorkspace?: boolean;
  /**
   * Files left out on purpose (a corrupt agent database the migration sets aside): never read, each named in the
   * manifest's `skipped` with its reason and in the warnings.
   */
  setAside?: ReadonlyArray<{ path: string; reason: string }>;
  /** Why the archive is taken, recorded in the manifest (default "backup"): prune keeps pre-migration archives by it. */
  purpose?: BackupPurpose;
  onProgress?: (event: BackupProgressEvent) => void;
}

export interface CreateBackupResult {
  runId: string;
  status: "completed" | "dry-run";
  archivePath: string;
  verified: boolean;
  /** 0 for dry-run. */
  sizeBytes: number;
  compression: Compression;
  /** Source paths of databases whose unchanged snapshot was copied from an earlier verified archive. */
  reusedDatabases: string[];
  /** Plain files whose unchanged body was copied from the last verified archive (not read). */
  reusedFiles: number;
  /**
   * Earlier snapshots the ledger pointed at that did not check out against their archive's own manifest (each
   * such database was snapshotted afresh): the database, the archive, why.
   */
  reuseRefused: ReuseRefusal[];
  /** The manifest written (or that would be written). */
  manifest: BackupManifest;
  warnings: string[];
  /** True when the run was recorded in backup_runs. */
  recorded: boolean;
  /** With `stream`: the bytes written to it and their sha256 (compare with `restic dump … | sha256sum`). */
  streamed?: { bytes: number; sha256: string };
}

/** The manifest's assets: `excluded` lists the backup dirs the walk actually met and left out. */
function publicAssets(plan: AssetPlan, walk: WalkResult): BackupAsset[] {
  return plan.assets.map(({ kind, sourcePath, archivePath, type }) => ({ kind, sourcePath, archivePath, type, excluded: walk.excluded.get(archivePath) ?? [] }));
}

function nothingToBackUp(paths: StatePaths, onlyConfig: boolean): NotFoundError {
  return onlyConfig
    ? new NotFoundError(`Nothing to back up: the config file ${paths.configPath} does not exist.`, { path: paths.configPath })
    : new NotFoundError(`Nothing to back up: ${paths.stateDir} does not exist; check --state-dir or OPENCLAW_STATE_DIR.`, { path: paths.stateDir });
}

/** Dry-run: the same walk and database checks (quick_check on the live files), sizes from the walk, no hashes. */
async function describeDryRun(entries: readonly WalkEntry[], runner: SqliteJobRunner): Promise<{ files: ManifestFile[]; databases: ManifestDatabase[] }> {
  const files: ManifestFile[] = [];
  const databases: ManifestDatabase[] = [];
  for (const entry of entries) {
    if (entry.type !== "file") continue;
    files.push({ archivePath: entry.archivePath, size: entry.size, sha256: null, mode: entry.mode, mtimeMs: entry.mtimeMs });
    if (!entry.database) continue;
    let info;
    try {
      info = await runner.run({ op: "describe", file: entry.absPath, check: "quick_check" });
    } catch (error) {
      throw new OperationError("snapshot_failed", `Cannot open database ${entry.absPath} (${(error as Error).message}); a backup would fail. Run \`openclaw-state doctor\` to see why.`, { path: entry.absPath });
    }
    if (info.problems.length > 0) {
      throw new OperationError("snapshot_integrity_failed", `Database ${entry.absPath} fails quick_check (${info.problems[0]}); a backup would fail. Run \`openclaw-state doctor --deep\` and repair it first.`, { path: entry.absPath });
    }
    databases.push(databaseRecord(entry, info, { size: entry.size, sha256: null, integrity: "not-checked" }));
  }
  return { files, databases };
}

export async function createBackup(options: CreateBackupOptions): Promise<CreateBackupResult> {
  const { paths } = options;
  const runId = crypto.randomUUID();
  const createdAt = new Date();
  const dryRun = Boolean(options.dryRun);
  const verify = options.verify !== false;
  const streaming = options.stream !== undefined;
  const manifestOptions = { onlyConfig: Boolean(options.onlyConfig), includeWorkspace: options.includeWorkspace !== false, verify, dryRun, purpose: options.purpose ?? "backup" };
  options.onProgress?.({ phase: "plan", bytesDone: 0 });

  const recordFailure = async (archivePath: string | null, error: unknown): Promise<void> => {
    if (dryRun) return;
    recordBackupRun(paths, { runId, createdAt, archivePath, status: "failed", error });
  };
  let plan: AssetPlan;
  let output: ArchiveOutput;
  try {
    plan = planAssets({ paths, onlyConfig: options.onlyConfig, includeWorkspace: options.includeWorkspace, failOnUnparseableConfig: (options.purpose ?? "backup") === "backup" });
    if (plan.assets.length === 0) throw nothingToBackUp(paths, Boolean(options.onlyConfig));
    if (streaming && options.output !== undefined) throw new UsageError("An archive goes either to a stream (--output -) or to a file; not both.", "invalid_option");
    output = streaming ? resolveStreamOutput(createdAt, options.compression) : resolveArchiveOutput(options.output, paths, createdAt, options.compression);
    // A streamed archive never lands in a source (it is staged in the temp dir, which the walk leaves out).
    if (!streaming) checkOutputLocation(output, plan, paths);
  } catch (error) {
    // Refused before anything was written (output exists, inside a source, …): still a failed run.
    await recordFailure(null, error);
    throw error;
  }
  const warnings = [...plan.warnings];
  const setAside = options.setAside ?? [];
  const setAsidePaths = setAside.map((a) => a.path);
  const setAsideSkipped: SkippedItem[] = setAside.map((a) => ({ kind: "file", path: a.path, reason: `set aside: ${a.reason}` }));
  for (const a of setAside) warnings.push(`${a.path} was not archived: ${a.reason}`);
  // One worker: a second one (next VACUUM INTO beside the previous integrity_check) measured no faster on 2 cores
  // and pushed peak RSS past the 200 MB bench target. Jobs on small files (the ledger read, the global DB's snapshot
  // and check) run on this thread: an unchanged state, whose large databases are copied, then starts no worker.
  const runner = new SqliteJobRunner({ inlineBelowBytes: SMALL_DATABASE_BYTES });
  const manifestFrom = (walk: WalkResult, parts: { skipped: SkippedItem[]; directories: BackupManifest["directories"]; files: ManifestFile[]; symlinks: BackupManifest["symlinks"]; databases: ManifestDatabase[] }): BackupManifest =>
    buildManifest({ runId, createdAt, archiveRoot: output.root, paths, options: manifestOptions, assets: publicAssets(plan, walk), ...parts });

  if (dryRun) {
    try {
      checkOutputWritable(output.dir);
      const walk = walkAssets(plan.assets, { exclude: setAsidePaths });
      warnings.push(...walk.warnings);
      const described = await describeDryRun(archiveOrder(walk.entries), runner);
      const manifest = manifestFrom(walk, {
        skipped: [...plan.skipped, ...setAsideSkipped, ...walk.skipped],
        directories: walk.entries.flatMap((e) => (e.type === "dir" ? [{ archivePath: e.archivePath }] : [])),
        symlinks: walk.entries.flatMap((e) => (e.type === "symlink" ? [{ archivePath: e.archivePath, target: e.target }] : [])),
        ...described,
      });
      return { runId, status: "dry-run", archivePath: output.archivePath, verified: false, sizeBytes: 0, compression: output.compression, reusedDatabases: [], reusedFiles: 0, reuseRefused: [], manifest, warnings, recorded: false };
    } finally {
      await runner.close();
    }
  }

  let stagingDir: string | undefined;
  let staging: PrivateStaging | undefined;
  let published = false;
  let streamed: CreateBackupResult["streamed"];
  // Set by useReusable (a closure: typed wide so the checks below are not narrowed to the initial null).
  let reuseFiles = null as PlainFileReuse | null;
  // What messages call the archive: its file, or the stream it goes to.
  const label = streaming ? "the archive for stdout" : output.archivePath;
  try {
    // Removed even on Ctrl-C (registered as a leftover): it holds the unfinished archive (credentials included).
    // Streaming: in the temp dir, never beside the state. A file: beside it, so publishing is a rename.
    if (!streaming) ensurePrivateDir(output.dir);
    staging = createPrivateStaging(output.dir, streaming ? "private staging dir of an unfinished archive for stdout" : "staging dir of an unfinished archive");
    stagingDir = staging.dir;
    const walk = walkAssets(plan.assets, { exclude: [stagingDir, ...setAsidePaths] });
    warnings.push(...walk.warnings);
    const entries = archiveOrder(walk.entries);
    const assets = publicAssets(plan, walk);
    // When a verify follows, bytes lent by an earlier archive are hashed once, where they are copied or verified
    // (file-reuse.ts, snapshot-reuse.ts); one that does not hash there makes the archive be written again with every
    // lent body hashed before it is used (`lentHashes`, below), so a damaged earlier archive never fails the backup.
    const warningsBefore = warnings.length;
    let search: ReuseSearch = { candidates: new Map(), refused: [] };
    const useReusable = async (deferHashes: boolean): Promise<void> => {
      const reusable: Reusable = options.reuse === false ? { search: { candidates: new Map(), refused: [] }, files: null, filesRefused: null } : await reusableParts(paths, output.compression, entries, assets, runner, deferHashes);
      reuseFiles = reusable.files;
      search = reusable.search;
      // A large database to snapshot: its worker starts now, beside the writer's set-up.
      runner.warmFor(entries.flatMap((e) => (e.type === "file" && e.database && !search.candidates.has(e.absPath) ? [e.size] : [])));
      for (const r of search.refused) {
        if (r.mismatch) warnings.push(`Did not reuse the earlier snapshot of ${r.path} from ${r.archivePath}: ${r.reason}; it was snapshotted afresh.`);
      }
      if (reusable.filesRefused) warnings.push(`Did not reuse ${reusable.filesRefused.path} from ${reusable.filesRefused.archivePath}: ${reusable.filesRefused.reason}; they were read afresh.`);
    };
    const deferred = verify && options.reuse !== false;
    await useReusable(deferred);
    // Written and verified under a name of our own inside the staging dir; only a verified archive gets the final
    // name (a killed run leaves nothing there but the staging dir, which the next create sweeps).
    const partialName = streaming ? `${output.root}${ARCHIVE_EXTENSIONS[output.compression]}` : path.basename(output.archivePath);
    const partialPath = path.join(stagingDir, `${partialName}${PARTIAL_SUFFIX}`);
    const staged = stagingDir;
    const write = (): Promise<WriteArchiveResult> => writeArchive({
      archivePath: partialPath,
      root: output.root,
      stagingDir: staged,
      entries,
      runner,
      createdAt,
      compression: output.compression,
      reuse: search.candidates,
      reuseFiles,
      precheck: verify,
      onProgress: options.onProgress,
      manifestFor: (parts) => {
        warnings.push(...parts.warnings);
        return manifestFrom(walk, { ...parts, skipped: [...plan.skipped, ...setAsideSkipped, ...walk.skipped, ...parts.skipped] });
      },
    });
    /** Writes the archive again, every lent body hashed before it is used (the ones that do not match: read or snapshotted afresh). */
    const lentHashes = async (): Promise<WriteArchiveResult> => {
      fs.rmSync(partialPath, { force: true });
      reuseFiles?.close();
      warnings.length = warningsBefore;
      await useReusable(false);
      const again = await write();
      reuseFiles?.close();
      return again;
    };
    let written: WriteArchiveResult;
    try {
      written = await write();
    } catch (error) {
      if (!(deferred && error instanceof LentCopyMismatch)) throw error;
      written = await lentHashes();
    }
    reuseFiles?.close();
    // The compressor's block buffers (~5 x 4 MiB) are garbage now: freed before verification reads it all back.
    collectGarbage();
    let verified = false;
    if (verify) {
      // Every byte is re-read and hashed; a database whose bytes hash to the snapshot that already passed
      // integrity_check (this run, or the verified run whose own manifest vouched for the copied bytes) is not
      // checked twice, and a database body whose blocks were decoded and compared as they were written (or copied
      // by the sha256 that manifest records) is hashed as compressed bytes.
      const verifyWritten = (): Promise<VerifyBackupResult> => {
        const checked = new Map(written.manifest.databases.flatMap((d) => (d.sha256 ? [[d.archivePath, d.sha256] as const] : [])));
        return verifyBackup(partialPath, { tempDir: stagingDir, runner, onProgress: options.onProgress, checkedDatabases: checked, prechecked: written.prechecked });
      };
      let check = await verifyWritten();
      if (!check.ok && check.lentMismatch !== undefined && reuseFiles?.deferHashes) {
        // A plain file's body lent unhashed does not hash to the earlier manifest's record (file-reuse.ts).
        written = await lentHashes();
        check = await verifyWritten();
      }
      if (!check.ok) {
        throw new OperationError("backup_verify_failed", `The new archive for ${label} failed verification (${check.problem}); it was not ${streaming ? "streamed (nothing was written to stdout)" : "published"}. Check the disk and retry.`, { path: output.archivePath });
      }
      verified = true;
    }
    if (reuseFiles && reuseFiles.mismatches.length > 0) {
      const named = reuseFiles.mismatches.slice(0, 3).join(", ");
      const more = reuseFiles.mismatches.length > 3 ? ` and ${reuseFiles.mismatches.length - 3} more` : "";
      const stopped = reuseFiles.mismatches.length >= MAX_MISMATCHES ? ` (after ${MAX_MISMATCHES} such bodies it lent nothing more)` : "";
      warnings.push(`Did not reuse the earlier bodies of ${named}${more} from ${reuseFiles.archivePath}: the bytes there do not hash to what its manifest records; they were read afresh${stopped}.`);
    }
    // Ctrl-C during the run: its cleanup is removing the staging dir; nothing gets published or streamed now.
    const interrupted = interruptSignal();
    if (interrupted) throw new OperationError("interrupted", `Interrupted by ${interrupted}; ${label} was not ${streaming ? "streamed" : "published"}.`, { path: output.archivePath });
    if (streaming) {
      // The bytes streamed are read back from the file just verified; their sha256 is reported for the copy's owner.
      streamed = await streamArchiveFile(partialPath, options.stream!);
    } else {
      publishNoClobber(partialPath, output.archivePath);
      published = true;
    }
    // Only a verified archive may lend its snapshots to the next run (the ledger row only says where they are); a
    // streamed one has no file here to lend them from, so its row records the run without a path.
    const lends = written.reusable.length > 0 || written.fileBodies > 0;
    const reuseRecord: ReuseRecord | undefined = verified && !streaming && lends ? { compression: output.compression, archiveSize: written.sizeBytes, payloadStart: written.payloadStart, snapshots: written.reusable } : undefined;
    const recordWarning = recordBackupRun(paths, { runId, createdAt, archivePath: streaming ? null : output.archivePath, status: "completed", manifest: summarizeManifest(written.manifest), reuse: reuseRecord });
    if (recordWarning) warnings.push(recordWarning);
    return {
      runId,
      status: "completed",
      archivePath: output.archivePath,
      verified,
      sizeBytes: written.sizeBytes,
      compression: output.compression,
      reusedDatabases: written.reused,
      reusedFiles: written.reusedFiles,
      reuseRefused: search.refused,
      manifest: written.manifest,
      warnings,
      recorded: recordWarning === null,
      ...(streamed ? { streamed } : {}),
    };
  } catch (error) {
    if (published) fs.rmSync(output.archivePath, { force: true });
    await recordFailure(streaming ? null : output.archivePath, error);
    throw error;
  } finally {
    reuseFiles?.close();
    await runner.close();
    staging?.dispose();
  }
}

interface Reusable {
  search: ReuseSearch;
  /** Unchanged plain files' bodies in the last verified archive that can still be read (null: none). */
  files: PlainFileReuse | null;
  /** Why the last archive's plain file bodies were not used, when the ledger and the archive disagree. */
  filesRefused: ReuseRefusal | null;
}

/**
 * Unchanged databases whose snapshot an earlier verified archive holds intact, and unchanged plain files whose body
 * the newest one holds: the backup_runs ledger says where to look, the archive's own manifest decides
 * (findReuseCandidates, PlainFileReuse). Any doubt means a fresh read: nothing here can fail the backup.
 */
async function reusableParts(paths: StatePaths, compression: Compression, entries: readonly WalkEntry[], assets: BackupAsset[], runner: SqliteJobRunner, deferHashes: boolean): Promise<Reusable> {
  const none: Reusable = { search: { candidates: new Map(), refused: [] }, files: null, filesRefused: null };
  const databases = entries.flatMap((e) => (e.type === "file" && e.database ? [{ absPath: e.absPath, archivePath: e.archivePath, role: e.database.role, agentId: e.database.agentId }] : []));
  const plainFiles = entries.some((e) => e.type === "file" && !e.database && e.size >= PLAIN_SEGMENT_MIN);
  if ((databases.length === 0 && !plainFiles) || ledgerPathProblem(paths) !== null) return none;
  let rows: LedgerReuseRow[];
  try {
    // A raw read, without the storage core (on this thread when the global DB is small).
    rows = await runner.run({ op: "completed-backup-runs", file: paths.globalDbPath, limit: REUSE_ROWS });
  } catch {
    return none;
  }
  // Each archive's manifest is read once, for both searches.
  const manifests = new Map<string, Promise<BackupManifest>>();
  const readManifest = (archivePath: string): Promise<BackupManifest> => {
    let read = manifests.get(archivePath);
    if (!read) {
      read = readArchiveManifest(archivePath);
      read.catch(() => undefined);
      manifests.set(archivePath, read);
    }
    return read;
  };
  const out: Reusable = { ...none };
  if (plainFiles) {
    // The newest completed run whose ledger row says where its payload starts and whose archive is still there in
    // this compression: each archive re-records the bodies it copied, so the newest one holds every unchanged file's
    // (an older one, when the newest was pruned or moved away, those unchanged since it).
    const row = rows.find((r) => r.status === "completed" && r.archivePath && payloadStartHint(r.manifestJson) !== null && archiveIn(r.archivePath, compression));
    if (row?.archivePath) {
      const archivePath = row.archivePath;
      try {
        out.files = new PlainFileReuse(archivePath, payloadStartHint(row.manifestJson)!, await readManifest(archivePath), compression, assets);
        out.files.deferHashes = deferHashes;
      } catch (error) {
        out.filesRefused = { path: "the bodies of unchanged files", archivePath, reason: `its manifest cannot be read (${describeError(error)})`, mismatch: true };
      }
    }
  }
  if (databases.length > 0) {
    try {
      out.search = await findReuseCandidates(rows, compression, databases, readManifest, deferHashes);
    } catch {
      // none
    }
  }
  return out;
}

/** Whether `archivePath` is a regular file (not followed if a link) in `compression`; any error: no. */
function archiveIn(archivePath: string, compression: Compression): boolean {
  try {
    return fs.lstatSync(archivePath, { throwIfNoEntry: false })?.isFile() === true && sniffCompression(archivePath) === compression;
  } catch {
    return false;
  }
}

/** Completed runs searched for reusable snapshots (the newest first). */
const REUSE_ROWS = 10;

/** The archive's name in the staging dir until it is verified. */
export const PARTIAL_SUFFIX = ".partial";
