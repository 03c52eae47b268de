// Maps a verified manifest's assets to restore destinations (in place, or under --target) and checks they are safe.
import fs from "node:fs";
import path from "node:path";
import { OperationError, UsageError } from "../core/errors.js";
import { expandUserPath, isPathInside, type StatePaths } from "../state/paths.js";
import { pathExists } from "../state/private-fs.js";
import { realpathOrNull } from "./asset-plan.js";
import { archivePathInside } from "./manifest.js";
import { PAYLOAD_DIR, type AssetKind, type BackupAsset, type BackupManifest, type SkippedItem } from "./types.js";

export interface RestorePlanItem {
  kind: AssetKind;
  archivePath: string;
  type: "dir" | "file";
  /** Where the asset goes (symlinks at the destination resolved). */
  destination: string;
  action: "replace" | "create";
  files: number;
  bytes: number;
  /** Set when the destination lies inside another item's destination: it is staged inside that item's tree. */
  nestedIn?: string;
  /** Paths inside a replaced directory that the archive left out on purpose (backup dirs): carried over. */
  keep: string[];
}

export interface RestorePlan {
  archivePath: string;
  target: string | null;
  items: RestorePlanItem[];
  skipped: SkippedItem[];
}

export interface PlanRestoreOptions {
  paths: StatePaths;
  archivePath: string;
  target?: string;
  includeWorkspace?: boolean;
}

/** Resolves symlinks at the destination so the swap happens where the data lives, on its file system. */
function resolveDestination(p: string): string {
  return realpathOrNull(p) ?? path.resolve(p);
}

/** `--target` must be a fresh directory: missing, or empty. */
export function checkTargetDir(target: string): void {
  let names: string[];
  try {
    if (!fs.statSync(target).isDirectory()) throw new UsageError(`--target ${target} is not a directory; pass a new or empty directory.`, "target_not_empty", { path: target });
    names = fs.readdirSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (names.length > 0) throw new UsageError(`--target ${target} is not empty; pass a new or empty directory (nothing was restored).`, "target_not_empty", { path: target });
}

/** A workspace destination taken from the archive must not be a system or parent-of-state location. */
function unsafeWorkspaceReason(dest: string, paths: StatePaths): string | null {
  if (!path.isAbsolute(dest)) return "its recorded path is not absolute";
  const guarded = [paths.homeDir, paths.stateDir, paths.backupDir, paths.configPath, paths.credentialsDir].map((p) => resolveDestination(p));
  if (path.parse(dest).root === dest) return "it is a file-system root";
  if (guarded.some((g) => isPathInside(dest, g))) return "it contains the home, state, config, credentials or backup path";
  if (isPathInside(resolveDestination(paths.stateDir), dest)) return "it lies inside the state dir";
  return null;
}

function defaultDestination(asset: BackupAsset, paths: StatePaths): string {
  switch (asset.kind) {
    case "state":
      return paths.stateDir;
    case "config":
      return paths.configPath;
    case "credentials":
      return paths.credentialsDir;
    case "workspace":
      return asset.sourcePath;
  }
}

export function planRestore(manifest: BackupManifest, options: PlanRestoreOptions): RestorePlan {
  const { paths } = options;
  const target = options.target ? expandUserPath(options.target, paths.homeDir) : null;
  if (target) checkTargetDir(target);
  const items: RestorePlanItem[] = [];
  const skipped: SkippedItem[] = [];
  for (const asset of manifest.assets) {
    let destination: string;
    if (target) {
      destination = path.join(target, ...asset.archivePath.slice(PAYLOAD_DIR.length + 1).split("/"));
    } else {
      destination = resolveDestination(defaultDestination(asset, paths));
      if (asset.kind === "workspace") {
        if (options.includeWorkspace === false) {
          skipped.push({ kind: "workspace", path: asset.sourcePath, reason: "--no-include-workspace" });
          continue;
        }
        const unsafe = unsafeWorkspaceReason(destination, paths);
        if (unsafe) {
          skipped.push({ kind: "workspace", path: asset.sourcePath, reason: `not restored in place: ${unsafe} (use --target to extract it)` });
          continue;
        }
      }
    }
    const files = manifest.files.filter((f) => archivePathInside(asset.archivePath, f.archivePath));
    const keep = [...asset.excluded];
    if (!target && asset.kind === "state") {
      // Backup dirs inside the live state dir are carried over too, even if the archive was made elsewhere.
      for (const dir of [paths.backupDir, path.join(paths.stateDir, "backups")]) {
        if (isPathInside(paths.stateDir, dir) && dir !== paths.stateDir) keep.push(path.relative(paths.stateDir, dir).split(path.sep).join("/"));
      }
    }
    items.push({
      kind: asset.kind,
      archivePath: asset.archivePath,
      type: asset.type,
      destination,
      action: pathExists(destination) ? "replace" : "create",
      files: files.length,
      bytes: files.reduce((n, f) => n + f.size, 0),
      keep: [...new Set(keep)],
    });
  }
  // The archive being restored is carried over if it lives inside a tree that is replaced.
  const archiveReal = realpathOrNull(options.archivePath);
  for (const item of items) {
    if (archiveReal && item.type === "dir" && item.action === "replace" && isPathInside(item.destination, archiveReal)) {
      item.keep.push(path.relative(item.destination, archiveReal).split(path.sep).join("/"));
    }
  }
  // Outer destinations first; an inner one is staged inside its outer's tree and swapped with it.
  items.sort((a, b) => a.destination.length - b.destination.length);
  for (const item of items) {
    const outer = items.find((o) => o !== item && o.type === "dir" && isPathInside(o.destination, item.destination));
    if (!outer) continue;
    if (outer.destination === item.destination) {
      throw new UsageError(`Two assets of the archive (${outer.archivePath}, ${item.archivePath}) would both restore to ${item.destination}; restore with --target instead.`, "restore_conflict");
    }
    const rel = path.relative(outer.destination, item.destination).split(path.sep).join("/");
    const clash = [...manifest.files, ...manifest.directories, ...manifest.symlinks].find((e) => archivePathInside(`${outer.archivePath}/${rel}`, e.archivePath));
    if (clash) {
      throw new UsageError(`${item.kind} ${item.archivePath} would restore to ${item.destination}, which the ${outer.kind} asset also holds (${clash.archivePath}); restore with --target instead.`, "restore_conflict");
    }
    item.nestedIn = outer.archivePath;
    item.action = "create";
  }
  if (items.length === 0) {
    throw new OperationError("nothing_to_restore", `Nothing to restore from ${options.archivePath}: every asset was skipped (${skipped.map((s) => s.reason).join("; ")}).`);
  }
  return { archivePath: options.archivePath, target, items, skipped };
}
