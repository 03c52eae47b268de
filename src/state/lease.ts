// The state_leases mutation lock: one maintenance writer at a time, and never while the gateway runs.
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import { isSqliteBusy, StateLockedError } from "../core/errors.js";
import { acquireBootstrapLock, assertNoForeignBootstrapLock } from "./bootstrap-lock.js";
import { describeLockHolders, findWriteLockHolders } from "./lock-holders.js";
import type { StateLeasesTable } from "./generated/openclaw-global-db.js";
import type { StatePaths } from "./paths.js";
import { pidAlive } from "./pid-alive.js";

export const MAINTENANCE_SCOPE = "maintenance";
export const GATEWAY_SCOPE = "gateway_locks";
export const MAINTENANCE_LEASE_KEY = "state";
/** Long enough that a busy synchronous import never looks expired; liveness is also checked by pid. */
export const LEASE_TTL_MS = 10 * 60_000;
const HEARTBEAT_MS = 30_000;

export interface LeaseOwner {
  pid: number;
  host: string;
  startedAt: number;
  command: string;
}

export interface LeaseInfo {
  scope: string;
  leaseKey: string;
  owner: string;
  pid: number | null;
  host: string | null;
  command: string | null;
  startedAt: number | null;
  /** A row without expiry (OpenClaw's format allows NULL) reads as one lease TTL from now: live while its pid runs. */
  expiresAt: number;
  heartbeatAt: number | null;
  live: boolean;
}

export interface AcquireLeaseOptions {
  command: string;
  /** Take over even when another live holder exists (`--force`). */
  force?: boolean;
  now?: () => number;
}

export interface MaintenanceLease {
  readonly owner: LeaseOwner;
  readonly takenOver: LeaseInfo[];
  release(): void;
  /**
   * Stops the heartbeat and leaves the row in place: for a caller about to delete the global DB itself
   * (reset --scope full), so no other process can take the lease between release and deletion.
   */
  detach(): void;
}

/**
 * What the lease code needs of the global DB: a storage-core handle (GlobalDatabase) or a raw one
 * (raw-lease-database.ts). Its SQL is written out, not built by Kysely, so that an in-place restore takes the
 * lease without loading the storage core (~0.2 CPU-s); state_leases has the same columns in every format.
 */
export interface LeaseDatabase {
  readonly path: string;
  prepare(sql: string): Database.Statement;
  /** Runs `fn` inside BEGIN IMMEDIATE. */
  immediate<T>(fn: () => T): T;
}

/** A state_leases row as either format declares it (OpenClaw's allows expires_at NULL). */
type LeaseRow = Omit<StateLeasesTable, "created_at" | "updated_at">;

function parsePayload(json: string | null): Partial<LeaseOwner> {
  if (!json) return {};
  try {
    const value = JSON.parse(json) as Partial<LeaseOwner>;
    return typeof value === "object" && value !== null ? value : {};
  } catch {
    return {};
  }
}

/** Every lease row with a liveness verdict: unexpired, and (when on this host) its pid still running. */
export function listLeases(global: LeaseDatabase, now = Date.now()): LeaseInfo[] {
  const rows = global.prepare("SELECT scope, lease_key, owner, expires_at, heartbeat_at, payload_json FROM state_leases ORDER BY scope, lease_key").all() as LeaseRow[];
  const host = os.hostname();
  return rows.map((row) => {
    const payload = parsePayload(row.payload_json);
    const pid = typeof payload.pid === "number" ? payload.pid : null;
    const leaseHost = typeof payload.host === "string" ? payload.host : null;
    // OpenClaw's format allows expires_at NULL (no expiry): live while its holder's pid runs.
    let live = row.expires_at === null || row.expires_at > now;
    if (live && pid !== null && leaseHost === host && !pidAlive(pid)) live = false;
    return {
      scope: row.scope,
      leaseKey: row.lease_key,
      owner: row.owner,
      pid,
      host: leaseHost,
      command: typeof payload.command === "string" ? payload.command : null,
      startedAt: typeof payload.startedAt === "number" ? payload.startedAt : null,
      expiresAt: row.expires_at ?? now + LEASE_TTL_MS,
      heartbeatAt: row.heartbeat_at,
      live,
    };
  });
}

export function describeLease(lease: LeaseInfo): string {
  const who = lease.scope === GATEWAY_SCOPE ? "the gateway" : lease.command ? `\`${lease.command}\`` : lease.owner;
  const where = lease.pid !== null ? ` (pid ${lease.pid}${lease.host ? ` on ${lease.host}` : ""})` : "";
  return `${who}${where}`;
}

/** The state dir a global DB at `<stateDir>/state/openclaw.sqlite` belongs to. */
function stateDirOf(global: LeaseDatabase): string {
  return path.dirname(path.dirname(path.resolve(global.path)));
}

/**
 * The SQLite write lock was held past the busy timeout: exit 75 naming who holds it — the live lease
 * rows (readable beside a writer in WAL mode) and the processes holding the lock (Linux /proc/locks).
 */
function busyError(global: LeaseDatabase, error: unknown): StateLockedError {
  let leases: LeaseInfo[] = [];
  try {
    leases = listLeases(global).filter((l) => l.live && (l.scope === MAINTENANCE_SCOPE || l.scope === GATEWAY_SCOPE));
  } catch {
    // The lease rows are a hint only.
  }
  const holders = findWriteLockHolders(global.path);
  const who = [
    ...leases.map((l) => `${describeLease(l)} (lease)`),
    ...(holders.length > 0 ? [`${describeLockHolders(holders)} (write lock)`] : []),
  ];
  return new StateLockedError(
    `State is locked by another process: ${global.path} stayed write-locked${who.length > 0 ? ` by ${who.join(", ")}` : ""} past the busy timeout; retry when it finishes (nothing was changed).`,
    { path: global.path, cause: error },
  );
}

/** Takes the maintenance lease inside BEGIN IMMEDIATE so two processes cannot both win. */
export function acquireMaintenanceLease(global: LeaseDatabase, options: AcquireLeaseOptions): MaintenanceLease {
  const now = options.now ?? Date.now;
  const owner: LeaseOwner = { pid: process.pid, host: os.hostname(), startedAt: now(), command: options.command };
  const ownerId = `${owner.pid}@${owner.host}:${owner.startedAt}`;
  let takenOver: LeaseInfo[];
  try {
    takenOver = global.immediate(() => takeLeaseRow(global, options, now, owner, ownerId));
  } catch (error) {
    if (isSqliteBusy(error)) throw busyError(global, error);
    throw error;
  }
  return holdLease(global, owner, ownerId, now, takenOver);
}

function takeLeaseRow(global: LeaseDatabase, options: AcquireLeaseOptions, now: () => number, owner: LeaseOwner, ownerId: string): LeaseInfo[] {
  const leases = listLeases(global, now()).filter((l) => l.scope === MAINTENANCE_SCOPE || l.scope === GATEWAY_SCOPE);
  const live = leases.filter((l) => l.live);
  if (live.length > 0 && !options.force) {
    const holder = live[0]!;
    throw new StateLockedError(
      `State is locked by ${describeLease(holder)} until ${new Date(holder.expiresAt).toISOString()}; retry when it finishes, or pass --force if you are sure it is gone.`,
    );
  }
  // A command that started before this DB existed (a restore bringing it in) still holds the lock file.
  if (!options.force) assertNoForeignBootstrapLock(stateDirOf(global));
  const t = now();
  global
    .prepare(
      "INSERT INTO state_leases (scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) " +
        "ON CONFLICT (scope, lease_key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, heartbeat_at = excluded.heartbeat_at, " +
        "payload_json = excluded.payload_json, created_at = excluded.created_at, updated_at = excluded.updated_at",
    )
    .run(MAINTENANCE_SCOPE, MAINTENANCE_LEASE_KEY, ownerId, t + LEASE_TTL_MS, t, JSON.stringify(owner), t, t);
  return leases.filter((l) => l.scope === MAINTENANCE_SCOPE);
}

function holdLease(global: LeaseDatabase, owner: LeaseOwner, ownerId: string, now: () => number, takenOver: LeaseInfo[]): MaintenanceLease {
  const timer = setInterval(() => {
    try {
      const t = now();
      global
        .prepare("UPDATE state_leases SET heartbeat_at = ?, expires_at = ?, updated_at = ? WHERE scope = ? AND lease_key = ? AND owner = ?")
        .run(t, t + LEASE_TTL_MS, t, MAINTENANCE_SCOPE, MAINTENANCE_LEASE_KEY, ownerId);
    } catch {
      // A missed heartbeat only shortens the lease; the pid check still marks us live.
    }
  }, HEARTBEAT_MS);
  timer.unref();
  let released = false;
  return {
    owner,
    takenOver,
    detach() {
      released = true;
      clearInterval(timer);
    },
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      global.prepare("DELETE FROM state_leases WHERE scope = ? AND lease_key = ? AND owner = ?").run(MAINTENANCE_SCOPE, MAINTENANCE_LEASE_KEY, ownerId);
    },
  };
}

/** What a mutating command holds: the lease row on the global DB, or the lock file before that DB exists. */
export interface StateLock {
  readonly kind: "lease" | "lock-file" | "none";
  release(): void;
  /** Lease only: stop the heartbeat and leave the row (the caller deletes the global DB itself). */
  detach(): void;
}

/**
 * The one entry point for mutating commands: with an open global DB, its lease; without one (it does not
 * exist yet), the `<stateDir>.lock` file — so the first mutating command on a fresh state already locks it.
 */
export function acquireStateLock(paths: StatePaths, global: LeaseDatabase | undefined, options: AcquireLeaseOptions): StateLock {
  if (global) {
    const lease = acquireMaintenanceLease(global, options);
    return { kind: "lease", release: () => lease.release(), detach: () => lease.detach() };
  }
  const file = acquireBootstrapLock(paths.stateDir, options);
  if (!file) return { kind: "none", release() {}, detach() {} };
  // The file lives beside the state dir, so it outlives even a removal of the whole dir: detach keeps it held.
  return { kind: "lock-file", release: () => file.release(), detach() {} };
}
