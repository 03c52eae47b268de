// Backup-side SQLite work on any database file (ours, newer or foreign): VACUUM INTO snapshots, checks, restore fix-ups.
//
// These open raw better-sqlite3 handles instead of openDatabase(): a backup must copy every SQLite file
// it finds, including ones whose schema this tool would refuse to open, and must never apply a schema.
// This module is also the worker thread's whole payload, so it imports nothing heavy (no Kysely): the
// busy timeout arrives with each job.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

export interface DatabaseFileInfo {
  userVersion: number;
  pageCount: number;
  pageSize: number;
  rowCounts: Record<string, number>;
  /** Problems reported by the check; empty when it passed or was not run. */
  problems: string[];
  check: "integrity_check" | "quick_check" | "none";
  /** From schema_meta when the file is an openclaw-state database. */
  metaRole: string | null;
  metaAgentId: string | null;
}

/** A stored absolute path moved by a restore: `from` itself, or anything under `from/`, is rewritten to `to`. */
export interface PathMove {
  from: string;
  to: string;
}

export interface FinalizeRestoredOptions {
  /** Delete every state_leases row: leases are process-scoped and never valid in a restored copy. */
  dropLeases: boolean;
  /** Rewrite stored absolute paths (STORED_PATH_COLUMNS) when the state, config or credentials moved. */
  rewritePaths?: PathMove[];
}

export interface FinalizeRestoredResult {
  leasesDropped: number;
  /** Values rewritten, summed over STORED_PATH_COLUMNS. */
  pathsRewritten: number;
}

/**
 * Every global-DB column that stores an absolute path into the state dir (or the config/credentials paths),
 * rewritten when a restore puts the state somewhere else. Columns holding relative paths
 * (migration_sources.source_path) or paths outside the state (backup_runs.archive_path), and the JSON copies
 * of legacy files (`*_json`, `raw_json`), are kept as recorded (docs/backup.md says why).
 */
export const STORED_PATH_COLUMNS: ReadonlyArray<readonly [table: string, column: string]> = [
  ["agent_databases", "path"],
  ["auth_profile_stores", "store_key"],
  ["auth_profile_stores", "agent_dir"],
  ["auth_profile_state", "store_key"],
  ["auth_profile_state", "agent_dir"],
  ["cron_jobs", "store_key"],
  ["cron_run_logs", "store_key"],
  ["agent_model_catalogs", "agent_dir"],
  ["config_health_entries", "config_path"],
  ["workspace_setup_state", "workspace_path"],
  ["exec_approvals_config", "socket_path"],
];

function openRaw(file: string, readOnlyIfUnwritable: boolean, busyTimeoutMs: number): Database.Database {
  let readonly = false;
  if (readOnlyIfUnwritable) {
    try {
      fs.accessSync(file, fs.constants.W_OK);
      fs.accessSync(path.dirname(file), fs.constants.W_OK);
    } catch {
      readonly = true;
    }
  }
  const handle = new Database(file, { fileMustExist: true, readonly });
  // First statement on every handle: nothing after it can fail with an unprotected SQLITE_BUSY.
  handle.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  return handle;
}

/**
 * Page cache for the whole-file passes (VACUUM INTO, checks): they read each page about once, so the 16 MiB
 * better-sqlite3 default only adds memory (two workers run them side by side), not speed.
 */
const SCAN_CACHE_KIB = -2000;

function fsyncFile(file: string): void {
  const fd = fs.openSync(file, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `VACUUM INTO` a fresh file (not fsynced: the archive it goes into is): one read transaction, so the copy is consistent and includes every committed
 * row still in the WAL, while writers keep writing. The source is opened read-write (query_only would refuse
 * VACUUM) so that, when we are its last connection, closing removes the -wal/-shm our open created.
 */
export function snapshotDatabase(source: string, dest: string, busyTimeoutMs: number): void {
  const handle = openRaw(source, true, busyTimeoutMs);
  try {
    // The snapshot is a private temp file, read straight back and removed: VACUUM INTO need not fsync it (it follows
    // this connection's synchronous setting). Restored before close, so a checkpoint on close stays durable.
    const synchronous = handle.pragma("synchronous", { simple: true }) as number;
    handle.pragma("synchronous = OFF");
    handle.pragma(`cache_size = ${SCAN_CACHE_KIB}`);
    try {
      handle.prepare("VACUUM INTO ?").run(dest);
    } finally {
      handle.pragma(`synchronous = ${Math.trunc(synchronous)}`);
    }
  } finally {
    handle.close();
  }
}

function tableNames(handle: Database.Database): string[] {
  // Virtual tables are skipped: counting them may need an extension module that is not loaded here.
  const rows = handle
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")
    .all() as Array<{ name: string }>;
  return rows.map((r) => r.name);
}

function readMeta(handle: Database.Database): { role: string | null; agentId: string | null } {
  try {
    const row = handle.prepare("SELECT role, agent_id FROM schema_meta WHERE meta_key = 'primary'").get() as
      | { role: unknown; agent_id: unknown }
      | undefined;
    return {
      role: typeof row?.role === "string" ? row.role : null,
      agentId: typeof row?.agent_id === "string" ? row.agent_id : null,
    };
  } catch {
    return { role: null, agentId: null };
  }
}

/** Schema version, page stats, row counts per table and (optionally) an integrity/quick check of one file. */
export function describeDatabaseFile(file: string, check: "integrity_check" | "quick_check" | "none", busyTimeoutMs: number): DatabaseFileInfo {
  const handle = openRaw(file, true, busyTimeoutMs);
  try {
    handle.pragma("query_only = ON");
    handle.pragma(`cache_size = ${SCAN_CACHE_KIB}`);
    let problems: string[] = [];
    if (check !== "none") {
      const rows = handle.pragma(check) as Array<Record<string, unknown>>;
      const messages = rows.map((r) => String(Object.values(r)[0]));
      problems = messages.length === 1 && messages[0] === "ok" ? [] : messages;
    }
    const rowCounts: Record<string, number> = {};
    if (problems.length === 0) {
      for (const name of tableNames(handle)) {
        const row = handle.prepare(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`).get() as { n: number };
        rowCounts[name] = row.n;
      }
    }
    const meta = readMeta(handle);
    return {
      userVersion: handle.pragma("user_version", { simple: true }) as number,
      pageCount: handle.pragma("page_count", { simple: true }) as number,
      pageSize: handle.pragma("page_size", { simple: true }) as number,
      rowCounts,
      problems,
      check,
      metaRole: meta.role,
      metaAgentId: meta.agentId,
    };
  } finally {
    handle.close();
  }
}

function hasTable(handle: Database.Database, name: string): boolean {
  return handle.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function hasColumn(handle: Database.Database, table: string, column: string): boolean {
  return handle.prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = ?").get(table, column) !== undefined;
}

/** Rewrites `from` and `from/…` to `to` and `to/…` in one column; the longest `from` wins when moves nest. */
function rewriteColumn(handle: Database.Database, table: string, column: string, moves: readonly PathMove[]): number {
  const t = `"${table.replace(/"/g, '""')}"`;
  const c = `"${column.replace(/"/g, '""')}"`;
  let changed = 0;
  const done = new Set<string>();
  for (const move of [...moves].sort((a, b) => b.from.length - a.from.length)) {
    if (move.from === move.to) continue;
    const prefix = move.from.endsWith(path.sep) ? move.from : `${move.from}${path.sep}`;
    // substr counts characters; the prefix's length is taken the same way (code points, not UTF-16 units).
    const prefixChars = [...prefix].length;
    const rows = handle.prepare(`SELECT DISTINCT ${c} AS v FROM ${t} WHERE ${c} = ? OR substr(${c}, 1, ?) = ?`).all(move.from, prefixChars, prefix) as Array<{ v: string }>;
    const update = handle.prepare(`UPDATE ${t} SET ${c} = ? WHERE ${c} = ?`);
    for (const { v } of rows) {
      if (done.has(v)) continue;
      const next = v === move.from ? move.to : path.join(move.to, v.slice(prefix.length));
      changed += update.run(next, v).changes;
      done.add(next);
    }
  }
  return changed;
}

/**
 * Makes a restored snapshot live-ready before it is swapped in: WAL back on (VACUUM INTO writes a
 * rollback-journal file), ephemeral lease rows dropped, registry paths moved; closes with no sidecars left.
 */
export function finalizeRestoredDatabase(file: string, options: FinalizeRestoredOptions, busyTimeoutMs: number): FinalizeRestoredResult {
  const handle = openRaw(file, false, busyTimeoutMs);
  let leasesDropped = 0;
  let pathsRewritten = 0;
  try {
    handle.pragma("journal_mode = WAL");
    handle.transaction(() => {
      if (options.dropLeases && hasTable(handle, "state_leases")) {
        leasesDropped = handle.prepare("DELETE FROM state_leases").run().changes;
      }
      for (const [table, column] of options.rewritePaths?.length ? STORED_PATH_COLUMNS : []) {
        if (hasTable(handle, table) && hasColumn(handle, table, column)) pathsRewritten += rewriteColumn(handle, table, column, options.rewritePaths!);
      }
    }).immediate();
    handle.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    handle.close();
  }
  fsyncFile(file);
  return { leasesDropped, pathsRewritten };
}

/** A completed backup_runs row, as backup reuse reads it (values type-checked: the file may be anyone's). */
export interface CompletedBackupRun {
  archivePath: string | null;
  status: string;
  manifestJson: string | null;
}

/**
 * The newest completed backup_runs rows of a global database, read with a raw query-only handle: backup create
 * needs them before anything else, and loading the Kysely-backed storage core for them cost ~0.15 s of start-up.
 */
export function readCompletedBackupRuns(file: string, limit: number, busyTimeoutMs: number): CompletedBackupRun[] {
  const handle = openRaw(file, true, busyTimeoutMs);
  try {
    handle.pragma("query_only = ON");
    const rows = handle.prepare("SELECT archive_path, status, manifest_json FROM backup_runs WHERE status = 'completed' ORDER BY created_at DESC LIMIT ?").all(limit) as Array<Record<string, unknown>>;
    return rows.map((r) => ({
      archivePath: typeof r.archive_path === "string" ? r.archive_path : null,
      status: String(r.status),
      manifestJson: typeof r.manifest_json === "string" ? r.manifest_json : null,
    }));
  } finally {
    handle.close();
  }
}

export type SqliteJob =
  | { op: "snapshot"; source: string; dest: string }
  | { op: "completed-backup-runs"; file: string; limit: number }
  | { op: "describe"; file: string; check: "integrity_check" | "quick_check" | "none" }
  | { op: "finalize"; file: string; options: FinalizeRestoredOptions };

export type SqliteJobResult<J extends SqliteJob> = J extends { op: "describe" }
  ? DatabaseFileInfo
  : J extends { op: "finalize" }
    ? FinalizeRestoredResult
    : J extends { op: "completed-backup-runs" }
      ? CompletedBackupRun[]
      : null;

/** Runs one job synchronously: the worker's body, and the inline fallback. */
export function runSqliteJob(job: SqliteJob, busyTimeoutMs: number): unknown {
  switch (job.op) {
    case "snapshot":
      snapshotDatabase(job.source, job.dest, busyTimeoutMs);
      return null;
    case "describe":
      return describeDatabaseFile(job.file, job.check, busyTimeoutMs);
    case "completed-backup-runs":
      return readCompletedBackupRuns(job.file, job.limit, busyTimeoutMs);
    case "finalize":
      return finalizeRestoredDatabase(job.file, job.options, busyTimeoutMs);
  }
}
