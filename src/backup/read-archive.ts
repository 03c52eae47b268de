// The one streaming pass over an archive shared by verify and restore: every rule that refuses a hostile archive.
import crypto from "node:crypto";
import fs from "node:fs";
import { pipeline } from "node:stream";
import { describeError, NotFoundError, OperationError, UsageError } from "../core/errors.js";
import { roleAtArchivePath, SQLITE_SIDECAR_SUFFIXES } from "./archive-layout.js";
import { decodeSmallSync, decompressorFor, MAGIC_BYTES, type Decompressor } from "./compression.js";
import { ZstdWindowError } from "./zstd-frames.js";
import { sha256OfRange } from "./hash-range.js";
import { MAX_MANIFEST_BYTES, ManifestProblem, validateManifest } from "./manifest.js";
import { indexOpenclawArchive, OpenclawArchiveProblem, type OpenclawLayout } from "./openclaw-archive.js";
import { BLOCK, readTar, TarProblem, type PrecheckedBody, type TarBody, type TarEntry } from "./tar-format.js";
import { MANIFEST_NAME, type BackupManifest, type DatabaseRole, type ManifestDatabase, type ManifestFile, type ProgressCallback } from "./types.js";

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

/** Our layout's first rule failed: the archive may still be one of `openclaw backup create` (manifest last). */
class FirstEntryNotManifest extends ArchiveProblem {}

export interface FileSink {
  write(chunk: Buffer): void | Promise<void>;
  /** The bytes were complete and their sha256 matched. */
  finish(): Promise<void>;
  /** The pass failed (or this file's hash did not match): drop what was written. */
  abort(): Promise<void>;
}

export interface ArchiveSink {
  /** The validated manifest, before any payload entry is read. */
  manifest?(manifest: BackupManifest): void | Promise<void>;
  /** Where a listed file's bytes go (null: hash only); `database` is set for every file with the SQLite header. */
  file(file: ManifestFile, database: ArchivedDatabase | undefined): Promise<FileSink | null>;
  directory?(archivePath: string): void | Promise<void>;
}

export interface ArchivePassResult {
  manifest: BackupManifest;
  files: number;
  bytes: number;
}

/** Per-entry allowance for header blocks (ustar + a pax record) when bounding the inflated size. */
const HEADER_ALLOWANCE = BLOCK * 4;
const SLACK = 1024 * 1024;
const SQLITE_HEADER = Buffer.from("SQLite format 3\u0000", "latin1");

/** A database found in the payload: by its SQLite header, whatever the manifest says. */
export interface ArchivedDatabase {
  archivePath: string;
  /** By location in the state asset first, then the manifest's record; "other" for any other SQLite file. */
  role: DatabaseRole;
  agentId: string | null;
  /** The manifest's record when it lists the file as a database (row counts to compare). */
  record: ManifestDatabase | undefined;
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
function openArchive(file: string): number {
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

function readMagic(fd: number): Buffer {
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
    yield* inflater as AsyncIterable<Buffer>;
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
 */
async function* decompressed(fd: number, decompressor: Decompressor, limit: () => number, prechecked: readonly PrecheckedRun[], whole: boolean): AsyncGenerator<Buffer | PrecheckedRun> {
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

function entryRelPath(entry: TarEntry, root: string | undefined): string {
  const raw = entry.type === "Directory" ? entry.path.replace(/\/$/, "") : entry.path;
  if (raw.startsWith("/") || /^[A-Za-z]:[\\/]/.test(raw)) throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} has an absolute path`);
  const segments = raw.split("/");
  if (segments.includes("..")) throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} has a path traversal ("..")`);
  if (raw.includes("\0") || segments.some((s) => s === "" || s === ".")) throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} has a non-normalized path`);
  if (root === undefined) return raw;
  if (segments[0] !== root || segments.length < 2) throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} is outside the archive root ${root}/`);
  return segments.slice(1).join("/");
}

function checkType(entry: TarEntry): "file" | "dir" {
  switch (entry.type) {
    case "File":
    case "OldFile":
      return "file";
    case "Directory":
      return "dir";
    case "SymbolicLink":
      throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} is a symbolic link (links are never extracted)`);
    case "Link":
      throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} is a hard link (links are never extracted)`);
    case "CharacterDevice":
    case "BlockDevice":
      throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} is a device node`);
    case "FIFO":
      throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} is a FIFO`);
    default:
      throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} has an unsupported type (${entry.type})`);
  }
}

const discard: TarBody<PrecheckedRun> = { write() {}, end() {} };

/**
 * Whether a payload file is a database: its SQLite header decides, whatever the manifest says. A file the
 * manifest calls a database, or one at the global/agent database path, must carry the header.
 */
function classifyPayloadFile(rel: string, listed: ManifestFile, record: ManifestDatabase | undefined, sqlite: boolean): ArchivedDatabase | undefined {
  const located = roleAtArchivePath(rel);
  if (!sqlite) {
    if (record) throw new ArchiveProblem(`${rel} is listed as a database but is not a SQLite file`);
    if (located && listed.size > 0) throw new ArchiveProblem(`${rel} sits at the ${located.role} database path but is not a SQLite file`);
    return undefined;
  }
  return { archivePath: rel, role: located?.role ?? record?.role ?? "other", agentId: located?.agentId ?? record?.agentId ?? null, record };
}

/**
 * Streams the archive once: manifest first (validated, bounded), then each payload entry checked against it
 * (type, path, no duplicates, size, sha256) and handed to the sink; at the end nothing listed may be missing.
 * Throws ArchiveProblem naming the first problem; the sink's open file is aborted on any failure. `prechecked`
 * bodies are checked by their compressed bytes (see PrecheckedRun); their sink must be hash-only (null).
 */
export async function readArchive(archivePath: string, sink: ArchiveSink, onProgress?: ProgressCallback, phase: "verify" | "extract" = "verify", prechecked: readonly PrecheckedRun[] = []): Promise<ArchivePassResult> {
  let why: string;
  try {
    return await readArchivePass(archivePath, sink, onProgress, phase, prechecked, undefined);
  } catch (error) {
    if (!(error instanceof FirstEntryNotManifest)) throw error;
    why = error.message;
  }
  const layout = await openclawLayout(archivePath, why);
  return readArchivePass(archivePath, sink, onProgress, phase, [], layout);
}

/**
 * The last manifest validated, by its exact text: restore reads the manifest (to plan), then the whole archive, and
 * the second pass meets the same bytes — validating them again cost ~40 ms of CPU for 1,500 files. Byte-identical
 * text validates to the same result (validateManifest depends on nothing else); any other text is parsed and
 * validated in full. Callers only read the manifest, so the two passes may share it.
 */
let lastManifest: { text: string; manifest: BackupManifest } | undefined;

function parseManifest(text: string): BackupManifest {
  if (lastManifest?.text === text) return lastManifest.manifest;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ArchiveProblem(`the manifest is not valid JSON (${describeError(error)})`);
  }
  const manifest = validateManifest(parsed);
  lastManifest = { text, manifest };
  return manifest;
}

/** The last archive indexed as OpenClaw's (restore reads the manifest, then the archive: one first pass, not two). */
let lastLayout: { key: string; layout: OpenclawLayout } | undefined;

/**
 * The first pass over an archive of `openclaw backup create` (see openclaw-archive.ts). Whatever it finds is
 * checked again by the ordinary pass: the cache only saves time, a changed file fails on its sha256s.
 */
async function openclawLayout(archivePath: string, why: string): Promise<OpenclawLayout> {
  const st = fs.statSync(archivePath);
  const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${archivePath}`;
  if (lastLayout?.key === key) return lastLayout.layout;
  try {
    const layout = await indexOpenclawArchive(archivePath);
    lastLayout = { key, layout };
    return layout;
  } catch (error) {
    if (!(error instanceof OpenclawArchiveProblem)) throw error;
    throw new ArchiveProblem(`${error.message} (read as an archive of \`openclaw backup create\`, because ${why})`);
  }
}

async function readArchivePass(
  archivePath: string,
  sink: ArchiveSink,
  onProgress: ProgressCallback | undefined,
  phase: "verify" | "extract",
  prechecked: readonly PrecheckedRun[],
  layout: OpenclawLayout | undefined,
  /** False when only the manifest is wanted (a short read: no zstd CLI started for it). */
  whole = true,
): Promise<ArchivePassResult> {
  const fd = openArchive(archivePath);
  let decompressor: Decompressor | null;
  try {
    decompressor = decompressorFor(readMagic(fd), archivePath);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (!decompressor) {
    fs.closeSync(fd);
    throw new ArchiveProblem("the file is not a gzip, zstd or tar archive (a backup is a .tar.zst, .tar.gz or .tar written by `openclaw-state backup create`)");
  }
  let limit = MAX_MANIFEST_BYTES + HEADER_ALLOWANCE + SLACK;
  let root: string | undefined;
  let manifest: BackupManifest | undefined;
  let files = new Map<string, ManifestFile>();
  let directories = new Set<string>();
  let databases = new Map<string, ManifestDatabase>();
  const seen = new Set<string>();
  /** Payload files that start with the SQLite header: databases, whatever the manifest says. */
  const foundDatabases: string[] = [];
  let bytes = 0;
  let fileCount = 0;
  let totalBytes = 0;
  let openSink: FileSink | null = null;
  let theirManifestSeen = false;
  if (layout) {
    // OpenClaw's manifest comes last: ours for it (built by the first pass) governs from the first entry on.
    const m = layout.manifest;
    root = layout.root;
    manifest = m;
    files = new Map(m.files.map((f) => [f.archivePath, f]));
    directories = new Set(m.directories.map((d) => d.archivePath));
    totalBytes = m.files.reduce((n, f) => n + f.size, 0);
    limit = layout.inflatedBytes;
    await sink.manifest?.(m);
  }

  /** An entry of an OpenClaw archive that is read but not extracted (its manifest, a link, a folder above an asset); else its path in our layout. */
  const adopt = (entry: TarEntry, lay: OpenclawLayout): TarBody<PrecheckedRun> | string => {
    const raw = entry.type === "Directory" ? entry.path.replace(/\/+$/, "") : entry.path;
    if (raw === lay.root && entry.type === "Directory") return discard;
    const rel = entryRelPath(entry, lay.root);
    if (rel === MANIFEST_NAME) {
      if (theirManifestSeen) throw new ArchiveProblem(`a second ${MANIFEST_NAME} entry appears at byte ${entry.offset}`);
      theirManifestSeen = true;
      if (checkType(entry) !== "file" || entry.size !== lay.manifestEntry.size) throw new ArchiveProblem(`${MANIFEST_NAME} changed between the two passes over the archive`);
      const hash = crypto.createHash("sha256");
      return {
        write: (chunk) => void hash.update(chunk),
        end: () => {
          if (hash.digest("hex") !== lay.manifestEntry.sha256) throw new ArchiveProblem(`${MANIFEST_NAME} changed between the two passes over the archive`);
        },
      };
    }
    if (entry.type === "SymbolicLink") {
      if (lay.links.get(rel) !== entry.linkpath) throw new ArchiveProblem(`entry ${JSON.stringify(entry.path)} is a symbolic link the first pass did not see`);
      return discard;
    }
    const mapped = lay.map(rel);
    if (mapped !== null) return `${lay.root}/${mapped}`;
    if (entry.type === "Directory" && lay.passThrough.has(rel)) return discard;
    throw new ArchiveProblem(`entry ${rel} is outside every asset of the manifest`);
  };

  const visitor = {
    entry: async (entry: TarEntry): Promise<TarBody<PrecheckedRun>> => {
      if (!manifest) {
        // The manifest must come first: it caps every later entry's size before its bytes are inflated.
        const rel = entryRelPath(entry, undefined);
        const parts = rel.split("/");
        if (parts.length !== 2 || parts[1] !== MANIFEST_NAME || checkType(entry) !== "file") {
          throw new FirstEntryNotManifest(`the first entry is ${JSON.stringify(entry.path)}, not <root>/${MANIFEST_NAME}`);
        }
        if (entry.size > MAX_MANIFEST_BYTES) throw new ArchiveProblem(`the manifest is ${entry.size} bytes, more than the ${MAX_MANIFEST_BYTES} allowed`);
        const chunks: Buffer[] = [];
        return {
          write: (chunk) => void chunks.push(chunk),
          end: async () => {
            const m = parseManifest(Buffer.concat(chunks).toString("utf8"));
            if (m.archiveRoot !== parts[0]) throw new ArchiveProblem(`the manifest names root ${m.archiveRoot} but the archive root is ${parts[0]}`);
            root = parts[0];
            manifest = m;
            files = new Map(m.files.map((f) => [f.archivePath, f]));
            directories = new Set(m.directories.map((d) => d.archivePath));
            databases = new Map(m.databases.map((d) => [d.archivePath, d]));
            totalBytes = m.files.reduce((n, f) => n + f.size, 0);
            const padded = m.files.reduce((n, f) => n + Math.ceil(f.size / BLOCK) * BLOCK, 0);
            limit = Math.ceil(entry.size / BLOCK) * BLOCK + HEADER_ALLOWANCE * (1 + m.files.length + m.directories.length) + padded + SLACK;
            await sink.manifest?.(m);
          },
        };
      }
      if (layout) {
        const adopted = adopt(entry, layout);
        if (typeof adopted !== "string") return adopted;
        entry = { ...entry, path: adopted };
      }
      const rel = entryRelPath(entry, root);
      const type = checkType(entry);
      if (rel === MANIFEST_NAME) throw new ArchiveProblem(`a second ${MANIFEST_NAME} entry appears at byte ${entry.offset}`);
      if (seen.has(rel)) throw new ArchiveProblem(`entry ${rel} appears twice (duplicate entry)`);
      seen.add(rel);
      if (type === "dir") {
        if (!directories.has(rel)) throw new ArchiveProblem(files.has(rel) ? `entry ${rel} is a directory but the manifest lists a file` : `entry ${rel} is not listed in the manifest (unlisted directory)`);
        await sink.directory?.(rel);
        return discard;
      }
      const listed = files.get(rel);
      if (!listed) throw new ArchiveProblem(directories.has(rel) ? `entry ${rel} is a file but the manifest lists a directory` : `entry ${rel} is not listed in the manifest (unlisted file)`);
      if (entry.size > listed.size) throw new ArchiveProblem(`entry ${rel} is larger than its manifest size (${entry.size} > ${listed.size} bytes)`);
      if (entry.size < listed.size) throw new ArchiveProblem(`entry ${rel} is smaller than its manifest size (${entry.size} < ${listed.size} bytes)`);
      const hash = crypto.createHash("sha256");
      const record = databases.get(rel);
      // The sink is chosen once the first 16 bytes are in: a SQLite header makes the file a database.
      let head: Buffer[] | null = [];
      let headBytes = 0;
      let out: FileSink | null = null;
      let precheckedDigest: string | null = null;
      const open = async (): Promise<void> => {
        // The first chunk usually holds the 16 header bytes already (for a small file, the whole file): passed on as
        // it is, not copied.
        const first = head!.length === 1 ? head![0]! : Buffer.concat(head!);
        head = null;
        const database = classifyPayloadFile(rel, listed, record, first.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER));
        if (database) foundDatabases.push(rel);
        out = await sink.file(listed, database);
        openSink = out;
        if (first.length > 0) await out?.write(first);
      };
      return {
        write: (chunk) => {
          hash.update(chunk);
          bytes += chunk.length;
          if (bytes > totalBytes) throw new ArchiveProblem(`the payload grows past the ${totalBytes} bytes the manifest declares`);
          onProgress?.({ phase, bytesDone: bytes, bytesTotal: totalBytes, path: rel });
          if (head) {
            head.push(chunk);
            headBytes += chunk.length;
            return headBytes >= SQLITE_HEADER.length ? open() : undefined;
          }
          return out?.write(chunk);
        },
        prechecked: async (run) => {
          if (run.archivePath !== rel || run.length !== Math.ceil(entry.size / BLOCK) * BLOCK || !head || headBytes > 0) {
            throw new ArchiveProblem(`the pre-checked bytes of ${run.archivePath} do not line up with entry ${rel}`);
          }
          head = null;
          bytes += entry.size;
          if (bytes > totalBytes) throw new ArchiveProblem(`the payload grows past the ${totalBytes} bytes the manifest declares`);
          onProgress?.({ phase, bytesDone: bytes, bytesTotal: totalBytes, path: rel });
          const database = classifyPayloadFile(rel, listed, record, run.sqlite);
          if (database) foundDatabases.push(rel);
          const target = await sink.file(listed, database);
          if (target) {
            await target.abort();
            throw new ArchiveProblem(`${rel} was checked by its compressed bytes but the pass needs its content`);
          }
          precheckedDigest = run.contentSha256;
        },
        end: async () => {
          if (head) await open();
          const digest = precheckedDigest ?? hash.digest("hex");
          if (digest !== listed.sha256) {
            throw new ArchiveProblem(`the sha256 of ${rel} does not match the manifest (the file or the manifest was altered)`);
          }
          openSink = null;
          fileCount += 1;
          await (out as FileSink | null)?.finish();
        },
      };
    },
  };

  try {
    await readTar(decompressed(fd, decompressor, () => limit, prechecked, whole), visitor);
  } catch (error) {
    const pending = openSink as FileSink | null;
    if (pending) await pending.abort().catch(() => undefined);
    if (error instanceof TarProblem || error instanceof ManifestProblem) throw new ArchiveProblem(error.message);
    throw error;
  }
  if (!manifest) throw new ArchiveProblem("the archive holds no manifest");
  const m: BackupManifest = manifest;
  if (layout && !theirManifestSeen) throw new ArchiveProblem(`${MANIFEST_NAME} is missing on the second pass over the archive`);
  for (const d of m.directories) if (!seen.has(d.archivePath) && !layout?.virtualDirs.has(d.archivePath)) throw new ArchiveProblem(`listed directory ${d.archivePath} is missing from the archive`);
  for (const f of m.files) if (!seen.has(f.archivePath)) throw new ArchiveProblem(`listed file ${f.archivePath} is missing from the archive`);
  for (const db of foundDatabases) {
    const side = SQLITE_SIDECAR_SUFFIXES.map((suffix) => `${db}${suffix}`).find((p) => seen.has(p) || m.symlinks.some((l) => l.archivePath === p));
    if (side) throw new ArchiveProblem(`${side} sits beside the SQLite database ${db} under a sidecar name`);
  }
  return { manifest: m, files: fileCount, bytes };
}

class ManifestRead extends Error {
  constructor(readonly manifest: BackupManifest) {
    super("manifest read");
  }
}

/**
 * Reads and validates only the manifest (the first entry); the rest of the archive is not inflated. With
 * `acceptOpenclaw`, an archive of `openclaw backup create` yields our manifest for it (that reads it whole once).
 */
export async function readArchiveManifest(archivePath: string, options: { acceptOpenclaw?: boolean } = {}): Promise<BackupManifest> {
  try {
    await readArchivePass(archivePath, {
      manifest: (m) => {
        throw new ManifestRead(m);
      },
      file: async () => null,
    }, undefined, "verify", [], undefined, false);
  } catch (error) {
    if (error instanceof ManifestRead) return error.manifest;
    if (error instanceof FirstEntryNotManifest && options.acceptOpenclaw) return (await openclawLayout(archivePath, error.message)).manifest;
    throw error;
  }
  throw new ArchiveProblem("the archive holds no manifest");
}
