// Writes the .tar.gz: payload streamed (hashed on the way) into one gzip member, manifest member in front, atomic publish.
//
// The manifest must be the first tar entry (it caps every later entry when the archive is read back), but
// it is only known once the payload has been hashed. So the payload is written first (as gzip members,
// compressed in parallel blocks) in the staging dir; the archive is then [gzip(manifest entry)] +
// [payload members], a valid multi-member gzip stream that gzip, GNU tar and Node read as one. Live files
// are read exactly once.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { describeError, OperationError } from "../core/errors.js";
import { fsyncDir } from "../state/private-fs.js";
import type { SqliteJobRunner } from "../state/sqlite-jobs.js";
import type { DatabaseFileInfo } from "../state/sqlite-snapshot.js";
import { databaseRecord } from "./manifest.js";
import { createParallelGzip } from "./parallel-gzip.js";
import { encodeEntryHeader, paddingFor, TAR_EOF } from "./tar-format.js";
import { MANIFEST_NAME, type BackupManifest, type ManifestDatabase, type ManifestDirectory, type ManifestFile, type ManifestSymlink, type ProgressCallback, type SkippedItem } from "./types.js";
import { isVanished, type WalkEntry, type WalkFile } from "./walk-assets.js";
import { writeFully } from "./file-writer.js";

const gzip = promisify(zlib.gzip);
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
  onProgress?: ProgressCallback;
  /** Builds the manifest from what was actually archived. */
  manifestFor(parts: PayloadParts): BackupManifest;
}

export interface WriteArchiveResult {
  manifest: BackupManifest;
  sizeBytes: number;
}

interface Snapshot {
  file: string;
  /** VACUUM INTO finished (the file is complete and fsynced). */
  taken: Promise<unknown>;
  /** integrity_check, page stats and row counts of the snapshot. */
  info: Promise<DatabaseFileInfo>;
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
  const { entries, runner, root, stagingDir } = options;
  const parts: PayloadParts = { directories: [], files: [], symlinks: [], databases: [], skipped: [], warnings: [] };
  const bytesTotal = entries.reduce((n, e) => n + (e.type === "file" ? e.size : 0), 0);
  let bytesDone = 0;
  const progress = (p: string): void => options.onProgress?.({ phase: "archive", bytesDone, bytesTotal, path: p });

  // Snapshots run on the worker one database ahead of the compressor. A database streams as soon as its
  // VACUUM INTO is done; its integrity_check and row counts run meanwhile and are awaited before it is
  // recorded (a failure still aborts the whole archive).
  const dbIndexes = entries.flatMap((e, i) => (e.type === "file" && e.database ? [i] : []));
  const snapshots = new Map<number, Snapshot>();
  const startSnapshot = (index: number): Snapshot => {
    let started = snapshots.get(index);
    if (!started) {
      const entry = entries[index] as WalkFile;
      const file = path.join(stagingDir, `snapshot-${index}.sqlite`);
      const taken = runner.run({ op: "snapshot", source: entry.absPath, dest: file });
      const info = taken.then(() => runner.run({ op: "describe", file, check: "integrity_check" }));
      taken.catch(() => undefined);
      info.catch(() => undefined);
      started = { file, taken, info };
      snapshots.set(index, started);
    }
    return started;
  };

  async function* fileBody(entry: WalkFile, source: string, sizeHint: number | undefined, record: (file: ManifestFile) => void): AsyncGenerator<Buffer> {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(source, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    } catch (error) {
      if (!isVanished(error)) throw error;
      parts.warnings.push(`${entry.absPath} vanished before it was archived; it is not in the archive.`);
      parts.skipped.push({ kind: "file", path: entry.absPath, reason: "vanished during the backup" });
      return;
    }
    try {
      const st = await handle.stat();
      const size = sizeHint ?? st.size;
      yield encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "File", size, mode: entry.mode, mtime: st.mtime });
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
        yield chunk;
      }
      if (done < size) {
        // The file shrank while being read: the header already promised `size` bytes, so pad and say so.
        const zeros = Buffer.alloc(size - done);
        hash.update(zeros);
        yield zeros;
        parts.warnings.push(`${entry.absPath} shrank while it was archived; the archived copy is padded and may be inconsistent.`);
      } else {
        const after = await handle.stat();
        if (after.size !== st.size || after.mtimeMs !== st.mtimeMs) {
          parts.warnings.push(`${entry.absPath} changed while it was archived; the archived copy may be inconsistent.`);
        }
      }
      yield paddingFor(size);
      record({ archivePath: entry.archivePath, size, sha256: hash.digest("hex"), mode: entry.mode, mtimeMs: st.mtimeMs });
    } finally {
      await handle.close();
    }
  }

  async function* tarStream(): AsyncGenerator<Buffer> {
    for (let i = 0; i < entries.length; i += 1) {
      const entry = entries[i]!;
      if (entry.type === "dir") {
        parts.directories.push({ archivePath: entry.archivePath });
        yield encodeEntryHeader({ path: `${root}/${entry.archivePath}`, type: "Directory", size: 0, mode: 0o700, mtime: options.createdAt });
        continue;
      }
      if (entry.type === "symlink") {
        parts.symlinks.push({ archivePath: entry.archivePath, target: entry.target });
        continue;
      }
      if (!entry.database) {
        yield* fileBody(entry, entry.absPath, undefined, (f) => parts.files.push(f));
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
      let archived: ManifestFile | undefined;
      yield* fileBody(entry, snap.file, fs.statSync(snap.file).size, (f) => {
        archived = f;
      });
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
      if (!archived) continue;
      parts.files.push(archived);
      parts.databases.push(databaseRecord(entry, info, { size: archived.size, sha256: archived.sha256, integrity: "ok" }));
    }
    yield TAR_EOF;
  }

  // Not fsynced: the payload member is copied into the archive, which is.
  const payloadFile = path.join(stagingDir, "payload.tar.gz");
  try {
    await pipeline(
      Readable.from(tarStream(), { objectMode: false }),
      createParallelGzip(),
      fs.createWriteStream(payloadFile, { flags: "wx", mode: 0o600 }),
    );
  } finally {
    // Settle look-ahead snapshots (a failure may leave one running) before the staging dir goes away.
    await Promise.allSettled([...snapshots.values()].flatMap((snap) => [snap.taken, snap.info]));
  }

  const manifest = options.manifestFor(parts);
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, "utf8");
  const head = await gzip(
    Buffer.concat([
      encodeEntryHeader({ path: `${root}/${MANIFEST_NAME}`, type: "File", size: manifestBytes.length, mode: 0o600, mtime: options.createdAt }),
      manifestBytes,
      paddingFor(manifestBytes.length),
    ]),
  );

  options.onProgress?.({ phase: "finalize", bytesDone, bytesTotal, path: options.archivePath });
  const temp = `${options.archivePath}.tmp-${crypto.randomBytes(6).toString("hex")}`;
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
  return { manifest, sizeBytes: fs.statSync(options.archivePath).size };
}
