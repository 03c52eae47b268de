// Read-only inventory of every database: sizes, schema, row counts, integrity, leases, last runs.
import fs from "node:fs";
import type { AgentDB } from "../state/generated/agent-db.js";
import type { GlobalDB } from "../state/generated/global-db.js";
import { listLeases, type LeaseInfo } from "../state/lease.js";
import type { StatePaths } from "../state/paths.js";
import { probeDatabase, type DatabaseProbe } from "../state/probe.js";
import { discoverAgentDirs, listRegisteredAgents, type GlobalDatabase } from "../state/state-databases.js";

export interface InspectOptions {
  paths: StatePaths;
  /** Run integrity_check on every database. */
  check?: boolean;
}

export interface InspectedDatabase extends Omit<DatabaseProbe, "check"> {
  integrity: "ok" | "failed" | "not-checked";
  tables: Record<string, number>;
}

export interface MigrationRunSummary {
  id: string;
  startedAt: number;
  finishedAt: number | null;
  status: string;
}

export interface BackupRunSummary {
  id: string;
  createdAt: number;
  archivePath: string | null;
  status: string;
}

export interface InspectResult {
  stateDir: string;
  stateDirExists: boolean;
  databases: InspectedDatabase[];
  leases: LeaseInfo[];
  lastMigrationRuns: MigrationRunSummary[];
  lastBackupRuns: BackupRunSummary[];
}

interface GlobalExtra {
  tables: Record<string, number>;
  leases: LeaseInfo[];
  migrations: MigrationRunSummary[];
  backups: BackupRunSummary[];
  registry: Array<{ agent_id: string; path: string }>;
}

function readGlobal(db: GlobalDatabase): GlobalExtra {
  return {
    tables: db.rowCounts(),
    leases: listLeases(db),
    registry: listRegisteredAgents(db),
    migrations: db
      .all(db.q.selectFrom("migration_runs").select(["id", "started_at", "finished_at", "status"]).orderBy("started_at", "desc").limit(5))
      .map((r) => ({ id: r.id, startedAt: r.started_at, finishedAt: r.finished_at, status: r.status })),
    backups: db
      .all(db.q.selectFrom("backup_runs").select(["id", "created_at", "archive_path", "status"]).orderBy("created_at", "desc").limit(5))
      .map((r) => ({ id: r.id, createdAt: r.created_at, archivePath: r.archive_path, status: r.status })),
  };
}

function toInspected(probe: DatabaseProbe, tables: Record<string, number> | undefined): InspectedDatabase {
  const { check: _check, ...rest } = probe as DatabaseProbe & { extra?: unknown };
  delete (rest as { extra?: unknown }).extra;
  const integrity = probe.problems === null ? "not-checked" : probe.problems.length === 0 ? "ok" : "failed";
  return { ...rest, integrity, tables: tables ?? {} };
}

export function inspectState(options: InspectOptions): InspectResult {
  const { paths } = options;
  const probeOptions = { deep: Boolean(options.check), skipCheck: !options.check };
  const databases: InspectedDatabase[] = [];
  const globalProbe = probeDatabase<GlobalDB, GlobalExtra>(paths.globalDbPath, "global", undefined, probeOptions, readGlobal);
  const extra = globalProbe.extra;
  if (globalProbe.status !== "missing") databases.push(toInspected(globalProbe, extra?.tables));

  const agentPaths = new Map<string, string>();
  for (const d of discoverAgentDirs(paths)) if (d.agentId) agentPaths.set(d.agentId, d.dbPath);
  for (const r of extra?.registry ?? []) if (!agentPaths.has(r.agent_id)) agentPaths.set(r.agent_id, r.path);
  for (const [agentId, dbPath] of [...agentPaths].sort((a, b) => a[0].localeCompare(b[0]))) {
    const probe = probeDatabase<AgentDB, Record<string, number>>(dbPath, "agent", agentId, probeOptions, (db) => db.rowCounts());
    databases.push(toInspected(probe, probe.extra));
  }
  return {
    stateDir: paths.stateDir,
    stateDirExists: globalProbe.status !== "missing" || agentPaths.size > 0 || dirExists(paths.stateDir),
    databases,
    leases: extra?.leases ?? [],
    lastMigrationRuns: extra?.migrations ?? [],
    lastBackupRuns: extra?.backups ?? [],
  };
}

function dirExists(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
