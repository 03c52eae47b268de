// The state lease around an in-place restore: a read-only look before any work, the maintenance lease before the swap.
import fs from "node:fs";
import { describeError, OperationError, StateLockedError } from "../core/errors.js";
import type { LeaseDatabase } from "../state/lease.js";
import type { StatePaths } from "../state/paths.js";

export interface HeldLease {
  release(): void;
}

/** The lease code (light: its SQL is written out) and the raw opener, loaded only by an in-place restore. */
async function loadLease(): Promise<typeof import("../state/lease.js") & typeof import("../state/raw-lease-database.js")> {
  const [lease, raw] = await Promise.all([import("../state/lease.js"), import("../state/raw-lease-database.js")]);
  return { ...lease, ...raw };
}

/**
 * The live global DB for its lease rows: a raw handle in the plain case (no storage core, whose Kysely costs ~0.2
 * CPU-s to load), else the storage core's open, which creates, refuses or reports the other cases as before. Never
 * through a symlink, nor a FIFO or device at the path: that throws, and the callers treat it as a DB that does not open.
 */
async function openLease(paths: StatePaths, mode: "read" | "write"): Promise<LeaseDatabase & { close(): void }> {
  const { openRawLeaseDatabase } = await loadLease();
  const raw = openRawLeaseDatabase(paths, mode);
  if (raw) return raw;
  const { openLeaseDatabase } = await import("../state/open-lease-database.js");
  return openLeaseDatabase(paths, mode);
}

/**
 * Read-only look at the leases before any work: a held lease refuses the restore up front (exit 75) without
 * writing a byte. The lease itself is taken only once the archive is verified and staged, so a refused
 * archive never touches the live global DB either.
 */
export async function precheckLease(paths: StatePaths, force: boolean): Promise<void> {
  if (force || !fs.existsSync(paths.globalDbPath)) return;
  const { describeLease, GATEWAY_SCOPE, listLeases, MAINTENANCE_SCOPE } = await loadLease();
  let global;
  try {
    // Any format: OpenClaw's gateway holds its lease in the same state_leases table.
    global = await openLease(paths, "read");
  } catch {
    return; // takeLease reports an unopenable DB with its remedy.
  }
  try {
    const holder = listLeases(global).find((l) => l.live && (l.scope === MAINTENANCE_SCOPE || l.scope === GATEWAY_SCOPE));
    if (holder) {
      throw new StateLockedError(
        `State is locked by ${describeLease(holder)} until ${new Date(holder.expiresAt).toISOString()}; retry when it finishes, or pass --force if you are sure it is gone (nothing was restored).`,
      );
    }
  } finally {
    global.close();
  }
}

/** The maintenance lease on the live global DB (none when it does not exist, or when restoring to --target). */
export async function takeLease(paths: StatePaths, force: boolean, warnings: string[]): Promise<HeldLease | null> {
  const { acquireMaintenanceLease, acquireStateLock } = await loadLease();
  // No global DB yet: the lock file beside the state dir holds it, so a `doctor --fix` cannot start meanwhile.
  if (!fs.existsSync(paths.globalDbPath)) return acquireStateLock(paths, undefined, { command: "backup restore", force });
  let global;
  try {
    global = await openLease(paths, "write");
  } catch (error) {
    if (!force) {
      throw new OperationError(
        "lease_unavailable",
        `Cannot open ${paths.globalDbPath} to take the state lease (${describeError(error)}); if no gateway or maintenance run uses this state, re-run with --force (nothing was restored).`,
        { path: paths.globalDbPath, cause: error },
      );
    }
    warnings.push(`Restoring without the state lease: ${paths.globalDbPath} could not be opened (${describeError(error)}).`);
    return null;
  }
  try {
    const lease = acquireMaintenanceLease(global, { command: "backup restore", force });
    const db = global;
    return {
      release() {
        // The live DB has been moved aside by now: releasing clears the lease row in the kept previous copy.
        try {
          lease.release();
        } catch {
          // A row left in the kept copy is a dead lease; restoring that copy drops it anyway.
        }
        db.close();
      },
    };
  } catch (error) {
    global.close();
    if (error instanceof StateLockedError) {
      throw new StateLockedError(`${error.message.replace(/\.$/, "")} (nothing was restored).`);
    }
    throw error;
  }
}
