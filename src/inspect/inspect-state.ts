// Read-only inventory of every database: sizes, schema, row counts, integrity, leases, last runs.
import fs from "node:fs";
import path from "node:path";
import type { AgentDB } from "../state/generated/agent-db.js";
import type { GlobalDB } from "../state/generated/global-db.js";
import { listLeases, MAINTENANCE_SCOPE, type LeaseInfo } from "../state/lease.js";
import { OPENCLAW_CURRENT, type DbFormat } from "../state/db-format.js";
import { agentDbPath, type StatePaths } from "../state/paths.js";
import { probeDatabase, type DatabaseProbe } from "../state/probe.js";
import { discoverAgentDirs, listRegisteredAgents, openLedgerDatabase, type AgentDatabase, type GlobalDatabase } from "../state/state-databases.js";
import { agentSessionStats, type AgentSessionStats } from "../sessions/session-stats.js";
import { takeLegacyInventory, type LegacyInventory } from "../migration/legacy-inventory.js";
import { detectSources, foreignFormatReason } from "../migration/plan-migration.js";
import { currentFormatSessionStats } from "./current-format-sessions.js";

export interface InspectOptions {
  paths: StatePaths;
  /** Run integrity_check on every database. */
  check?: boolean;
}

/**
 * Where a database's format stands against the one this tool writes (OpenClaw's current release):
 * - `current`: OpenClaw 2026.9.6's format, the one `doctor --fix` ends in;
 * - `upgradable`: this tool's earlier design-document v1, which `openclaw-state doctor --fix` rewrites forward;
 * - `older-openclaw`: an earlier OpenClaw release's (2026.6.33's v1 or one between), which `openclaw doctor --fix` upgrades;
 * - `newer`: a newer OpenClaw's than this tool knows; `unknown`: tables of no known format; `empty`: no schema yet.
 */
export type FormatStatus = "current" | "upgradable" | "older-openclaw" | "newer" | "unknown" | "empty";

export interface InspectedDatabase extends Omit<DatabaseProbe, "check"> {
  /**
   * As the probe's, except that the current format is `ok` (it is what this tool writes and reads): `foreign` is
   * left for an older OpenClaw release's format and tables of no known format.
   */
  status: DatabaseProbe["status"];
  /** `null` when the file could not be opened. */
  formatStatus: FormatStatus | null;
  /** The command that rewrites it in the current format (`null` when current, newer, unknown or unopened). */
  upgradeWith: string | null;
  integrity: "ok" | "failed" | "not-checked";
  tables: Record<string, number>;
  /** Agent databases only: session count, transcript volume, oldest and newest session. */
  sessions?: AgentSessionStats;
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
  /** Legacy files left in the state dir: `sources` wait for `doctor --fix`; `inventory` names what will not be imported. */
  legacy: { sources: number; inventory: LegacyInventory; waitFor?: string } | null;
}

/** The legacy part of the state (directory listings only: nothing is hashed or opened). */
function legacySummary(paths: StatePaths): InspectResult["legacy"] {
  if (!dirExists(paths.stateDir)) return null;
  const { inv, detected, live, formats } = detectSources(paths);
  const inventory = takeLegacyInventory({ paths, root: inv.root, detected: new Set(detected.map((d) => path.resolve(d.source.path))), live });
  // Beside databases in OpenClaw's format the sources wait for its own doctor, not for this tool's.
  return { sources: detected.length, inventory, ...(formats.foreign && detected.length > 0 ? { waitFor: foreignFormatReason(formats.foreign) } : {}) };
}

interface GlobalExtra {
  tables: Record<string, number>;
  leases: LeaseInfo[];
  migrations: MigrationRunSummary[];
  backups: BackupRunSummary[];
  registry: Array<{ agent_id: string; path: string }>;
}

function readGlobal(db: GlobalDatabase): GlobalExtra {
  return { tables: db.rowCounts(), ...readLedger(db) };
}

/** Leases, registry, migration and backup runs: the same columns in this tool's format and OpenClaw's current one. */
function readLedger(db: GlobalDatabase): Omit<GlobalExtra, "tables"> {
  const leases = listLeases(db);
  // A `running` row no live maintenance lease stands behind was killed or rolled back (as `migrate history` says).
  const live = leases.some((l) => l.scope === MAINTENANCE_SCOPE && l.live);
  return {
    leases,
    registry: listRegisteredAgents(db),
    migrations: db
      .all(db.q.selectFrom("migration_runs").select(["id", "started_at", "finished_at", "status"]).orderBy("started_at", "desc").limit(5))
      .map((r) => ({ id: r.id, startedAt: r.started_at, finishedAt: r.finished_at, status: r.status === "running" && !live ? "interrupted" : r.status })),
    backups: db
      .all(db.q.selectFrom("backup_runs").select(["id", "created_at", "archive_path", "status"]).orderBy("created_at", "desc").limit(5))
      .map((r) => ({ id: r.id, createdAt: r.created_at, archivePath: r.archive_path, status: r.status })),
  };
}

/**
 * OpenClaw's current global format keeps the lease, the registry, the migration and backup ledgers in tables with
 * the same columns as ours (registry paths relative to the state dir): read those, count the rest by name.
 */
function readOpenclawLedger(paths: StatePaths, probe: DatabaseProbe): GlobalExtra | undefined {
  if (probe.status !== "foreign" || probe.format?.id !== "openclaw" || !probe.format.current) return undefined;
  let db: GlobalDatabase;
  try {
    db = openLedgerDatabase(paths, { mode: "read" });
  } catch {
    return undefined; // the probe already says what is wrong with the file
  }
  try {
    // The probe already counted every table by name: only the ledger is read here.
    const read = readLedger(db);
    const registry = read.registry.map((r) => ({ ...r, path: path.resolve(paths.stateDir, r.path) }));
    return { ...read, tables: probe.foreignRowCounts ?? {}, registry };
  } finally {
    db.close();
  }
}

export function formatStatusOf(format: DbFormat | null, status: DatabaseProbe["status"]): Pick<InspectedDatabase, "formatStatus" | "upgradeWith"> {
  if (!format) return { formatStatus: status === "too-new" ? "newer" : null, upgradeWith: null };
  switch (format.id) {
    case "openclaw":
      return format.current ? { formatStatus: "current", upgradeWith: null } : { formatStatus: "older-openclaw", upgradeWith: "openclaw doctor --fix" };
    case "openclaw-v1":
      return { formatStatus: "older-openclaw", upgradeWith: "openclaw doctor --fix" };
    case "design-v1":
      return { formatStatus: "upgradable", upgradeWith: "openclaw-state doctor --fix" };
    case "openclaw-newer":
      return { formatStatus: "newer", upgradeWith: null };
    case "new":
      return { formatStatus: "empty", upgradeWith: null };
    default:
      return { formatStatus: "unknown", upgradeWith: null };
  }
}

/** The release whose format a database is in, for the human output: "OpenClaw 2026.9.6". */
export const CURRENT_FORMAT_NAME = `OpenClaw ${OPENCLAW_CURRENT.release}`;

function toInspected(probe: DatabaseProbe, tables: Record<string, number> | undefined, sessions?: AgentSessionStats): InspectedDatabase {
  const { check: _check, foreignRowCounts, ...rest } = probe as DatabaseProbe & { extra?: unknown };
  delete (rest as { extra?: unknown }).extra;
  const integrity = probe.problems === null ? "not-checked" : probe.problems.length === 0 ? "ok" : "failed";
  const formatStatus = formatStatusOf(probe.format, probe.status);
  // The probe calls every format but the design document's `foreign` (its row readers are that format's); the
  // current one is the format this tool writes, so here it is `ok`, its tables counted by name.
  const status = formatStatus.formatStatus === "current" && probe.status === "foreign" ? "ok" : probe.status;
  const message = status === "ok" ? undefined : rest.message;
  const inspected: InspectedDatabase = { ...rest, status, ...formatStatus, integrity, tables: tables ?? foreignRowCounts ?? {} };
  if (message === undefined) delete inspected.message;
  if (sessions) inspected.sessions = sessions;
  return inspected;
}

interface AgentExtra {
  tables: Record<string, number>;
  sessions: AgentSessionStats;
}

function readAgent(db: AgentDatabase): AgentExtra {
  // One snapshot, so the session summary agrees with the row counts printed next to it.
  const snapshot = db.readSnapshot();
  try {
    return { tables: db.rowCounts(), sessions: agentSessionStats(db) };
  } finally {
    snapshot.end();
  }
}

export function inspectState(options: InspectOptions): InspectResult {
  const { paths } = options;
  const probeOptions = { deep: Boolean(options.check), skipCheck: !options.check, countForeignRows: true, root: paths.stateDir };
  const databases: InspectedDatabase[] = [];
  const globalProbe = probeDatabase<GlobalDB, GlobalExtra>(paths.globalDbPath, "global", undefined, probeOptions, readGlobal);
  const extra = globalProbe.extra ?? readOpenclawLedger(paths, globalProbe);
  if (globalProbe.status !== "missing") databases.push(toInspected(globalProbe, extra?.tables));

  const agentPaths = new Map<string, string>();
  for (const d of discoverAgentDirs(paths)) if (d.agentId) agentPaths.set(d.agentId, d.dbPath);
  for (const r of extra?.registry ?? []) if (!agentPaths.has(r.agent_id)) agentPaths.set(r.agent_id, r.path);
  for (const [agentId, dbPath] of [...agentPaths].sort((a, b) => a[0].localeCompare(b[0]))) {
    const probe = probeDatabase<AgentDB, AgentExtra>(dbPath, "agent", agentId, probeOptions, readAgent);
    // The current format's sessions are read through the same projection `sessions list` uses (its own path only).
    const current = probe.status === "foreign" && probe.format?.id === "openclaw" && probe.format.current && path.resolve(dbPath) === path.resolve(agentDbPath(paths, agentId));
    databases.push(toInspected(probe, probe.extra?.tables, probe.extra?.sessions ?? (current ? currentFormatSessionStats(paths, agentId) : undefined)));
  }
  return {
    stateDir: paths.stateDir,
    stateDirExists: globalProbe.status !== "missing" || agentPaths.size > 0 || dirExists(paths.stateDir),
    databases,
    leases: extra?.leases ?? [],
    lastMigrationRuns: extra?.migrations ?? [],
    lastBackupRuns: extra?.backups ?? [],
    legacy: legacySummary(paths),
  };
}

function dirExists(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
