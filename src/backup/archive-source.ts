// The archive's bytes as the one pass reads them: opened without blocking, decoded range by range, pre-checked runs hashed.
import fs from "node:fs";
import { pipeline } from "node:stream";
import { describeError, NotFoundError, OperationError, UsageError } from "../core/errors.js";
import { decodeSmallSync, MAGIC_BYTES, releaseDecodedChunk, type Decompressor } from "./compression.js";
import { sha256OfRange } from "./hash-range.js";
import { ManifestProblem } from "./manifest.js";
import { TarProblem, type PrecheckedBody } from "./tar-format.js";
import { ZstdWindowError } from "./zstd-frames.js";

/** Why an archive was refused: the message names the first problem found. */
export class ArchiveProblem extends Error {}

/** A lent body (PrecheckedRun.lent) whose bytes do not hash to the earlier archive's record: that archive lent bad bytes. */
export class LentBodyMismatch extends ArchiveProblem {
  constructor(
    message: string,
    readonly archivePath: string,
  ) {
    super(message);
  }
}

function notAnArchive(file: string, st: fs.Stats): UsageError {
  const kind = st.isDirectory() ? "a directory" : st.isFIFO() ? "a FIFO (named pipe)" : st.isSocket() ? "a socket" : st.isCharacterDevice() || st.isBlockDevice() ? "a device" : "not a regular file";
  return new UsageError(`${file} is ${kind}, not an archive; pass the path of a .tar.gz or .tar.zst file (nothing was read).`, "not_a_file", { path: file });
}

function unreadable(file: string, error: unknown): OperationError {
  return new OperationError("archive_unreadable", `Cannot read archive ${file} (${describeError(error)}); check the path and its permissions.`, { path: file, cause: error });
}

/**
 * Size of the archive at `file`, refused at once when it is missing or not a regular file (a FIFO would block
 * the read forever, a directory fails with EISDIR). Symlinks the user names are followed.
 */
export function checkArchiveFile(file: string): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new NotFoundError(`Archive ${file} does not exist; check the path (\`openclaw-state backup list\` shows known archives).`, { path: file });
    throw unreadable(file, error);
  }
  if (!st.isFile()) throw notAnArchive(file, st);
  return st.size;
}

/** Opens without blocking (O_NONBLOCK: a FIFO swapped in after the check cannot hang us) and re-checks the type. */
export function openArchive(file: string): number {
  checkArchiveFile(file);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw unreadable(file, error);
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    fs.closeSync(fd);
    throw notAnArchive(file, st);
  }
  return fd;
}

export function readMagic(fd: number): Buffer {
  const buf = Buffer.alloc(MAGIC_BYTES);
  const n = fs.readSync(fd, buf, 0, buf.length, 0);
  return buf.subarray(0, n);
}

/**
 * A payload body the caller checked already (createBackup: a database segment whose compressed blocks were decoded
 * and compared with their input as they were written). The pass hashes the segment's compressed bytes as they are
 * on disk instead of decoding them: equal to `segment.sha256`, they are the bytes that were proven to decode to
 * content hashing to `contentSha256`, which must also be the manifest's sha256 for `archivePath`. Only ever built
 * from the caller's own memory, never from anything an archive says.
 */
export interface PrecheckedRun extends PrecheckedBody {
  archivePath: string;
  /** The body's compressed bytes: offset in the archive file, length and sha256. */
  segment: { start: number; length: number; sha256: string };
  contentSha256: string;
  /** The body starts with the SQLite header (decided where it was written). */
  sqlite: boolean;
  /**
   * Copied from an earlier archive without being hashed there: `segment.sha256` is that archive's manifest record,
   * so this pass's hash is the one check of the lent bytes, and a mismatch is a LentBodyMismatch (the caller writes
   * the archive again, checking lent bytes before it copies them).
   */
  lent?: boolean;
}

const keepOpen = { open: fs.open, read: fs.read, close: (_fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => callback(null) };

/** A compressed byte range [start, end) decoded on its own (it starts and ends on gzip member / zstd frame boundaries). */
async function* decodeRange(fd: number, decompressor: Decompressor, start: number, end: number | undefined, whole: boolean): AsyncGenerator<Buffer> {
  const inflater = decompressor.create({ long: whole && (end === undefined || end - start >= LONG_RANGE) });
  // The fd is shared by every range and closed by the caller: the stream's close is a no-op (destroy() would close it).
  const source = fs.createReadStream("", { fd, fs: keepOpen, start, end: end === undefined ? undefined : end - 1, highWaterMark: 1024 * 1024, autoClose: false });
  pipeline(source, inflater, () => undefined);
  try {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      yield chunk;
      // Asked for the next chunk, the pass is done with this one (what it keeps, it copies): its memory goes now.
      releaseDecodedChunk(inflater, chunk);
    }
  } finally {
    inflater.destroy();
    source.destroy();
    // The caller closes the shared fd next: a read still in flight must not land on a reused descriptor number.
    if (!source.closed) await new Promise<void>((resolve) => source.once("close", () => resolve()));
  }
}

/** A range of a whole pass this large or open-ended is a long read (DecodeOptions.long: the zstd CLI, where there is one). */
const LONG_RANGE = 1024 * 1024;

/** Compressed gaps between pre-checked runs up to this size (a tar header or a few small files) are decoded synchronously. */
const SMALL_GAP = 64 * 1024;

/** The gap [start, end) decoded on this thread, or null when anything is unusual (the streaming path then decodes it and reports). */
function decodeGapSync(fd: number, decompressor: Decompressor, start: number, end: number, room: number): Buffer | null {
  try {
    const bytes = Buffer.allocUnsafe(end - start);
    if (fs.readSync(fd, bytes, 0, bytes.length, start) !== bytes.length) return null;
    return decodeSmallSync(decompressor.name, bytes, Math.max(1, Math.min(room + 1, 64 * 1024 * 1024)));
  } catch {
    return null;
  }
}

/**
 * The decompressed stream, refused as soon as it grows past `limit()` bytes (decompression bombs never get far).
 * Pre-checked runs are checked by the sha256 of their compressed bytes and yielded as they are, not decoded.
 * A yielded chunk's memory may be freed as soon as the consumer asks for the next one (releaseDecodedChunk): the
 * consumer copies whatever it keeps longer (readTar's partial block, a file's first bytes, the manifest's body).
 */
export async function* decompressed(fd: number, decompressor: Decompressor, limit: () => number, prechecked: readonly PrecheckedRun[], whole: boolean): AsyncGenerator<Buffer | PrecheckedRun> {
  let total = 0;
  const grow = (n: number): void => {
    total += n;
    if (total > limit()) throw new ArchiveProblem(`the archive inflates past the ${limit()} bytes its manifest accounts for (decompression bomb or unlisted data)`);
  };
  let position = 0;
  try {
    for (const run of [...prechecked].sort((a, b) => a.segment.start - b.segment.start)) {
      if (run.segment.start < position) throw new ArchiveProblem(`the pre-checked bytes of ${run.archivePath} overlap the previous entry`);
      if (run.segment.start > position) {
        const small = run.segment.start - position <= SMALL_GAP ? decodeGapSync(fd, decompressor, position, run.segment.start, limit() - total) : null;
        if (small) {
          grow(small.length);
          yield small;
        } else {
          for await (const chunk of decodeRange(fd, decompressor, position, run.segment.start, whole)) {
            grow(chunk.length);
            yield chunk;
          }
        }
      }
      const read = sha256OfRange(fd, run.segment.start, run.segment.length);
      if (read.bytes !== run.segment.length || read.sha256 !== run.segment.sha256) {
        if (run.lent) throw new LentBodyMismatch(`the compressed bytes of ${run.archivePath}, copied from an earlier archive, do not hash to what its manifest records`, run.archivePath);
        throw new ArchiveProblem(`the compressed bytes of ${run.archivePath} differ from the ones written (sha256 mismatch; the disk may be failing)`);
      }
      grow(run.length);
      yield run;
      position = run.segment.start + run.segment.length;
    }
    for await (const chunk of decodeRange(fd, decompressor, position, undefined, whole)) {
      grow(chunk.length);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ArchiveProblem || error instanceof TarProblem || error instanceof ManifestProblem) throw error;
    // Not damage: a frame needing more window than we accept; the message names the limit and the way out.
    if (error instanceof ZstdWindowError) throw new ArchiveProblem(error.message);
    if (decompressor.isCorrupt(error)) throw new ArchiveProblem(`the archive is truncated or corrupt (${decompressor.name}: ${describeError(error)})`);
    throw error;
  } finally {
    fs.closeSync(fd);
  }
}
