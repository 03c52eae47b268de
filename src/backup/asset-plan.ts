// Decides what a backup holds: the state dir, config and credentials outside it, workspaces; lists what is skipped.
import fs from "node:fs";
import path from "node:path";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { readConfiguredWorkspaces } from "./config-workspaces.js";
import { PAYLOAD_DIR, type BackupAsset, type SkippedItem } from "./types.js";

export interface AssetPlanOptions {
  paths: StatePaths;
  onlyConfig?: boolean;
  includeWorkspace?: boolean;
  /**
   * Only a plain `backup create` fails on a config that does not parse (the workspaces it names are unknown); the
   * safety backups before a restore or reset go on without them, with a warning (those commands may be the fix).
   */
  failOnUnparseableConfig?: boolean;
}

/** An asset plus what the walk needs: the resolved real path and the absolute paths to leave out. */
export interface PlannedAsset extends BackupAsset {
  realPath: string;
  excludedAbsolute: string[];
}

export interface AssetPlan {
  assets: PlannedAsset[];
  skipped: SkippedItem[];
  warnings: string[];
  /** Backup directories: excluded from every asset, and the only places inside an asset an archive may be written. */
  backupDirs: string[];
}

/** realpath when the path exists (symlinks resolved), else null. */
export function realpathOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

/** The real path of `p`, or of its nearest existing ancestor with the rest appended (for paths not created yet). */
export function resolveRealish(p: string): string {
  const abs = path.resolve(p);
  const real = realpathOrNull(abs);
  if (real) return real;
  const parent = path.dirname(abs);
  if (parent === abs) return abs;
  return path.join(resolveRealish(parent), path.basename(abs));
}

/** What `p` is after following symlinks, or null when it does not exist. */
export function statKind(p: string): "dir" | "file" | "other" | null {
  try {
    const st = fs.statSync(p);
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  } catch {
    return null;
  }
}

/** A short, path-safe name for an archive folder. */
function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "");
  return cleaned === "" ? "workspace" : cleaned.slice(0, 60);
}

export function planAssets(options: AssetPlanOptions): AssetPlan {
  const { paths } = options;
  const assets: PlannedAsset[] = [];
  const skipped: SkippedItem[] = [];
  const warnings: string[] = [];
  const backupDirs = [...new Set([paths.backupDir, path.join(paths.stateDir, "backups")].map(resolveRealish))];

  const add = (asset: BackupAsset, realPath: string): void => {
    assets.push({ ...asset, realPath, excludedAbsolute: [] });
  };

  const configReal = realpathOrNull(paths.configPath);
  const configKind = configReal ? statKind(configReal) : null;
  const configAsset = (): void => {
    if (!configReal) skipped.push({ kind: "config", path: paths.configPath, reason: "missing" });
    else if (configKind !== "file") skipped.push({ kind: "config", path: paths.configPath, reason: "not a regular file" });
    else add({ kind: "config", sourcePath: paths.configPath, archivePath: `${PAYLOAD_DIR}/config/${safeName(path.basename(paths.configPath))}`, type: "file", excluded: [] }, configReal);
  };

  if (options.onlyConfig) {
    configAsset();
    return { assets, skipped, warnings, backupDirs };
  }

  const stateReal = realpathOrNull(paths.stateDir);
  if (!stateReal) skipped.push({ kind: "state", path: paths.stateDir, reason: "missing" });
  else if (statKind(stateReal) !== "dir") skipped.push({ kind: "state", path: paths.stateDir, reason: "not a directory" });
  else add({ kind: "state", sourcePath: paths.stateDir, archivePath: `${PAYLOAD_DIR}/state`, type: "dir", excluded: [] }, stateReal);
  const stateAsset = assets.find((a) => a.kind === "state");
  const coveredByState = (real: string): boolean => stateAsset !== undefined && isPathInside(stateAsset.realPath, real);

  if (configReal && coveredByState(configReal)) skipped.push({ kind: "config", path: paths.configPath, reason: "covered by the state dir" });
  else configAsset();

  const credentialsReal = realpathOrNull(paths.credentialsDir);
  if (!credentialsReal) skipped.push({ kind: "credentials", path: paths.credentialsDir, reason: "missing" });
  else if (coveredByState(credentialsReal)) skipped.push({ kind: "credentials", path: paths.credentialsDir, reason: "covered by the state dir" });
  else if (statKind(credentialsReal) !== "dir") skipped.push({ kind: "credentials", path: paths.credentialsDir, reason: "not a directory" });
  else add({ kind: "credentials", sourcePath: paths.credentialsDir, archivePath: `${PAYLOAD_DIR}/credentials`, type: "dir", excluded: [] }, credentialsReal);

  if (options.includeWorkspace !== false) {
    const configured = readConfiguredWorkspaces(paths);
    if (configured.unparseable && options.failOnUnparseableConfig) throw configured.unparseable;
    warnings.push(...configured.warnings);
    // Shortest first, so a workspace inside another one is found covered by it.
    const candidates = configured.workspaces
      .map((w) => ({ ...w, real: realpathOrNull(w.path) }))
      .sort((a, b) => (a.real ?? a.path).length - (b.real ?? b.path).length);
    let index = 0;
    for (const w of candidates) {
      if (!w.real) {
        skipped.push({ kind: "workspace", path: w.path, reason: `missing (from ${w.origin})` });
        continue;
      }
      if (statKind(w.real) !== "dir") {
        skipped.push({ kind: "workspace", path: w.path, reason: `not a directory (from ${w.origin})` });
        continue;
      }
      const cover = assets.find((a) => a.type === "dir" && isPathInside(a.realPath, w.real!));
      if (cover) {
        skipped.push({ kind: "workspace", path: w.path, reason: `covered by the ${cover.kind} asset ${cover.sourcePath}` });
        continue;
      }
      const inner = assets.find((a) => a.kind !== "workspace" && isPathInside(w.real!, a.realPath));
      if (inner) {
        // Restoring such a workspace would swap the other asset away with it: it is left to be backed up on its own.
        skipped.push({ kind: "workspace", path: w.path, reason: `contains the ${inner.kind} asset ${inner.sourcePath}; back it up separately` });
        continue;
      }
      index += 1;
      add({ kind: "workspace", sourcePath: w.path, archivePath: `${PAYLOAD_DIR}/workspaces/${index}-${safeName(path.basename(w.real))}`, type: "dir", excluded: [] }, w.real);
    }
  }

  // Excluded whether they exist yet or not (the first backup creates its dir after planning); the walk
  // reports the ones it met, and those become the manifest's `excluded`.
  for (const asset of assets) {
    if (asset.type !== "dir") continue;
    for (const dir of backupDirs) {
      if (dir !== asset.realPath && isPathInside(asset.realPath, dir)) asset.excludedAbsolute.push(dir);
    }
  }
  return { assets, skipped, warnings, backupDirs };
}
