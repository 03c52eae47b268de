// The manifest contract: strict validation of a manifest read from an archive, and the summary kept in backup_runs.
import os from "node:os";
import { toolVersion } from "../core/version.js";
import type { StatePaths } from "../state/paths.js";
import type { DatabaseFileInfo } from "../state/sqlite-snapshot.js";
import type { WalkFile } from "./walk-assets.js";
import { assetPathProblem, linkEscape, MAX_LINK_TARGET_BYTES, pathLengthProblem, roleAtArchivePath, SQLITE_SIDECAR_SUFFIXES } from "./archive-layout.js";
import {
  MANIFEST_FORMAT,
  MANIFEST_SCHEMA_VERSION,
  PAYLOAD_DIR,
  type AssetKind,
  type BackupAsset,
  type BackupManifest,
  type ManifestDatabase,
  type ManifestFile,
  type ManifestBody,
  type ManifestFileStamp,
} from "./types.js";

/** The manifest is read into memory whole; larger ones are refused (≈ 300k files fit). */
export const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

export class ManifestProblem extends Error {}

const ASSET_KINDS: ReadonlySet<AssetKind> = new Set(["state", "config", "credentials", "workspace"]);
const ROLES = new Set(["global", "agent", "other"]);
const SHA256 = /^[0-9a-f]{64}$/;

/** A relative, normalized, '/'-separated path: no empty, '.' or '..' segment, no NUL, not absolute. */
export function isSafeRelativePath(p: string): boolean {
  if (p.length === 0 || p.length > 4096 || p.includes("\0") || p.startsWith("/")) return false;
  return p.split("/").every((seg) => seg !== "" && seg !== "." && seg !== "..");
}

/** True when `child` is `parent` or below it, in archive ('/') paths. */
export function archivePathInside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(`${parent}/`);
}

function fail(message: string): never {
  throw new ManifestProblem(message);
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(`manifest ${what} is not an object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) fail(`manifest field "${what}" is not a list`);
  return value;
}

function str(value: unknown, what: string): string {
  if (typeof value !== "string") fail(`manifest ${what} is not a string`);
  return value;
}

function count(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) fail(`manifest ${what} is not a non-negative integer`);
  return value;
}

function payloadPath(value: unknown, what: string): string {
  const p = str(value, what);
  if (!isSafeRelativePath(p) || !archivePathInside(PAYLOAD_DIR, p)) fail(`manifest ${what} ${JSON.stringify(p)} is not a safe path under ${PAYLOAD_DIR}/`);
  const tooLong = pathLengthProblem(p);
  if (tooLong) fail(`manifest ${what} ${p.length > 120 ? `${JSON.stringify(p.slice(0, 60))}…` : JSON.stringify(p)} ${tooLong}`);
  return p;
}

function absolutePath(value: unknown, what: string): string {
  const p = str(value, what);
  if (!p.startsWith("/") || p.includes("\0")) fail(`manifest ${what} ${JSON.stringify(p)} is not an absolute path`);
  return p;
}

/** The recorded paths restore relies on (rewriting stored paths, naming destinations): all present and absolute. */
function checkPaths(value: unknown): BackupManifest["paths"] {
  const r = record(value, "paths");
  return {
    homeDir: absolutePath(r.homeDir, "paths.homeDir"),
    stateDir: absolutePath(r.stateDir, "paths.stateDir"),
    configPath: absolutePath(r.configPath, "paths.configPath"),
    credentialsDir: absolutePath(r.credentialsDir, "paths.credentialsDir"),
    backupDir: absolutePath(r.backupDir, "paths.backupDir"),
  };
}

function checkTotals(value: unknown, m: Pick<BackupManifest, "files" | "directories" | "symlinks" | "databases">): BackupManifest["totals"] {
  const r = record(value, "totals");
  const want = {
    files: m.files.length,
    bytes: m.files.reduce((n, f) => n + f.size, 0),
    databases: m.databases.length,
    directories: m.directories.length,
    symlinks: m.symlinks.length,
  };
  for (const [key, n] of Object.entries(want)) {
    const declared = count(r[key], `totals.${key}`);
    if (declared !== n) fail(`manifest totals.${key} is ${declared} but its lists add up to ${n}`);
  }
  return want;
}

/** Parses and checks a manifest; every path it names is safe and belongs to exactly one asset. */
export function validateManifest(raw: unknown): BackupManifest {
  const m = record(raw, "document");
  if (m.schemaVersion !== MANIFEST_SCHEMA_VERSION) {
    fail(`unknown manifest version ${JSON.stringify(m.schemaVersion)} (this tool reads version ${MANIFEST_SCHEMA_VERSION}); upgrade openclaw-state to read it`);
  }
  if (m.format !== MANIFEST_FORMAT) fail(`manifest format is ${JSON.stringify(m.format)}, not "${MANIFEST_FORMAT}"`);
  const root = str(m.archiveRoot, "archiveRoot");
  if (!isSafeRelativePath(root) || root.includes("/")) fail(`manifest archiveRoot ${JSON.stringify(root)} is not a single safe name`);
  if (pathLengthProblem(root)) fail(`manifest archiveRoot ${pathLengthProblem(root)}`);
  str(m.createdAt, "createdAt");
  str(m.runId, "runId");
  const paths = checkPaths(m.paths);

  const assets: BackupAsset[] = list(m.assets, "assets").map((a, i) => {
    const r = record(a, `assets[${i}]`);
    const kind = str(r.kind, `assets[${i}].kind`) as AssetKind;
    if (!ASSET_KINDS.has(kind)) fail(`manifest assets[${i}] has unknown kind ${JSON.stringify(kind)}`);
    const type = r.type === "dir" || r.type === "file" ? r.type : fail(`manifest assets[${i}].type must be "dir" or "file"`);
    const sourcePath = absolutePath(r.sourcePath, `assets[${i}].sourcePath`);
    const excluded = list(r.excluded ?? [], `assets[${i}].excluded`).map((e, j) => {
      const p = str(e, `assets[${i}].excluded[${j}]`);
      if (!isSafeRelativePath(p)) fail(`manifest assets[${i}].excluded[${j}] is not a safe relative path`);
      return p;
    });
    // Written as `<root>/payload/…` (what `openclaw backup verify` requires), or `payload/…` by earlier versions.
    const written = typeof r.archivePath === "string" && r.archivePath.startsWith(`${root}/`) ? r.archivePath.slice(root.length + 1) : r.archivePath;
    const archivePath = payloadPath(written, `assets[${i}].archivePath`);
    const shape = assetPathProblem(kind, type, archivePath);
    if (shape) fail(`manifest assets[${i}]: ${shape}`);
    return { kind, type, sourcePath, archivePath, excluded };
  });
  if (assets.length === 0) fail("manifest lists no assets");
  for (const kind of ["state", "config", "credentials"] as const) {
    if (assets.filter((a) => a.kind === kind).length > 1) fail(`manifest lists more than one ${kind} asset`);
  }
  for (const a of assets) {
    if (a.archivePath === PAYLOAD_DIR) fail(`manifest asset ${a.kind} uses the payload root itself`);
    for (const b of assets) {
      if (a !== b && archivePathInside(a.archivePath, b.archivePath)) fail(`manifest assets ${a.archivePath} and ${b.archivePath} overlap`);
    }
  }
  const ownerOf = (p: string): BackupAsset | undefined => assets.find((a) => archivePathInside(a.archivePath, p));

  const seen = new Set<string>();
  const claim = (p: string, what: string): void => {
    if (seen.has(p)) fail(`manifest lists ${p} twice (${what})`);
    seen.add(p);
  };

  const directories = list(m.directories, "directories").map((d, i) => {
    const p = payloadPath(record(d, `directories[${i}]`).archivePath, `directories[${i}].archivePath`);
    claim(p, "directory");
    const owner = ownerOf(p);
    if (owner?.type === "file") fail(`manifest directory ${p} is inside the file asset ${owner.archivePath}`);
    if (!owner && !assets.some((a) => archivePathInside(p, a.archivePath))) fail(`manifest directory ${p} belongs to no asset`);
    return { archivePath: p };
  });

  const files: ManifestFile[] = list(m.files, "files").map((f, i) => {
    const r = record(f, `files[${i}]`);
    const p = payloadPath(r.archivePath, `files[${i}].archivePath`);
    claim(p, "file");
    const owner = ownerOf(p);
    if (!owner) fail(`manifest file ${p} belongs to no asset`);
    if (owner.type === "file" && owner.archivePath !== p) fail(`manifest file ${p} is inside the file asset ${owner.archivePath}`);
    if (owner.type === "dir" && owner.archivePath === p) fail(`manifest file ${p} replaces the directory asset root`);
    const sha256 = str(r.sha256, `files[${i}].sha256`);
    if (!SHA256.test(sha256)) fail(`manifest sha256 of ${p} is not 64 lower-case hex digits`);
    const mode = count(r.mode, `files[${i}].mode`);
    const mtimeMs = typeof r.mtimeMs === "number" && Number.isFinite(r.mtimeMs) ? r.mtimeMs : 0;
    return { archivePath: p, size: count(r.size, `files[${i}].size`), sha256, mode: mode & 0o777, mtimeMs, ...fileReuseFields(r) };
  });

  const symlinks = list(m.symlinks, "symlinks").map((s, i) => {
    const r = record(s, `symlinks[${i}]`);
    const p = payloadPath(r.archivePath, `symlinks[${i}].archivePath`);
    claim(p, "symlink");
    const owner = ownerOf(p);
    if (!owner || owner.type !== "dir" || owner.archivePath === p) fail(`manifest symlink ${p} is not inside a directory asset`);
    const target = str(r.target, `symlinks[${i}].target`);
    if (target === "" || target.includes("\0") || Buffer.byteLength(target) > MAX_LINK_TARGET_BYTES) fail(`manifest symlink ${p} has an invalid target`);
    return { archivePath: p, target };
  });
  // No link may lead out of its own asset's restored tree, directly or through other links.
  const linkTargets = new Map(symlinks.map((s) => [s.archivePath, s.target]));
  for (const link of symlinks) {
    const escape = linkEscape(link.archivePath, link.target, ownerOf(link.archivePath)!.archivePath, linkTargets);
    if (escape) fail(`manifest symlink ${link.archivePath} leaves its asset: ${escape}`);
  }
  // A link must be a leaf: nothing may be extracted "through" it.
  const linkPaths = new Set(symlinks.map((s) => s.archivePath));
  if (linkPaths.size > 0) {
    for (const p of seen) {
      for (let cut = p.lastIndexOf("/"); cut > 0; cut = p.lastIndexOf("/", cut - 1)) {
        const ancestor = p.slice(0, cut);
        if (linkPaths.has(ancestor)) fail(`manifest places ${p} under the symlink ${ancestor}`);
      }
    }
  }
  for (const a of assets) {
    if (a.type === "file" && !files.some((f) => f.archivePath === a.archivePath)) fail(`manifest file asset ${a.archivePath} has no file entry`);
    if (a.type === "dir" && !directories.some((d) => d.archivePath === a.archivePath)) fail(`manifest directory asset ${a.archivePath} has no directory entry`);
  }

  for (const p of seen) {
    const located = roleAtArchivePath(p);
    if (located && !files.some((f) => f.archivePath === p)) fail(`manifest places a ${entryKindAt(p, directories, symlinks)} at the ${located.role} database path ${p}`);
  }

  const fileByPath = new Map(files.map((f) => [f.archivePath, f]));
  const dbSeen = new Set<string>();
  const databases: ManifestDatabase[] = list(m.databases, "databases").map((d, i) => {
    const r = record(d, `databases[${i}]`);
    const p = payloadPath(r.archivePath, `databases[${i}].archivePath`);
    const file = fileByPath.get(p);
    if (!file) fail(`manifest database ${p} is not a listed file`);
    if (dbSeen.has(p)) fail(`manifest lists database ${p} twice`);
    dbSeen.add(p);
    const role = str(r.role, `databases[${i}].role`);
    if (!ROLES.has(role)) fail(`manifest database ${p} has unknown role ${JSON.stringify(role)}`);
    if (r.integrity !== "ok") fail(`manifest database ${p} was not recorded as integrity-checked`);
    const counts = record(r.rowCounts, `databases[${i}].rowCounts`);
    const rowCounts: Record<string, number> = {};
    for (const [table, n] of Object.entries(counts)) rowCounts[table] = count(n, `row count of ${p} table ${table}`);
    if (r.sha256 !== file.sha256) fail(`manifest database ${p} sha256 differs from its file entry`);
    return {
      role: role as ManifestDatabase["role"],
      agentId: typeof r.agentId === "string" ? r.agentId : null,
      sourcePath: str(r.sourcePath, `databases[${i}].sourcePath`),
      archivePath: p,
      schemaVersion: count(r.schemaVersion, `databases[${i}].schemaVersion`),
      pageCount: count(r.pageCount, `databases[${i}].pageCount`),
      pageSize: count(r.pageSize, `databases[${i}].pageSize`),
      rowCounts,
      integrity: "ok",
      sizeBytes: file.size,
      sha256: file.sha256,
      ...reuseFields(r),
    };
  });

  // A -wal/-shm/-journal beside a database would be read as that database's sidecar (or block its WAL).
  const databasePaths = new Set([...databases.map((d) => d.archivePath), ...files.map((f) => f.archivePath).filter((p) => roleAtArchivePath(p))]);
  for (const p of seen) {
    const suffix = SQLITE_SIDECAR_SUFFIXES.find((s) => p.endsWith(s));
    if (suffix && databasePaths.has(p.slice(0, -suffix.length))) fail(`manifest lists ${p}, a SQLite sidecar name beside the database ${p.slice(0, -suffix.length)}`);
  }
  const totals = checkTotals(m.totals, { files, directories, symlinks, databases });

  return { ...(m as unknown as BackupManifest), paths, assets, directories, files, symlinks, databases, totals };
}

const DIGITS = /^\d{1,30}$/;

/**
 * The optional reuse fields of a database record (`body`, `sourceState`; later versions' additions): kept when well
 * formed, dropped otherwise. They only ever let a later backup copy this body, after checking it; a reader that does
 * not know them ignores them, and a malformed one must not make an otherwise sound archive unreadable.
 */
function reuseFields(r: Record<string, unknown>): Pick<ManifestDatabase, "body" | "sourceState"> {
  const out: Pick<ManifestDatabase, "body" | "sourceState"> = {};
  const body = bodyField(r.body);
  if (body) out.body = body;
  const s = r.sourceState;
  if (typeof s === "object" && s !== null && !Array.isArray(s)) {
    const { files, header } = s as Record<string, unknown>;
    const stamps = Array.isArray(files) && files.length === 3 ? files.map((f) => (f === null ? null : stampField(f))) : [];
    const h = header as Record<string, unknown> | null | undefined;
    const okHeader = h !== null && typeof h === "object" && Number.isSafeInteger(h.changeCounter) && Number.isSafeInteger(h.schemaVersion) && (h.changeCounter as number) >= 0 && (h.schemaVersion as number) >= 0;
    if (stamps.length === 3 && stamps.every((x) => x !== undefined) && okHeader) {
      out.sourceState = { files: stamps as Array<ManifestFileStamp | null>, header: { changeCounter: h.changeCounter as number, schemaVersion: h.schemaVersion as number } };
    }
  }
  return out;
}

/** A plain file's reuse fields, by the same rule: both well formed and the body's offset a safe integer, or neither. */
function fileReuseFields(r: Record<string, unknown>): Pick<ManifestFile, "body" | "sourceState"> {
  const body = bodyField(r.body);
  const offset = (r.body as Record<string, unknown> | undefined)?.offset;
  const stamp = stampField(r.sourceState);
  if (!body || !stamp || !Number.isSafeInteger(offset) || (offset as number) < 0) return {};
  return { body: { ...body, offset: offset as number }, sourceState: stamp };
}

function bodyField(b: unknown): ManifestBody | undefined {
  if (typeof b !== "object" || b === null || Array.isArray(b)) return undefined;
  const { compression, length, sha256 } = b as Record<string, unknown>;
  if ((compression === "gzip" || compression === "zstd" || compression === "none") && Number.isSafeInteger(length) && (length as number) > 0 && typeof sha256 === "string" && SHA256.test(sha256)) {
    return { compression, length: length as number, sha256 };
  }
  return undefined;
}

function stampField(f: unknown): ManifestFileStamp | undefined {
  if (typeof f !== "object" || f === null || Array.isArray(f)) return undefined;
  const v = f as Record<string, unknown>;
  const keys = ["dev", "ino", "size", "mtimeNs", "ctimeNs"] as const;
  if (!keys.every((k) => typeof v[k] === "string" && DIGITS.test(v[k] as string))) return undefined;
  return { dev: v.dev as string, ino: v.ino as string, size: v.size as string, mtimeNs: v.mtimeNs as string, ctimeNs: v.ctimeNs as string };
}

function entryKindAt(p: string, directories: ReadonlyArray<{ archivePath: string }>, symlinks: ReadonlyArray<{ archivePath: string }>): string {
  if (directories.some((d) => d.archivePath === p)) return "directory";
  return symlinks.some((s) => s.archivePath === p) ? "symlink" : "non-file";
}

/** The manifest record of one database: where it came from, what its snapshot (or, in a dry-run, the live file) holds. */
export function databaseRecord(
  entry: WalkFile,
  info: DatabaseFileInfo,
  archived: { size: number; sha256: string | null; integrity: ManifestDatabase["integrity"] },
): ManifestDatabase {
  return {
    role: entry.database?.role ?? "other",
    agentId: entry.database?.agentId ?? null,
    sourcePath: entry.absPath,
    archivePath: entry.archivePath,
    schemaVersion: info.userVersion,
    pageCount: info.pageCount,
    pageSize: info.pageSize,
    rowCounts: info.rowCounts,
    integrity: archived.integrity,
    sizeBytes: archived.size,
    sha256: archived.sha256,
  };
}

/**
 * The manifest as the archive stores it: every `assets[].archivePath` carries the archive root (`<root>/payload/…`),
 * the one thing `openclaw backup verify` needs beyond our format. Everything else is the manifest as it is.
 */
export function serializeManifest(manifest: BackupManifest): Buffer {
  const stored = { ...manifest, assets: manifest.assets.map((a) => ({ ...a, archivePath: `${manifest.archiveRoot}/${a.archivePath}` })) };
  return Buffer.from(`${JSON.stringify(stored, null, 2)}\n`, "utf8");
}

/**
 * The stored manifest, kept within what a reader accepts (`limit`, MAX_MANIFEST_BYTES). The plain files' reuse
 * records (`body`, `sourceState`, ~250 bytes each) are optional: when they would push a manifest of very many files
 * past the limit they are left out, so the archive stays readable and the next create reads those files afresh.
 * Still too large without them: returned as it is (the reader refuses it and the create's verify says so).
 */
export function fitManifest(manifest: BackupManifest, limit = MAX_MANIFEST_BYTES): { manifest: BackupManifest; bytes: Buffer } {
  const bytes = serializeManifest(manifest);
  if (bytes.length <= limit || !manifest.files.some((f) => f.body || f.sourceState)) return { manifest, bytes };
  const lean: BackupManifest = { ...manifest, files: manifest.files.map(({ body: _b, sourceState: _s, ...f }) => f) };
  return { manifest: lean, bytes: serializeManifest(lean) };
}

export type ManifestSummary = Omit<BackupManifest, "directories" | "files" | "symlinks">;

/** The manifest without its per-entry lists (kept in backup_runs and printed by --json); totals keep the counts. */
export function summarizeManifest(manifest: BackupManifest): ManifestSummary {
  const { directories: _d, files: _f, symlinks: _s, ...rest } = manifest;
  return rest;
}

export interface BuildManifestInput extends Pick<BackupManifest, "options" | "assets" | "skipped" | "directories" | "files" | "symlinks" | "databases"> {
  runId: string;
  createdAt: Date;
  archiveRoot: string;
  paths: StatePaths;
}

export function buildManifest(input: BuildManifestInput): BackupManifest {
  const { paths } = input;
  return {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    format: MANIFEST_FORMAT,
    runId: input.runId,
    createdAt: input.createdAt.toISOString(),
    archiveRoot: input.archiveRoot,
    tool: { name: "openclaw-state", version: toolVersion() },
    platform: { os: process.platform, arch: process.arch, release: os.release() },
    nodeVersion: process.version,
    options: input.options,
    paths: { homeDir: paths.homeDir, stateDir: paths.stateDir, configPath: paths.configPath, credentialsDir: paths.credentialsDir, backupDir: paths.backupDir },
    assets: input.assets,
    skipped: input.skipped,
    directories: input.directories,
    files: input.files,
    symlinks: input.symlinks,
    databases: input.databases,
    totals: {
      files: input.files.length,
      bytes: input.files.reduce((n, f) => n + f.size, 0),
      databases: input.databases.length,
      directories: input.directories.length,
      symlinks: input.symlinks.length,
    },
  };
}
