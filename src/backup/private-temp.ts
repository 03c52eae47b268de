// Private staging dirs for archives without a file of their own (`create --output -`, `verify -`, `restore -`).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { registerLeftover } from "../core/interrupt.js";
import { ownedPathProblem } from "../state/owned-path.js";
import { pidAlive } from "../state/pid-alive.js";

/** Every staging dir we create (beside an archive, or in the OS temp dir) has this name plus `<pid>-<random>`. */
export const STAGING_PREFIX = ".openclaw-backup-staging-";

/**
 * Removes staging dirs (snapshots, `.partial` archives, stdin spools) left in `dir` by killed runs on this host: only
 * our own — our name prefix with the creator's pid, a real directory directly in `dir` (checkOwnedPath: no link, FIFO
 * or device), and a process that is gone. Best effort; a failure only leaves the garbage. Returns what it removed.
 */
export function sweepStaleStaging(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const pattern = new RegExp(`^${STAGING_PREFIX.replace(/\./g, "\\.")}(\\d+)-[A-Za-z0-9]{6}$`);
  for (const name of names) {
    const pid = pattern.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || pidAlive(Number(pid))) continue;
    const target = path.join(dir, name);
    if (ownedPathProblem(dir, target, { action: "remove the stale staging dir", expect: "dir" }) !== null) continue;
    try {
      fs.rmSync(target, { recursive: true, force: true });
      removed.push(target);
    } catch {
      // Left for the next run.
    }
  }
  return removed;
}

/** The parent of staging dirs that belong to no output dir: `TMPDIR` (the OS temp dir). */
export function privateTempParent(): string {
  return os.tmpdir();
}

export interface PrivateStaging {
  dir: string;
  /** Removes the dir (idempotent) and unregisters it. */
  dispose(): void;
}

/**
 * A new 0700 staging dir in `parent` (default: the OS temp dir), swept of dead runs' dirs first. Until dispose(), it is
 * registered as a leftover (src/core/interrupt.ts): a SIGINT/SIGTERM/SIGHUP removes it before the process dies of that
 * signal (130 for Ctrl-C), since what it holds (a whole archive, credentials included) must not stay in the temp dir;
 * a second Ctrl-C during that names it instead; a `kill -9` leaves it to the next run's sweep.
 */
export function createPrivateStaging(parent: string = privateTempParent(), what = "private staging dir of an unfinished run"): PrivateStaging {
  sweepStaleStaging(parent);
  const dir = fs.mkdtempSync(path.join(parent, `${STAGING_PREFIX}${process.pid}-`));
  const unregister = registerLeftover({ path: dir, what });
  let disposed = false;
  return {
    dir,
    dispose() {
      if (disposed) return;
      disposed = true;
      unregister();
      try {
        fs.rmSync(dir, { recursive: true, force: true });
      } catch {
        // Left for the next run's sweep.
      }
    },
  };
}
