// Row-by-row value comparison of one table as two doctors wrote it: rows matched by natural key, every column compared after the few normalizations listed here.
import type { SqliteReader, SqlRow } from "./sqlite-reader.js";

/** What makes two writers' rows comparable at all; each rule is named with its reason where the caller declares it. */
export interface RowRules {
  /** SQL condition keeping only the imported rows (rows a doctor seeds from defaults are left out). */
  where?: string;
  /** Spellings of a key that differ on purpose, mapped to theirs before rows are matched. */
  sameKey: Array<{ from: RegExp; to: string }>;
  /** Columns not compared, with the reason (a random token each writer draws, a column the KNOWN list names). */
  skipColumns?: Record<string, string>;
  /**
   * Columns computed from the rest of their own row over an input that must differ (a hash over a run-time clock, a
   * size that follows a generated id): checked on each side against its own row (the cell becomes `derived:ok`)
   * instead of against the other side; a value that does not match its own row is compared as usual.
   */
  derived?: Record<string, (row: Record<string, string | number | null>) => string | null>;
  /** Rows (`[label]`), cells (`[label].column`) or keys of a JSON cell (`[label].column.key`, `key.sub` for a nested object's key) a KNOWN entry names: not compared. */
  knownRows?: Array<{ label: string; column?: string; jsonKey?: string }>;
  /** Generated values (random ids, ids each writer's codec derives its own way) rewritten to a placeholder on both sides, wherever they appear in a text cell. */
  generatedIds?: Array<{ pattern: RegExp; placeholder: string }>;
}

/** The clock window of this run: a value inside it was stamped by a doctor while it ran, not carried over from the legacy tree. */
export interface RunWindow {
  startMs: number;
  endMs: number;
}

export interface TableRows {
  /** Null when the table has no natural key (a lone INTEGER primary key is a rowid each writer allocates). */
  key: string[] | null;
  columns: string[];
  rows: Map<string, SqlRow>;
  /** The key of each row as a person reads it (`agent:main:main`, `<state>/cron/jobs.json, daily-brief`). */
  labels: Map<string, string>;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Reads a table into rows keyed by their natural key (or, without one, by the row's own normalized value, so the
 * comparison is a multiset one). Cells are read with their storage class: a blob as hex, an integer as text (no
 * 2^53 rounding), so an INTEGER stored where the other side stores TEXT shows up as a difference.
 */
export function readRows(reader: SqliteReader, db: string, table: string, stateDir: string, rules: RowRules, window: RunWindow): TableRows {
  const info = reader.query(db, `PRAGMA table_info("${table}")`);
  const pkInfo = info.filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk));
  const rowid = pkInfo.length === 1 && String(pkInfo[0]!.type).toUpperCase() === "INTEGER";
  const key = pkInfo.length > 0 && !rowid ? pkInfo.map((c) => String(c.name)) : null;
  const skipped = new Set(Object.keys(rules.skipColumns ?? {}));
  if (rowid) skipped.add(String(pkInfo[0]!.name));
  const columns = info.map((c) => String(c.name)).filter((c) => !skipped.has(c));
  if (columns.length === 0) return { key, columns, rows: new Map(), labels: new Map() };
  const select = columns
    .map((c) => `typeof("${c}") AS "t:${c}", CASE typeof("${c}") WHEN 'blob' THEN hex("${c}") WHEN 'integer' THEN CAST("${c}" AS TEXT) ELSE "${c}" END AS "v:${c}"`)
    .join(", ");
  const raw = reader.query(db, `SELECT ${select} FROM "${table}"${rules.where ? ` WHERE ${rules.where}` : ""}`);
  const rows = new Map<string, SqlRow>();
  const labels = new Map<string, string>();
  for (const r of raw) {
    const row: SqlRow = {};
    const rawRow = Object.fromEntries(columns.map((c) => [c, r[`v:${c}`] ?? null]));
    for (const c of columns) {
      const derive = rules.derived?.[c];
      row[c] = derive && derive(rawRow) === r[`v:${c}`] ? "derived:ok" : normalizeCell(r[`t:${c}`] as string, r[`v:${c}`] ?? null, stateDir, rules, window);
    }
    let id = key ? rules.sameKey.reduce((k, s) => k.replace(s.from, s.to), JSON.stringify(key.map((c) => row[c]))) : JSON.stringify(row);
    // Without a natural key identical rows are legitimate: number the repeats so the multiset survives.
    if (!key) for (let n = 2; rows.has(id); n++) id = `${JSON.stringify(row)} #${n}`;
    rows.set(id, row);
    if (key) labels.set(id, key.map((c) => String(row[c]).replace(/^[a-z]+:/, "")).join(", "));
  }
  return { key, columns, rows, labels };
}

/** One cell as both sides are compared: `<type>:<value>` with the paths, clocks, ids and JSON key order made neutral. */
function normalizeCell(type: string, value: string | number | null, stateDir: string, rules: RowRules, window: RunWindow): string {
  if (value === null) return "null";
  if (type === "blob") return `blob:${String(value)}`;
  if (type === "integer" || type === "real") return `${type === "integer" ? "number" : type}:${clock(Number(value), window) ?? String(value)}`;
  // Both scratch state dirs are absolute paths no one chose: the part after them is what was migrated.
  let text = String(value).split(stateDir).join("<state>");
  for (const g of rules.generatedIds ?? []) text = text.replace(g.pattern, g.placeholder);
  for (const s of rules.sameKey) text = text.replace(s.from, s.to);
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      // JSON columns: the parsed value, object keys sorted (key order is each writer's own).
      return `json:${JSON.stringify(canonical(JSON.parse(text) as unknown, window))}`;
    } catch {
      // Not JSON after all: compared as text.
    }
  }
  return `text:${ISO.test(text) ? (clock(Date.parse(text), window) ?? text) : text}`;
}

/** A number or date inside the run's window, as seconds or milliseconds: `<now>`, else null. */
function clock(n: number, window: RunWindow): string | null {
  if (!Number.isFinite(n) || n <= 0) return null;
  const ms = n < 1e11 ? n * 1000 : n;
  return ms >= window.startMs && ms <= window.endMs ? "<now>" : null;
}

function canonical(value: unknown, window: RunWindow): unknown {
  if (Array.isArray(value)) return value.map((v) => canonical(v, window));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = canonical((value as Record<string, unknown>)[k], window);
    return out;
  }
  if (typeof value === "number") return clock(value, window) ?? value;
  if (typeof value === "string" && ISO.test(value)) return clock(Date.parse(value), window) ?? value;
  return value;
}

/**
 * Every difference between the two sides' rows of one table, one line each: a column whose normalized values differ
 * for a key both sides hold (key sets are the caller's), or, in a table without a natural key, a row only one side
 * has (unless `sharedKeysOnly`). Empty when they agree.
 */
export function compareRows(label: string, theirs: TableRows, ours: TableRows, knownRows: RowRules["knownRows"] = [], sharedKeysOnly = false): string[] {
  const out: string[] = [];
  const columns = theirs.columns.filter((c) => ours.columns.includes(c));
  const missingColumns = [...theirs.columns.filter((c) => !ours.columns.includes(c)), ...ours.columns.filter((c) => !theirs.columns.includes(c))];
  if (missingColumns.length > 0) out.push(`${label}: columns only one side has: ${missingColumns.join(", ")}`);
  // Rows that differ in number on purpose: without a natural key nothing pairs them up.
  if (sharedKeysOnly && (!theirs.key || !ours.key)) return out;
  if (!theirs.key || !ours.key) {
    // No natural key: compare the rows as a multiset of whole values.
    const onlyTheirs = [...theirs.rows.keys()].filter((k) => !ours.rows.has(k));
    const onlyOurs = [...ours.rows.keys()].filter((k) => !theirs.rows.has(k));
    for (const k of onlyTheirs) out.push(`${label}: row only theirs ${short(k)}`);
    for (const k of onlyOurs) out.push(`${label}: row only ours   ${short(k)}`);
    return out;
  }
  for (const [key, theirRow] of theirs.rows) {
    const ourRow = ours.rows.get(key);
    if (!ourRow) continue; // Key sets are compared by the caller.
    const rowLabel = theirs.labels.get(key)!;
    const known = knownRows.filter((k) => k.label === rowLabel);
    if (known.some((k) => !k.column)) continue;
    for (const c of columns) {
      if (known.some((k) => k.column === c && !k.jsonKey)) continue;
      const keys = known.filter((k) => k.column === c && k.jsonKey).map((k) => k.jsonKey!);
      if (keys.length > 0 && withoutKeys(theirRow[c], keys) === withoutKeys(ourRow[c], keys)) continue;
      if (theirRow[c] !== ourRow[c]) out.push(`${label}[${rowLabel}].${c}\n    theirs ${short(String(theirRow[c]))}\n    ours   ${short(String(ourRow[c]))}`);
    }
  }
  return out;
}

/** A normalized JSON-object cell without the named keys, `a.b` naming key b of the object at a (any other cell as it is). */
function withoutKeys(cell: string | number | null | undefined, keys: string[]): string {
  const text = String(cell);
  if (!text.startsWith("json:{")) return text;
  const value = JSON.parse(text.slice(5)) as Record<string, unknown>;
  for (const k of keys) {
    const path = k.split(".");
    let parent: unknown = value;
    for (const part of path.slice(0, -1)) parent = parent && typeof parent === "object" ? (parent as Record<string, unknown>)[part] : undefined;
    if (parent && typeof parent === "object") delete (parent as Record<string, unknown>)[path.at(-1)!];
  }
  return `json:${JSON.stringify(value)}`;
}

function short(s: string, max = 600): string {
  return s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s;
}
