// Opens an upgrade's source for reading the way every read command does: no -wal/-shm left behind to pair with the file that replaces it.
import type Database from "better-sqlite3";
import { openDatabase, type DbRole } from "../database.js";

/**
 * A true read-only open of a WAL file creates -wal/-shm and leaves them (SPEC §3); the upgrade then moves the file
 * away and those sidecars would sit beside its replacement. openDatabase's read mode (query_only on a read-write
 * handle) removes them on close. `cleanup` closes it (safe after handle.close()).
 */
export function openUpgradeSource(file: string, role: DbRole): { handle: Database.Database; cleanup: () => void } {
  const db = openDatabase({ path: file, role, mode: "read", formats: "any" });
  return { handle: db.handle, cleanup: () => db.close() };
}
