// Writes the archive (.tar.gz or .tar.zst): payload streamed (hashed on the way), manifest in front, atomic publish.
//
// The manifest must be the first tar entry (it caps every later entry when the archive is read back), but
// it is only known once the payload has been hashed. So the payload (gzip members or zstd frames, compressed
// in parallel blocks) is written first, behind a reserved region; the compressed manifest entry then goes in
// front, padded to fill the region (headFiller). The result is one valid gzip/zstd stream that gzip, zstd,
// GNU tar and Node read as one. Live files are read exactly once. Each database body is a segment of whole
// blocks, so the next archive can copy it as it is when the database did not change (see snapshot-reuse.ts).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import { fsyncDir } from "../state/private-fs.js";
import type { SqliteJobRunner } from "../state/sqlite-jobs.js";
import type { DatabaseFileInfo } from "../state/sqlite-snapshot.js";
import { databaseRecord, fitManifest } from "./manifest.js";
import { compressBlock, type Compression } from "./compression.js";
import { ParallelCompressor, type WrittenSegment } from "./parallel-compress.js";
import { sourceFingerprint, stableFingerprint, type ReusableSnapshot, type ReuseCandidate, type SourceFingerprint } from "./snapshot-reuse.js";
import { BLOCK, encodeEntryHeader, paddingFor, TAR_EOF } from "./tar-format.js";
import { MANIFEST_NAME, type BackupManifest, type ManifestDatabase, type ManifestDirectory, type ManifestFile, type ManifestFileStamp, type ManifestSymlink, type ProgressCallback, type SkippedItem } from "./types.js";
import { isVanished, type WalkEntry, type WalkFile } from "./walk-assets.js";
import { writeFully } from "./file-writer.js";
import { PLAIN_SEGMENT_MIN, stableStamp, type PlainFileReuse, type ReusedBody } from "./file-reuse.js";
import { headFiller, headReserve, moveRange } from "./head-region.js";
import type { PrecheckedRun } from "./archive-source.js";

const SQLITE_HEADER = Buffer.from("SQLite format 3\u0000", "latin1");

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
  /** Where the finished archive is linked (createBackup: `<name>.partial` in its staging dir, published once verified). */
  archivePath: string;
  root: string;
  stagingDir: string;
  entries: readonly WalkEntry[];
  runner: SqliteJobRunner;
  createdAt: Date;
  compression: Compression;
  /** Per database source path: an unchanged snapshot to copy from an earlier verified archive, checked against its manifest. */
  reuse?: ReadonlyMap<string, ReuseCandidate>;
  /** Unchanged plain files whose body the last verified archive holds (see file-reuse.ts). */
  reuseFiles?: PlainFileReuse | null;
  onProgress?: ProgressCallback;
  /** Builds the manifest from what was actually archived. */
  manifestFor(parts: PayloadParts): BackupManifest;
  /**
   * Decode each database block right after compressing it and compare it with its input, and return the segments as
   * `prechecked` (worth it only when a verify pass follows: it then hashes those compressed bytes instead of decoding).
   */
  precheck?: boolean;
  /** Bytes reserved in front of the payload for the manifest (default: estimated from the entries; tests force a move). */
  headReserve?: number;
}

export interface WriteArchiveResult {
  manifest: BackupManifest;
  sizeBytes: number;
  /** Snapshots a later archive may copy (offsets in this archive); recorded only once this one is verified. */
  reusable: ReusableSnapshot[];
  /** Source paths of the databases whose snapshot bytes were copied from an earlier archive. */
  reused: string[];
  /**
   * Every database body's compressed segment (offsets in this archive), proven to decode to its content: freshly
   * compressed blocks were decoded and compared as they were written, reused ones copied by their recorded sha256
   * from a verified archive. The create-time verify checks them by those bytes (see PrecheckedRun).
   */
  prechecked: PrecheckedRun[];
  /** Where the payload starts in this archive (manifest body offsets count from here); recorded in the ledger. */
  payloadStart: number;
  /** Plain files whose body was copied from an earlier archive. */
  reusedFiles: number;
  /** Plain files whose body and stamp this manifest records (a later archive may copy them). */
  fileBodies: number;
}

interface Snapshot {
  file: string;
  /** VACUUM INTO finished (the file is complete; not fsynced: it is a temp copy, and the archive it goes into is fsynced). */
  taken: Promise<unknown>;
  /** integrity_check, page stats and row counts of the snapshot. */
  info: Promise<DatabaseFileInfo>;
  /** The source's fingerprint when provably unchanged during the snapshot (else null: not reusable later). */
  fingerprint: Promise<SourceFingerprint | null>;
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
  const prechecked: Array<Promise<PrecheckedRun>> = [];
  const bodies: Array<Promise<void>> = [];
  let reusedFiles = 0;
  // Promises derived from a segment: awaited only once the whole tar is written, so a failed write must not leave
  // them rejected and unhandled (the failure itself surfaces from the write).
  const kept = <T>(p: Promise<T>): Promise<T> => {
    p.catch(() => undefined);
    return p;
  };
  const precheck = (file: ManifestFile, segment: Promise<WrittenSegment>, sqlite: boolean, lent = false): void => {
    if (!options.precheck) return;
    prechecked.push(kept(segment.then((s): PrecheckedRun => ({ prechecked: true, archivePath: file.archivePath, segment: s, length: Math.ceil(file.size / BLOCK) * BLOCK, contentSha256: file.sha256!, sqlite, ...(lent ? { lent } : {}) }))));
  };

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

  // The payload goes straight into the temp archive behind a reserved head region (see headFiller). The temp file
  // is inside the staging dir (same file system as the archive): a killed run leaves nothing under the archive's
  // own folder but the staging dir, which the next create sweeps.
  const temp = path.join(stagingDir, `${path.basename(options.archivePath)}.tmp-${crypto.randomBytes(6).toString("hex")}`);
  // The first snapshot starts before anything is awaited, so it runs while the archive is opened and directories
  // and plain files stream (and while createBackup loads the ledger's storage core beside it).
  if (dbIndexes.length > 0) startSnapshot(dbIndexes[0]!);
  let out: fs.promises.FileHandle;
  try {
    // Read-write: a manifest that outgrows its room moves the payload within the file.
    out = await fs.promises.open(temp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_RDWR, 0o600);
  } catch (error) {
    await Promise.allSettled([...snapshots.values()].flatMap((snap) => [snap.taken, snap.info, snap.fingerprint]));
    throw error;
  }
  const reserve = options.headReserve ?? headReserve(entries);
  let position = reserve;
  // Reads and writes here are synchronous on purpose: the libuv pool (4 threads) is busy compressing, and queueing
  // each 1 MiB read or write behind those jobs starved the stream. Page-cache I/O on this thread is cheap.
  const compressor = new ParallelCompressor(
    async (chunk) => {
      writeFullySync(out.fd, chunk, position);
      position += chunk.length;
    },
    { compression, checkSegments: options.precheck === true, releaseWritten: true },
  );
  const readBuffer = Buffer.allocUnsafeSlow(READ_CHUNK);

  /** Streams one file's entry (header, body, padding); `segment` makes the body a reusable run of blocks. */
  async function writeFile(entry: WalkFile, source: string, sizeHint: number | undefined, segment: boolean, stamp = false): Promise<{ file: ManifestFile; segment: Promise<WrittenSegment> | null; sqlite: boolean; stamp: ManifestFileStamp | null } | null> {
    const fd = openRegularFile(source);
    if (fd === null) {
      parts.warnings.push(`${entry.absPath} vanished before it was archived; it is not in the archive.`);
      parts.skipped.push({ kind: "file", path: entry.absPath, reason: "vanished during the backup" });
      return null;
    }
    try {
      const st = fs.fstatSync(fd);
      // Stat identity for a later run's reuse, taken before the first byte is read (see file-reuse.ts).
      const takenAt = Date.now();
      const before = stamp ? fs.fstatSync(fd, { bigint: true }) : null;
      const size = sizeHint ?? st.size;
      await compressor.write(encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "File", size, mode: entry.mode, mtime: st.mtime }));
      // A plain file's body is not decoded twice: verify decodes it with the stream around it.
      if (segment) compressor.beginSegment(!stamp);
      const hash = crypto.createHash("sha256");
      let done = 0;
      let sqlite = false;
      let stable: ManifestFileStamp | null = null;
      while (done < size) {
        // One read buffer for the whole run: the compressor copies each chunk before write() resolves.
        const bytesRead = fs.readSync(fd, readBuffer, 0, Math.min(READ_CHUNK, size - done), done);
        if (bytesRead === 0) break;
        const chunk = readBuffer.subarray(0, bytesRead);
        if (done === 0) sqlite = chunk.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER);
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
        const after = fs.fstatSync(fd);
        if (after.size !== st.size || after.mtimeMs !== st.mtimeMs) {
          parts.warnings.push(`${entry.absPath} changed while it was archived; the archived copy may be inconsistent.`);
        } else if (before && BigInt(size) === before.size) {
          stable = stableStamp(before, fs.fstatSync(fd, { bigint: true }), takenAt);
        }
      }
      await compressor.write(paddingFor(size));
      const written = segment ? compressor.endSegment() : null;
      written?.catch(() => undefined);
      return { file: { archivePath: entry.archivePath, size, sha256: hash.digest("hex"), mode: entry.mode, mtimeMs: st.mtimeMs }, segment: written, sqlite, stamp: stable };
    } finally {
      fs.closeSync(fd);
    }
  }

  /** An unchanged database: its header, then the earlier archive's compressed body copied as it is. */
  async function copyReused(entry: WalkFile, candidate: ReuseCandidate): Promise<void> {
    const { snapshot } = candidate;
    options.onProgress?.({ phase: "archive", bytesDone, bytesTotal, path: `${entry.archivePath} (unchanged, reused)` });
    await compressor.write(encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "File", size: snapshot.file.size, mode: snapshot.file.mode, mtime: new Date(snapshot.file.mtimeMs) }));
    const segment = compressor.copySegment(candidate.archivePath, snapshot.segment, candidate.lent === true);
    segment.catch(() => undefined);
    bytesDone += entry.size;
    // The earlier manifest's record (checked to name this very database), body and source state included: the bytes are the same.
    const database: ManifestDatabase = { ...snapshot.database, role: entry.database?.role ?? "other", agentId: entry.database?.agentId ?? null, sourcePath: entry.absPath, sourceState: snapshot.fingerprint };
    parts.files.push(snapshot.file);
    parts.databases.push(database);
    precheck(snapshot.file, segment, true);
    reused.push(entry.absPath);
    reusable.push(kept(segment.then((s) => ({ ...snapshot, sourcePath: entry.absPath, database, segment: s }))));
  }

  /** Records a plain file's body and stamp in its manifest entry once the segment is written (the manifest is built after). */
  const recordBody = (file: ManifestFile, segment: Promise<WrittenSegment>, stamp: ManifestFileStamp): void => {
    bodies.push(
      kept(
        segment.then((s) => {
          file.body = { compression, offset: s.start, length: s.length, sha256: s.sha256 };
          file.sourceState = stamp;
        }),
      ),
    );
  };

  /** An unchanged plain file: its header, then the earlier archive's compressed body (checked by reuseFiles.take, or lent: by the verify). */
  async function copyFileBody(entry: WalkFile, earlier: ReusedBody): Promise<void> {
    // A lent body was not hashed when it was read: only the verify that follows may check it.
    if (earlier.lent && !options.precheck) throw new Error(`internal: ${entry.archivePath} was lent unhashed to a run that does not verify`);
    const file: ManifestFile = { ...earlier.file };
    await compressor.write(encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "File", size: file.size, mode: file.mode, mtime: new Date(file.mtimeMs) }));
    const segment = "bytes" in earlier ? compressor.insertSegment(earlier.bytes, earlier.sha256) : compressor.copySegment(earlier.range.archivePath, { ...earlier.range, sha256: earlier.sha256 });
    segment.catch(() => undefined);
    await compressor.room();
    parts.files.push(file);
    bytesDone += file.size;
    progress(entry.archivePath);
    precheck(file, segment, false, earlier.lent === true);
    recordBody(file, segment, earlier.stamp);
    reusedFiles += 1;
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
        // A file this large gets a body of its own: copied unread by a later run while it stays unchanged.
        const own = entry.size >= PLAIN_SEGMENT_MIN;
        const earlier = own ? (options.reuseFiles?.take(entry) ?? null) : null;
        if (earlier) {
          await copyFileBody(entry, earlier);
          continue;
        }
        const written = await writeFile(entry, entry.absPath, undefined, own, own);
        if (!written) continue;
        parts.files.push(written.file);
        // A plain file that turned out to be SQLite (swapped in after the walk) is not lent to later runs.
        if (written.segment && !written.sqlite && written.stamp) recordBody(written.file, written.segment, written.stamp);
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
      if (written.segment) precheck(written.file, written.segment, written.sqlite);
      const fingerprint = await snap.fingerprint;
      if (fingerprint && written.segment) {
        const file = written.file;
        // The archive's own manifest is what a later run checks before copying this body (see snapshot-reuse.ts):
        // the compressed bytes' sha256 and the live database's state, both known before the manifest is built.
        reusable.push(
          kept(
            written.segment.then((segment) => {
              database.body = { compression, length: segment.length, sha256: segment.sha256 };
              database.sourceState = fingerprint;
              return { sourcePath: entry.absPath, fingerprint, segment, file, database };
            }),
          ),
        );
      }
    }
    await compressor.write(TAR_EOF);
  }

  let payloadBytes: number;
  let published = false;
  try {
    try {
      await writeTar();
      payloadBytes = await compressor.end();
    } finally {
      await compressor.settle();
      // Settle look-ahead snapshots (a failure may leave one running) before the staging dir goes away.
      await Promise.allSettled([...snapshots.values()].flatMap((snap) => [snap.taken, snap.info, snap.fingerprint]));
    }
    const segments = (await Promise.all(reusable)).filter((r): r is ReusableSnapshot => r !== null);
    const runs = (await Promise.all(prechecked)).filter((r) => r.segment.length > 0);
    await Promise.all(bodies);

    const { manifest, bytes: manifestBytes } = fitManifest(options.manifestFor(parts));
    const head = await compressBlock(
      compression,
      Buffer.concat([
        encodeEntryHeader({ path: `${root}/${MANIFEST_NAME}`, type: "File", size: manifestBytes.length, mode: 0o600, mtime: options.createdAt }),
        manifestBytes,
        paddingFor(manifestBytes.length),
      ]),
    );
    options.onProgress?.({ phase: "finalize", bytesDone, bytesTotal, path: options.archivePath });
    let payloadStart = reserve;
    const filler = headFiller(compression, reserve - head.length);
    if (filler) {
      await writeFully(out, Buffer.concat([head, filler]), 0);
    } else {
      // The manifest outgrew its reserved room: move the payload right behind it (rare; costs one copy).
      await moveRange(out, reserve, payloadBytes, head.length);
      await writeFully(out, head, 0);
      await out.truncate(head.length + payloadBytes);
      payloadStart = head.length;
    }
    await out.sync();
    await out.close();
    publishNoClobber(temp, options.archivePath);
    published = true;
    const sizeBytes = fs.statSync(options.archivePath).size;
    if (sizeBytes !== payloadStart + payloadBytes) {
      throw new OperationError("archive_size_mismatch", `${options.archivePath} is ${sizeBytes} bytes, expected ${payloadStart + payloadBytes}; the disk may be failing.`, { path: options.archivePath });
    }
    const shifted = segments.map((s) => ({ ...s, segment: { ...s.segment, start: s.segment.start + payloadStart } }));
    const precheckedRuns = runs.map((r) => ({ ...r, segment: { ...r.segment, start: r.segment.start + payloadStart } }));
    return { manifest, sizeBytes, reusable: shifted, reused, prechecked: precheckedRuns, payloadStart, reusedFiles, fileBodies: bodies.length };
  } finally {
    if (!published) {
      await out.close().catch(() => undefined);
      fs.rmSync(temp, { force: true });
      // Look-ahead snapshots not yet written (settled above): a caller may write the archive again in this staging dir.
      for (const snap of snapshots.values()) fs.rmSync(snap.file, { force: true });
    }
  }
}

/**
 * Opens a file to archive without following a link and without blocking (a FIFO swapped in after the walk would
 * hang a plain open); null when it vanished or is no longer a regular file.
 */
function openRegularFile(file: string): number | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (isVanished(error) || (error as NodeJS.ErrnoException).code === "ELOOP") return null;
    throw error;
  }
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    return null;
  }
  return fd;
}

function writeFullySync(fd: number, chunk: Buffer, position: number): void {
  for (let offset = 0; offset < chunk.length; ) offset += fs.writeSync(fd, chunk, offset, chunk.length - offset, position + offset);
}
