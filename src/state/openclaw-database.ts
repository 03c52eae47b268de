// Creates a database in the current released OpenClaw's format (schema/openclaw/<release>-*.sql) with the rows its own doctor seeds.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { DatabaseError } from "../core/errors.js";
import { defaultBusyTimeoutMs } from "./busy-timeout.js";
import type { DbRole } from "./database.js";
import { detectFormat, OPENCLAW_CURRENT } from "./db-format.js";
import { OPENCLAW_AGENT_SCHEMA_SQL, OPENCLAW_GLOBAL_SCHEMA_SQL, OPENCLAW_SCHEMA_RELEASE } from "./generated/openclaw-ddl.js";
import { ensurePrivateDir, ensurePrivateFile } from "./private-fs.js";

export interface CreateOpenclawDatabaseOptions {
  /** A path that must not exist yet (an upgrade writes beside the file it replaces, then renames). */
  path: string;
  role: DbRole;
  /** Agent DBs only. */
  agentId?: string;
  now?: number;
}

/**
 * A new file (0600, WAL) holding OpenClaw's schema and seed rows: `schema_meta` (app_version is the release whose
 * format this is, as OpenClaw's own doctor writes it: OpenClaw reads it to decide upgrades), and for agent DBs the
 * `session_key_contract` and `memory_index_state` singletons its schema script inserts. Returns the open handle.
 */
export function createOpenclawDatabase(options: CreateOpenclawDatabaseOptions): Database.Database {
  if (OPENCLAW_SCHEMA_RELEASE !== OPENCLAW_CURRENT.release) {
    throw new DatabaseError(`schema/openclaw/${OPENCLAW_SCHEMA_RELEASE}-*.sql is not the current release ${OPENCLAW_CURRENT.release}; run \`npm run db:gen\`.`);
  }
  if (fs.existsSync(options.path)) throw new DatabaseError(`Refusing to create ${options.path}: a file is already there; nothing was changed.`, { path: options.path });
  if (options.role === "agent" && !options.agentId) throw new DatabaseError(`An agent database needs its agent id (${options.path}).`, { path: options.path });
  ensurePrivateDir(path.dirname(options.path));
  ensurePrivateFile(options.path);
  const handle = new Database(options.path);
  try {
    handle.pragma(`busy_timeout = ${defaultBusyTimeoutMs()}`);
    handle.pragma("journal_mode = WAL");
    handle.pragma("synchronous = NORMAL");
    handle.pragma("foreign_keys = ON");
    const now = options.now ?? Date.now();
    handle.transaction(() => {
      handle.exec(options.role === "global" ? OPENCLAW_GLOBAL_SCHEMA_SQL : OPENCLAW_AGENT_SCHEMA_SQL);
      handle
        .prepare("INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) VALUES ('primary', ?, ?, ?, ?, ?, ?)")
        .run(options.role, options.role === "global" ? OPENCLAW_CURRENT.global : OPENCLAW_CURRENT.agent, options.role === "agent" ? options.agentId : null, OPENCLAW_CURRENT.release, now, now);
      if (options.role === "agent") {
        handle.prepare("INSERT OR IGNORE INTO session_key_contract (id, main_key, updated_at) VALUES (1, 'main', 0)").run();
        handle.prepare("INSERT OR IGNORE INTO memory_index_state (id, revision) VALUES (1, 0)").run();
      }
    }).immediate();
    const format = detectFormat(handle, options.role);
    if (!format.current) throw new DatabaseError(`Created ${options.path} but it reads back as ${format.writtenBy}; nothing else was changed.`, { path: options.path });
    return handle;
  } catch (error) {
    handle.close();
    throw error;
  }
}
