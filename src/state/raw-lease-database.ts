// The global DB opened for its lease rows alone with a raw better-sqlite3 handle: no storage core (Kysely) loaded.
import fs from "node:fs";
import Database from "better-sqlite3";
import { defaultBusyTimeoutMs } from "./busy-timeout.js";
import type { LeaseDatabase } from "./lease.js";
import type { StatePaths } from "./paths.js";
import { databasePathProblem } from "./owned-path.js";
import { unwritableReason } from "./read-only-open.js";

/** A raw handle with what the lease code uses (lease.ts `LeaseDatabase`). */
export class RawLeaseDatabase implements LeaseDatabase {
  constructor(
    readonly path: string,
    private readonly handle: Database.Database,
    private readonly mode: "read" | "write",
  ) {}

  /** Not cached: the lease runs a handful of statements (and one every heartbeat). */
  prepare(sql: string): Database.Statement {
    return this.handle.prepare(sql);
  }

  immediate<T>(fn: () => T): T {
    return this.handle.transaction(fn).immediate();
  }

  /** As the storage core closes a write handle: checkpoint (TRUNCATE), then close. */
  close(): void {
    if (!this.handle.open) return;
    try {
      if (this.mode === "write") this.handle.pragma("wal_checkpoint(TRUNCATE)");
    } catch {
      // Another connection may be mid-transaction; the WAL stays valid and the next checkpoint takes it.
    }
    this.handle.close();
  }
}

/**
 * The existing global DB for its lease rows, without the storage core: only for the plain case — a regular, writable
 * file that opens and already has state_leases. Null for anything else (missing, unopenable, read-only location, no
 * state_leases yet), where the caller goes through the storage core (open-lease-database.ts), whose open reports or
 * handles those cases as before. Nothing is changed at open: no journal mode, no schema (the file is about to be
 * replaced and kept as it was). A symlink at or on the way to the file (it could lead out of the state dir), or a
 * FIFO or device there, is never opened: that throws, its message the reason (databasePathProblem, the storage
 * core's own rule).
 */
export function openRawLeaseDatabase(paths: StatePaths, mode: "read" | "write"): RawLeaseDatabase | null {
  const file = paths.globalDbPath;
  const problem = databasePathProblem(paths.stateDir, file);
  if (problem) throw new Error(problem);
  if (!fs.existsSync(file) || unwritableReason(file) !== null) return null;
  let handle: Database.Database | undefined;
  try {
    handle = new Database(file, { fileMustExist: true });
    // First statement on the handle: nothing after it can fail with an unprotected SQLITE_BUSY.
    handle.pragma(`busy_timeout = ${defaultBusyTimeoutMs()}`);
    handle.pragma(mode === "read" ? "query_only = ON" : "foreign_keys = ON");
    const table = handle.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'state_leases'").get();
    if (table === undefined) {
      handle.close();
      return null;
    }
    return new RawLeaseDatabase(file, handle, mode);
  } catch {
    handle?.close();
    return null;
  }
}
