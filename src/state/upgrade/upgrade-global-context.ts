// Shared state of one design-v1 → OpenClaw global upgrade: the two handles, counters, notes and small row helpers.
import type Database from "better-sqlite3";
import type { NoteList } from "./note-list.js";
import { preparedStatement } from "./prepared-statement.js";
import { countedRows } from "./read-source.js";
import type { TableCounts } from "./types.js";

export type Row = Record<string, unknown>;

export interface GlobalUpgradeContext {
  /** The design-v1 file, opened read-only. */
  src: Database.Database;
  /** The new OpenClaw-format file, inside the one upgrade transaction. */
  dst: Database.Database;
  stateDir: string;
  now: number;
  /** Design-v1 tables present in the source (a table may be missing in an older design-v1 file). */
  sourceTables: ReadonlySet<string>;
  read: TableCounts;
  written: TableCounts;
  unmapped: TableCounts;
  /** At most NOTES_PER_CODE per code; a ledger of 20,000 orphan sources must not make 20,000 lines. */
  notes: NoteList;
}

export function bump(counts: TableCounts, table: string, by = 1): void {
  if (by === 0) return;
  counts[table] = (counts[table] ?? 0) + by;
}

export function note(ctx: GlobalUpgradeContext, code: string, message: string): void {
  ctx.notes.add(code, message);
}

/**
 * The rows of a design-v1 table one at a time (none when the table is absent), counted as read: for tables whose
 * rows carry reports (the ledger of 20,000 imported sources held at once took ~200 MB). `columns` is ours, never input.
 */
export function* eachRow(ctx: GlobalUpgradeContext, table: string, orderBy = "rowid", columns = "*"): Generator<Row> {
  if (!ctx.sourceTables.has(table)) return;
  yield* countedRows<Row>(ctx.src, table, orderBy, columns, ctx.read);
}

/** Every row of a design-v1 table (empty when the table is absent), counted as read. */
export function readAll(ctx: GlobalUpgradeContext, table: string, orderBy = "rowid"): Row[] {
  if (!ctx.sourceTables.has(table)) return [];
  const rows = ctx.src.prepare(`SELECT * FROM "${table}" ORDER BY ${orderBy}`).all() as Row[];
  ctx.read[table] = rows.length;
  return rows;
}

/**
 * Inserts one row into an OpenClaw table. The column list comes from the row object (all names are ours, never
 * input); a dynamic insert is used because the targets are many small tables with different shapes.
 */
export function insertRow(ctx: GlobalUpgradeContext, table: string, row: Row): void {
  const cols = Object.keys(row);
  const sql = `INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`;
  preparedStatement(ctx.dst, sql).run(...cols.map((c) => row[c]));
  bump(ctx.written, table);
}

export function parseJsonObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
