// `backup list`: runs recorded in backup_runs merged with the archives found in the backup directory, and the
// `<path>.pre-restore-<ts>` copies restores kept (until `backup prune --pre-restore` removes them).
import fs from "node:fs";
import path from "node:path";
import { expandUserPath, type StatePaths } from "../state/paths.js";
import { readBackupRuns } from "./backup-runs.js";
import { isOpenclawStateError } from "../core/errors.js";
import { ARCHIVE_NAME_PATTERN, sniffCompression, type Compression } from "./compression.js";
import { scanPreRestoreCopies, type PreRestoreCopy } from "./pre-restore-copies.js";
import { ArchiveProblem } from "./archive-source.js";
import { readArchiveManifest } from "./read-archive.js";
import { BACKUP_PURPOSES, type BackupManifest } from "./types.js";
import { archiveIdOf, assignShortIds } from "./archive-id.js";

export interface ListBackupsOptions {
  paths: StatePaths;
  /** Directory to scan (default: paths.backupDir). */
  dir?: string;
  /** Also list recorded runs whose archive is gone (hidden by default, counted in `hidden`). */
  all?: boolean;
}

export interface BackupListItem {
  archivePath: string;
  /**
   * The archive's id: its run id's hex digits (the manifest's `runId`, a UUID, or the backup_runs row's), null
   * when neither is readable. `shortId` is the shortest prefix of at least 8 that no other listed archive shares;
   * either names the archive in `backup verify|restore` (so does `latest`).
   */
  id: string | null;
  shortId: string | null;
  /** From the manifest (or the run row) as epoch ms; the file mtime when neither is readable. `--json` prints it as ISO-8601. */
  createdAt: number;
  /** The recorded run status, or "unrecorded" for an archive with no backup_runs row. */
  status: string;
  runId: string | null;
  exists: boolean;
  sizeBytes: number | null;
  /** From the archive's magic bytes (null when missing or neither gzip nor zstd). */
  compression: Compression | null;
  /** The first entry is an openclaw-state manifest (checked without inflating the payload). */
  manifestOk: boolean | null;
  databases: number | null;
  problem?: string;
  /** e.g. "zstd_unsupported": the archive may be fine, this Node cannot read it. */
  problemCode?: string;
}

export interface ListBackupsResult {
  backupDir: string;
  /** False when there is no global DB to read runs from. */
  runsRead: boolean;
  backups: BackupListItem[];
  /**
   * Recorded runs left out because their archive is gone (completed runs whose archive was deleted, failed runs
   * older than the newest backup that exists); `all` lists them, `backup prune` forgets them.
   */
  hidden: { missing: number; failed: number };
  /** Previous copies restores kept beside the paths they replaced, newest first (`backup prune --pre-restore`). */
  preRestoreCopies: PreRestoreCopy[];
  /** Names with the pre-restore marker that are not a restore's copy: left alone, with the reason. */
  preRestoreNotOurs: Array<{ path: string; reason: string }>;
  warnings: string[];
}

export interface FoundArchive {
  archivePath: string;
  sizeBytes: number;
  mtimeMs: number;
  /** From the magic bytes; null when neither gzip nor zstd. */
  compression: Compression | null;
  manifestOk: boolean;
  createdAt: number | null;
  runId: string | null;
  databases: number | null;
  /** The state dir the manifest names, and whether it is a config-only archive (prune groups by both). */
  stateDir: string | null;
  onlyConfig: boolean | null;
  /** The manifest's archiveRoot (create derives it from the name it writes) and options, for prune's identity. */
  archiveRoot: string | null;
  options: BackupManifest["options"] | null;
  hasStateAsset: boolean | null;
  problem?: string;
  /** Set when the manifest could not be read for a reason other than the archive itself (e.g. zstd_unsupported). */
  problemCode?: string;
}

/** Regular archive files (`.tar.gz`, `.tgz`, `.tar.zst`, `.tzst`) directly in `dir`, each with its manifest read (first entry only). */
export async function scanBackupDir(dir: string): Promise<FoundArchive[]> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const found: FoundArchive[] = [];
  for (const name of names.sort()) {
    if (!ARCHIVE_NAME_PATTERN.test(name) || name.startsWith(".")) continue;
    const file = path.join(dir, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    const item: FoundArchive = { archivePath: file, sizeBytes: st.size, mtimeMs: st.mtimeMs, compression: null, manifestOk: false, createdAt: null, runId: null, databases: null, stateDir: null, onlyConfig: null, archiveRoot: null, options: null, hasStateAsset: null };
    if (!st.isFile()) {
      // Named, never read: a link is not followed and a FIFO would block the read.
      item.problem = st.isSymbolicLink() ? "a symbolic link (never followed)" : "not a regular file";
      found.push(item);
      continue;
    }
    try {
      item.compression = sniffCompression(file);
      const manifest = await readArchiveManifest(file);
      // `options` is not part of the validated contract: read it field by field, a hostile value counts as false.
      const raw: unknown = manifest.options;
      const opts = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
      const purpose = BACKUP_PURPOSES.find((p) => p === opts.purpose);
      const options = { onlyConfig: opts.onlyConfig === true, includeWorkspace: opts.includeWorkspace === true, verify: opts.verify === true, dryRun: opts.dryRun === true, ...(purpose ? { purpose } : {}) };
      const t = Date.parse(manifest.createdAt);
      Object.assign(item, {
        manifestOk: true,
        createdAt: Number.isNaN(t) ? null : t,
        runId: manifest.runId,
        databases: manifest.databases.length,
        stateDir: manifest.paths.stateDir,
        onlyConfig: options.onlyConfig,
        archiveRoot: manifest.archiveRoot,
        options,
        hasStateAsset: manifest.assets.some((a) => a.kind === "state"),
      });
    } catch (error) {
      item.problem = error instanceof ArchiveProblem ? error.message : (error as Error).message;
      if (isOpenclawStateError(error)) item.problemCode = error.code;
    }
    found.push(item);
  }
  return found;
}

export async function listBackups(options: ListBackupsOptions): Promise<ListBackupsResult> {
  const { paths } = options;
  const backupDir = options.dir ? expandUserPath(options.dir, paths.homeDir) : paths.backupDir;
  const warnings: string[] = [];
  const { runs, warning } = readBackupRuns(paths);
  if (warning) warnings.push(warning);
  const archives = await scanBackupDir(backupDir);
  const byPath = new Map(archives.map((a) => [a.archivePath, a]));
  const backups: BackupListItem[] = [];
  for (const run of runs ?? []) {
    const found = run.archivePath ? byPath.get(run.archivePath) : undefined;
    if (found) byPath.delete(found.archivePath);
    let sizeBytes = found?.sizeBytes ?? null;
    let exists = found !== undefined;
    if (!found && run.archivePath) {
      try {
        sizeBytes = fs.statSync(run.archivePath).size;
        exists = true;
      } catch {
        exists = false;
      }
    }
    backups.push({
      archivePath: run.archivePath ?? "",
      // A readable manifest is the archive's own word; the row's id is for an archive this Node cannot read.
      id: archiveIdOf(found?.manifestOk ? found.runId : run.id),
      shortId: null,
      createdAt: run.createdAt,
      status: run.status,
      runId: run.id,
      exists,
      sizeBytes,
      compression: found?.compression ?? (exists && run.archivePath ? safeSniff(run.archivePath) : null),
      manifestOk: found ? found.manifestOk : null,
      databases: found?.databases ?? null,
      ...(found?.problem ? { problem: found.problem } : {}),
      ...(found?.problemCode ? { problemCode: found.problemCode } : {}),
    });
  }
  for (const a of byPath.values()) {
    backups.push({
      archivePath: a.archivePath,
      id: archiveIdOf(a.runId),
      shortId: null,
      createdAt: a.createdAt ?? a.mtimeMs,
      status: "unrecorded",
      runId: a.runId,
      exists: true,
      sizeBytes: a.sizeBytes,
      compression: a.compression,
      manifestOk: a.manifestOk,
      databases: a.databases,
      ...(a.problem ? { problem: a.problem } : {}),
      ...(a.problemCode ? { problemCode: a.problemCode } : {}),
    });
  }
  backups.sort((x, y) => y.createdAt - x.createdAt);
  // A failed run stays visible until a later backup succeeded: it is the news a cron operator needs.
  const newestOk = backups.find((b) => b.exists && b.status !== "failed")?.createdAt ?? Number.NEGATIVE_INFINITY;
  const hidden = { missing: 0, failed: 0 };
  const shown = options.all
    ? backups
    : backups.filter((b) => {
        if (b.exists) return true;
        if (b.status === "failed" && b.createdAt > newestOk) return true;
        if (b.status === "failed") hidden.failed += 1;
        else hidden.missing += 1;
        return false;
      });
  assignShortIds(shown);
  const preRestore = scanPreRestoreCopies(paths);
  return { backupDir, runsRead: runs !== null, backups: shown, hidden, preRestoreCopies: preRestore.copies, preRestoreNotOurs: preRestore.notOurs, warnings };
}

function safeSniff(file: string): Compression | null {
  try {
    return sniffCompression(file);
  } catch {
    return null;
  }
}
