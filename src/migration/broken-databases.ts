// Agent databases the migration cannot read (corrupt, unreadable): set aside untouched so the other agents still migrate.
import path from "node:path";
import { isOpenclawStateError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import { discoverAgentDirs, readDatabaseFormat } from "../state/state-databases.js";
import type { MigrationPlan } from "./types.js";

export interface BrokenDatabase {
  agentId: string;
  /** Absolute path of the database file (left byte-identical). */
  path: string;
  /** Relative to the state dir, as the plan prints paths. */
  relativePath: string;
  /** What went wrong reading it (SQLite's or the backup's words). */
  reason: string;
  /** What the operator does next (real commands only). */
  remedy: string;
}

/** The three ways forward, with the commands that exist: move it aside, restore it, or set its sources aside. */
export function brokenDatabaseRemedy(paths: StatePaths, agentId: string, file: string): string {
  const rel = path.relative(paths.stateDir, file);
  return (
    `move it out of the state dir (e.g. \`mv ${file} ~/openclaw-agent-${agentId}.sqlite.broken\`) and re-run \`openclaw-state doctor --fix\`, which creates a new one and imports agent "${agentId}"'s legacy files; ` +
    `or restore it from an earlier archive (\`openclaw-state backup restore <archive> --target <dir> --yes\`, then copy <dir>/${rel} back); ` +
    `or set each of its legacy files aside with \`openclaw-state migrate skip <path> --reason …\``
  );
}

function broken(paths: StatePaths, agentId: string, file: string, reason: string): BrokenDatabase {
  return { agentId, path: file, relativePath: path.relative(paths.stateDir, file), reason, remedy: brokenDatabaseRemedy(paths, agentId, file) };
}

/**
 * Every existing agent database that cannot be opened (page 1 zeroed, not SQLite, unreadable): read-only, nothing is
 * written to any of them. A database in another program's format is not broken (the plan already names it).
 */
export function findBrokenAgentDatabases(paths: StatePaths): BrokenDatabase[] {
  const found: BrokenDatabase[] = [];
  for (const agent of discoverAgentDirs(paths)) {
    if (!agent.agentId || !agent.exists) continue;
    const { format, error } = readDatabaseFormat(agent.dbPath, "agent");
    if (!format) found.push(broken(paths, agent.agentId, agent.dbPath, error ?? "it cannot be opened"));
  }
  return found;
}

/** Snapshot errors of the backup that name one agent database: that database is set aside and the backup retried. */
const DATABASE_FAILURES = new Set(["snapshot_failed", "snapshot_integrity_failed"]);

/** The agent database a failed backup names as the cause (a damaged page the open did not reach), else null. */
export function brokenFromBackupError(paths: StatePaths, error: unknown, known: readonly BrokenDatabase[]): BrokenDatabase | null {
  if (!isOpenclawStateError(error) || !DATABASE_FAILURES.has(error.code) || !error.path) return null;
  const file = path.resolve(error.path);
  if (known.some((b) => path.resolve(b.path) === file)) return null;
  const agent = discoverAgentDirs(paths).find((a) => a.agentId && path.resolve(a.dbPath) === file);
  return agent?.agentId ? broken(paths, agent.agentId, agent.dbPath, error.message) : null;
}

/** The plan without the sources of agents whose database is set aside: they need no backup, nothing writes them. */
export function withoutBrokenAgents(plan: MigrationPlan, broken: readonly BrokenDatabase[]): MigrationPlan {
  if (broken.length === 0) return plan;
  const ids = new Set(broken.map((b) => b.agentId));
  return { ...plan, sources: plan.sources.filter((s) => !(s.targetDatabase === "agent" && s.agentId !== null && ids.has(s.agentId))) };
}
