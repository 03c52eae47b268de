// Walks the planned assets once: directories, files, SQLite databases (by header), symlinks as links; skips the rest.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import { tryNormalizeAgentId } from "../state/agent-id.js";
import { isSqliteFile } from "../state/sqlite-header.js";
import { AGENT_DB_FILENAME, GLOBAL_DB_RELATIVE } from "../state/paths.js";
import { linkEscape, pathLengthProblem, roleAtArchivePath } from "./archive-layout.js";
import type { PlannedAsset } from "./asset-plan.js";
import { PAYLOAD_DIR, type DatabaseRole, type SkippedItem } from "./types.js";

/** Smallest possible SQLite file (one 512-byte page): smaller files are never opened to sniff the header. */
const MIN_SQLITE_SIZE = 512;
const SIDECAR = /-(wal|shm|journal)$/;

export interface WalkDir {
  type: "dir";
  archivePath: string;
}

export interface WalkFile {
  type: "file";
  archivePath: string;
  absPath: string;
  size: number;
  mode: number;
  mtimeMs: number;
  /** Set when the file starts with the SQLite header: it is archived as a VACUUM INTO snapshot. */
  database?: { role: DatabaseRole; agentId: string | null };
}

export interface WalkSymlink {
  type: "symlink";
  archivePath: string;
  target: string;
  absPath: string;
}

export type WalkEntry = WalkDir | WalkFile | WalkSymlink;

export interface WalkResult {
  entries: WalkEntry[];
  skipped: SkippedItem[];
  warnings: string[];
  /** Per asset archivePath: the relative paths of its backup dirs that were met and left out. */
  excluded: Map<string, string[]>;
}

export interface WalkOptions {
  /** Absolute paths never entered (backup dirs, our own staging and temp files). */
  exclude: string[];
}

/** Archived files are private: 0600, or 0700 when the owner could execute it (scripts in workspaces). */
export function archivedFileMode(mode: number): number {
  return mode & 0o100 ? 0o700 : 0o600;
}

function databaseRole(asset: PlannedAsset, rel: string): { role: DatabaseRole; agentId: string | null } {
  if (asset.kind !== "state") return { role: "other", agentId: null };
  if (rel === GLOBAL_DB_RELATIVE.split(path.sep).join("/")) return { role: "global", agentId: null };
  const m = /^agents\/([^/]+)\/agent\/([^/]+)$/.exec(rel);
  if (m && m[2] === AGENT_DB_FILENAME && tryNormalizeAgentId(m[1]!) === m[1]) return { role: "agent", agentId: m[1]! };
  return { role: "other", agentId: null };
}

function specialKind(st: fs.Stats): string {
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "device";
  return "special file";
}

/** The path is gone (or was swapped for a symlink, which O_NOFOLLOW refuses): a vanished file, not a failure. */
export function isVanished(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP";
}

/** Every parent folder of the asset roots (`payload`, `payload/config`, …), each once, parents first. */
function parentDirs(assets: readonly PlannedAsset[]): string[] {
  const dirs = new Set<string>();
  for (const asset of assets) {
    const parts = asset.archivePath.split("/");
    for (let i = 1; i < parts.length; i += 1) dirs.add(parts.slice(0, i).join("/"));
  }
  if (dirs.size === 0) dirs.add(PAYLOAD_DIR);
  return [...dirs].sort((a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : 1));
}

export function walkAssets(assets: readonly PlannedAsset[], options: WalkOptions): WalkResult {
  const entries: WalkEntry[] = parentDirs(assets).map((archivePath) => ({ type: "dir", archivePath }));
  const skipped: SkippedItem[] = [];
  const warnings: string[] = [];
  const excluded = new Set(options.exclude.map((p) => path.resolve(p)));
  const leftOut = new Map<string, string[]>();

  const addFile = (asset: PlannedAsset, abs: string, rel: string, archivePath: string, st: fs.Stats): void => {
    const file: WalkFile = { type: "file", archivePath, absPath: abs, size: st.size, mode: archivedFileMode(st.mode), mtimeMs: st.mtimeMs };
    if (st.size >= MIN_SQLITE_SIZE && isSqliteFile(abs)) file.database = databaseRole(asset, rel);
    entries.push(file);
  };

  for (const asset of assets) {
    if (asset.type === "file") {
      try {
        const st = fs.statSync(asset.realPath);
        addFile(asset, asset.realPath, "", asset.archivePath, st);
      } catch (error) {
        if (!isVanished(error)) throw error;
        warnings.push(`${asset.sourcePath} vanished while the backup was being planned; it is not in the archive.`);
        skipped.push({ kind: asset.kind, path: asset.sourcePath, reason: "vanished during the walk" });
      }
      continue;
    }
    const backupDirs = new Set(asset.excludedAbsolute);
    entries.push({ type: "dir", archivePath: asset.archivePath });
    // Explicit stack instead of recursion: deep trees cannot overflow it. Reversed pushes keep sorted order.
    const stack: Array<{ abs: string; rel: string }> = [{ abs: asset.realPath, rel: "" }];
    while (stack.length > 0) {
      const { abs: dir, rel: dirRel } = stack.pop()!;
      let names: string[];
      try {
        names = fs.readdirSync(dir).sort();
      } catch (error) {
        if (isVanished(error)) warnings.push(`${dir} vanished during the walk; it is not in the archive.`);
        else warnings.push(`Cannot read ${dir} (${describeError(error)}); it is not in the archive.`);
        skipped.push({ kind: "file", path: dir, reason: isVanished(error) ? "vanished during the walk" : "unreadable" });
        continue;
      }
      const subdirs: Array<{ abs: string; rel: string }> = [];
      for (const name of names) {
        const abs = path.join(dir, name);
        const rel = dirRel === "" ? name : `${dirRel}/${name}`;
        const archivePath = `${asset.archivePath}/${rel}`;
        if (excluded.has(abs)) continue;
        if (/[\n\r]/.test(name)) {
          // Tar readers split pax records on newlines; such a name could not be read back faithfully.
          skipped.push({ kind: "file", path: abs, reason: "name contains a line break (not archivable)" });
          warnings.push(`${JSON.stringify(abs)} has a line break in its name and was not archived.`);
          continue;
        }
        const unrestorable = pathLengthProblem(archivePath);
        if (unrestorable) {
          skipped.push({ kind: "file", path: abs, reason: `archive path ${unrestorable} (not archivable)` });
          warnings.push(`${abs} was not archived: its archive path ${unrestorable}.`);
          continue;
        }
        if (backupDirs.has(abs)) {
          skipped.push({ kind: "file", path: abs, reason: "backup directory (never archived)" });
          leftOut.set(asset.archivePath, [...(leftOut.get(asset.archivePath) ?? []), rel]);
          continue;
        }
        let st: fs.Stats;
        try {
          st = fs.lstatSync(abs);
        } catch (error) {
          if (!isVanished(error)) throw error;
          warnings.push(`${abs} vanished during the walk; it is not in the archive.`);
          continue;
        }
        if (!st.isFile() && (roleAtArchivePath(archivePath) || sidecarOfDatabase(abs, name))) {
          // Restore refuses anything but a database file at a database path or under a sidecar name beside one.
          const what = st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "directory" : "special file";
          const where = roleAtArchivePath(archivePath) ? "at a database path" : "under a SQLite sidecar name beside a database";
          skipped.push({ kind: "special", path: abs, reason: `${what} ${where} (not archivable)` });
          warnings.push(`${abs} is a ${what} ${where}; it was not archived.`);
          continue;
        }
        if (st.isSymbolicLink()) {
          try {
            entries.push({ type: "symlink", archivePath, target: fs.readlinkSync(abs), absPath: abs });
          } catch (error) {
            if (!isVanished(error)) throw error;
            warnings.push(`${abs} vanished during the walk; it is not in the archive.`);
          }
        } else if (st.isDirectory()) {
          entries.push({ type: "dir", archivePath });
          subdirs.push({ abs, rel });
        } else if (st.isFile()) {
          if (sidecarOfDatabase(abs, name)) {
            skipped.push({ kind: "sidecar", path: abs, reason: "live SQLite sidecar (its database is archived as a snapshot)" });
            continue;
          }
          addFile(asset, abs, rel, archivePath, st);
        } else {
          skipped.push({ kind: "special", path: abs, reason: `${specialKind(st)} (not archivable)` });
        }
      }
      for (let i = subdirs.length - 1; i >= 0; i -= 1) stack.push(subdirs[i]!);
    }
  }
  return { entries: dropEscapingLinks(entries, assets, skipped), skipped, warnings, excluded: leftOut };
}

function sidecarOfDatabase(abs: string, name: string): boolean {
  const base = SIDECAR.exec(name);
  return base !== null && isSqliteFile(abs.slice(0, abs.length - base[0].length));
}

/**
 * Links whose target leads out of their asset (absolute, `..` past the root, or through another link that
 * does) are not archived: restore would refuse them. Repeated until the links left resolve among themselves,
 * exactly as verify will check them.
 */
function dropEscapingLinks(entries: WalkEntry[], assets: readonly PlannedAsset[], skipped: SkippedItem[]): WalkEntry[] {
  let kept = entries;
  for (;;) {
    const links = kept.filter((e): e is WalkSymlink => e.type === "symlink");
    const targets = new Map(links.map((l) => [l.archivePath, l.target]));
    const escaping = new Set<WalkSymlink>();
    for (const link of links) {
      const asset = assets.find((a) => link.archivePath.startsWith(`${a.archivePath}/`));
      const escape = asset ? linkEscape(link.archivePath, link.target, asset.archivePath, targets) : "it belongs to no asset";
      if (!escape) continue;
      escaping.add(link);
      skipped.push({ kind: "symlink", path: link.absPath, reason: `link leaves the ${asset?.kind ?? "archived"} tree (${escape}); only links within their tree are archived` });
    }
    if (escaping.size === 0) return kept;
    kept = kept.filter((e) => !(e.type === "symlink" && escaping.has(e)));
  }
}

/**
 * The order entries go into the archive: directories, the plain files, then databases largest first. On create
 * the plain files stream while the first VACUUM INTO runs; on restore each database's integrity check starts as
 * soon as it is extracted and overlaps with the next one, so the biggest checks start first and the last one to
 * finish is the smallest.
 */
export function archiveOrder(entries: readonly WalkEntry[]): WalkEntry[] {
  const dirs = entries.filter((e) => e.type !== "file");
  const files = entries.filter((e): e is WalkFile => e.type === "file");
  const databases = files.filter((f) => f.database).sort((a, b) => b.size - a.size);
  return [...dirs, ...files.filter((f) => !f.database), ...databases];
}
