// The state_leases mutation lock: one maintenance writer at a time, and never while the gateway runs.
import os from "node:os";
import { StateLockedError } from "../core/errors.js";
import type { GlobalDatabase } from "./state-databases.js";

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

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

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
export function listLeases(global: GlobalDatabase, now = Date.now()): LeaseInfo[] {
  const rows = global.all(global.q.selectFrom("state_leases").selectAll().orderBy("scope").orderBy("lease_key"));
  const host = os.hostname();
  return rows.map((row) => {
    const payload = parsePayload(row.payload_json);
    const pid = typeof payload.pid === "number" ? payload.pid : null;
    const leaseHost = typeof payload.host === "string" ? payload.host : null;
    let live = row.expires_at > now;
    if (live && pid !== null && leaseHost === host && !pidAlive(pid)) live = false;
    return {
      scope: row.scope,
      leaseKey: row.lease_key,
      owner: row.owner,
      pid,
      host: leaseHost,
      command: typeof payload.command === "string" ? payload.command : null,
      startedAt: typeof payload.startedAt === "number" ? payload.startedAt : null,
      expiresAt: row.expires_at,
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

/** Takes the maintenance lease inside BEGIN IMMEDIATE so two processes cannot both win. */
export function acquireMaintenanceLease(global: GlobalDatabase, options: AcquireLeaseOptions): MaintenanceLease {
  const now = options.now ?? Date.now;
  const owner: LeaseOwner = { pid: process.pid, host: os.hostname(), startedAt: now(), command: options.command };
  const ownerId = `${owner.pid}@${owner.host}:${owner.startedAt}`;
  const takenOver = global.immediate(() => {
    const leases = listLeases(global, now()).filter((l) => l.scope === MAINTENANCE_SCOPE || l.scope === GATEWAY_SCOPE);
    const live = leases.filter((l) => l.live);
    if (live.length > 0 && !options.force) {
      const holder = live[0]!;
      throw new StateLockedError(
        `State is locked by ${describeLease(holder)} until ${new Date(holder.expiresAt).toISOString()}; retry when it finishes, or pass --force if you are sure it is gone.`,
      );
    }
    const t = now();
    global.run(
      global.q
        .insertInto("state_leases")
        .values({
          scope: MAINTENANCE_SCOPE,
          lease_key: MAINTENANCE_LEASE_KEY,
          owner: ownerId,
          expires_at: t + LEASE_TTL_MS,
          heartbeat_at: t,
          payload_json: JSON.stringify(owner),
          created_at: t,
          updated_at: t,
        })
        .onConflict((oc) =>
          oc.columns(["scope", "lease_key"]).doUpdateSet({
            owner: ownerId,
            expires_at: t + LEASE_TTL_MS,
            heartbeat_at: t,
            payload_json: JSON.stringify(owner),
            created_at: t,
            updated_at: t,
          }),
        ),
    );
    return leases.filter((l) => l.scope === MAINTENANCE_SCOPE);
  });
  const timer = setInterval(() => {
    try {
      const t = now();
      global.run(
        global.q
          .updateTable("state_leases")
          .set({ heartbeat_at: t, expires_at: t + LEASE_TTL_MS, updated_at: t })
          .where("scope", "=", MAINTENANCE_SCOPE)
          .where("lease_key", "=", MAINTENANCE_LEASE_KEY)
          .where("owner", "=", ownerId),
      );
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
      global.run(
        global.q
          .deleteFrom("state_leases")
          .where("scope", "=", MAINTENANCE_SCOPE)
          .where("lease_key", "=", MAINTENANCE_LEASE_KEY)
          .where("owner", "=", ownerId),
      );
    },
  };
}
