// Archives written by `openclaw backup create` (OpenClaw's own format), read as ours: a first pass indexes and hashes them.
//
// OpenClaw writes its manifest as the LAST entry, lists no files or hashes, and places each asset at
// `<root>/payload/posix/<absolute source path>`. A first streaming pass finds and checks that manifest, hashes
// every entry and maps each asset onto our layout (`payload/state`, `payload/config/<name>`, …). The result is a
// manifest of our own format, checked by validateManifest like any other, that the ordinary pass (readArchive)
// then holds the archive to: sizes, sha256 (the bytes must not change between the passes), database integrity.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream";
import { describeError } from "../core/errors.js";
import { decompressorFor } from "./compression.js";
import { archivePathInside, isSafeRelativePath, ManifestProblem, validateManifest } from "./manifest.js";
import { linkEscape } from "./archive-layout.js";
import { readTar, TarProblem, type TarBody, type TarEntry } from "./tar-format.js";
import { MANIFEST_FORMAT, MANIFEST_NAME, MANIFEST_SCHEMA_VERSION, PAYLOAD_DIR, type AssetKind, type BackupAsset, type BackupManifest, type ManifestFile, type SkippedItem } from "./types.js";

/** OpenClaw refuses manifests over 1 MiB; so do we. */
const MAX_OPENCLAW_MANIFEST_BYTES = 1024 * 1024;
/**
 * Without a manifest up front nothing caps the inflated size in this pass, so the compression ratio does: gzip
 * cannot exceed ~1032:1 (what OpenClaw writes); anything inflating further is refused as a bomb.
 */
const MAX_RATIO = 1100;
const SLACK = 1024 * 1024;

/** Why an archive is not a readable OpenClaw archive (the caller turns it into an ArchiveProblem). */
export class OpenclawArchiveProblem extends Error {}

function fail(message: string): never {
  throw new OpenclawArchiveProblem(message);
}

interface IndexedEntry {
  /** Path below the archive root. */
  rel: string;
  type: "file" | "dir" | "symlink";
  size: number;
  sha256: string;
  mode: number;
  mtimeMs: number;
  linkpath: string;
}

/** What the ordinary pass needs to hold an OpenClaw archive to the manifest built here. */
export interface OpenclawLayout {
  /** Our manifest for the archive (validated); `tool.name` is "openclaw". */
  manifest: BackupManifest;
  root: string;
  /** Entry path below the root → our archive path; null for entries read but never extracted. */
  map(rel: string): string | null;
  /** The manifest entry's size and sha256, as the first pass read it (the second must read the same). */
  manifestEntry: { size: number; sha256: string };
  /** Link entries (by path below the root) and their text: recorded in manifest.symlinks or skipped. */
  links: ReadonlyMap<string, string>;
  /** Directory entries leading down to an asset (below the root): read, never extracted. */
  passThrough: ReadonlySet<string>;
  /** Asset root directories that had no entry of their own (restore creates them). */
  virtualDirs: ReadonlySet<string>;
  /** Bytes the first pass inflated: the second pass may not inflate more. */
  inflatedBytes: number;
}

function normalizeEntryPath(entry: TarEntry): string {
  const raw = entry.type === "Directory" ? entry.path.replace(/\/+$/, "") : entry.path;
  if (raw.startsWith("/") || /^[A-Za-z]:[\\/]/.test(raw)) fail(`entry ${JSON.stringify(entry.path)} has an absolute path`);
  if (raw.split("/").includes("..")) fail(`entry ${JSON.stringify(entry.path)} has a path traversal ("..")`);
  if (!isSafeRelativePath(raw)) fail(`entry ${JSON.stringify(entry.path)} has a non-normalized path`);
  return raw;
}

function entryType(entry: TarEntry): IndexedEntry["type"] {
  switch (entry.type) {
    case "File":
    case "OldFile":
      return "file";
    case "Directory":
      return "dir";
    case "SymbolicLink":
      return "symlink";
    case "Link":
      return fail(`entry ${JSON.stringify(entry.path)} is a hard link (links are never extracted)`);
    default:
      return fail(`entry ${JSON.stringify(entry.path)} has an unsupported type (${entry.type})`);
  }
}

async function* inflate(file: string, limit: number): AsyncGenerator<Buffer> {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  const magic = Buffer.alloc(4);
  fs.readSync(fd, magic, 0, 4, 0);
  const decompressor = decompressorFor(magic, file);
  if (!decompressor) {
    fs.closeSync(fd);
    fail("the file is not a gzip archive nor a zstd archive");
  }
  const source = fs.createReadStream("", { fd, highWaterMark: 1024 * 1024 });
  const inflater = decompressor.create({ long: true });
  pipeline(source, inflater, () => undefined);
  let total = 0;
  try {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) fail(`the archive inflates past ${limit} bytes, more than ${MAX_RATIO}× its size (decompression bomb)`);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof OpenclawArchiveProblem) throw error;
    if (decompressor.isCorrupt(error)) fail(`the archive is truncated or corrupt (${decompressor.name}: ${describeError(error)})`);
    throw error;
  } finally {
    inflater.destroy();
    source.destroy();
  }
}

/** Every entry of the archive, hashed, plus the manifest entry's bytes; refuses what no pass may accept. */
async function indexEntries(file: string): Promise<{ entries: IndexedEntry[]; root: string; manifest: Buffer; manifestSha256: string; inflated: number }> {
  const size = fs.statSync(file).size;
  const entries: IndexedEntry[] = [];
  const seen = new Set<string>();
  let root: string | undefined;
  let manifest: Buffer | undefined;
  let manifestSha256 = "";
  let inflated = 0;
  const discard: TarBody = { write() {}, end() {} };
  try {
    await readTar(
      (async function* () {
        for await (const chunk of inflate(file, size * MAX_RATIO + SLACK)) {
          inflated += chunk.length;
          yield chunk;
        }
      })(),
      {
        entry: (entry) => {
          const full = normalizeEntryPath(entry);
          const type = entryType(entry);
          const [first, ...rest] = full.split("/");
          root ??= first;
          if (first !== root) fail(`entry ${JSON.stringify(entry.path)} is outside the archive root ${root}/`);
          if (rest.length === 0) return discard; // the root directory itself
          const rel = rest.join("/");
          if (seen.has(rel)) fail(`entry ${rel} appears twice (duplicate entry)`);
          seen.add(rel);
          if (rel === MANIFEST_NAME) {
            if (type !== "file") fail(`${MANIFEST_NAME} is not a regular file`);
            if (entry.size > MAX_OPENCLAW_MANIFEST_BYTES) fail(`the manifest is ${entry.size} bytes, more than the ${MAX_OPENCLAW_MANIFEST_BYTES} allowed`);
            const chunks: Buffer[] = [];
            return {
              write: (chunk) => void chunks.push(chunk),
              end: () => {
                manifest = Buffer.concat(chunks);
                manifestSha256 = crypto.createHash("sha256").update(manifest).digest("hex");
              },
            };
          }
          const item: IndexedEntry = { rel, type, size: type === "file" ? entry.size : 0, sha256: "", mode: entry.mode, mtimeMs: entry.mtime?.getTime() ?? 0, linkpath: entry.linkpath ?? "" };
          entries.push(item);
          if (type !== "file") return discard;
          const hash = crypto.createHash("sha256");
          return {
            write: (chunk) => void hash.update(chunk),
            end: () => {
              item.sha256 = hash.digest("hex");
            },
          };
        },
      },
    );
  } catch (error) {
    if (error instanceof TarProblem) fail(error.message);
    throw error;
  }
  if (root === undefined) fail("the archive is empty");
  if (!manifest) fail(`the archive holds no ${root}/${MANIFEST_NAME}`);
  return { entries, root, manifest, manifestSha256, inflated };
}

interface TheirAsset {
  kind: string;
  sourcePath: string;
  /** Below the archive root. */
  rel: string;
}

/** Their manifest, checked the way `openclaw backup verify` checks it (and stricter: posix sources only). */
function parseTheirManifest(bytes: Buffer, root: string): { raw: Record<string, unknown>; assets: TheirAsset[]; paths: Record<string, unknown> } {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    fail(`the manifest is not valid JSON (${describeError(error)})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail("the manifest is not an object");
  const m = raw as Record<string, unknown>;
  if (m.format === MANIFEST_FORMAT) fail(`an openclaw-state manifest must be the first entry`);
  if (m.schemaVersion !== 1) fail(`unknown OpenClaw manifest schemaVersion ${JSON.stringify(m.schemaVersion)} (this tool reads 1)`);
  if (m.archiveRoot !== root) fail(`the manifest names root ${JSON.stringify(m.archiveRoot)} but the archive root is ${root}`);
  if (typeof m.createdAt !== "string" || Number.isNaN(Date.parse(m.createdAt))) fail("the manifest has no valid createdAt");
  if (m.platform !== undefined && m.platform !== "linux" && m.platform !== "darwin" && m.platform !== "freebsd") {
    fail(`the archive was made on ${JSON.stringify(m.platform)}; only archives of POSIX paths are read`);
  }
  if (!Array.isArray(m.assets) || m.assets.length === 0) fail("the manifest lists no assets");
  const assets = m.assets.map((a: unknown, i): TheirAsset => {
    if (typeof a !== "object" || a === null) fail(`manifest assets[${i}] is not an object`);
    const { kind, sourcePath, archivePath } = a as Record<string, unknown>;
    if (typeof kind !== "string" || typeof sourcePath !== "string" || typeof archivePath !== "string") fail(`manifest assets[${i}] lacks kind, sourcePath or archivePath`);
    if (!sourcePath.startsWith("/") || sourcePath.includes("\0") || path.posix.normalize(sourcePath) !== sourcePath || sourcePath === "/") {
      fail(`manifest assets[${i}].sourcePath ${JSON.stringify(sourcePath)} is not an absolute, normalized path`);
    }
    // Where OpenClaw places a source path (its buildBackupArchivePath): anything else is refused.
    const want = `${root}/${PAYLOAD_DIR}/posix${sourcePath}`;
    if (archivePath.replace(/\/+$/, "") !== want) fail(`manifest assets[${i}].archivePath ${JSON.stringify(archivePath)} is not ${want}`);
    return { kind, sourcePath, rel: want.slice(root.length + 1) };
  });
  const paths = typeof m.paths === "object" && m.paths !== null ? (m.paths as Record<string, unknown>) : {};
  return { raw: m, assets, paths };
}

const KINDS: ReadonlySet<string> = new Set<AssetKind>(["state", "config", "credentials", "workspace"]);

function ourAssetPath(kind: AssetKind, sourcePath: string, workspaceIndex: number): string {
  const name = path.posix.basename(sourcePath);
  switch (kind) {
    case "state":
      return `${PAYLOAD_DIR}/state`;
    case "config":
      return `${PAYLOAD_DIR}/config/${name}`;
    case "credentials":
      return `${PAYLOAD_DIR}/credentials`;
    case "workspace":
      return `${PAYLOAD_DIR}/workspaces/${workspaceIndex}-${name}`;
  }
}

/** Private modes, as our own archives carry: 0600, or 0700 when the owner could execute it. */
function privateMode(mode: number): number {
  return mode & 0o100 ? 0o700 : 0o600;
}

/**
 * Reads an archive of `openclaw backup create` once (hashing every entry) and returns our manifest for it.
 * Refuses (OpenclawArchiveProblem) anything it cannot place safely: entries outside every asset, hard links,
 * devices, asset kinds this tool does not restore (agent roots outside the state dir, managed skills, a second
 * config file), paths that do not match their source.
 */
export async function indexOpenclawArchive(file: string): Promise<OpenclawLayout> {
  const indexed = await indexEntries(file);
  const { root } = indexed;
  const their = parseTheirManifest(indexed.manifest, root);

  const assets: BackupAsset[] = [];
  const byTheirPath = new Map<string, BackupAsset>();
  let workspaces = 0;
  for (const a of their.assets) {
    if (!KINDS.has(a.kind)) fail(`the archive holds a ${JSON.stringify(a.kind)} asset (${a.sourcePath}), which this tool does not restore; use \`openclaw backup restore\``);
    const kind = a.kind as AssetKind;
    if (kind !== "workspace" && assets.some((x) => x.kind === kind)) fail(`the archive holds more than one ${kind} asset, which this tool does not restore; use \`openclaw backup restore\``);
    const exact = indexed.entries.find((e) => e.rel === a.rel);
    const type = exact?.type === "file" ? "file" : "dir";
    if (kind === "config" ? type !== "file" : type !== "dir") fail(`the ${kind} asset ${a.sourcePath} is not a ${kind === "config" ? "file" : "directory"} in the archive`);
    if (kind === "workspace") workspaces += 1;
    const asset: BackupAsset = { kind, sourcePath: a.sourcePath, archivePath: ourAssetPath(kind, a.sourcePath, workspaces), type, excluded: [] };
    for (const [p, b] of byTheirPath) if (archivePathInside(p, a.rel) || archivePathInside(a.rel, p)) fail(`the assets ${b.sourcePath} and ${a.sourcePath} overlap`);
    byTheirPath.set(a.rel, asset);
    assets.push(asset);
  }
  const map = (rel: string): string | null => {
    for (const [p, asset] of byTheirPath) {
      if (rel === p) return asset.archivePath;
      if (rel.startsWith(`${p}/`)) return `${asset.archivePath}${rel.slice(p.length)}`;
    }
    return null;
  };

  const directories: Array<{ archivePath: string }> = [];
  const files: ManifestFile[] = [];
  const symlinks: Array<{ archivePath: string; target: string }> = [];
  const links = new Map<string, string>();
  const passThrough = new Set<string>();
  for (const e of indexed.entries) {
    const ours = map(e.rel);
    if (ours === null) {
      // Only the folders leading down to an asset may sit outside every asset; they carry nothing.
      if (e.type === "dir" && [...byTheirPath.keys()].some((p) => archivePathInside(e.rel, p))) {
        passThrough.add(e.rel);
        continue;
      }
      fail(`entry ${e.rel} is outside every asset of the manifest`);
    }
    if (e.type === "dir") directories.push({ archivePath: ours });
    else if (e.type === "file") files.push({ archivePath: ours, size: e.size, sha256: e.sha256, mode: privateMode(e.mode), mtimeMs: e.mtimeMs });
    else {
      links.set(e.rel, e.linkpath);
      symlinks.push({ archivePath: ours, target: e.linkpath });
    }
  }
  const virtualDirs = new Set<string>();
  for (const asset of assets) {
    if (asset.type === "dir" && !directories.some((d) => d.archivePath === asset.archivePath)) {
      directories.push({ archivePath: asset.archivePath });
      virtualDirs.add(asset.archivePath);
    }
  }
  // Links that would leave their asset are left out, as `backup create` leaves them out of our own archives.
  const skipped: SkippedItem[] = [];
  const linkTargets = new Map(symlinks.map((s) => [s.archivePath, s.target]));
  const kept = symlinks.filter((s) => {
    const owner = assets.find((a) => archivePathInside(a.archivePath, s.archivePath))!;
    const escape = linkEscape(s.archivePath, s.target, owner.archivePath, linkTargets);
    if (escape) skipped.push({ kind: "symlink", path: s.archivePath, reason: `not restored: ${escape}` });
    return !escape;
  });

  const str = (v: unknown): string | undefined => (typeof v === "string" && v.startsWith("/") ? v : undefined);
  const stateDir = str(their.paths.stateDir) ?? assets.find((a) => a.kind === "state")?.sourcePath;
  if (!stateDir) fail("the manifest names no state directory");
  const candidate = {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    format: MANIFEST_FORMAT,
    runId: `openclaw:${root}`,
    createdAt: their.raw.createdAt,
    archiveRoot: root,
    tool: { name: "openclaw", version: typeof their.raw.runtimeVersion === "string" ? their.raw.runtimeVersion : "unknown" },
    platform: { os: typeof their.raw.platform === "string" ? their.raw.platform : "unknown", arch: "unknown", release: "unknown" },
    nodeVersion: typeof their.raw.nodeVersion === "string" ? their.raw.nodeVersion : "unknown",
    options: { onlyConfig: their.raw.options !== null && typeof their.raw.options === "object" && (their.raw.options as Record<string, unknown>).onlyConfig === true, includeWorkspace: true, verify: false, dryRun: false },
    // OpenClaw records no home or backup dir: the state dir's parent stands in (restore never reads either).
    paths: {
      homeDir: path.posix.dirname(stateDir),
      stateDir,
      configPath: str(their.paths.configPath) ?? path.posix.join(stateDir, "openclaw.json"),
      credentialsDir: str(their.paths.oauthDir) ?? path.posix.join(stateDir, "credentials"),
      backupDir: path.posix.dirname(stateDir),
    },
    assets,
    skipped,
    directories,
    files,
    symlinks: kept,
    databases: [],
    totals: { files: files.length, bytes: files.reduce((n, f) => n + f.size, 0), databases: 0, directories: directories.length, symlinks: kept.length },
  };
  let manifest: BackupManifest;
  try {
    manifest = validateManifest(candidate);
  } catch (error) {
    if (error instanceof ManifestProblem) fail(error.message);
    throw error;
  }
  return { manifest, root, map, manifestEntry: { size: indexed.manifest.length, sha256: indexed.manifestSha256 }, links, passThrough, virtualDirs, inflatedBytes: indexed.inflated };
}
