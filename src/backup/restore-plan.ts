// Maps a manifest's assets to restore destinations (in place, or under --target) inside the trust boundary, refusing the rest.
import fs from "node:fs";
import path from "node:path";
import { OperationError, UsageError } from "../core/errors.js";
import { expandUserPath, isPathInside, type StatePaths } from "../state/paths.js";
import { lstatOrNull, pathExists, symlinkOnPath } from "../state/private-fs.js";
import { realpathOrNull } from "./asset-plan.js";
import { readConfiguredWorkspaces, type ConfiguredWorkspace } from "./config-workspaces.js";
import { archivePathInside } from "./manifest.js";
import { preRestorePath } from "./restore-swap.js";
import { PAYLOAD_DIR, type AssetKind, type BackupAsset, type BackupManifest, type SkippedItem } from "./types.js";

export interface RestorePlanItem {
  kind: AssetKind;
  archivePath: string;
  type: "dir" | "file";
  /** Where the asset goes (symlinks at the destination resolved). */
  destination: string;
  /** Why a workspace goes where it goes: the config entry naming it, or `--workspace`. */
  origin?: string;
  action: "replace" | "create";
  files: number;
  bytes: number;
  /** Set when the destination lies inside another item's destination: it is staged inside that item's tree. */
  nestedIn?: string;
  /** Paths inside a replaced directory that the archive left out on purpose (backup dirs): carried over. */
  keep: string[];
  /**
   * For a replaced destination: where its current copy is kept (`<destination>.pre-restore-<ts>`), never deleted
   * by restore. A nested item's current copy stays inside its outer item's kept copy (this names it there).
   */
  keptAt?: string;
}

export interface RestorePlan {
  archivePath: string;
  target: string | null;
  items: RestorePlanItem[];
  skipped: SkippedItem[];
}

/** `--workspace <recorded>=<dir>`: where the operator wants one archived workspace restored. */
export interface WorkspaceDestination {
  /** The workspace's recorded path (its manifest sourcePath) or its archive folder name (`1-project`). */
  from: string;
  to: string;
}

export interface PlanRestoreOptions {
  paths: StatePaths;
  archivePath: string;
  target?: string;
  includeWorkspace?: boolean;
  workspaceDestinations?: WorkspaceDestination[];
  /** The restore's stamp (compactStamp): names the `.pre-restore-<stamp>` copies the plan shows. */
  stamp?: string;
}

/** An asset restore will not write, with the reason; all of them are reported together. */
interface Refusal {
  asset: BackupAsset;
  destination: string | null;
  reason: string;
}

/** The longest path (bytes) the kernel takes; deeper archive paths under a destination are refused up front. */
const PATH_MAX_BYTES = 4095;
/** Room for the staging sibling's name (`.<name>.restore-<stamp>-<pid>-XXXXXX`) beside a destination. */
const STAGING_NAME_BYTES = 64;

/** The real path of `p` when it exists, else `p` resolved (its missing tail cannot hold a link yet). */
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

interface Guarded {
  home: string;
  state: string;
  backup: string;
  config: string;
  credentials: string;
}

function guardedPaths(paths: StatePaths): Guarded {
  return {
    home: resolveDestination(paths.homeDir),
    state: resolveDestination(paths.stateDir),
    backup: resolveDestination(paths.backupDir),
    config: resolveDestination(paths.configPath),
    credentials: resolveDestination(paths.credentialsDir),
  };
}

/** Why a workspace may not be restored to `dest` (already resolved), or null. */
function unsafeWorkspaceReason(dest: string, g: Guarded): string | null {
  if (path.parse(dest).root === dest) return "it is a file-system root";
  if (dest === g.home) return "it is the home directory itself";
  if (isPathInside(dest, g.state)) return "it is the state dir or one of its ancestors";
  if (isPathInside(g.state, dest)) return "it lies inside the state dir (the state asset holds it)";
  if (isPathInside(dest, g.backup) || isPathInside(g.backup, dest)) return "it is, contains or lies inside the backup directory";
  if (isPathInside(dest, g.home)) return "it contains the home directory";
  if (isPathInside(dest, g.config) || isPathInside(dest, g.credentials)) return "it contains the config file or the credentials dir";
  if (isPathInside(g.credentials, dest)) return "it lies inside the credentials dir";
  const st = lstatOrNull(dest);
  if (st && !st.isDirectory()) return "something that is not a directory is there";
  return null;
}

/**
 * Where a workspace asset may go in place: the path the operator named with --workspace, or the same path
 * named as a workspace by the current config (the archive's own config is never trusted for this).
 */
function workspaceDestination(asset: BackupAsset, options: PlanRestoreOptions, configured: ConfiguredWorkspace[]): { destination: string; origin: string } | string {
  const named = options.workspaceDestinations?.find((w) => w.from === asset.sourcePath || w.from === path.posix.basename(asset.archivePath));
  if (named) return { destination: resolveDestination(named.to), origin: `--workspace ${named.from}=${named.to}` };
  const recorded = path.resolve(asset.sourcePath);
  const match = configured.find((w) => path.resolve(w.path) === recorded || resolveDestination(w.path) === recorded);
  if (match) return { destination: resolveDestination(match.path), origin: `current config ${match.origin}` };
  return `${asset.sourcePath} is not a workspace in the current config (${options.paths.configPath}); name a destination with --workspace ${asset.sourcePath}=<dir>, use --target, or pass --no-include-workspace`;
}

/**
 * An in-place destination for the state, config or credentials asset. The state dir itself may be a link
 * (the operator's layout); below it nothing is followed: a link on the way is a refusal.
 */
function stateSideDestination(asset: BackupAsset, paths: StatePaths, g: Guarded): string | Refusal {
  if (asset.kind === "state") {
    const st = lstatOrNull(g.state);
    if (st && !st.isDirectory()) return { asset, destination: paths.stateDir, reason: "the state dir path holds something that is not a directory" };
    return g.state;
  }
  const configured = asset.kind === "config" ? paths.configPath : paths.credentialsDir;
  const lexical = path.resolve(configured);
  const destination = isPathInside(path.resolve(paths.stateDir), lexical) ? path.join(g.state, path.relative(path.resolve(paths.stateDir), lexical)) : resolveDestination(configured);
  if (isPathInside(g.state, destination)) {
    const link = symlinkOnPath(g.state, destination);
    if (link) return { asset, destination, reason: `${link} inside the state dir is a symbolic link; restore never writes through a link` };
  }
  const st = lstatOrNull(destination);
  if (st && asset.type === "file" && st.isDirectory()) return { asset, destination, reason: "a directory is where the config file goes" };
  if (st && asset.type === "dir" && !st.isDirectory()) return { asset, destination, reason: "something that is not a directory is where the credentials dir goes" };
  return destination;
}

function deepestPathProblem(asset: BackupAsset, destination: string, manifest: BackupManifest): string | null {
  let deepest = 0;
  for (const e of [...manifest.files, ...manifest.directories, ...manifest.symlinks]) {
    if (archivePathInside(asset.archivePath, e.archivePath)) deepest = Math.max(deepest, Buffer.byteLength(e.archivePath) - Buffer.byteLength(asset.archivePath));
  }
  const longest = Buffer.byteLength(destination) + STAGING_NAME_BYTES + deepest;
  return longest > PATH_MAX_BYTES ? `its deepest path would be about ${longest} bytes there, over the ${PATH_MAX_BYTES} the kernel takes; restore with --target to a shorter path` : null;
}

function refusalError(archivePath: string, refusals: readonly Refusal[]): OperationError {
  const describe = (r: Refusal): string => `${r.asset.kind} ${r.asset.sourcePath}${r.destination && r.destination !== r.asset.sourcePath ? ` → ${r.destination}` : ""}: ${r.reason}`;
  // One refusal is one line; several get a summary line and one line each.
  const message =
    refusals.length === 1
      ? `backup restore refused the ${describe(refusals[0]!)}; nothing was written (archive ${archivePath}).`
      : `backup restore refused ${refusals.length} assets of ${archivePath}; nothing was written:\n${refusals.map((r) => `  ${describe(r)}`).join("\n")}`;
  return new OperationError("restore_refused", message, { path: archivePath });
}

export function planRestore(manifest: BackupManifest, options: PlanRestoreOptions): RestorePlan {
  const { paths } = options;
  const target = options.target ? expandUserPath(options.target, paths.homeDir) : null;
  if (target) checkTargetDir(target);
  const named = options.workspaceDestinations ?? [];
  if (target && named.length > 0) throw new UsageError("--workspace cannot be combined with --target (with --target every asset goes under the target).", "usage");
  for (const w of named) {
    const known = manifest.assets.some((a) => a.kind === "workspace" && (a.sourcePath === w.from || path.posix.basename(a.archivePath) === w.from));
    if (!known) {
      const list = manifest.assets.filter((a) => a.kind === "workspace").map((a) => `${a.sourcePath} (${path.posix.basename(a.archivePath)})`);
      throw new UsageError(`--workspace ${w.from}=… names no workspace of the archive; it holds ${list.length > 0 ? list.join(", ") : "none"}.`, "usage");
    }
    if (!path.isAbsolute(w.to)) throw new UsageError(`--workspace ${w.from}=${w.to}: the destination must be an absolute path.`, "usage");
  }
  const guarded = guardedPaths(paths);
  const configured = target ? [] : readConfiguredWorkspaces(paths).workspaces;
  const items: RestorePlanItem[] = [];
  const skipped: SkippedItem[] = [];
  const refusals: Refusal[] = [];
  for (const asset of manifest.assets) {
    let destination: string;
    let origin: string | undefined;
    if (asset.kind === "workspace" && options.includeWorkspace === false) {
      skipped.push({ kind: "workspace", path: asset.sourcePath, reason: "--no-include-workspace" });
      continue;
    }
    if (target) {
      destination = path.join(target, ...asset.archivePath.slice(PAYLOAD_DIR.length + 1).split("/"));
    } else if (asset.kind === "workspace") {
      const chosen = workspaceDestination(asset, options, configured);
      if (typeof chosen === "string") {
        refusals.push({ asset, destination: null, reason: chosen });
        continue;
      }
      const unsafe = unsafeWorkspaceReason(chosen.destination, guarded);
      if (unsafe) {
        refusals.push({ asset, destination: chosen.destination, reason: `never restored there: ${unsafe} (from ${chosen.origin})` });
        continue;
      }
      destination = chosen.destination;
      origin = chosen.origin;
    } else {
      const chosen = stateSideDestination(asset, paths, guarded);
      if (typeof chosen !== "string") {
        refusals.push(chosen);
        continue;
      }
      destination = chosen;
    }
    const tooDeep = deepestPathProblem(asset, destination, manifest);
    if (tooDeep) {
      refusals.push({ asset, destination, reason: tooDeep });
      continue;
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
      ...(origin ? { origin } : {}),
      action: pathExists(destination) ? "replace" : "create",
      files: files.length,
      bytes: files.reduce((n, f) => n + f.size, 0),
      keep: [...new Set(keep)],
    });
  }
  if (refusals.length > 0) throw refusalError(options.archivePath, refusals);
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
  if (options.stamp) {
    for (const item of items) if (item.action === "replace" && !item.nestedIn) item.keptAt = preRestorePath(item.destination, options.stamp);
    // A nested destination that exists is replaced too: its current copy leaves inside its outer item's kept copy.
    for (const item of items) {
      const outer = item.nestedIn ? items.find((o) => o.archivePath === item.nestedIn) : undefined;
      if (outer?.keptAt && pathExists(item.destination)) item.keptAt = path.join(outer.keptAt, path.relative(outer.destination, item.destination));
    }
  }
  if (items.length === 0) {
    throw new OperationError("nothing_to_restore", `Nothing to restore from ${options.archivePath}: every asset was skipped (${skipped.map((s) => s.reason).join("; ")}).`);
  }
  return { archivePath: options.archivePath, target, items, skipped };
}
