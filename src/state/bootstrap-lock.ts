// The state lock before the global DB exists: an exclusive `<stateDir>.lock` file beside the state dir.
// The lease row needs the global DB; until a mutating command creates it (or a restore brings one), this
// file is the lock, so a restore and a `doctor --fix` on a fresh state cannot run at once.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { StateLockedError } from "../core/errors.js";
import { pidAlive } from "./pid-alive.js";
import { PRIVATE_FILE_MODE } from "./private-fs.js";

/** Same as the lease TTL: liveness is the pid on this host, the heartbeat (mtime) elsewhere. */
const BOOTSTRAP_TTL_MS = 10 * 60_000;
const HEARTBEAT_MS = 30_000;

export interface BootstrapLockInfo {
  path: string;
  pid: number | null;
  host: string | null;
  command: string | null;
  startedAt: number | null;
  live: boolean;
  /** Held by this process. */
  mine: boolean;
}

export interface BootstrapLock {
  readonly path: string;
  release(): void;
}

/** `<stateDir>.lock`: beside the state dir (like `<stateDir>-backups`), so a restore swapping the dir keeps it. */
export function bootstrapLockPath(stateDir: string): string {
  return `${path.resolve(stateDir).replace(/[\\/]+$/, "")}.lock`;
}

/** The lock file's holder with a liveness verdict; null when there is no lock file. */
export function readBootstrapLock(stateDir: string, now = Date.now()): BootstrapLockInfo | null {
  const file = bootstrapLockPath(stateDir);
  let st: fs.Stats;
  let text = "";
  try {
    st = fs.lstatSync(file);
    if (st.isFile()) text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  let owner: { pid?: unknown; host?: unknown; command?: unknown; startedAt?: unknown } = {};
  try {
    owner = JSON.parse(text) as typeof owner;
  } catch {
    // Unreadable content (a crash mid-write): judged by its age alone.
  }
  const pid = typeof owner.pid === "number" ? owner.pid : null;
  const host = typeof owner.host === "string" ? owner.host : null;
  const sameHost = host === os.hostname();
  const fresh = now - st.mtimeMs < BOOTSTRAP_TTL_MS;
  const live = st.isFile() && (sameHost && pid !== null ? pidAlive(pid) : fresh);
  return {
    path: file,
    pid,
    host,
    command: typeof owner.command === "string" ? owner.command : null,
    startedAt: typeof owner.startedAt === "number" ? owner.startedAt : null,
    live,
    mine: sameHost && pid === process.pid,
  };
}

export function describeBootstrapLock(info: BootstrapLockInfo): string {
  const who = info.command ? `\`${info.command}\`` : "another openclaw-state command";
  return `${who}${info.pid !== null ? ` (pid ${info.pid}${info.host ? ` on ${info.host}` : ""})` : ""} holding ${info.path}`;
}

function lockedError(info: BootstrapLockInfo): StateLockedError {
  return new StateLockedError(`State is locked by ${describeBootstrapLock(info)}; retry when it finishes, or pass --force if you are sure it is gone.`, { path: info.path });
}

/**
 * Takes the lock file (create-if-absent via link(2), so two processes cannot both win); a dead holder's
 * file is taken over. Null when the state dir's parent does not exist or refuses files (nothing to lock
 * there: the command then works on paths it cannot create either).
 */
export function acquireBootstrapLock(stateDir: string, options: { command: string; force?: boolean }): BootstrapLock | null {
  const file = bootstrapLockPath(stateDir);
  const owner = { pid: process.pid, host: os.hostname(), startedAt: Date.now(), command: options.command };
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`;
    try {
      fs.writeFileSync(temp, `${JSON.stringify(owner)}\n`, { mode: PRIVATE_FILE_MODE, flag: "wx" });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EACCES" || code === "EROFS" || code === "EPERM") return null;
      throw error;
    }
    try {
      fs.linkSync(temp, file);
      return holdLock(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      fs.rmSync(temp, { force: true });
    }
    const held = readBootstrapLock(stateDir);
    if (held === null) continue;
    if (held.live && !held.mine && !options.force) throw lockedError(held);
    takeOver(file, held);
  }
  throw new StateLockedError(`Could not take the state lock ${file} after several attempts (other processes keep taking it); retry later.`, { path: file });
}

/** Moves a dead (or --force'd) holder's file aside; puts it back when it turned out to be a new, live one. */
function takeOver(file: string, stale: BootstrapLockInfo): void {
  const aside = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.stale`;
  try {
    fs.renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const moved = readOwner(aside);
  const movedPid = typeof moved.pid === "number" ? moved.pid : null;
  const movedStart = typeof moved.startedAt === "number" ? moved.startedAt : null;
  if (movedPid !== stale.pid || movedStart !== stale.startedAt) {
    // Another process replaced the stale file between our read and our rename: give its lock back.
    try {
      fs.linkSync(aside, file);
    } catch {
      // Someone else already holds a fresh file; the next attempt reads it.
    }
  }
  fs.rmSync(aside, { force: true });
}

function readOwner(file: string): { pid?: unknown; startedAt?: unknown } {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as { pid?: unknown; startedAt?: unknown };
  } catch {
    return {};
  }
}

function holdLock(file: string): BootstrapLock {
  const timer = setInterval(() => {
    try {
      const now = new Date();
      fs.utimesSync(file, now, now);
    } catch {
      // The pid check still marks us live on this host.
    }
  }, HEARTBEAT_MS);
  timer.unref();
  let released = false;
  return {
    path: file,
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      // Only our own file: a --force'd takeover by someone else is theirs to remove.
      if (readOwner(file).pid === process.pid) fs.rmSync(file, { force: true });
    },
  };
}

/** Throws (exit 75) when another live process holds the lock file; used by the lease on an existing DB. */
export function assertNoForeignBootstrapLock(stateDir: string): void {
  const held = readBootstrapLock(stateDir);
  if (held && held.live && !held.mine) throw lockedError(held);
}
