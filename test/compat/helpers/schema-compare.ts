// Reads an SQLite file's schema (and rows) through an independent reader and lists the differences between two files.
import type { SqlRow, SqliteReader, SqlValue } from "./sqlite-reader.js";

export interface ColumnShape {
  cid: number;
  name: string;
  type: string;
  notnull: boolean;
  dflt: string | null;
  pk: number;
  /** table_xinfo: 0 normal, 2/3 generated (virtual/stored). */
  hidden: number;
}

export interface TableShape {
  name: string;
  /** PRAGMA table_list type: "table", "virtual" (FTS5 …) or "shadow" (a virtual table's storage). */
  kind: string;
  /** Normalized CREATE VIRTUAL TABLE text (module and its options live only there); null for other kinds. */
  definition: string | null;
  strict: boolean;
  withoutRowid: boolean;
  autoincrement: boolean;
  columns: ColumnShape[];
  /** One line per foreign key: "(a, b) -> parent (x, y) ON UPDATE … ON DELETE … MATCH …". */
  foreignKeys: string[];
}

export interface IndexShape {
  name: string;
  table: string;
  unique: boolean;
  /** c = CREATE INDEX, u = UNIQUE constraint, pk = PRIMARY KEY constraint. */
  origin: string;
  partial: boolean;
  /** Key columns in order: "col", "col DESC", "col COLLATE NOCASE", "<expr>" for expression keys. */
  columns: string[];
  /** Normalized CREATE INDEX text for explicit indexes (catches WHERE clauses and expressions); null for automatic ones. */
  sql: string | null;
}

export interface TriggerShape {
  name: string;
  table: string;
  sql: string;
}

export interface SchemaShape {
  userVersion: number;
  tables: Map<string, TableShape>;
  indexes: Map<string, IndexShape>;
  triggers: Map<string, TriggerShape>;
  views: Map<string, string>;
}

const str = (v: SqlValue | undefined): string => (v === null || v === undefined ? "" : String(v));
const num = (v: SqlValue | undefined): number => Number(v ?? 0);

/**
 * Canonical text of a CREATE statement: comments and IF NOT EXISTS dropped, whitespace collapsed, identifier quotes
 * removed and case folded outside string literals, so two spellings of the same definition compare equal.
 */
export function normalizeSql(sql: string): string {
  let out = "";
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'") {
      let j = i + 1; // to the closing quote; '' inside a literal is an escaped quote
      while (j < sql.length && !(sql[j] === "'" && sql[j + 1] !== "'")) j += sql[j] === "'" ? 2 : 1;
      out += sql.slice(i, j + 1);
      i = j;
    } else if (c === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl < 0 ? sql.length : nl - 1;
      out += " ";
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 1;
      out += " ";
    } else if (c === '"' || c === "`" || c === "[") {
      const close = c === "[" ? "]" : c;
      const end = sql.indexOf(close, i + 1);
      out += sql.slice(i + 1, end < 0 ? sql.length : end).toLowerCase();
      i = end < 0 ? sql.length : end;
    } else {
      out += c.toLowerCase();
    }
  }
  return out
    .replace(/\s+/g, " ")
    .replace(/\s*([(),;=<>+*/-])\s*/g, "$1")
    .replace(/\bif not exists /g, "")
    .replace(/;+$/, "")
    .trim();
}

/** Everything the compat suite compares about one database file. */
export function readSchema(reader: SqliteReader, dbPath: string): SchemaShape {
  const q = (sql: string): SqlRow[] => reader.query(dbPath, sql);
  const userVersion = num(q("PRAGMA user_version")[0]?.user_version);
  const objects = q("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");

  const tables = new Map<string, TableShape>();
  const options = new Map(q("SELECT name, type, strict, wr FROM pragma_table_list WHERE schema = 'main'").map((r) => [str(r.name), r]));
  for (const o of objects.filter((r) => r.type === "table")) {
    const name = str(o.name);
    const opt = options.get(name);
    const kind = str(opt?.type) || "table";
    tables.set(name, {
      name,
      kind,
      definition: kind === "virtual" ? normalizeSql(str(o.sql)) : null,
      strict: num(opt?.strict) === 1,
      withoutRowid: num(opt?.wr) === 1,
      autoincrement: /\bautoincrement\b/.test(normalizeSql(str(o.sql))),
      columns: [],
      foreignKeys: [],
    });
  }
  const columnRows = q(
    "SELECT m.name AS tbl, c.cid, c.name, c.type, c.\"notnull\" AS nn, c.dflt_value, c.pk, c.hidden FROM sqlite_schema m JOIN pragma_table_xinfo(m.name) c WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, c.cid",
  );
  for (const r of columnRows) {
    tables.get(str(r.tbl))?.columns.push({
      cid: num(r.cid),
      name: str(r.name),
      type: str(r.type).toUpperCase(),
      notnull: num(r.nn) === 1,
      dflt: r.dflt_value === null ? null : normalizeSql(str(r.dflt_value)),
      pk: num(r.pk),
      hidden: num(r.hidden),
    });
  }
  const fkRows = q(
    "SELECT m.name AS tbl, f.id, f.seq, f.\"table\" AS parent, f.\"from\" AS col, f.\"to\" AS pcol, f.on_update, f.on_delete, f.\"match\" AS mt FROM sqlite_schema m JOIN pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, f.id, f.seq",
  );
  const fks = new Map<string, { from: string[]; to: string[]; parent: string; tail: string }>();
  for (const r of fkRows) {
    const key = `${str(r.tbl)}\u0000${num(r.id)}`;
    const fk = fks.get(key) ?? { from: [], to: [], parent: str(r.parent).toLowerCase(), tail: `ON UPDATE ${str(r.on_update)} ON DELETE ${str(r.on_delete)} MATCH ${str(r.mt)}` };
    fk.from.push(str(r.col));
    fk.to.push(r.pcol === null ? "<pk>" : str(r.pcol));
    fks.set(key, fk);
  }
  for (const [key, fk] of fks) {
    tables.get(key.split("\u0000")[0]!)?.foreignKeys.push(`(${fk.from.join(", ")}) -> ${fk.parent} (${fk.to.join(", ")}) ${fk.tail}`);
  }
  for (const t of tables.values()) t.foreignKeys.sort();

  const indexSql = new Map(objects.filter((r) => r.type === "index").map((r) => [str(r.name), r.sql === null ? null : normalizeSql(str(r.sql))]));
  const indexes = new Map<string, IndexShape>();
  const indexRows = q(
    "SELECT m.name AS tbl, i.name, i.\"unique\" AS uq, i.origin, i.partial FROM sqlite_schema m JOIN pragma_index_list(m.name) i WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY i.name",
  );
  for (const r of indexRows) {
    const name = str(r.name);
    indexes.set(name, { name, table: str(r.tbl), unique: num(r.uq) === 1, origin: str(r.origin), partial: num(r.partial) === 1, columns: [], sql: indexSql.get(name) ?? null });
  }
  const keyRows = q(
    "SELECT i.name AS idx, x.seqno, x.cid, x.name, x.\"desc\" AS dsc, x.coll, x.\"key\" AS k FROM sqlite_schema m JOIN pragma_index_list(m.name) i JOIN pragma_index_xinfo(i.name) x WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY i.name, x.seqno",
  );
  for (const r of keyRows) {
    if (num(r.k) !== 1) continue; // the rowid / primary-key tail every index carries
    const col = r.name === null ? "<expr>" : str(r.name);
    const coll = str(r.coll).toUpperCase();
    indexes.get(str(r.idx))?.columns.push(`${col}${num(r.dsc) === 1 ? " DESC" : ""}${coll && coll !== "BINARY" ? ` COLLATE ${coll}` : ""}`);
  }

  const triggers = new Map<string, TriggerShape>();
  const views = new Map<string, string>();
  for (const o of objects) {
    if (o.type === "trigger") triggers.set(str(o.name), { name: str(o.name), table: str(o.tbl_name), sql: normalizeSql(str(o.sql)) });
    if (o.type === "view") views.set(str(o.name), normalizeSql(str(o.sql)));
  }
  return { userVersion, tables, indexes, triggers, views };
}

export interface DiffLabels {
  /** The reference side, e.g. "openclaw@2026.9.6". */
  expected: string;
  /** The side under test, e.g. "schema/openclaw-state.sql". */
  actual: string;
}

const yesNo = (b: boolean): string => (b ? "yes" : "no");

/** Differences as readable lines ("table x: column y: NOT NULL yes in A, no in B"); empty when the schemas agree. */
export function diffSchemas(expected: SchemaShape, actual: SchemaShape, labels: DiffLabels): string[] {
  const E = labels.expected;
  const A = labels.actual;
  const out: string[] = [];
  const both = (field: string, e: string, a: string): string => `${field}: ${e} in ${E}, ${a} in ${A}`;
  if (expected.userVersion !== actual.userVersion) out.push(both("user_version", String(expected.userVersion), String(actual.userVersion)));

  const sets = <T>(what: string, e: Map<string, T>, a: Map<string, T>, each: (name: string, x: T, y: T) => void): void => {
    for (const name of [...e.keys()].sort()) {
      const y = a.get(name);
      if (y === undefined) out.push(`${what} ${name}: missing in ${A}`);
      else each(name, e.get(name)!, y);
    }
    for (const name of [...a.keys()].sort()) if (!e.has(name)) out.push(`${what} ${name}: not in ${E} (extra in ${A})`);
  };

  sets("table", expected.tables, actual.tables, (name, e, a) => {
    const p = `table ${name}`;
    if (e.kind !== a.kind) out.push(both(`${p}: kind`, e.kind, a.kind));
    if (e.definition !== a.definition) out.push(both(`${p}: definition`, e.definition ?? "(none)", a.definition ?? "(none)"));
    if (e.strict !== a.strict) out.push(both(`${p}: STRICT`, yesNo(e.strict), yesNo(a.strict)));
    if (e.withoutRowid !== a.withoutRowid) out.push(both(`${p}: WITHOUT ROWID`, yesNo(e.withoutRowid), yesNo(a.withoutRowid)));
    if (e.autoincrement !== a.autoincrement) out.push(both(`${p}: AUTOINCREMENT`, yesNo(e.autoincrement), yesNo(a.autoincrement)));
    const ac = new Map(a.columns.map((c) => [c.name, c]));
    const ec = new Set(e.columns.map((c) => c.name));
    for (const c of e.columns) {
      const d = ac.get(c.name);
      if (!d) {
        out.push(`${p}: column ${c.name} (${c.type}${c.notnull ? " NOT NULL" : ""}): missing in ${A}`);
        continue;
      }
      const q = `${p}: column ${c.name}`;
      if (c.type !== d.type) out.push(both(`${q}: type`, c.type || "(none)", d.type || "(none)"));
      if (c.notnull !== d.notnull) out.push(both(`${q}: NOT NULL`, yesNo(c.notnull), yesNo(d.notnull)));
      if (c.dflt !== d.dflt) out.push(both(`${q}: DEFAULT`, c.dflt ?? "(none)", d.dflt ?? "(none)"));
      if (c.pk !== d.pk) out.push(both(`${q}: primary-key position`, String(c.pk), String(d.pk)));
      if (c.hidden !== d.hidden) out.push(both(`${q}: hidden/generated`, String(c.hidden), String(d.hidden)));
    }
    for (const c of a.columns) if (!ec.has(c.name)) out.push(`${p}: column ${c.name} (${c.type}${c.notnull ? " NOT NULL" : ""}): not in ${E} (extra in ${A})`);
    const eo = e.columns.map((c) => c.name).filter((n) => ac.has(n));
    const ao = a.columns.map((c) => c.name).filter((n) => ec.has(n));
    if (eo.join(",") !== ao.join(",")) out.push(both(`${p}: column order`, eo.join(", "), ao.join(", ")));
    const ef = new Set(e.foreignKeys);
    const af = new Set(a.foreignKeys);
    for (const f of e.foreignKeys) if (!af.has(f)) out.push(`${p}: foreign key ${f}: missing in ${A}`);
    for (const f of a.foreignKeys) if (!ef.has(f)) out.push(`${p}: foreign key ${f}: not in ${E} (extra in ${A})`);
  });

  sets("index", expected.indexes, actual.indexes, (name, e, a) => {
    const p = `index ${name}`;
    if (e.table !== a.table) out.push(both(`${p}: table`, e.table, a.table));
    if (e.unique !== a.unique) out.push(both(`${p}: UNIQUE`, yesNo(e.unique), yesNo(a.unique)));
    if (e.origin !== a.origin) out.push(both(`${p}: origin`, e.origin, a.origin));
    if (e.partial !== a.partial) out.push(both(`${p}: partial`, yesNo(e.partial), yesNo(a.partial)));
    if (e.columns.join(", ") !== a.columns.join(", ")) out.push(both(`${p}: columns`, `(${e.columns.join(", ")})`, `(${a.columns.join(", ")})`));
    // Columns already cover plain indexes; the text matters for WHERE clauses and expression keys.
    if ((e.partial || e.columns.includes("<expr>")) && e.sql !== a.sql) out.push(both(`${p}: definition`, e.sql ?? "(none)", a.sql ?? "(none)"));
  });

  sets("trigger", expected.triggers, actual.triggers, (name, e, a) => {
    if (e.table !== a.table) out.push(both(`trigger ${name}: table`, e.table, a.table));
    if (e.sql !== a.sql) out.push(both(`trigger ${name}: definition`, e.sql, a.sql));
  });
  sets("view", expected.views, actual.views, (name, e, a) => {
    if (e !== a) out.push(both(`view ${name}: definition`, e, a));
  });
  return out;
}

/** A numbered list for assertion messages, capped so a wholesale mismatch stays readable. */
export function formatDiff(title: string, lines: string[], max = 400): string {
  if (lines.length === 0) return `${title}: no differences`;
  const shown = lines.slice(0, max).map((l, i) => `  ${i + 1}. ${l}`);
  if (lines.length > max) shown.push(`  … and ${lines.length - max} more`);
  return `${title}: ${lines.length} difference(s)\n${shown.join("\n")}`;
}

export interface RowReadOptions {
  /** Columns left out of the comparison (timestamps, generated ids). */
  ignoreColumns?: string[];
}

/**
 * Every row of a table as canonical text: each value through SQLite's quote() (so 1, '1', 1.0, X'31' and NULL stay
 * distinct), columns in name order, rows sorted. Two files hold the same rows exactly when these lists are equal.
 */
export function readRows(reader: SqliteReader, dbPath: string, table: string, options: RowReadOptions = {}): string[] {
  const ignore = new Set(options.ignoreColumns ?? []);
  const cols = reader
    .query(dbPath, `SELECT name FROM pragma_table_info('${table.replace(/'/g, "''")}')`)
    .map((r) => str(r.name))
    .filter((c) => !ignore.has(c))
    .sort();
  if (cols.length === 0) return [];
  const ident = (c: string): string => `"${c.replace(/"/g, '""')}"`;
  const select = cols.map((c) => `quote(${ident(c)}) AS ${ident(c)}`).join(", ");
  const rows = reader.query(dbPath, `SELECT ${select} FROM ${ident(table)}`);
  return rows.map((r) => JSON.stringify(cols.map((c) => [c, r[c] ?? null]))).sort();
}

/** Rows present on one side only (as multisets), as readable lines; empty when both hold the same rows. */
export function diffRows(table: string, expected: string[], actual: string[], labels: DiffLabels): string[] {
  const count = (rows: string[]): Map<string, number> => {
    const m = new Map<string, number>();
    for (const r of rows) m.set(r, (m.get(r) ?? 0) + 1);
    return m;
  };
  const e = count(expected);
  const a = count(actual);
  const out: string[] = [];
  for (const [row, n] of e) for (let i = a.get(row) ?? 0; i < n; i++) out.push(`table ${table}: row only in ${labels.expected}: ${row}`);
  for (const [row, n] of a) for (let i = e.get(row) ?? 0; i < n; i++) out.push(`table ${table}: row only in ${labels.actual}: ${row}`);
  return out;
}
