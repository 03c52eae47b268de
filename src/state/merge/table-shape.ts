// What the merge needs to know about each table of the live database: its merge key, freshness column, trigger-owned columns and write order.
import type Database from "better-sqlite3";
import { canonicalJson } from "../upgrade/upgrade-global-cron.js";

/** Freshness columns, first present wins (rule 1). */
export const TIMESTAMP_COLUMNS = ["updated_at", "updated_at_ms", "last_updated_at", "last_seen_at"] as const;

/** Schema bookkeeping: describes the file, not imported data. */
export const BOOKKEEPING_TABLES = new Set(["schema_meta"]);

/**
 * Rows createOpenclawDatabase seeds into every new agent file (as 9.6's schema script does): in a staged file they are
 * the format's defaults, not imported data, so they are never merged (SQL conditions that match only the seed).
 */
export const SEED_ROWS: Readonly<Record<string, string>> = {
  session_key_contract: "id = 1 AND main_key = 'main' AND canonical_ready IS NULL AND updated_at = 0",
};

/** The WHERE clause selecting a staged table's importable rows (all but its seed rows). */
export function importableRows(table: string): string {
  const seed = SEED_ROWS[table];
  return seed ? `WHERE NOT (${seed})` : "";
}

export interface TableShape {
  name: string;
  /** Columns both files have (generated/hidden columns left out), in live order. */
  columns: string[];
  /** The natural key ([] when there is none: rows are matched on every other column). */
  key: string[];
  /** A lone INTEGER PRIMARY KEY that is not a natural key: never copied, never compared. */
  surrogate: string | null;
  timestamp: string | null;
  /** `*_json` columns: compared parsed, searched for `updatedAtMs` when the row has no timestamp column value. */
  jsonColumns: string[];
  /** Columns a trigger on this table sets itself (e.g. session_nodes.entry_valid): not compared, restored to the staged value after a write. */
  triggerReset: string[];
  /** Tables this one references (foreign keys), itself excluded. */
  parents: string[];
}

type Row = Record<string, unknown>;

export function quoteId(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The trigger bodies (after BEGIN) of a database, with the table each trigger is on. */
function triggerBodies(db: Database.Database): Array<{ table: string; body: string }> {
  const rows = db.prepare("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND sql IS NOT NULL").all() as Array<{ tbl_name: string; sql: string }>;
  return rows.map((r) => {
    const at = r.sql.search(/\bBEGIN\b/i);
    return { table: r.tbl_name, body: at >= 0 ? r.sql.slice(at) : "" };
  });
}

/**
 * Tables only triggers of other tables write (memory_index_state's revision counter, the canonical-validation queue),
 * plus virtual tables and their shadow tables: the live triggers fill them as the runtime's writes would, so their
 * staged rows are not merged.
 */
export function derivedTables(db: Database.Database): Set<string> {
  const out = new Set<string>();
  for (const t of db.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('virtual', 'shadow')").all() as Array<{ name: string }>) out.add(t.name);
  for (const { table, body } of triggerBodies(db)) {
    for (const m of body.matchAll(/\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+"?([A-Za-z_][\w]*)"?/gi)) {
      const target = m[1]!;
      if (target.toLowerCase() !== table.toLowerCase()) out.add(target);
    }
  }
  return out;
}

/** Columns a trigger on `table` assigns in an UPDATE of the same table. */
function triggerResetColumns(db: Database.Database, table: string): string[] {
  const out = new Set<string>();
  for (const t of triggerBodies(db)) {
    if (t.table !== table) continue;
    const re = new RegExp(`\\bUPDATE\\s+"?${escapeRegExp(table)}"?\\s+SET\\s+([\\s\\S]*?)\\bWHERE\\b`, "gi");
    for (const m of t.body.matchAll(re)) {
      for (const assignment of m[1]!.split(",")) {
        const col = /^\s*"?([A-Za-z_]\w*)"?\s*=/.exec(assignment)?.[1];
        if (col) out.add(col);
      }
    }
  }
  return [...out];
}

interface ColumnInfo { name: string; type: string; pk: number; hidden: number }

function columnsOf(db: Database.Database, table: string): ColumnInfo[] {
  // Numbers, not bigint: the merge's connections read integers as bigint.
  return db.prepare("SELECT name, type, CAST(pk AS REAL) AS pk, CAST(hidden AS REAL) AS hidden FROM pragma_table_xinfo(?)").all(table) as ColumnInfo[];
}

/** A lone INTEGER key the table pins to a constant (`CHECK (id = 1)`): a singleton's natural key, not a surrogate. */
function isSingletonKey(db: Database.Database, table: string, column: string): boolean {
  const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string | null } | undefined)?.sql ?? "";
  return new RegExp(`CHECK\\s*\\(\\s*"?${escapeRegExp(column)}"?\\s*=\\s*-?\\d+\\s*\\)`, "i").test(sql);
}

/** Column lists of the non-partial UNIQUE indexes (constraints included, the primary key excluded), fewest columns first. */
function uniqueKeys(db: Database.Database, table: string): string[][] {
  const indexes = db.prepare("SELECT name, CAST(\"unique\" AS REAL) AS uniq, origin, CAST(partial AS REAL) AS partial FROM pragma_index_list(?)").all(table) as Array<{ name: string; uniq: number; origin: string; partial: number }>;
  const keys: Array<{ name: string; cols: string[] }> = [];
  for (const ix of indexes) {
    if (ix.uniq !== 1 || ix.partial !== 0 || ix.origin === "pk") continue;
    const cols = db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(ix.name) as Array<{ name: string | null }>;
    if (cols.length === 0 || cols.some((c) => c.name === null)) continue; // an expression index names no column
    keys.push({ name: ix.name, cols: cols.map((c) => c.name!) });
  }
  keys.sort((a, b) => a.cols.length - b.cols.length || a.name.localeCompare(b.name));
  return keys.map((k) => k.cols);
}

export function tableShape(live: Database.Database, staged: Database.Database, table: string): TableShape {
  const liveCols = columnsOf(live, table).filter((c) => c.hidden === 0);
  const stagedNames = new Set(columnsOf(staged, table).filter((c) => c.hidden === 0).map((c) => c.name));
  const columns = liveCols.map((c) => c.name).filter((n) => stagedNames.has(n));
  const pk = liveCols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  let key = pk.map((c) => c.name);
  let surrogate: string | null = null;
  const lonePk = pk.length === 1 ? pk[0]! : undefined;
  if (pk.length === 0 || (lonePk && lonePk.type.toUpperCase() === "INTEGER" && !isSingletonKey(live, table, lonePk.name))) {
    surrogate = lonePk?.name ?? null;
    key = uniqueKeys(live, table).find((cols) => cols.every((c) => columns.includes(c))) ?? [];
  }
  const timestamp = TIMESTAMP_COLUMNS.find((c) => columns.includes(c)) ?? null;
  const parents = [...new Set((live.prepare("SELECT \"table\" AS parent FROM pragma_foreign_key_list(?)").all(table) as Array<{ parent: string }>).map((r) => r.parent))].filter((p) => p !== table);
  return {
    name: table,
    columns,
    key,
    surrogate,
    timestamp,
    jsonColumns: columns.filter((c) => /_json$/i.test(c)),
    triggerReset: triggerResetColumns(live, table).filter((c) => columns.includes(c) && !key.includes(c)),
    parents,
  };
}

/** Tables in write order: every parent (foreign key) before its children, ties by name; a cycle is broken by name. */
export function writeOrder(shapes: TableShape[]): TableShape[] {
  const byName = new Map(shapes.map((s) => [s.name, s]));
  const out: TableShape[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (s: TableShape): void => {
    if (state.get(s.name)) return;
    state.set(s.name, "visiting");
    for (const p of [...s.parents].sort()) {
      const parent = byName.get(p);
      if (parent) visit(parent);
    }
    state.set(s.name, "done");
    out.push(s);
  };
  for (const s of [...shapes].sort((a, b) => a.name.localeCompare(b.name))) visit(s);
  return out;
}

function parseJsonish(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Equal SQLite values: BLOBs by bytes, numbers by value, JSON text parsed (key order ignored). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if ((typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")) {
    return typeof a === typeof b ? a === b : Number(a) === Number(b);
  }
  if (typeof a === "string" && typeof b === "string") {
    if (a === b) return true;
    const pa = parseJsonish(a);
    const pb = parseJsonish(b);
    return pa !== undefined && pb !== undefined && canonicalJson(pa) === canonicalJson(pb);
  }
  return false;
}

/** The columns compared to tell identical from different: all but the key, the surrogate and trigger-owned columns. */
/** Stamps of when a row was written or seen, not what it says: two rows differing only there are the same record. */
const TIME_STAMP = /^(created|updated|last_seen|first_seen|last_updated|runtime_updated|grant_definition_updated|transcript_observed)_at(_ms)?$/;

export function comparedColumns(shape: TableShape): string[] {
  return shape.columns.filter((c) => !shape.key.includes(c) && c !== shape.surrogate && !shape.triggerReset.includes(c) && !TIME_STAMP.test(c));
}

export function sameRow(shape: TableShape, a: Row, b: Row): boolean {
  return comparedColumns(shape).every((c) => sameValue(a[c], b[c]));
}

function asNumber(value: unknown): number | null {
  if (typeof value === "bigint") return Number(value);
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The row's freshness: its timestamp column, else an `updatedAtMs` at the top of one of its JSON columns. */
export function rowTime(shape: TableShape, row: Row): number | null {
  const fromColumn = shape.timestamp ? asNumber(row[shape.timestamp]) : null;
  if (fromColumn !== null) return fromColumn;
  for (const c of shape.jsonColumns) {
    const v = row[c];
    const parsed = typeof v === "string" ? parseJsonish(v) : undefined;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const t = asNumber((parsed as Record<string, unknown>).updatedAtMs);
      if (t !== null) return t;
    }
  }
  return null;
}

/** A row as JSON text: BLOBs as {"$base64": …}, integers beyond 2^53 as their decimal text. */
export function rowJson(row: Row): string {
  return JSON.stringify(row, (_k, v: unknown) => {
    if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    if (v && typeof v === "object" && (v as { type?: unknown }).type === "Buffer" && Array.isArray((v as { data?: unknown }).data)) {
      return { $base64: Buffer.from((v as { data: number[] }).data).toString("base64") };
    }
    return v;
  });
}

/** The key a report and merge_kept name a row by: its key columns (all compared columns when the table has no key). */
export function keyJson(shape: TableShape, row: Row): string {
  const cols = shape.key.length > 0 ? shape.key : comparedColumns(shape);
  return rowJson(Object.fromEntries(cols.map((c) => [c, row[c] ?? null])));
}
