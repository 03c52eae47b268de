// Counts and securely deletes named rows (credential tables, config_machine_state keys) in an open database or a kept file.
import fs from "node:fs";
import Database from "better-sqlite3";
import { DatabaseError } from "../core/errors.js";
import { defaultBusyTimeoutMs } from "./busy-timeout.js";
import { openDatabase, type DbRole } from "./database.js";
import { detectFormat, type DbFormat } from "./db-format.js";

/**
 * Rows to count or delete: a whole table, or only the rows whose `column` equals `value` (one state key of a
 * key/value table). Table and column names come from the caller's constants, never from input; they are quoted.
 */
export interface RowSelector {
  table: string;
  where?: { column: string; value: string };
}

/** Only the raw handle is used: the selectors span formats the typed query builder does not describe. */
interface HasHandle {
  handle: Database.Database;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

function whereSql(selector: RowSelector): string {
  return selector.where ? ` WHERE ${quote(selector.where.column)} = ?` : "";
}

function params(selector: RowSelector): string[] {
  return selector.where ? [selector.where.value] : [];
}

function tableNames(handle: Database.Database): Set<string> {
  return new Set((handle.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
}

/** Matching rows per selector; null when the table is absent from this file. Reads only. */
export function countSelectedRows(db: HasHandle, selectors: readonly RowSelector[]): Array<number | null> {
  const present = tableNames(db.handle);
  return selectors.map((s) => (present.has(s.table) ? (db.handle.prepare(`SELECT count(*) AS n FROM ${quote(s.table)}${whereSql(s)}`).get(...params(s)) as { n: number }).n : null));
}

/**
 * Deletes the matching rows of every selector in ONE immediate transaction, with secure_delete on so the freed
 * cells and pages are zeroed (no secret lingers in the file); absent tables count 0. Returns the rows deleted.
 */
export function deleteSelectedRows(db: HasHandle, selectors: readonly RowSelector[]): number[] {
  const present = tableNames(db.handle);
  db.handle.pragma("secure_delete = ON");
  return db.handle
    .transaction(() => selectors.map((s) => (present.has(s.table) ? db.handle.prepare(`DELETE FROM ${quote(s.table)}${whereSql(s)}`).run(...params(s)).changes : 0)))
    .immediate();
}

/** The format of a database file and its matching rows per selector, opened read-only (nothing is written). */
export function countSelectedRowsInFile(file: string, role: DbRole, selectors: readonly RowSelector[]): { format: DbFormat; counts: Array<number | null> } {
  const db = openDatabase({ path: file, role, mode: "read", formats: "any" });
  try {
    return { format: db.format, counts: countSelectedRows(db, selectors) };
  } finally {
    db.close();
  }
}

/**
 * Deletes the matching rows in a database file that is not live state (a copy kept by the format upgrade), when it
 * is still in `expected` format: no schema is applied, nothing else changes. The WAL is checkpointed into the file
 * and truncated before the close, so the deleted rows survive nowhere in it.
 */
export function deleteSelectedRowsInFile(file: string, role: DbRole, expected: DbFormat["id"], selectors: readonly RowSelector[]): number[] {
  if (!fs.lstatSync(file).isFile()) throw new DatabaseError(`${file} is not a regular file; no row was deleted.`, { path: file });
  const handle = new Database(file, { fileMustExist: true });
  try {
    handle.pragma(`busy_timeout = ${defaultBusyTimeoutMs()}`);
    const format = detectFormat(handle, role);
    if (format.id !== expected) throw new DatabaseError(`${file} is ${format.writtenBy}, not the format expected here; no row was deleted.`, { path: file });
    const deleted = deleteSelectedRows({ handle }, selectors);
    handle.pragma("wal_checkpoint(TRUNCATE)");
    return deleted;
  } finally {
    handle.close();
  }
}
