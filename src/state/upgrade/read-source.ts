// Opens an upgrade's source for reading the way every read command does: no -wal/-shm left behind to pair with the file that replaces it.
import type Database from "better-sqlite3";
import { openDatabase, type DbRole } from "../database.js";
import type { TableCounts } from "./types.js";

/**
 * The rows of a source table one at a time, each counted into `read` as it is yielded (also when the caller stops
 * early or throws). The caller checks the table exists; `columns` and `orderBy` are ours, never input.
 */
export function* countedRows<T>(db: Database.Database, table: string, orderBy: string, columns: string, read: TableCounts): Generator<T> {
  let n = 0;
  try {
    for (const row of db.prepare(`SELECT ${columns} FROM "${table}" ORDER BY ${orderBy}`).iterate() as IterableIterator<T>) {
      n += 1;
      yield row;
    }
  } finally {
    read[table] = (read[table] ?? 0) + n;
  }
}

/**
 * A true read-only open of a WAL file creates -wal/-shm and leaves them (SPEC §3); the upgrade then moves the file
 * away and those sidecars would sit beside its replacement. openDatabase's read mode (query_only on a read-write
 * handle) removes them on close. `cleanup` closes it (safe after handle.close()).
 */
export function openUpgradeSource(file: string, role: DbRole): { handle: Database.Database; cleanup: () => void } {
  const db = openDatabase({ path: file, role, mode: "read", formats: "any" });
  return { handle: db.handle, cleanup: () => db.close() };
}
