// Old layouts moved into place by --fix: a legacy ~/.clawdbot-style state dir, the pre-multi-agent agent/ dir.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import { checkOwnedPath } from "../state/owned-path.js";
import { ensurePrivateDir, ensurePrivateDirBelow, fsyncDir } from "../state/private-fs.js";
import { legacyStateDirItems } from "./inventory.js";
import type { LayoutItem } from "./types.js";

export interface LayoutResult {
  changes: string[];
  warnings: string[];
}

/**
 * Moves the legacy state dir to the default `~/.openclaw` (one rename, same file system), only when the
 * latter does not exist. Runs before anything opens or creates the state dir.
 */
export function moveLegacyStateDir(paths: StatePaths): LayoutResult {
  const item = legacyStateDirItems(paths).find((i) => i.action === "move");
  if (!item) return { changes: [], warnings: [] };
  try {
    ensurePrivateDir(path.dirname(paths.stateDir));
    fs.renameSync(item.path, paths.stateDir);
    fsyncDir(path.dirname(paths.stateDir));
    return { changes: [`moved legacy state dir ${item.path} → ${paths.stateDir}`], warnings: [] };
  } catch (error) {
    return { changes: [], warnings: [`could not move legacy state dir ${item.path} → ${paths.stateDir}: ${describeError(error)}; move it by hand`] };
  }
}

/**
 * Moves each entry of `<stateDir>/agent/` into `agents/main/agent/` unless one of that name is already there. Both
 * ends are checked against the state dir without following links: a linked `agents/` moves nothing out of the state.
 */
export function moveLegacyAgentDir(item: LayoutItem, stateDir: string): LayoutResult {
  const changes: string[] = [];
  const warnings: string[] = [];
  try {
    checkOwnedPath(stateDir, item.path, { action: "move the entries of", expect: "dir" });
    ensurePrivateDirBelow(stateDir, item.target);
  } catch (error) {
    return { changes, warnings: [`legacy agent dir ${item.path} was not moved into ${item.target}: ${describeError(error)}`] };
  }
  let names: string[];
  try {
    names = fs.readdirSync(item.path).sort();
  } catch (error) {
    return { changes, warnings: [`could not read ${item.path}: ${describeError(error)}`] };
  }
  const kept: string[] = [];
  for (const name of names) {
    const from = path.join(item.path, name);
    const to = path.join(item.target, name);
    try {
      checkOwnedPath(stateDir, from, { action: "move", allowSymlink: true });
      if (checkOwnedPath(stateDir, to, { action: "move into", allowMissing: true, allowSymlink: true }).kind !== "missing") {
        kept.push(name);
        continue;
      }
      fs.renameSync(from, to);
      changes.push(`moved ${from} → ${to}`);
    } catch (error) {
      warnings.push(`could not move ${from} → ${to}: ${describeError(error)}`);
      kept.push(name);
    }
  }
  fsyncDir(item.target);
  if (kept.length === 0) {
    try {
      fs.rmdirSync(item.path);
      changes.push(`removed the empty legacy agent dir ${item.path}`);
    } catch {
      // Not empty after all (created meanwhile): reported by the next doctor.
    }
  } else {
    warnings.push(`legacy agent dir ${item.path} still holds ${kept.join(", ")}: agents/main/agent/ already has entries of those names; compare and remove them by hand`);
  }
  return { changes, warnings };
}
