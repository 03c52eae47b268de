// deleteSessionEntry: one session and everything it owns, deleted in one transaction under the maintenance lease, after a verified copy.
import fs from "node:fs";
import path from "node:path";
import { NotFoundError, OperationError, UsageError } from "../core/errors.js";
import { normalizeAgentId } from "../state/agent-id.js";
import { defaultBusyTimeoutMs } from "../state/busy-timeout.js";
import { acquireMaintenanceLease } from "../state/lease.js";
import { assertSessionsDeletable } from "../state/openclaw-session-reader.js";
import { agentDbPath, expandUserPath, isPathInside, type StatePaths } from "../state/paths.js";
import { openAgentDatabase, openGlobalDatabase, type AgentDatabase } from "../state/state-databases.js";
import { writeSessionBackup, type SessionBackupResult } from "./session-backup.js";
import { filterArg, filterFor, linkedConversations, orphanedConversations, SESSION_TABLES, tableExists } from "./session-rows.js";
import { requireString, resolveRuntimePaths, type AgentParams } from "./store.js";

export interface DeleteSessionEntryParams extends AgentParams {
  sessionKey: string;
  /** Write a standalone verified copy of the session here first (a fresh directory; files are never overwritten). */
  backupDir?: string | undefined;
  /** Refuse unless the key still resolves to this session id (null: unless it resolves to none). */
  expectedSessionId?: string | null | undefined;
  /** Refuse unless the session row's updated_at still equals this. */
  expectedUpdatedAt?: number | undefined;
  /** Resolve and count only: nothing is locked, written or deleted. */
  dryRun?: boolean | undefined;
  /** Take the maintenance lease even when another live process holds it. */
  force?: boolean | undefined;
  /** Also accept `main` for `agent:<agentId>:main` when no session has the key as given (the CLI's forms). */
  relativeKey?: boolean | undefined;
  /** Recorded in the lease row (default "deleteSessionEntry"). */
  command?: string | undefined;
}

export interface DeleteSessionEntryResult {
  agentId: string;
  /** The key that resolved (after relativeKey expansion). */
  sessionKey: string;
  sessionId: string;
  dryRun: boolean;
  /** Rows deleted (or that would be) per table, conversations included when no other session uses them. */
  rows: Record<string, number>;
  /** Older sessions that used the same key: kept (each is its own session). */
  otherSessionsForKey: number;
  backup: SessionBackupResult | null;
}

export async function deleteSessionEntry(params: DeleteSessionEntryParams): Promise<DeleteSessionEntryResult> {
  return deleteSessionEntrySync(params);
}

/** The synchronous core (the CLI calls it too): better-sqlite3 transactions cannot span an await. */
export function deleteSessionEntrySync(params: DeleteSessionEntryParams): DeleteSessionEntryResult {
  const paths = resolveRuntimePaths(params);
  const agentId = normalizeAgentId(params.agentId);
  const requestedKey = requireString(params.sessionKey, "sessionKey").trim();
  const backupDir = params.backupDir === undefined ? undefined : checkBackupDir(paths, params.backupDir);
  const dbFile = agentDbPath(paths, agentId);
  if (!fs.existsSync(dbFile)) throw new NotFoundError(`No session database for agent ${agentId} at ${dbFile}; nothing was deleted.`, { path: dbFile });
  // Before the lease, the backup and any write open: another program's format is refused untouched.
  assertSessionsDeletable(paths, agentId);

  if (params.dryRun) {
    const db = openAgentDatabase(paths, agentId, { mode: "read" });
    try {
      const snapshot = db.readSnapshot();
      try {
        return { ...plan(db, agentId, requestedKey, params), dryRun: true, backup: null };
      } finally {
        snapshot.end();
      }
    } finally {
      db.close();
    }
  }

  const global = openGlobalDatabase(paths, { mode: "write", create: true });
  try {
    const lease = acquireMaintenanceLease(global, { command: params.command ?? "deleteSessionEntry", force: params.force === true });
    try {
      const db = openAgentDatabase(paths, agentId, { mode: "write", global });
      try {
        // One write transaction from the lookup to the delete: the copy and the delete see the same rows.
        return db.immediate(() => {
          const planned = plan(db, agentId, requestedKey, params);
          const linked = linkedConversations(db.handle, planned.sessionId);
          const backup =
            backupDir === undefined
              ? null
              : writeSessionBackup({ live: db.handle, liveFile: db.path, agentId, sessionId: planned.sessionId, conversationIds: linked, backupDir, busyTimeoutMs: defaultBusyTimeoutMs(params.env ?? process.env) });
          const orphans = orphanedConversations(db.handle, planned.sessionId, linked);
          db.handle.prepare("DELETE FROM sessions WHERE session_id = ?").run(planned.sessionId);
          const gone = db.handle.prepare("DELETE FROM conversations WHERE conversation_id IN (SELECT value FROM json_each(?))").run(JSON.stringify(orphans)).changes;
          for (const { table } of SESSION_TABLES) {
            if (!tableExists(db.handle, "main", table)) continue;
            const left = db.handle.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${filterFor(table)}`).get(filterArg(table, planned.sessionId, [])) as { n: number };
            if (left.n > 0) throw new OperationError("delete_incomplete", `Deleting session ${planned.sessionId} left ${left.n} row(s) in ${table}; the transaction was rolled back and nothing was deleted.`);
          }
          return { ...planned, rows: { ...planned.rows, conversations: gone }, dryRun: false, backup };
        });
      } finally {
        db.close();
      }
    } finally {
      lease.release();
    }
  } finally {
    global.close();
  }
}

/** Resolves the key and counts what the session owns; throws when it resolves to nothing or expectations fail. */
function plan(db: AgentDatabase, agentId: string, requestedKey: string, params: DeleteSessionEntryParams): Omit<DeleteSessionEntryResult, "dryRun" | "backup"> {
  let resolved = resolveKey(db, requestedKey);
  let sessionKey = requestedKey;
  if (!resolved && params.relativeKey && !requestedKey.toLowerCase().startsWith("agent:")) {
    sessionKey = `agent:${agentId}:${requestedKey.toLowerCase()}`;
    resolved = resolveKey(db, sessionKey);
  }
  if (params.expectedSessionId !== undefined && (resolved?.sessionId ?? null) !== params.expectedSessionId) {
    throw new OperationError("session_changed", `Session key ${sessionKey} now resolves to ${resolved ? resolved.sessionId : "no session"}, not ${String(params.expectedSessionId)}; nothing was deleted.`);
  }
  if (!resolved) throw new NotFoundError(`No session with key ${JSON.stringify(requestedKey)} in agent ${agentId} (${db.path}); run \`openclaw-state sessions list --agent ${agentId}\` to see the keys. Nothing was deleted.`, { path: db.path });
  const { sessionId } = resolved;
  if (params.expectedUpdatedAt !== undefined && resolved.updatedAt !== params.expectedUpdatedAt) {
    throw new OperationError("session_changed", `Session ${sessionId} was updated at ${resolved.updatedAt}, not ${params.expectedUpdatedAt}; nothing was deleted.`);
  }
  const rows: Record<string, number> = {};
  for (const { table } of SESSION_TABLES) {
    if (!tableExists(db.handle, "main", table)) continue;
    rows[table] = (db.handle.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${filterFor(table)}`).get(sessionId) as { n: number }).n;
  }
  rows.conversations = orphanedConversations(db.handle, sessionId, linkedConversations(db.handle, sessionId)).length;
  const others = db.handle.prepare("SELECT count(*) AS n FROM sessions WHERE session_key = ? AND session_id != ?").get(sessionKey, sessionId) as { n: number };
  return { agentId, sessionKey, sessionId, rows, otherSessionsForKey: others.n };
}

/** The key's route, else its entry row, else the newest session row carrying the key. */
function resolveKey(db: AgentDatabase, key: string): { sessionId: string; updatedAt: number } | undefined {
  const viaRoute = db.handle.prepare("SELECT s.session_id AS sessionId, s.updated_at AS updatedAt FROM session_routes r JOIN sessions s ON s.session_id = r.session_id WHERE r.session_key = ?").get(key);
  const viaEntry = viaRoute ?? db.handle.prepare("SELECT s.session_id AS sessionId, s.updated_at AS updatedAt FROM session_entries e JOIN sessions s ON s.session_id = e.session_id WHERE e.session_key = ?").get(key);
  const row = viaEntry ?? db.handle.prepare("SELECT session_id AS sessionId, updated_at AS updatedAt FROM sessions WHERE session_key = ? ORDER BY updated_at DESC, session_id LIMIT 1").get(key);
  return row as { sessionId: string; updatedAt: number } | undefined;
}

/**
 * The backup directory is outside the state dir (a reset must not delete the copy that could undo it), also
 * through symlinks of its existing part.
 */
function checkBackupDir(paths: StatePaths, raw: string): string {
  if (raw.trim() === "") throw new UsageError("backupDir is empty; name a directory for the session copy.", "invalid_backup_dir");
  const dir = expandUserPath(raw, paths.homeDir);
  const real = realpathOfExisting(dir);
  const state = realpathOfExisting(paths.stateDir);
  if (isPathInside(state, real) || isPathInside(paths.stateDir, dir)) {
    throw new UsageError(`Backup directory ${dir} is inside the state directory ${paths.stateDir}; choose one outside it (a reset would delete the copy).`, "invalid_backup_dir");
  }
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new UsageError(`Backup directory ${dir} exists and is not a directory.`, "invalid_backup_dir");
  return dir;
}

function realpathOfExisting(p: string): string {
  let current = path.resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(p);
      rest.push(path.basename(current));
      current = parent;
    }
  }
}
