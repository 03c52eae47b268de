// SQLite access independent of this project's better-sqlite3: the sqlite3 CLI and Node 24's built-in node:sqlite.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";

export type SqlValue = string | number | null;
export type SqlRow = Record<string, SqlValue>;

export interface SqliteReader {
  /** Which engine answers, for assertion messages ("sqlite3 CLI 3.40.1", "node:sqlite 3.54.1"). */
  readonly name: string;
  /** Runs one read-only statement and returns its rows. */
  query(dbPath: string, sql: string): SqlRow[];
  /** Creates or extends a database from a script (schema files); stops at the first error. */
  execScript(dbPath: string, script: string): void;
}

const CLI = process.env.OPENCLAW_STATE_COMPAT_SQLITE3 ?? "sqlite3";

function cliReader(): SqliteReader | null {
  let version: string;
  try {
    version = execFileSync(CLI, ["--version"], { encoding: "utf8", timeout: 10_000 }).split(" ")[0] ?? "?";
  } catch {
    return null;
  }
  return {
    name: `sqlite3 CLI ${version}`,
    query(dbPath, sql) {
      // -json prints nothing at all for an empty result.
      const out = execFileSync(CLI, ["-readonly", "-bail", "-json", dbPath, sql], { encoding: "utf8", timeout: 60_000, maxBuffer: 256 * 1024 * 1024 });
      return out.trim() === "" ? [] : (JSON.parse(out) as SqlRow[]);
    },
    execScript(dbPath, script) {
      execFileSync(CLI, ["-bail", dbPath], { input: script, encoding: "utf8", timeout: 60_000 });
    },
  };
}

interface NodeSqliteStatement {
  all(): SqlRow[];
}
interface NodeSqliteDb {
  prepare(sql: string): NodeSqliteStatement;
  exec(sql: string): void;
  close(): void;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => NodeSqliteDb;
}

function nodeSqliteReader(): SqliteReader | null {
  let mod: NodeSqliteModule;
  try {
    // Not in @types/node 20 (the project's floor), and only Node >= 22.5 has it: load it by name at run time.
    mod = createRequire(import.meta.url)("node:sqlite") as NodeSqliteModule;
  } catch {
    return null;
  }
  const withDb = <T>(dbPath: string, readOnly: boolean, fn: (db: NodeSqliteDb) => T): T => {
    const db = new mod.DatabaseSync(dbPath, { readOnly });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const version = withDb(":memory:", false, (db) => db.prepare("SELECT sqlite_version() AS v").all()[0]?.v);
  return {
    name: `node:sqlite ${String(version)}`,
    query: (dbPath, sql) => withDb(dbPath, true, (db) => db.prepare(sql).all().map((row) => ({ ...row }))),
    execScript: (dbPath, script) => withDb(dbPath, false, (db) => db.exec(script)),
  };
}

let cached: SqliteReader | undefined;

/**
 * Reads through the sqlite3 CLI when installed (the guide's independent reader), else node:sqlite. Schema scripts run
 * through node:sqlite when present: the current OpenClaw's DDL calls octet_length() in a CHECK, which SQLite < 3.43
 * (Debian 12's sqlite3 is 3.40) rejects at CREATE time. Throws when neither engine exists.
 */
export function sqliteReader(): SqliteReader {
  if (cached) return cached;
  const cli = cliReader();
  const builtin = nodeSqliteReader();
  const reads = cli ?? builtin;
  const scripts = builtin ?? cli;
  if (!reads || !scripts) throw new Error("compat: no independent SQLite reader: install the sqlite3 CLI or run under Node >= 22.5 (node:sqlite)");
  cached = {
    name: reads === scripts ? reads.name : `${reads.name} (reads), ${scripts.name} (schema scripts)`,
    query: (dbPath, sql) => reads.query(dbPath, sql),
    execScript: (dbPath, script) => scripts.execScript(dbPath, script),
  };
  return cached;
}

let bulk: SqliteReader | undefined;

/**
 * For reading every row of every table (the differential's value comparison): node:sqlite when present — in process,
 * no process per query, and just as independent of this project's better-sqlite3 — else the same as sqliteReader().
 */
export function bulkSqliteReader(): SqliteReader {
  bulk ??= nodeSqliteReader() ?? sqliteReader();
  return bulk;
}
