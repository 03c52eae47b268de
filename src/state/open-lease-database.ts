// Opens the global DB for its lease rows through the storage core (any format; a new file gets this tool's schema).
import fs from "node:fs";
import { openDatabase } from "./database.js";
import type { GlobalDB } from "./generated/global-db.js";
import { listLeases, type LeaseInfo } from "./lease.js";
import type { StatePaths } from "./paths.js";
import type { GlobalDatabase } from "./state-databases.js";

/**
 * The global DB for the lease row alone, in any format: state_leases has the same columns in this tool's format
 * and in every released OpenClaw's (schema/openclaw/*.sql), so the lock works beside a real gateway's state.
 * A new file gets this tool's schema, as before. The caller reads `db.format` before it touches any other table.
 */
export function openLeaseDatabase(paths: StatePaths, mode: "read" | "write" = "write"): GlobalDatabase {
  return openDatabase<GlobalDB>({ path: paths.globalDbPath, role: "global", root: paths.stateDir, mode, create: mode === "write", formats: "any" });
}

/** Every lease row of the state (any format); null when there is no global DB yet. */
export function readLeases(paths: StatePaths, now = Date.now()): LeaseInfo[] | null {
  if (!fs.existsSync(paths.globalDbPath)) return null;
  const db = openLeaseDatabase(paths, "read");
  try {
    return listLeases(db, now);
  } finally {
    db.close();
  }
}
