// Opens the global and per-agent databases and keeps the agent_databases registry in step with them.
import fs from "node:fs";
import path from "node:path";
import type { AgentDB } from "./generated/agent-db.js";
import type { GlobalDB } from "./generated/global-db.js";
import { SCHEMA_VERSION } from "./generated/ddl.js";
import { describeError } from "../core/errors.js";
import { openDatabase, StateDatabase, type DbRole, type OpenMode } from "./database.js";
import { isOurFormat, type DbFormat } from "./db-format.js";
import { normalizeAgentId, tryNormalizeAgentId } from "./agent-id.js";
import { AGENT_DB_FILENAME, agentDbPath, type StatePaths } from "./paths.js";
import { fileSize } from "./private-fs.js";

export type GlobalDatabase = StateDatabase<GlobalDB>;
export type AgentDatabase = StateDatabase<AgentDB>;

export interface OpenStateDbOptions {
  mode: OpenMode;
  create?: boolean;
  busyTimeoutMs?: number;
}

export function openGlobalDatabase(paths: StatePaths, options: OpenStateDbOptions): GlobalDatabase {
  return openDatabase<GlobalDB>({ path: paths.globalDbPath, role: "global", root: paths.stateDir, ...options });
}

/**
 * The global DB for the migration ledger and the lease only: this tool's format, or OpenClaw's current one, whose
 * `migration_runs` / `migration_sources` / `state_leases` have the same columns (OpenClaw records source paths
 * absolute and requires `imported_at`: ledger.ts writes them so). Any other format is refused as openGlobalDatabase
 * refuses it.
 */
export function openLedgerDatabase(paths: StatePaths, options: OpenStateDbOptions): GlobalDatabase {
  const db = openDatabase<GlobalDB>({ path: paths.globalDbPath, role: "global", root: paths.stateDir, ...options, formats: "any" });
  if (db.format.id === "new" || isOurFormat(db.format) || (db.format.id === "openclaw" && db.format.current)) return db;
  db.close();
  return openGlobalDatabase(paths, options);
}

/** The ledger is OpenClaw's own tables (absolute source paths, `imported_at` required). */
export function isOpenclawLedger(db: GlobalDatabase): boolean {
  return db.format.id === "openclaw";
}

export interface OpenAgentDbOptions extends OpenStateDbOptions {
  /** Open global DB to register in; when absent and writing, the global DB is opened (and created) briefly. */
  global?: GlobalDatabase;
}

/** Opens an agent DB; a write open registers it (or refreshes last_seen/size) in agent_databases. */
export function openAgentDatabase(paths: StatePaths, rawAgentId: string, options: OpenAgentDbOptions): AgentDatabase {
  const agentId = normalizeAgentId(rawAgentId);
  const db = openDatabase<AgentDB>({ path: agentDbPath(paths, agentId), role: "agent", agentId, mode: options.mode, create: options.create, busyTimeoutMs: options.busyTimeoutMs, root: paths.stateDir });
  if (options.mode === "write") {
    try {
      const global = options.global ?? openGlobalDatabase(paths, { mode: "write", create: true });
      try {
        registerAgentDatabase(global, agentId, db.path);
      } finally {
        if (!options.global) global.close();
      }
    } catch (error) {
      db.close();
      throw error;
    }
  }
  return db;
}

export function registerAgentDatabase(global: GlobalDatabase, agentId: string, dbPath: string): void {
  const now = Date.now();
  const size = fileSize(dbPath);
  global.run(
    global.q
      .insertInto("agent_databases")
      .values({ agent_id: agentId, path: dbPath, schema_version: SCHEMA_VERSION, last_seen_at: now, size_bytes: size })
      .onConflict((oc) => oc.column("agent_id").doUpdateSet({ path: dbPath, schema_version: SCHEMA_VERSION, last_seen_at: now, size_bytes: size })),
  );
}

export function unregisterAgentDatabase(global: GlobalDatabase, agentId: string): void {
  global.run(global.q.deleteFrom("agent_databases").where("agent_id", "=", agentId));
}

export interface DiscoveredAgent {
  /** Normalized id, or null when the directory name is not a valid agent id. */
  agentId: string | null;
  dirName: string;
  dbPath: string;
  exists: boolean;
}

/** Agent directories under `<stateDir>/agents/` that hold an agent DB (or only legacy data when `all`). */
export function discoverAgentDirs(paths: StatePaths, options: { all?: boolean } = {}): DiscoveredAgent[] {
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(paths.agentsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const found: DiscoveredAgent[] = [];
  for (const entry of names) {
    if (!entry.isDirectory()) continue;
    const dbPath = path.join(paths.agentsDir, entry.name, "agent", AGENT_DB_FILENAME);
    const exists = fs.existsSync(dbPath);
    if (!exists && !options.all) continue;
    found.push({ agentId: tryNormalizeAgentId(entry.name) === entry.name ? entry.name : null, dirName: entry.name, dbPath, exists });
  }
  return found.sort((a, b) => a.dirName.localeCompare(b.dirName));
}

export interface RegistryRow {
  agent_id: string;
  path: string;
  schema_version: number | null;
  last_seen_at: number | null;
  size_bytes: number | null;
}

export function listRegisteredAgents(global: GlobalDatabase): RegistryRow[] {
  return global.all(global.q.selectFrom("agent_databases").selectAll().orderBy("agent_id"));
}

/** Agent ids known from the registry and the agents/ folder, valid ids only, sorted. */
export function knownAgentIds(paths: StatePaths, global?: GlobalDatabase): string[] {
  const ids = new Set<string>();
  for (const d of discoverAgentDirs(paths)) if (d.agentId) ids.add(d.agentId);
  if (global) for (const r of listRegisteredAgents(global)) if (tryNormalizeAgentId(r.agent_id) && fs.existsSync(r.path)) ids.add(r.agent_id);
  return [...ids].sort();
}

/** Which format a database file is in (read-only, no row read); `error` says why it could not be opened. */
export function readDatabaseFormat(file: string, role: DbRole): { format: DbFormat | null; error?: string } {
  try {
    const db = openDatabase({ path: file, role, mode: "read", formats: "any" });
    try {
      return { format: db.format };
    } finally {
      db.close();
    }
  } catch (error) {
    return { format: null, error: describeError(error) };
  }
}
