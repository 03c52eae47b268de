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

export interface FinalizeRestoredOptions {
  /** Delete every state_leases row: leases are process-scoped and never valid in a restored copy. */
  dropLeases: boolean;
  /** Rewrite agent_databases paths under `from` to live under `to` (restoring to another state dir). */
  rewriteRegistry?: { from: string; to: string };
}

export interface FinalizeRestoredResult {
  leasesDropped: number;
  registryRewritten: number;
}

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

/**
 * Makes a restored snapshot live-ready before it is swapped in: WAL back on (VACUUM INTO writes a
 * rollback-journal file), ephemeral lease rows dropped, registry paths moved; closes with no sidecars left.
 */
export function finalizeRestoredDatabase(file: string, options: FinalizeRestoredOptions, busyTimeoutMs: number): FinalizeRestoredResult {
  const handle = openRaw(file, false, busyTimeoutMs);
  let leasesDropped = 0;
  let registryRewritten = 0;
  try {
    handle.pragma("journal_mode = WAL");
    handle.transaction(() => {
      if (options.dropLeases && hasTable(handle, "state_leases")) {
        leasesDropped = handle.prepare("DELETE FROM state_leases").run().changes;
      }
      const rewrite = options.rewriteRegistry;
      if (rewrite && rewrite.from !== rewrite.to && hasTable(handle, "agent_databases")) {
        const prefix = rewrite.from.endsWith(path.sep) ? rewrite.from : `${rewrite.from}${path.sep}`;
        const rows = handle.prepare("SELECT agent_id, path FROM agent_databases").all() as Array<{ agent_id: string; path: string }>;
        const update = handle.prepare("UPDATE agent_databases SET path = ? WHERE agent_id = ?");
        for (const row of rows) {
          if (typeof row.path !== "string" || !row.path.startsWith(prefix)) continue;
          update.run(path.join(rewrite.to, row.path.slice(prefix.length)), row.agent_id);
          registryRewritten += 1;
        }
      }
    }).immediate();
    handle.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    handle.close();
  }
  fsyncFile(file);
  return { leasesDropped, registryRewritten };
}

export type SqliteJob =
  | { op: "snapshot"; source: string; dest: string }
  | { op: "describe"; file: string; check: "integrity_check" | "quick_check" | "none" }
  | { op: "finalize"; file: string; options: FinalizeRestoredOptions };

export type SqliteJobResult<J extends SqliteJob> = J extends { op: "describe" }
  ? DatabaseFileInfo
  : J extends { op: "finalize" }
    ? FinalizeRestoredResult
    : null;

/** Runs one job synchronously: the worker's body, and the inline fallback. */
export function runSqliteJob(job: SqliteJob, busyTimeoutMs: number): unknown {
  switch (job.op) {
    case "snapshot":
      snapshotDatabase(job.source, job.dest, busyTimeoutMs);
      return null;
    case "describe":
      return describeDatabaseFile(job.file, job.check, busyTimeoutMs);
    case "finalize":
      return finalizeRestoredDatabase(job.file, job.options, busyTimeoutMs);
  }
}
