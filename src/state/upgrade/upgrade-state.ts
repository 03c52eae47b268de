// Upgrades every design-v1 database of a state into new files, then swaps them in all together, rolling back on any failure.
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../../core/errors.js";
import { openDatabase, type DbRole } from "../database.js";
import type { StatePaths } from "../paths.js";
import { fsyncDir } from "../private-fs.js";
import type { DbUpgradeResult } from "./types.js";
import { writeAcpSessions } from "./upgrade-agent-acp.js";
import { upgradeAgentDb } from "./upgrade-agent-db.js";
import Database from "better-sqlite3";
import { tryNormalizeAgentId } from "../agent-id.js";
import { OPENCLAW_CURRENT } from "../db-format.js";
import { createOpenclawDatabase } from "../openclaw-database.js";
import { agentDbPath } from "../paths.js";
import { ensurePrivateDirBelow, fileSize } from "../private-fs.js";
import { agentAuthRows, authAgentIds, upgradeGlobalDb } from "./upgrade-global-db.js";

export interface UpgradeTarget {
  role: DbRole;
  agentId?: string;
  /** The design-v1 file (replaced in place). */
  path: string;
  /** Where the replaced file is moved (kept). */
  keepAt: string;
}

export interface UpgradeStateOptions {
  paths: StatePaths;
  targets: UpgradeTarget[];
  now: number;
}

const SIDECARS = ["-wal", "-shm", "-journal"] as const;

/**
 * Checkpoints and closes the file so it stands alone: a database renamed while its -wal holds commits would
 * leave them behind, paired with whatever file takes the old name.
 */
function settle(target: UpgradeTarget): void {
  const db = openDatabase({ path: target.path, role: target.role, agentId: target.agentId, mode: "write" });
  db.close();
  const left = SIDECARS.map((s) => `${target.path}${s}`).filter((f) => fs.existsSync(f) && fs.statSync(f).size > 0);
  if (left.length > 0) {
    throw new OperationError("upgrade_busy", `${target.path} is still in use (${left.map((f) => path.basename(f)).join(", ")} not empty after a checkpoint); stop the process using it and re-run (nothing was changed).`, { path: target.path });
  }
  for (const s of SIDECARS) fs.rmSync(`${target.path}${s}`, { force: true });
}

function removeQuietly(file: string): void {
  for (const f of [file, ...SIDECARS.map((s) => `${file}${s}`)]) fs.rmSync(f, { force: true });
}

/**
 * OpenClaw keeps a non-main agent's auth store in that agent's own database (main's lives in the global one):
 * copy the design-v1 global rows of this agent into the new agent file. One row per table ('primary'): the newest wins.
 */
function addAgentAuth(globalSource: string, agentTmp: string, result: DbUpgradeResult): void {
  if (!result.agentId) return;
  const rows = agentAuthRows(globalSource, result.agentId);
  const newest = <T extends { updated_at: number }>(list: T[]): T | undefined => [...list].sort((a, b) => b.updated_at - a.updated_at)[0];
  const store = newest(rows.auth_profile_store);
  const state = newest(rows.auth_profile_state);
  if (!store && !state) return;
  const db = new Database(agentTmp);
  try {
    db.transaction(() => {
      if (store) db.prepare("INSERT INTO auth_profile_store (store_key, store_json, updated_at) VALUES (?, ?, ?)").run(store.store_key, store.store_json, store.updated_at);
      if (state) db.prepare("INSERT INTO auth_profile_state (state_key, state_json, updated_at) VALUES (?, ?, ?)").run(state.state_key, state.state_json, state.updated_at);
    }).immediate();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  for (const [table, list, row] of [["auth_profile_store", rows.auth_profile_store, store], ["auth_profile_state", rows.auth_profile_state, state]] as const) {
    if (!row) continue;
    result.written[table] = (result.written[table] ?? 0) + 1;
    if (list.length > 1) result.notes.push({ code: "agent.auth.newest-kept", message: `${table}: ${list.length} design-v1 rows for agent "${result.agentId}"; OpenClaw keeps one, the newest was written (the others stay in the kept global file).` });
  }
}

/**
 * An agent whose auth profiles were imported but which has no agent DB yet (no sessions): OpenClaw reads that agent's
 * auth only from its own DB, so one is created (as OpenClaw's own doctor does) and registered in the new global DB.
 */
function createAuthOnlyAgents(options: UpgradeStateOptions, globalSource: string, staged: Array<{ target: UpgradeTarget; tmp: string }>): Array<{ path: string; tmp: string; result: DbUpgradeResult }> {
  const have = new Set(staged.filter((s) => s.target.role === "agent").map((s) => s.target.agentId));
  const globalTmp = staged.find((s) => s.target.role === "global")?.tmp;
  const out: Array<{ path: string; tmp: string; result: DbUpgradeResult }> = [];
  for (const agentId of authAgentIds(globalSource)) {
    if (have.has(agentId) || tryNormalizeAgentId(agentId) !== agentId) continue; // an id that is not a valid agent id never names a path
    const file = agentDbPath(options.paths, agentId);
    if (fs.existsSync(file)) continue; // an agent DB in another format: the plan already refused or left it
    ensurePrivateDirBelow(options.paths.stateDir, path.dirname(file));
    const tmp = `${file}.upgrade-${options.now}.tmp`;
    removeQuietly(tmp);
    const result: DbUpgradeResult = { role: "agent", agentId, source: globalSource, target: file, read: {}, written: {}, unmapped: {}, notes: [] };
    createOpenclawDatabase({ path: tmp, role: "agent", agentId, now: options.now }).close();
    out.push({ path: file, tmp, result });
    addAgentAuth(globalSource, tmp, result);
    result.notes.push({ code: "agent.created-for-auth", message: `agent "${agentId}" had auth profiles but no agent database: created ${file} in OpenClaw's format for them.` });
    if (globalTmp) registerAgent(globalTmp, agentId, path.relative(options.paths.stateDir, file), fileSize(tmp), options.now);
  }
  return out;
}

function registerAgent(globalTmp: string, agentId: string, relativePath: string, size: number | null, now: number): void {
  const db = new Database(globalTmp);
  try {
    db.prepare("INSERT OR IGNORE INTO agent_databases (agent_id, path, schema_version, last_seen_at, size_bytes) VALUES (?, ?, ?, ?, ?)").run(agentId, relativePath, OPENCLAW_CURRENT.agent, now, size);
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

export interface StagedUpgrade {
  target: UpgradeTarget;
  tmp: string;
  result: DbUpgradeResult;
}

export interface CreatedAgentDb {
  /** Where the file goes (the agent DB path of `paths`). */
  path: string;
  tmp: string;
  result: DbUpgradeResult;
}

/**
 * Writes the upgraded copy of every target at `tmpOf(target)` (the sources are only read; a reader sees what a
 * writer in WAL mode committed), then the agent files created for agents whose only state is auth rows. Nothing
 * of the sources changes; on error every copy written is removed.
 */
export function writeUpgradedCopies(options: UpgradeStateOptions, tmpOf: (target: UpgradeTarget) => string): { staged: StagedUpgrade[]; created: CreatedAgentDb[] } {
  const staged: StagedUpgrade[] = [];
  const created: CreatedAgentDb[] = [];
  try {
    for (const target of options.targets) {
      const tmp = tmpOf(target);
      removeQuietly(tmp);
      const result =
        target.role === "global"
          ? upgradeGlobalDb({ source: target.path, target: tmp, stateDir: options.paths.stateDir, now: options.now })
          : upgradeAgentDb({ source: target.path, target: tmp, agentId: target.agentId!, now: options.now });
      staged.push({ target, tmp, result });
    }
    const globalTarget = options.targets.find((t) => t.role === "global");
    if (globalTarget) {
      for (const s of staged) if (s.target.role === "agent") addAgentAuth(globalTarget.path, s.tmp, s.result);
      created.push(...createAuthOnlyAgents(options, globalTarget.path, staged));
    }
    // OpenClaw keeps an entry's ACP metadata in the global database, not the agent's: the agents collected it.
    const globalCopy = staged.find((s) => s.target.role === "global");
    writeAcpSessions(globalCopy?.tmp, globalCopy?.result, staged.filter((s) => s.target.role === "agent").map((s) => s.result));
  } catch (error) {
    for (const s of [...staged, ...created]) removeQuietly(s.tmp);
    throw error instanceof OperationError ? error : new OperationError("upgrade_failed", `Upgrading the databases failed before any file was replaced: ${describeError(error)} (nothing was changed).`, { cause: error });
  }
  return { staged, created };
}

/**
 * Writes every new file first (nothing live changes), then swaps agents before the global DB; undoes the swaps on
 * error. The caller holds the state's lock file: the lease row lives in a file this replaces.
 */
export function upgradeStateDatabases(options: UpgradeStateOptions): DbUpgradeResult[] {
  for (const target of options.targets) settle(target);
  const { staged, created } = writeUpgradedCopies(options, (target) => `${target.path}.upgrade-${options.now}.tmp`);
  const order = [...staged].sort((a, b) => (a.target.role === b.target.role ? 0 : a.target.role === "agent" ? -1 : 1));
  const swapped: typeof staged = [];
  const placed: string[] = [];
  try {
    for (const c of created) {
      // link(2) fails when a file appeared there meanwhile: never replace an agent DB this run did not plan.
      fs.linkSync(c.tmp, c.path);
      fs.rmSync(c.tmp);
      placed.push(c.path);
      fsyncDir(path.dirname(c.path));
    }
    for (const s of order) {
      fs.renameSync(s.target.path, s.target.keepAt);
      try {
        fs.renameSync(s.tmp, s.target.path);
      } catch (error) {
        fs.renameSync(s.target.keepAt, s.target.path);
        throw error;
      }
      swapped.push(s);
      fsyncDir(path.dirname(s.target.path));
      fsyncDir(path.dirname(s.target.keepAt));
    }
  } catch (error) {
    const undone: string[] = [];
    const stuck: string[] = [];
    for (const s of swapped.reverse()) {
      try {
        fs.renameSync(s.target.path, s.tmp);
        fs.renameSync(s.target.keepAt, s.target.path);
        undone.push(s.target.path);
      } catch {
        stuck.push(`${s.target.path} (the design-v1 file is at ${s.target.keepAt})`);
      }
    }
    for (const p of placed) removeQuietly(p);
    for (const s of [...staged, ...created]) removeQuietly(s.tmp);
    throw new OperationError(
      "upgrade_swap_failed",
      `Swapping in the upgraded databases failed (${describeError(error)}); ${stuck.length === 0 ? "every file was put back as it was" : `could not put back: ${stuck.join("; ")} — move those back by hand`}.`,
      { cause: error },
    );
  }
  return [...staged.map((s) => s.result), ...created.map((c) => c.result)];
}
