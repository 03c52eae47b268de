// Restore preconditions computed from the plan: where stored paths move, the disks can hold it, and each destination's boundary.
import fs from "node:fs";
import path from "node:path";
import { OperationError } from "../core/errors.js";
import { checkOwnedPath } from "../state/owned-path.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import type { PathMove } from "../state/sqlite-snapshot.js";
import { realpathOrNull } from "./asset-plan.js";
import type { RestorePlan, RestorePlanItem } from "./restore-plan.js";
import type { BackupManifest } from "./types.js";

/**
 * The stored absolute paths a restore must move: the archive's state dir, config path and credentials dir to
 * where they are restored (the live paths in place, the target's folders with --target).
 */
export function pathMoves(manifest: BackupManifest, plan: RestorePlan, paths: StatePaths): PathMove[] {
  const moves: PathMove[] = [];
  const live = { state: paths.stateDir, config: paths.configPath, credentials: paths.credentialsDir } as const;
  const recorded = { state: manifest.paths.stateDir, config: manifest.paths.configPath, credentials: manifest.paths.credentialsDir } as const;
  for (const kind of ["state", "config", "credentials"] as const) {
    const item = plan.items.find((i) => i.kind === kind);
    if (!item) continue;
    moves.push({ from: recorded[kind], to: plan.target ? item.destination : live[kind] });
  }
  return moves.filter((m) => m.from !== m.to);
}

function formatMiB(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Headroom kept free beyond the declared bytes (directories, SQLite's WAL switch, file-system rounding). */
const SPACE_MARGIN = 16 * 1024 * 1024;

/**
 * Refuses before a byte is written when a file system cannot hold what the manifest declares for the assets
 * staged on it: the archive's sizes bound the disk a restore uses.
 */
export function checkFreeSpace(plan: RestorePlan): void {
  const need = new Map<number, { bytes: number; at: string; free: number }>();
  for (const item of plan.items) {
    if (item.nestedIn) continue;
    let dir = plan.target && item.destination.startsWith(plan.target) ? plan.target : path.dirname(item.destination);
    while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    let dev: number;
    let free: number;
    try {
      dev = fs.statSync(dir).dev;
      const st = fs.statfsSync(dir);
      free = st.bavail * st.bsize;
    } catch {
      continue; // No statfs here: the write itself reports ENOSPC and the restore rolls back.
    }
    const bytes = plan.items.filter((i) => i === item || i.nestedIn === item.archivePath).reduce((n, i) => n + i.bytes, 0);
    const entry = need.get(dev) ?? { bytes: 0, at: dir, free };
    entry.bytes += bytes;
    need.set(dev, entry);
  }
  for (const { bytes, at, free } of need.values()) {
    if (bytes + SPACE_MARGIN > free) {
      throw new OperationError(
        "insufficient_space",
        `Restore needs about ${formatMiB(bytes)} on the file system of ${at} (the archive's declared sizes) but only ${formatMiB(free)} is free; free some space or restore with --target elsewhere (nothing was written).`,
        { path: at },
      );
    }
  }
}

/**
 * The boundary a plan item's moves and deletes are checked against: the --target dir; the real state dir for a
 * config or credentials dir inside it (no component below it may be a link); else the destination's parent,
 * which the operator chose (the state dir itself, a separate config, a workspace: only the last component is ours).
 */
export function boundaryOf(item: RestorePlanItem, plan: RestorePlan, stateReal: string | null): string {
  if (plan.target) return path.resolve(plan.target);
  if (item.kind !== "workspace" && stateReal && item.destination !== stateReal && isPathInside(stateReal, item.destination)) return stateReal;
  return path.dirname(item.destination);
}

/**
 * What is at each destination now, checked the way the swap will check it: no link on the way below its
 * boundary, and a file or directory of the asset's type (or nothing). Run by --dry-run too, so it fails the same way.
 */
export function checkDestinations(plan: RestorePlan, paths: StatePaths): void {
  const stateReal = realpathOrNull(paths.stateDir);
  for (const item of plan.items) {
    if (item.nestedIn) continue;
    checkOwnedPath(boundaryOf(item, plan, stateReal), item.destination, { action: "restore over", allowMissing: true, expect: item.type });
  }
}
