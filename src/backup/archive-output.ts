// Where an archive goes: default names, `--output <file|dir/>` resolution, and the never-inside-a-source rule.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Writable } from "node:stream";
import { describeError, OperationError, UsageError } from "../core/errors.js";
import { expandUserPath, isPathInside, type StatePaths } from "../state/paths.js";
import { resolveRealish, statKind, type AssetPlan } from "./asset-plan.js";
import { ARCHIVE_EXTENSIONS, ARCHIVE_NAME_PATTERN, checkCompressionAvailable, compressionForName, defaultCompression, type Compression } from "./compression.js";
import { privateTempParent } from "./private-temp.js";

/** `2025-01-02T03-04-05.678Z-openclaw-backup.tar.zst`: sortable, and safe on every file system. */
export function defaultArchiveName(createdAt: Date, suffix = 0, compression: Compression = "gzip"): string {
  const stamp = createdAt.toISOString().replace(/:/g, "-");
  return `${stamp}-openclaw-backup${suffix === 0 ? "" : `-${suffix}`}${ARCHIVE_EXTENSIONS[compression]}`;
}

/** Matches names made by defaultArchiveName. */
export const DEFAULT_ARCHIVE_NAME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(\.\d{3})?Z-openclaw-backup(-\d+)?\.tar(\.(gz|zst))?$/;

/** The folder name inside the tar: the archive's base name without its extension, made path-safe. */
export function archiveRootName(archivePath: string): string {
  const base = path.basename(archivePath).replace(ARCHIVE_NAME_PATTERN, "");
  const safe = base.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "");
  return safe === "" ? "openclaw-backup" : safe;
}

export interface ArchiveOutput {
  archivePath: string;
  dir: string;
  root: string;
  /** True when the name was chosen by us (a unique default name). */
  defaultName: boolean;
  compression: Compression;
}

/**
 * Resolves `--output`: an archive file path (`.tar.gz`/`.tgz`/`.tar.zst`/`.tzst`), or a directory that gets a
 * default name (an existing one, one ending with '/', or a new path without an archive extension). The
 * compression is `compression`, else the file name's, else the runtime default; a name that contradicts an
 * explicit `compression` is a usage error.
 */
export function resolveArchiveOutput(output: string | undefined, paths: StatePaths, createdAt: Date, compression?: Compression): ArchiveOutput {
  let dir: string;
  let file: string | undefined;
  if (output === undefined || output.trim() === "") {
    dir = paths.backupDir;
  } else {
    const abs = expandUserPath(output, paths.homeDir);
    // A name without an archive extension that does not exist yet is a directory to create, not an archive name.
    const looksLikeArchive = ARCHIVE_NAME_PATTERN.test(abs);
    if (/[\\/]$/.test(output) || statKind(abs) === "dir" || (!looksLikeArchive && !fs.existsSync(abs))) dir = abs;
    else {
      dir = path.dirname(abs);
      file = abs;
    }
  }
  if (file !== undefined) {
    const named = compressionForName(file);
    if (compression && named && named !== compression) {
      throw new UsageError(`--output ${file} names a ${named} archive but --compression ${compression} was given; use a ${ARCHIVE_EXTENSIONS[compression]} name or drop one of the two.`, "compression_mismatch", { path: file });
    }
    const chosen = compression ?? named ?? defaultCompression();
    checkCompressionAvailable(chosen);
    if (fs.existsSync(file)) throw new OperationError("archive_exists", `${file} already exists; archives are never overwritten, choose another --output.`, { path: file });
    return { archivePath: file, dir, root: archiveRootName(file), defaultName: false, compression: chosen };
  }
  const chosen = compression ?? defaultCompression();
  checkCompressionAvailable(chosen);
  let suffix = 0;
  let candidate = path.join(dir, defaultArchiveName(createdAt, 0, chosen));
  while (fs.existsSync(candidate)) {
    suffix += 1;
    candidate = path.join(dir, defaultArchiveName(createdAt, suffix, chosen));
  }
  return { archivePath: candidate, dir, root: archiveRootName(candidate), defaultName: true, compression: chosen };
}

/** The `archivePath` of an archive streamed to stdout (`--output -`), which has no file of its own. */
export const STREAM_OUTPUT = "-";

/**
 * `--output -`: the archive is staged (written and verified) in a private dir in the OS temp dir, never beside the
 * state or in the backup dir, then streamed; its root folder is the default name's, as if it had been saved under it.
 */
export function resolveStreamOutput(createdAt: Date, compression?: Compression): ArchiveOutput {
  const chosen = compression ?? defaultCompression();
  checkCompressionAvailable(chosen);
  return { archivePath: STREAM_OUTPUT, dir: privateTempParent(), root: archiveRootName(defaultArchiveName(createdAt, 0, chosen)), defaultName: true, compression: chosen };
}

/**
 * Copies the finished (verified) archive `file` to `out` (stdout), hashing what is written. A reader that goes away
 * (EPIPE: restic or ssh died) fails the run: what it received is incomplete.
 */
export async function streamArchiveFile(file: string, out: Writable): Promise<{ bytes: number; sha256: string }> {
  const hash = crypto.createHash("sha256");
  let bytes = 0;
  let failure: unknown;
  let wake: (() => void) | null = null;
  const onError = (error: unknown): void => {
    failure ??= error;
    wake?.();
  };
  const onClose = (): void => onError(new Error("the reader closed the stream"));
  out.on("error", onError);
  out.on("close", onClose);
  const waitDrain = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        out.off("drain", done);
        wake = null;
        resolve();
      };
      wake = done;
      out.on("drain", done);
    });
  try {
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
      if (failure !== undefined || out.destroyed) break;
      hash.update(chunk);
      bytes += chunk.length;
      if (!out.write(chunk)) await waitDrain();
    }
    if (failure === undefined && !out.destroyed && out.writableLength > 0) await waitDrain();
  } finally {
    out.off("error", onError);
    out.off("close", onClose);
  }
  if (failure !== undefined || out.destroyed) {
    throw new OperationError(
      "stream_failed",
      `The archive stream broke after ${bytes} bytes (${failure === undefined ? "the output was closed" : describeError(failure)}): the reader went away, so what it received is incomplete and must not be kept (\`backup verify -\` refuses it).`,
      {},
    );
  }
  return { bytes, sha256: hash.digest("hex") };
}

/**
 * Refuses an archive inside the state dir (`reset --scope full` would delete it with the state it could restore),
 * except in the configured backup dir, which reset never removes, and inside any other backed-up path (it would
 * end up inside itself), unless that is a backup dir.
 */
export function checkOutputLocation(output: ArchiveOutput, plan: AssetPlan, paths: StatePaths): void {
  const real = resolveRealish(output.archivePath);
  if (isPathInside(resolveRealish(paths.stateDir), real) && !isPathInside(resolveRealish(paths.backupDir), real)) {
    throw new UsageError(
      `The backup destination ${output.dir} is inside the state dir ${paths.stateDir}, where \`reset --scope full\` would delete the archives with the state; write backups outside it (the default is ${paths.stateDir.replace(/[\\/]+$/, "")}-backups).`,
      "output_inside_state",
      { path: output.archivePath },
    );
  }
  const inBackupDir = plan.backupDirs.some((d) => isPathInside(d, real));
  for (const asset of plan.assets) {
    if (asset.type === "dir" && plan.backupDirs.includes(asset.realPath)) {
      throw new UsageError(`The backup directory ${asset.realPath} is also the ${asset.kind} asset; point OPENCLAW_BACKUP_DIR elsewhere.`, "output_inside_source");
    }
    const inside = asset.type === "dir" ? isPathInside(asset.realPath, real) : asset.realPath === real;
    if (inside && !inBackupDir) {
      throw new UsageError(
        `The output ${output.archivePath} is inside the ${asset.kind} asset ${asset.sourcePath}, so the backup would contain itself; write it to ${paths.backupDir} (the default) or outside the backed-up paths.`,
        "output_inside_source",
        { path: output.archivePath },
      );
    }
  }
}

/** The nearest existing ancestor of `dir` must be a writable directory (dry-run predicts mkdir + create). */
export function checkOutputWritable(dir: string): void {
  let probe = path.resolve(dir);
  while (!fs.existsSync(probe)) {
    const parent = path.dirname(probe);
    if (parent === probe) break;
    probe = parent;
  }
  if (statKind(probe) !== "dir") throw new OperationError("output_not_writable", `Cannot create the archive in ${dir}: ${probe} is not a directory.`, { path: dir });
  try {
    fs.accessSync(probe, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw new OperationError("output_not_writable", `Cannot create the archive in ${dir}: ${probe} is not writable; choose another --output.`, { path: dir });
  }
}
