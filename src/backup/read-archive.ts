// The one streaming pass over an archive shared by verify and restore: every rule that refuses a hostile archive.
import crypto from "node:crypto";
import fs from "node:fs";
import { describeError } from "../core/errors.js";
import { roleAtArchivePath, SQLITE_SIDECAR_SUFFIXES } from "./archive-layout.js";
import { ArchiveProblem, decompressed, openArchive, readMagic, type PrecheckedRun } from "./archive-source.js";
import { decompressorFor, type Decompressor } from "./compression.js";
import { MAX_MANIFEST_BYTES, ManifestProblem, validateManifest } from "./manifest.js";
import { indexOpenclawArchive, OpenclawArchiveProblem, type OpenclawLayout } from "./openclaw-archive.js";
import { BLOCK, readTar, TarProblem, type TarBody, type TarEntry } from "./tar-format.js";
import { MANIFEST_NAME, type BackupManifest, type DatabaseRole, type ManifestDatabase, type ManifestFile, type ProgressCallback } from "./types.js";

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
          // Copies: a decoded chunk's memory may be freed once the next one is read (archive-source.ts, decompressed).
          write: (chunk) => void chunks.push(Buffer.from(chunk)),
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
            headBytes += chunk.length;
            // Kept past this chunk only while the 16 header bytes are incomplete: then a copy (see decompressed).
            head.push(headBytes >= SQLITE_HEADER.length ? chunk : Buffer.from(chunk));
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
