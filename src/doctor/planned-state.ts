// What `doctor --fix` planned against (each database file and its format), checked again once it holds the state lock.
import fs from "node:fs";
import path from "node:path";
import { describeError, StateLockedError } from "../core/errors.js";
import type { DbRole } from "../state/database.js";
import { isOurFormat } from "../state/db-format.js";
import { readBootstrapLock, describeBootstrapLock } from "../state/bootstrap-lock.js";
import { describeLease } from "../state/lease.js";
import { readLeases } from "../state/open-lease-database.js";
import type { StatePaths } from "../state/paths.js";
import { discoverAgentDirs, readDatabaseFormat } from "../state/state-databases.js";

/** Database path → what was there: its inode and format (a swap or a format upgrade changes one of them). */
export type PlannedState = Map<string, string>;

function observe(file: string, role: DbRole): string | null {
  let ino: number;
  try {
    ino = fs.lstatSync(file).ino;
  } catch {
    return null;
  }
  const { format, error } = readDatabaseFormat(file, role);
  // No schema yet and this tool's schema are one: this run's own write open of an empty file applies it.
  const label = !format ? `unreadable (${error ?? "?"})` : format.id === "new" || isOurFormat(format) ? "openclaw-state's design-v1 format (or no schema yet)" : format.writtenBy;
  return `inode ${ino}, ${label}`;
}

/** Every database of the state as it is now (read-only; rows are not looked at: the migration re-plans those under the lease). */
export function observeState(paths: StatePaths): PlannedState {
  const out: PlannedState = new Map();
  const files: Array<[string, DbRole]> = [[paths.globalDbPath, "global"], ...discoverAgentDirs(paths).map((a): [string, DbRole] => [a.dbPath, "agent"])];
  for (const [file, role] of files) {
    const seen = observe(file, role);
    if (seen !== null) out.set(file, seen);
  }
  return out;
}

/** What differs between two observations, one phrase per database (empty: the same state). */
function differences(paths: StatePaths, before: PlannedState, now: PlannedState): string[] {
  const names = [...new Set([...before.keys(), ...now.keys()])].sort();
  const rel = (file: string): string => path.relative(paths.stateDir, file);
  return names.flatMap((file) => {
    const a = before.get(file);
    const b = now.get(file);
    if (a === b) return [];
    if (a === undefined) return [`${rel(file)} was created (${b})`];
    if (b === undefined) return [`${rel(file)} was removed`];
    return [`${rel(file)} was replaced (${a} → ${b})`];
  });
}

function changedError(changes: readonly string[], cause?: unknown): StateLockedError {
  const shown = changes.slice(0, 3).join("; ") + (changes.length > 3 ? `; and ${changes.length - 3} more` : "");
  return new StateLockedError(
    `State is locked or was just changed by another process: ${shown}, after this \`doctor --fix\` read it and before it held the state lock. Nothing was changed; retry (the next run plans from the new state).`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * Under the lock: the databases must be the ones the plan was made from. Another maintenance run that imported or
 * upgraded them in between makes the plan stale (an import into design-v1 files now in OpenClaw's format): exit 75.
 */
export function assertStateUnchanged(paths: StatePaths, planned: PlannedState): void {
  const changes = differences(paths, planned, observeState(paths));
  if (changes.length > 0) throw changedError(changes);
}

/**
 * The unlocked read (the checks and the plan) failed: when another process holds the state or changed its databases
 * meanwhile, that is "locked, retry" (exit 75), not a failure of this tool; otherwise the error stands as it is.
 */
export function lockedReadError(paths: StatePaths, planned: PlannedState, error: unknown): unknown {
  if (error instanceof StateLockedError) return error;
  const changes = differences(paths, planned, observeState(paths));
  if (changes.length > 0) return changedError(changes, error);
  const holders: string[] = [];
  try {
    for (const l of readLeases(paths) ?? []) if (l.live && l.pid !== process.pid) holders.push(describeLease(l));
  } catch {
    // A global DB that cannot be read now says nothing about a holder.
  }
  const file = readBootstrapLock(paths.stateDir);
  if (file?.live && !file.mine) holders.push(describeBootstrapLock(file));
  if (holders.length === 0) return error;
  return new StateLockedError(`State is locked by ${holders.join(", ")}, which was changing it while this \`doctor --fix\` read it (${describeError(error)}). Nothing was changed; retry when it finishes.`, { cause: error });
}
