// A standalone, verified SQLite copy of one session (schema v1, rollback journal: no -wal/-shm), published without overwriting.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { OperationError, describeError } from "../core/errors.js";
import { toolVersion } from "../core/version.js";
import { AGENT_SCHEMA_SQL, SCHEMA_VERSION } from "../state/generated/ddl.js";
import { removeOwnedFile } from "../state/owned-path.js";
import { ensurePrivateDir, fsyncDir, pathExists, PRIVATE_FILE_MODE } from "../state/private-fs.js";
import { columnsOf, digestRows, filterArg, filterFor, SESSION_TABLES, tableExists, type TableDigest } from "./session-rows.js";

export interface SessionBackupResult {
  /** The published database file. */
  path: string;
  bytes: number;
  sha256: string;
  /** Rows copied per table (all verified against the live rows). */
  rows: Record<string, number>;
}

export interface WriteSessionBackupOptions {
  /** The writer connection, inside the transaction that will delete the session (so nothing changes meanwhile). */
  live: Database.Database;
  liveFile: string;
  agentId: string;
  sessionId: string;
  conversationIds: string[];
  backupDir: string;
  busyTimeoutMs: number;
}

const ALL_TABLES = [{ table: "conversations", order: "conversation_id" }, ...SESSION_TABLES];

/** A file name from the session id when it is plain, else from its hash (ids come from the database: untrusted). */
export function backupFileName(agentId: string, sessionId: string): string {
  const id = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/.test(sessionId) ? sessionId : `sha256-${crypto.createHash("sha256").update(sessionId).digest("hex").slice(0, 16)}`;
  return `session-${agentId}-${id}.sqlite`;
}

/**
 * Writes the copy under a temporary name, checks it (integrity, foreign keys, every table's rows equal to the
 * live rows by count and SHA-256), then publishes it with link(), which never replaces an existing file.
 */
export function writeSessionBackup(options: WriteSessionBackupOptions): SessionBackupResult {
  const { live, sessionId, conversationIds } = options;
  ensurePrivateDir(options.backupDir);
  const target = path.join(options.backupDir, backupFileName(options.agentId, sessionId));
  if (pathExists(target)) {
    throw new OperationError("backup_exists", `Session backup ${target} already exists; use a fresh --backup-dir (nothing was deleted).`, { path: target });
  }
  const temp = path.join(options.backupDir, `.${path.basename(target)}.tmp-${crypto.randomBytes(6).toString("hex")}`);
  fs.closeSync(fs.openSync(temp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, PRIVATE_FILE_MODE));
  let published = false;
  try {
    const expected = liveDigests(live, sessionId, conversationIds);
    copyRows(temp, options);
    const got = verifyCopy(temp, sessionId, conversationIds, expected);
    publish(temp, target);
    published = true;
    fsyncDir(options.backupDir);
    const content = fs.readFileSync(target);
    return { path: target, bytes: content.length, sha256: crypto.createHash("sha256").update(content).digest("hex"), rows: got };
  } finally {
    // Only our own temp files, checked like every delete: one swapped for a link or a FIFO is left alone.
    if (!published) removeOwnedFile(options.backupDir, temp);
    for (const suffix of ["-journal", "-wal", "-shm"]) removeOwnedFile(options.backupDir, `${temp}${suffix}`);
  }
}

function liveDigests(live: Database.Database, sessionId: string, conversationIds: string[]): Map<string, TableDigest> {
  const out = new Map<string, TableDigest>();
  for (const { table, order } of ALL_TABLES) {
    if (!tableExists(live, "main", table)) continue;
    out.set(table, digestRows(live, "main", table, order, columnsOf(live, "main", table), filterFor(table), filterArg(table, sessionId, conversationIds)));
  }
  return out;
}

/** The copy's own connection attaches the live file: it reads the last commit, which the writer's open transaction has not changed. */
function copyRows(temp: string, options: WriteSessionBackupOptions): void {
  const handle = new Database(temp);
  try {
    handle.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    handle.pragma("journal_mode = DELETE");
    handle.pragma("foreign_keys = ON");
    const now = Date.now();
    handle.transaction(() => {
      handle.exec(AGENT_SCHEMA_SQL);
      handle
        .prepare("INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) VALUES ('primary', 'agent', ?, ?, ?, ?, ?)")
        .run(SCHEMA_VERSION, options.agentId, toolVersion(), now, now);
      handle.pragma(`user_version = ${SCHEMA_VERSION}`);
    })();
    handle.prepare("ATTACH DATABASE ? AS live").run(options.liveFile);
    try {
      handle.transaction(() => {
        for (const { table } of ALL_TABLES) {
          if (!tableExists(handle, "live", table)) continue;
          const columns = columnsOf(handle, "main", table).map((c) => `"${c}"`).join(", ");
          handle.prepare(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM live.${table} WHERE ${filterFor(table)}`).run(filterArg(table, options.sessionId, options.conversationIds));
        }
      })();
    } finally {
      handle.prepare("DETACH DATABASE live").run();
    }
    const fk = handle.pragma("foreign_key_check") as unknown[];
    if (fk.length > 0) throw new OperationError("backup_failed", `The session copy ${temp} has ${fk.length} dangling reference(s); nothing was deleted.`, { path: temp });
  } finally {
    handle.close();
  }
  const fd = fs.openSync(temp, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Re-reads the closed copy through a fresh read-only connection and compares it with the live digests. */
function verifyCopy(temp: string, sessionId: string, conversationIds: string[], expected: Map<string, TableDigest>): Record<string, number> {
  for (const suffix of ["-wal", "-shm", "-journal"]) {
    if (fs.existsSync(`${temp}${suffix}`)) throw new OperationError("backup_failed", `The session copy left a ${suffix} sidecar; nothing was deleted.`, { path: temp });
  }
  const handle = new Database(temp, { readonly: true, fileMustExist: true });
  try {
    const problems = (handle.pragma("integrity_check") as Array<Record<string, unknown>>).map((r) => String(Object.values(r)[0]));
    if (problems.length !== 1 || problems[0] !== "ok") {
      throw new OperationError("backup_failed", `The session copy ${temp} failed its integrity check (${problems.slice(0, 3).join("; ")}); nothing was deleted.`, { path: temp });
    }
    if ((handle.pragma("journal_mode", { simple: true }) as string).toLowerCase() === "wal") throw new OperationError("backup_failed", "The session copy is in WAL mode; nothing was deleted.");
    const rows: Record<string, number> = {};
    for (const [table, want] of expected) {
      const got = digestRows(handle, "main", table, ALL_TABLES.find((t) => t.table === table)!.order, columnsOf(handle, "main", table), filterFor(table), filterArg(table, sessionId, conversationIds));
      if (got.rows !== want.rows || got.sha256 !== want.sha256) {
        throw new OperationError("backup_failed", `The session copy differs from the live rows in ${table} (${got.rows} vs ${want.rows} row(s)); nothing was deleted.`, { path: temp });
      }
      rows[table] = got.rows;
    }
    return rows;
  } catch (error) {
    if (error instanceof OperationError) throw error;
    throw new OperationError("backup_failed", `Cannot verify the session copy ${temp}: ${describeError(error)}; nothing was deleted.`, { path: temp, cause: error });
  } finally {
    handle.close();
  }
}

function publish(temp: string, target: string): void {
  try {
    fs.linkSync(temp, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new OperationError("backup_exists", `Session backup ${target} appeared while writing; it was left untouched and nothing was deleted.`, { path: target });
    throw new OperationError("backup_failed", `Cannot publish the session backup ${target}: ${describeError(error)}; nothing was deleted.`, { path: target, cause: error });
  }
  removeOwnedFile(path.dirname(temp), temp);
}
