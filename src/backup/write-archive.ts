// Writes the archive (.tar.gz or .tar.zst): payload streamed (hashed on the way), manifest in front, atomic publish.
//
// The manifest must be the first tar entry (it caps every later entry when the archive is read back), but
// it is only known once the payload has been hashed. So the payload is written first (as gzip members or
// zstd frames, compressed in parallel blocks) in the staging dir; the archive is then [compressed manifest
// entry] + [payload blocks], one valid gzip/zstd stream that gzip, zstd, GNU tar and Node read as one. Live
// files are read exactly once. Each database body is a segment of whole blocks, so the next archive can copy
// it as it is when the database did not change (see snapshot-reuse.ts).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import { fsyncDir } from "../state/private-fs.js";
import type { SqliteJobRunner } from "../state/sqlite-jobs.js";
import type { DatabaseFileInfo } from "../state/sqlite-snapshot.js";
import { databaseRecord } from "./manifest.js";
import { ARCHIVE_EXTENSIONS, compressBlock, type Compression } from "./compression.js";
import { ParallelCompressor, type WrittenSegment } from "./parallel-compress.js";
import { sourceFingerprint, stableFingerprint, type ReusableSnapshot, type ReuseCandidate, type SourceFingerprint } from "./snapshot-reuse.js";
import { encodeEntryHeader, paddingFor, TAR_EOF } from "./tar-format.js";
import { MANIFEST_NAME, type BackupManifest, type ManifestDatabase, type ManifestDirectory, type ManifestFile, type ManifestSymlink, type ProgressCallback, type SkippedItem } from "./types.js";
import { isVanished, type WalkEntry, type WalkFile } from "./walk-assets.js";
import { writeFully } from "./file-writer.js";

const READ_CHUNK = 1024 * 1024;

export interface PayloadParts {
  directories: ManifestDirectory[];
  files: ManifestFile[];
  symlinks: ManifestSymlink[];
  databases: ManifestDatabase[];
  skipped: SkippedItem[];
  warnings: string[];
}

export interface WriteArchiveOptions {
  archivePath: string;
  root: string;
  stagingDir: string;
  entries: readonly WalkEntry[];
  runner: SqliteJobRunner;
  createdAt: Date;
  compression: Compression;
  /** Per database source path: an unchanged snapshot to copy from an earlier verified archive. */
  reuse?: ReadonlyMap<string, ReuseCandidate>;
  onProgress?: ProgressCallback;
  /** Builds the manifest from what was actually archived. */
  manifestFor(parts: PayloadParts): BackupManifest;
}

export interface WriteArchiveResult {
  manifest: BackupManifest;
  sizeBytes: number;
  /** Snapshots a later archive may copy (offsets in this archive); recorded only once this one is verified. */
  reusable: ReusableSnapshot[];
  /** Source paths of the databases whose snapshot bytes were copied from an earlier archive. */
  reused: string[];
}

interface Snapshot {
  file: string;
  /** VACUUM INTO finished (the file is complete and fsynced). */
  taken: Promise<unknown>;
  /** integrity_check, page stats and row counts of the snapshot. */
  info: Promise<DatabaseFileInfo>;
  /** The source's fingerprint when provably unchanged during the snapshot (else null: not reusable later). */
  fingerprint: Promise<SourceFingerprint | null>;
}

/** Exclusive 0600 create: an archive or temp file is never opened over an existing one. */
export function openExclusive(file: string): Promise<fs.promises.FileHandle> {
  return fs.promises.open(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600);
}

/**
 * Publishes `temp` as `finalPath` without ever replacing an existing file: link() fails with EEXIST where
 * rename() would overwrite. File systems without hard links fall back to a checked rename.
 */
export function publishNoClobber(temp: string, finalPath: string): void {
  try {
    fs.linkSync(temp, finalPath);
    fs.unlinkSync(temp);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new OperationError("archive_exists", `${finalPath} already exists; archives are never overwritten, choose another --output.`, { path: finalPath });
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EXDEV") throw error;
    if (fs.existsSync(finalPath)) throw new OperationError("archive_exists", `${finalPath} already exists; archives are never overwritten, choose another --output.`, { path: finalPath });
    fs.renameSync(temp, finalPath);
  }
  fsyncDir(path.dirname(finalPath));
}

export async function writeArchive(options: WriteArchiveOptions): Promise<WriteArchiveResult> {
  const { entries, runner, root, stagingDir, compression } = options;
  const parts: PayloadParts = { directories: [], files: [], symlinks: [], databases: [], skipped: [], warnings: [] };
  const bytesTotal = entries.reduce((n, e) => n + (e.type === "file" ? e.size : 0), 0);
  let bytesDone = 0;
  const progress = (p: string): void => options.onProgress?.({ phase: "archive", bytesDone, bytesTotal, path: p });
  const reusable: Array<Promise<ReusableSnapshot | null>> = [];
  const reused: string[] = [];

  // Snapshots run on the worker one database ahead of the compressor. A database streams as soon as its
  // VACUUM INTO is done; its integrity_check and row counts run meanwhile and are awaited before it is
  // recorded (a failure still aborts the whole archive).
  const dbIndexes = entries.flatMap((e, i) => (e.type === "file" && e.database && !options.reuse?.has(e.absPath) ? [i] : []));
  const snapshots = new Map<number, Snapshot>();
  const startSnapshot = (index: number): Snapshot => {
    let started = snapshots.get(index);
    if (!started) {
      const entry = entries[index] as WalkFile;
      const file = path.join(stagingDir, `snapshot-${index}.sqlite`);
      const takenAt = Date.now();
      const before = sourceFingerprint(entry.absPath);
      const taken = runner.run({ op: "snapshot", source: entry.absPath, dest: file });
      const fingerprint = taken.then(() => stableFingerprint(before, sourceFingerprint(entry.absPath), takenAt));
      const info = taken.then(() => runner.run({ op: "describe", file, check: "integrity_check" }));
      taken.catch(() => undefined);
      info.catch(() => undefined);
      fingerprint.catch(() => undefined);
      started = { file, taken, info, fingerprint };
      snapshots.set(index, started);
    }
    return started;
  };

  // Not fsynced: the payload is copied into the archive, which is.
  const payloadFile = path.join(stagingDir, `payload${ARCHIVE_EXTENSIONS[compression]}`);
  const payload = await openExclusive(payloadFile);
  const compressor = new ParallelCompressor((chunk) => writeFully(payload, chunk, null), { compression });

  /** Streams one file's entry (header, body, padding); `segment` makes the body a reusable run of blocks. */
  async function writeFile(entry: WalkFile, source: string, sizeHint: number | undefined, segment: boolean): Promise<{ file: ManifestFile; segment: Promise<WrittenSegment> | null } | null> {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(source, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    } catch (error) {
      if (!isVanished(error)) throw error;
      parts.warnings.push(`${entry.absPath} vanished before it was archived; it is not in the archive.`);
      parts.skipped.push({ kind: "file", path: entry.absPath, reason: "vanished during the backup" });
      return null;
    }
    try {
      const st = await handle.stat();
      const size = sizeHint ?? st.size;
      await compressor.write(encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "File", size, mode: entry.mode, mtime: st.mtime }));
      if (segment) compressor.beginSegment();
      const hash = crypto.createHash("sha256");
      let done = 0;
      while (done < size) {
        const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, size - done));
        const { bytesRead } = await handle.read(buf, 0, buf.length, done);
        if (bytesRead === 0) break;
        const chunk = bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
        hash.update(chunk);
        done += bytesRead;
        bytesDone += bytesRead;
        progress(entry.archivePath);
        await compressor.write(chunk);
      }
      if (done < size) {
        // The file shrank while being read: the header already promised `size` bytes, so pad and say so.
        const zeros = Buffer.alloc(size - done);
        hash.update(zeros);
        await compressor.write(zeros);
        parts.warnings.push(`${entry.absPath} shrank while it was archived; the archived copy is padded and may be inconsistent.`);
      } else {
        const after = await handle.stat();
        if (after.size !== st.size || after.mtimeMs !== st.mtimeMs) {
          parts.warnings.push(`${entry.absPath} changed while it was archived; the archived copy may be inconsistent.`);
        }
      }
      await compressor.write(paddingFor(size));
      const written = segment ? compressor.endSegment() : null;
      written?.catch(() => undefined);
      return { file: { archivePath: entry.archivePath, size, sha256: hash.digest("hex"), mode: entry.mode, mtimeMs: st.mtimeMs }, segment: written };
    } finally {
      await handle.close();
    }
  }

  /** An unchanged database: its header, then the earlier archive's compressed body copied as it is. */
  async function copyReused(entry: WalkFile, candidate: ReuseCandidate): Promise<void> {
    const { snapshot } = candidate;
    options.onProgress?.({ phase: "archive", bytesDone, bytesTotal, path: `${entry.archivePath} (unchanged, reused)` });
    await compressor.write(encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "File", size: snapshot.file.size, mode: snapshot.file.mode, mtime: new Date(snapshot.file.mtimeMs) }));
    const segment = compressor.copySegment(candidate.archivePath, snapshot.segment);
    segment.catch(() => undefined);
    bytesDone += entry.size;
    const database = { ...snapshot.database, role: entry.database?.role ?? "other", agentId: entry.database?.agentId ?? null, sourcePath: entry.absPath };
    parts.files.push(snapshot.file);
    parts.databases.push(database);
    reused.push(entry.absPath);
    reusable.push(segment.then((s) => ({ ...snapshot, sourcePath: entry.absPath, database, segment: s })));
  }

  async function writeTar(): Promise<void> {
    for (let i = 0; i < entries.length; i += 1) {
      const entry = entries[i]!;
      if (entry.type === "dir") {
        parts.directories.push({ archivePath: entry.archivePath });
        await compressor.write(encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "Directory", size: 0, mode: 0o700, mtime: options.createdAt }));
        continue;
      }
      if (entry.type === "symlink") {
        parts.symlinks.push({ archivePath: entry.archivePath, target: entry.target });
        continue;
      }
      if (!entry.database) {
        const written = await writeFile(entry, entry.absPath, undefined, false);
        if (written) parts.files.push(written.file);
        continue;
      }
      const candidate = options.reuse?.get(entry.absPath);
      if (candidate) {
        await copyReused(entry, candidate);
        continue;
      }
      options.onProgress?.({ phase: "snapshot", bytesDone, bytesTotal, path: entry.absPath });
      const snap = startSnapshot(i);
      const next = dbIndexes.find((d) => d > i);
      if (next !== undefined) startSnapshot(next);
      try {
        await snap.taken;
      } catch (error) {
        if (!fs.existsSync(entry.absPath)) {
          parts.warnings.push(`Database ${entry.absPath} vanished before it was snapshotted; it is not in the archive.`);
          parts.skipped.push({ kind: "file", path: entry.absPath, reason: "vanished during the backup" });
          continue;
        }
        throw new OperationError("snapshot_failed", `Cannot snapshot database ${entry.absPath} (${describeError(error)}); no archive was written. Run \`openclaw-state doctor\` to see why.`, { path: entry.absPath, cause: error });
      }
      const written = await writeFile(entry, snap.file, fs.statSync(snap.file).size, true);
      let info: DatabaseFileInfo;
      try {
        info = await snap.info;
      } catch (error) {
        throw new OperationError("snapshot_failed", `Cannot check the snapshot of ${entry.absPath} (${describeError(error)}); no archive was written.`, { path: entry.absPath, cause: error });
      }
      if (info.problems.length > 0) {
        throw new OperationError(
          "snapshot_integrity_failed",
          `The snapshot of ${entry.absPath} fails integrity_check (${info.problems[0]}); no archive was written. Run \`openclaw-state doctor --deep\` and repair the database first.`,
          { path: entry.absPath },
        );
      }
      fs.rmSync(snap.file, { force: true });
      if (!written) continue;
      const database = databaseRecord(entry, info, { size: written.file.size, sha256: written.file.sha256, integrity: "ok" });
      parts.files.push(written.file);
      parts.databases.push(database);
      const fingerprint = await snap.fingerprint;
      if (fingerprint && written.segment) {
        const file = written.file;
        reusable.push(written.segment.then((segment) => ({ sourcePath: entry.absPath, fingerprint, segment, file, database })));
      }
    }
    await compressor.write(TAR_EOF);
  }

  let payloadBytes: number;
  try {
    await writeTar();
    payloadBytes = await compressor.end();
  } finally {
    await compressor.settle();
    await payload.close().catch(() => undefined);
    // Settle look-ahead snapshots (a failure may leave one running) before the staging dir goes away.
    await Promise.allSettled([...snapshots.values()].flatMap((snap) => [snap.taken, snap.info, snap.fingerprint]));
  }
  const segments = (await Promise.all(reusable)).filter((r): r is ReusableSnapshot => r !== null);

  const manifest = options.manifestFor(parts);
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, "utf8");
  const head = await compressBlock(
    compression,
    Buffer.concat([
      encodeEntryHeader({ path: `${root}/${MANIFEST_NAME}`, type: "File", size: manifestBytes.length, mode: 0o600, mtime: options.createdAt }),
      manifestBytes,
      paddingFor(manifestBytes.length),
    ]),
  );

  options.onProgress?.({ phase: "finalize", bytesDone, bytesTotal, path: options.archivePath });
  // Inside the staging dir (same file system as the archive): a killed run leaves nothing under the archive's own folder
  // but the staging dir, which the next create sweeps.
  const temp = path.join(stagingDir, `${path.basename(options.archivePath)}.tmp-${crypto.randomBytes(6).toString("hex")}`);
  const out = await openExclusive(temp);
  let published = false;
  try {
    await writeFully(out, head, null);
    for await (const chunk of fs.createReadStream(payloadFile, { highWaterMark: READ_CHUNK })) await writeFully(out, chunk as Buffer, null);
    await out.sync();
    await out.close();
    publishNoClobber(temp, options.archivePath);
    published = true;
  } finally {
    if (!published) {
      await out.close().catch(() => undefined);
      fs.rmSync(temp, { force: true });
    }
  }
  const sizeBytes = fs.statSync(options.archivePath).size;
  if (sizeBytes !== head.length + payloadBytes) throw new OperationError("archive_size_mismatch", `${options.archivePath} is ${sizeBytes} bytes, expected ${head.length + payloadBytes}; the disk may be failing.`, { path: options.archivePath });
  fs.rmSync(payloadFile, { force: true });
  const shifted = segments.map((s) => ({ ...s, segment: { ...s.segment, start: s.segment.start + head.length } }));
  return { manifest, sizeBytes, reusable: shifted, reused };
}
