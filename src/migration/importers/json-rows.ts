// A table-driven global importer for small whole-file sources (JSON, JSONL, text): parse → typed rows → upserts.
import fs from "node:fs";
import path from "node:path";
import type { GlobalDB } from "../../state/generated/global-db.js";
import type { StatePaths } from "../../state/paths.js";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { OperationError } from "../../core/errors.js";
import { assertUnchanged, MAX_JSON_SOURCE_BYTES, hashFile, readJsonSource, sha256Of, type JsonSource } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, KindLabel, PlannedSource, SourceInspection, SourceKind } from "../types.js";

type Cell = string | number | null;

/** One row to upsert: `key` names the natural-key columns; `values` every column (keys included). */
export interface RowSpec {
  table: keyof GlobalDB & string;
  key: string[];
  values: Record<string, Cell>;
  /** `keep`: an existing row wins (a weaker source, e.g. a pending pairing behind a paired one). */
  mode?: "upsert" | "keep";
  /** Upsert only when this column of the incoming row is >= the stored one (newest wins). */
  newerColumn?: string;
}

/** Typed constructor: the table's column names are checked against the generated schema types. */
export function row<T extends keyof GlobalDB & string>(
  table: T,
  key: Array<keyof GlobalDB[T] & string>,
  values: { [K in keyof GlobalDB[T]]?: Cell },
  options: Pick<RowSpec, "mode" | "newerColumn"> = {},
): RowSpec {
  return { table, key, values: values as Record<string, Cell>, ...options };
}

export interface RowsResult {
  /** Records found in the file. */
  records: number;
  rows: RowSpec[];
  skipped?: number;
  /** Built from key names and counts only: never from values (these files can hold credentials). */
  warnings?: string[];
  notes?: string[];
  /**
   * Sets the file replaces whole: rows of `table` matching `where` are deleted before the upserts (a singleton
   * config's positional rows, where a shorter list must not keep the old tail). Same transaction.
   */
  replace?: Array<{ table: keyof GlobalDB & string; where: Record<string, Cell> }>;
}

export interface SourceFacts {
  path: string;
  relativePath: string;
  agentId: string | null;
  mtimeMs: number;
}

export interface JsonRowsSpec {
  kind: SourceKind;
  label: KindLabel;
  targetTable: string;
  targetTables: string[];
  detect(ctx: DetectContext): DetectedSource[];
  /** Reads the file; defaults to the shared JSON reader (JSON, then JSON5). */
  read?(file: string): JsonSource;
  /**
   * Maps the parsed file to rows; throws (shapeError) when the shape is wrong. `db` is the global database being
   * written when importing or verifying (absent while planning), for a source whose rows depend on what it holds.
   */
  rows(value: unknown, source: SourceFacts, paths: StatePaths, db?: GlobalDatabase): RowsResult;
  /** From the rows the plan built: which staging tables' conditional destinations this file reaches (SourceReach). */
  reaches?(result: RowsResult): Record<string, boolean>;
}

/** `<root>/<rel>` as a detected source of no agent when it is a regular file. */
export function fileSource(kind: SourceKind, root: string, rel: string, agentId: string | null = null): DetectedSource[] {
  const file = path.join(root, ...rel.split("/"));
  try {
    if (!fs.lstatSync(file).isFile()) return [];
  } catch {
    return [];
  }
  return [{ kind, agentId, path: file, relativePath: rel, legacyRoot: false }];
}

/** Regular files of `<root>/<dir>` whose names pass `filter`, sorted. */
export function dirSources(kind: SourceKind, root: string, dir: string, filter: (name: string) => boolean): DetectedSource[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(root, ...dir.split("/")));
  } catch {
    return [];
  }
  return names
    .filter(filter)
    .sort()
    .flatMap((n) => fileSource(kind, root, `${dir}/${n}`));
}

/** The whole file as UTF-8 text (gateway-instance-id, JSONL audit logs), with the JSON reader's size cap and hash. */
export function readTextSource(file: string): JsonSource {
  const size = fs.statSync(file).size;
  if (size > MAX_JSON_SOURCE_BYTES) throw new OperationError("source_too_large", `${file} is ${size} bytes, more than this kind of file may be; it was left in place.`, { path: file });
  const bytes = fs.readFileSync(file);
  return { value: bytes.toString("utf8").replace(/^\uFEFF/, ""), sha256: sha256Of(bytes), sizeBytes: bytes.length };
}

function mtimeOf(file: string): number {
  return Math.trunc(fs.statSync(file).mtimeMs);
}

/** Raw SQL because the statement is built from the row spec's table and columns (checked by `row()` at compile time). */
function upsertSql(spec: RowSpec): string {
  const cols = Object.keys(spec.values);
  const q = (c: string) => `"${c}"`;
  const insert = `INSERT INTO ${q(spec.table)} (${cols.map(q).join(", ")}) VALUES (${cols.map(() => "?").join(", ")}) ON CONFLICT (${spec.key.map(q).join(", ")})`;
  const rest = cols.filter((c) => !spec.key.includes(c));
  if (spec.mode === "keep" || rest.length === 0) return `${insert} DO NOTHING`;
  const where = spec.newerColumn ? ` WHERE excluded.${q(spec.newerColumn)} >= coalesce(${q(spec.table)}.${q(spec.newerColumn)}, excluded.${q(spec.newerColumn)})` : "";
  return `${insert} DO UPDATE SET ${rest.map((c) => `${q(c)} = excluded.${q(c)}`).join(", ")}${where}`;
}

function existsSql(spec: RowSpec): string {
  return `SELECT 1 FROM "${spec.table}" WHERE ${spec.key.map((c) => `"${c}" IS ?`).join(" AND ")}`;
}

/** Rows with the same natural key: the last one wins (the file's own order), as an upsert of each would. */
function dedupe(rows: RowSpec[]): RowSpec[] {
  const byKey = new Map<string, RowSpec>();
  for (const r of rows) byKey.set(JSON.stringify([r.table, ...r.key.map((k) => r.values[k] ?? null)]), r);
  return [...byKey.values()];
}

export function jsonRowsImporter(spec: JsonRowsSpec): GlobalSourceImporter {
  const read = spec.read ?? ((file: string) => readJsonSource(file));
  const build = (file: string, facts: SourceFacts, paths: StatePaths, db?: GlobalDatabase) => {
    const parsed = read(file);
    return { parsed, result: spec.rows(parsed.value, facts, paths, db) };
  };
  return {
    kind: spec.kind,
    target: "global",
    label: spec.label,
    targetTable: spec.targetTable,
    targetTables: spec.targetTables,
    detect: spec.detect,
    inspect(source: DetectedSource, ctx: DetectContext): SourceInspection {
      const st = fs.statSync(source.path);
      if (st.size === 0) return { sha256: sha256Of(""), sizeBytes: 0, records: 0, notes: [], skipReason: "empty file (nothing to import; left in place)" };
      try {
        const { parsed, result } = build(source.path, { ...source, mtimeMs: Math.trunc(st.mtimeMs) }, ctx.paths);
        return { sha256: parsed.sha256, sizeBytes: parsed.sizeBytes, records: result.records, notes: result.notes ?? [], ...(spec.reaches ? { reach: { tables: spec.reaches(result) } } : {}) };
      } catch (error) {
        const { sha256, sizeBytes } = hashFile(source.path);
        return { sha256, sizeBytes, records: 0, notes: [`will fail: ${error instanceof Error ? error.message : String(error)}`] };
      }
    },
    import(db: GlobalDatabase, source: PlannedSource, ctx): ImportCounts {
      const { parsed, result } = build(source.path, { ...source, mtimeMs: mtimeOf(source.path) }, ctx.paths, db);
      assertUnchanged(source, parsed.sha256);
      const rows = dedupe(result.rows);
      const written: Record<string, number> = {};
      for (const scope of result.replace ?? []) {
        const cols = Object.keys(scope.where);
        db.prepare(`DELETE FROM "${scope.table}" WHERE ${cols.map((c) => `"${c}" IS ?`).join(" AND ")}`).run(...Object.values(scope.where));
      }
      for (const r of rows) {
        db.prepare(upsertSql(r)).run(...Object.values(r.values));
        written[r.table] = (written[r.table] ?? 0) + 1;
      }
      return { records: result.records, rows: written, skipped: result.skipped ?? 0, warnings: result.warnings ?? [], notes: result.notes ?? [], expect: { rows: rows.length } };
    },
    verify(db: GlobalDatabase, source: PlannedSource, expected: ImportCounts, ctx): string | null {
      const { result } = build(source.path, { ...source, mtimeMs: mtimeOf(source.path) }, ctx.paths, db);
      const rows = dedupe(result.rows);
      const found = rows.filter((r) => db.prepare(existsSql(r)).get(...r.key.map((k) => r.values[k] ?? null)) !== undefined).length;
      return found === Number(expected.expect.rows) && found === rows.length ? null : `expected ${String(expected.expect.rows)} row(s), found ${found}`;
    },
  };
}

// ---- small value helpers shared by the importers built on this ----

export function str(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}

export function num(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** Epoch ms from a number, numeric string or ISO date string. */
export function ms(v: unknown): number | null {
  const n = num(v);
  if (n !== null) return Math.trunc(n);
  if (typeof v === "string") {
    const t = Date.parse(v);
    if (Number.isFinite(t)) return t;
  }
  return null;
}

export function bool(v: unknown): number | null {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v === "true" || v === 1) return 1;
  if (v === "false" || v === 0) return 0;
  return null;
}

export function json(v: unknown): string | null {
  return v === undefined || v === null ? null : JSON.stringify(v);
}
