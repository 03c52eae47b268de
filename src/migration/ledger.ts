// The migration ledger in the global DB: migration_runs (one row per run) and migration_sources (one per source).
import crypto from "node:crypto";
import path from "node:path";
import type Database from "better-sqlite3";
import { ByteSink } from "../core/byte-sink.js";
import { releaseMemory } from "../core/heap.js";
import { createQueryBuilder } from "../state/database.js";
import type { Selectable } from "kysely";
import type { GlobalDB, MigrationSourcesTable } from "../state/generated/global-db.js";
import { isOpenclawLedger, type AgentDatabase, type GlobalDatabase } from "../state/state-databases.js";
import type { ImportCounts, MigrationRunResult, SourceKind, SourceOutcome } from "./types.js";

/** Schema name of the global DB when attached to an agent DB connection for the per-source transaction. */
export const LEDGER_SCHEMA = "global";
const attachedQ = createQueryBuilder<GlobalDB>().withSchema(LEDGER_SCHEMA);

export type LedgerStatus = "imported" | "warning" | "failed" | "skipped";

export type LedgerRow = Selectable<MigrationSourcesTable>;

/** What a source's ledger row carries in report_json (no secrets: paths, sizes, hashes, counts, reasons). */
export interface SourceReport extends SourceOutcome {
  mtime: string;
  /** Failed attempts: the verified archive that holds the source's bytes (a retry needs no new backup). */
  backupPath?: string;
  counts?: Pick<ImportCounts, "records" | "rows" | "skipped" | "expect">;
}

/** Idempotency key: sha256 over (kind, source path, target table, file sha256, size). */
export function sourceKeyFor(kind: SourceKind, relativePath: string, targetTable: string, sha256: string, sizeBytes: number): string {
  return crypto.createHash("sha256").update(JSON.stringify([kind, relativePath, targetTable, sha256, sizeBytes])).digest("hex");
}

// Raw SQL: looked up once per source when planning, which runs over thousands of sources.
const SOURCE_BY_KEY_SQL = "SELECT * FROM migration_sources WHERE source_key = ?";
const LATEST_BY_PATH_SQL = "SELECT * FROM migration_sources WHERE source_path = ? AND migration_kind = ? AND status NOT IN ('failed', 'skipped') ORDER BY imported_at DESC LIMIT 1";

export function findSourceByKey(db: GlobalDatabase, key: string): LedgerRow | undefined {
  return db.prepare(SOURCE_BY_KEY_SQL).get(key) as LedgerRow | undefined;
}

/** The most recent ledger row for a path (any sha256): tells "changed since import" from "new". */
export function findLatestSourceByPath(db: GlobalDatabase, relativePath: string, kind: SourceKind): LedgerRow | undefined {
  return db.prepare(LATEST_BY_PATH_SQL).get(relativePath, kind) as LedgerRow | undefined;
}

export function ledgerCounts(row: LedgerRow): ImportCounts | null {
  if (!row.report_json) return null;
  try {
    const report = JSON.parse(row.report_json) as SourceReport;
    if (!report.counts) return null;
    return { ...report.counts, warnings: [], notes: [] };
  } catch {
    return null;
  }
}

export interface SourceRowInput {
  key: string;
  kind: SourceKind;
  relativePath: string;
  targetTable: string;
  sha256: string | null;
  sizeBytes: number;
  records: number | null;
  runId: string;
  status: LedgerStatus;
  importedAt: number | null;
  removed: boolean;
  report: SourceReport;
}

/** `openclaw`: OpenClaw's own ledger tables, which record the source path absolute and always an `imported_at`. */
function rowValues(input: SourceRowInput, dialect: "ours" | "openclaw" = "ours") {
  const openclaw = dialect === "openclaw";
  return {
    source_key: input.key,
    migration_kind: input.kind,
    source_path: openclaw ? input.report.path : input.relativePath,
    target_table: input.targetTable,
    source_sha256: input.sha256,
    source_size_bytes: input.sizeBytes,
    source_record_count: input.records,
    last_run_id: input.runId,
    status: input.status,
    imported_at: input.importedAt ?? (openclaw ? Date.now() : null),
    removed_source: input.removed ? 1 : 0,
    report_json: JSON.stringify(input.report),
  };
}

const UPSERT_SOURCE_COLUMNS = [
  "source_key",
  "migration_kind",
  "source_path",
  "target_table",
  "source_sha256",
  "source_size_bytes",
  "source_record_count",
  "last_run_id",
  "status",
  "imported_at",
  "removed_source",
  "report_json",
] as const;

/** Compiled once: one ledger row per source is on the import's hot path. */
const UPSERT_ATTACHED_SQL = attachedQ
  .insertInto("migration_sources")
  .values(Object.fromEntries(UPSERT_SOURCE_COLUMNS.map((c) => [c, null])) as never)
  .onConflict((oc) => oc.column("source_key").doUpdateSet((eb) => Object.fromEntries(UPSERT_SOURCE_COLUMNS.filter((c) => c !== "source_key").map((c) => [c, eb.ref(`excluded.${c}`)])) as never))
  .compile().sql;

/** Inside the per-source transaction on the agent DB (global attached): the ledger row commits with the rows. */
export function writeSourceAttached(db: AgentDatabase, input: SourceRowInput): void {
  const values = rowValues(input);
  db.prepare(UPSERT_ATTACHED_SQL).run(...UPSERT_SOURCE_COLUMNS.map((c) => values[c]));
}

/** Inside the per-source transaction on the global DB (global-target importers): commits with the rows. */
export function writeSourceInTransaction(db: GlobalDatabase, input: SourceRowInput): void {
  const values = rowValues(input, isOpenclawLedger(db) ? "openclaw" : "ours");
  db.run(db.q.insertInto("migration_sources").values(values).onConflict((oc) => oc.column("source_key").doUpdateSet(values)));
}

/** Outside an import (failed sources, retirement updates): the global DB directly, in its own transaction. */
export function writeSource(db: GlobalDatabase, input: SourceRowInput): void {
  db.immediate(() => writeSourceInTransaction(db, input));
}

/** What a run row says while it runs: enough for a killed run to keep its link to the verified archive. */
export interface RunningReport {
  kind: "legacy-state";
  stateDir: string;
  backupPath: string | null;
  backupSkipped: boolean;
  phase: "importing";
}

/**
 * Inserted once the verified backup exists (or none is needed), before the first import: the pre-migration
 * archive never holds its own run as `running`, and the row names the archive whatever happens next.
 */
export function startRun(db: GlobalDatabase, runId: string, startedAt: number, report: RunningReport): void {
  db.immediate(() => db.run(db.q.insertInto("migration_runs").values({ id: runId, started_at: startedAt, status: "running", report_json: JSON.stringify(report) })));
}

export interface RunReport {
  kind: "legacy-state" | "skip";
  stateDir: string;
  backupPath: string | null;
  backupSkipped: boolean;
  replanned: boolean;
  plan: unknown;
  sources: SourceOutcome[];
  changes: string[];
  warnings: string[];
  totals: MigrationRunResult["totals"];
  error?: string;
  /** Closed by a later run: it was killed (or rolled back) while `running`. */
  interrupted?: boolean;
}

/**
 * Records the run's end; inserts the row when the run stopped before it started (e.g. the backup failed).
 * The report is UTF-8 bytes written outcome by outcome, bound once, and our copy dropped before SQLite writes
 * the row: a run of 20k sources has a 13 MB report, which as a JS string bound to both halves of an upsert
 * cost ~60 MB of peak RSS.
 */
export function finishRun(db: GlobalDatabase, result: Pick<MigrationRunResult, "runId" | "startedAt" | "finishedAt" | "status">, report: RunReport): void {
  db.immediate(() => {
    const statement = db.prepareUncached(
      "INSERT INTO migration_runs (id, started_at, finished_at, status, report_json) VALUES (?, ?, ?, ?, CAST(? AS TEXT)) ON CONFLICT (id) DO UPDATE SET finished_at = excluded.finished_at, status = excluded.status, report_json = excluded.report_json",
    );
    bindReport(statement, result, report);
    releaseMemory();
    statement.run();
  });
}

/** In a frame of its own, so no stack slot keeps the report's bytes alive once SQLite has its copy. */
function bindReport(statement: Database.Statement, result: Pick<MigrationRunResult, "runId" | "startedAt" | "finishedAt" | "status">, report: RunReport): void {
  statement.bind(result.runId, result.startedAt, result.finishedAt, result.status, runReportBytes(report));
}

/** JSON.stringify(report) as bytes, the per-source outcomes last (key order is not part of the format). */
export function runReportBytes(report: RunReport): Buffer {
  const { sources, ...head } = report;
  const sink = new ByteSink();
  const headJson = JSON.stringify(head);
  sink.write(`${headJson.slice(0, -1)}${headJson === "{}" ? "" : ","}"sources":[`);
  sources.forEach((outcome, i) => sink.write(`${i === 0 ? "" : ","}${JSON.stringify(outcome)}`));
  sink.write("]}");
  return sink.finish();
}

/** The archive a failed source's row names, else the one its run recorded; null when neither. */
export function failedSourceArchive(db: GlobalDatabase, row: LedgerRow): string | null {
  const own = parseRunReport(row.report_json).backupPath;
  return typeof own === "string" ? own : findRunBackupPath(db, row.last_run_id);
}

/** The archive a run recorded (while running or after), or null. */
export function findRunBackupPath(db: GlobalDatabase, runId: string): string | null {
  const row = db.first(db.q.selectFrom("migration_runs").select("report_json").where("id", "=", runId));
  const report = parseRunReport(row?.report_json ?? null);
  return typeof report.backupPath === "string" ? report.backupPath : null;
}

export function parseRunReport(json: string | null): Partial<RunReport> {
  if (!json) return {};
  try {
    const parsed = JSON.parse(json) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Partial<RunReport>) : {};
  } catch {
    return {};
  }
}

/** Runs left `running` by a killed process: only called under the maintenance lease, so none is alive. Their backup link is kept. */
export function closeInterruptedRuns(db: GlobalDatabase, now: number): string[] {
  const stale = db.all(db.q.selectFrom("migration_runs").select(["id", "report_json"]).where("status", "=", "running"));
  if (stale.length === 0) return [];
  db.immediate(() => {
    for (const row of stale) {
      const report = { kind: "legacy-state", ...parseRunReport(row.report_json), interrupted: true, error: "interrupted before it finished; the next run completed its work" };
      delete (report as { phase?: unknown }).phase;
      db.run(db.q.updateTable("migration_runs").set({ status: "failed", finished_at: now, report_json: JSON.stringify(report) }).where("id", "=", row.id));
    }
  });
  return stale.map((r) => r.id);
}

export interface RunRow {
  id: string;
  started_at: number;
  finished_at: number | null;
  status: string;
  report_json: string | null;
}

export function listRuns(db: GlobalDatabase, limit: number): RunRow[] {
  return db.all(db.q.selectFrom("migration_runs").selectAll().orderBy("started_at", "desc").orderBy("id", "desc").limit(limit));
}

export function countRuns(db: GlobalDatabase): number {
  return Number(db.first(db.q.selectFrom("migration_runs").select((eb) => eb.fn.countAll<number>().as("n")))?.n ?? 0);
}

/**
 * The merge path: this run's rows, written in the staging ledger (this tool's format) as its sources were imported
 * and retired, copied into the live ledger — OpenClaw's current format records the source path absolute and always
 * an `imported_at`.
 */
export function copyRunLedger(from: GlobalDatabase, to: GlobalDatabase, runId: string, stateDir: string): number {
  const run = from.first(from.q.selectFrom("migration_runs").selectAll().where("id", "=", runId));
  const sources = from.all(from.q.selectFrom("migration_sources").selectAll().where("last_run_id", "=", runId));
  const openclaw = isOpenclawLedger(to);
  to.immediate(() => {
    if (run) {
      const values = { id: run.id, started_at: run.started_at, finished_at: run.finished_at, status: run.status, report_json: run.report_json ?? "{}" };
      to.run(to.q.insertInto("migration_runs").values(values).onConflict((oc) => oc.column("id").doUpdateSet({ finished_at: values.finished_at, status: values.status, report_json: values.report_json })));
    }
    for (const row of sources) {
      const values = {
        ...row,
        source_path: openclaw ? path.resolve(stateDir, row.source_path) : row.source_path,
        target_table: row.target_table ?? "",
        imported_at: row.imported_at ?? (openclaw ? Date.now() : null),
        report_json: row.report_json ?? "{}",
      };
      to.run(to.q.insertInto("migration_sources").values(values).onConflict((oc) => oc.column("source_key").doUpdateSet(values)));
    }
  });
  return sources.length;
}
