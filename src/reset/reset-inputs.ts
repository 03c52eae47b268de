// What a reset plan needs besides the file tree: agent DB registry rows, known workspaces, live lease holders.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import { describeLease, GATEWAY_SCOPE, listLeases, MAINTENANCE_SCOPE } from "../state/lease.js";
import { openLeaseDatabase } from "../state/open-lease-database.js";
import { readConfiguredWorkspaces } from "../backup/config-workspaces.js";
import { isWorkspaceDirName, type StatePaths } from "../state/paths.js";
import { listRegisteredAgents, type GlobalDatabase } from "../state/state-databases.js";
import { canClearCredentials, countCredentialRows, countKeptCredentialRows, detectLegacyCredentialFiles, scopedLedgerSources, type LedgerSource, type TableCount } from "./credential-stores.js";
import type { RegisteredAgentDb } from "./plan-reset.js";

export interface ResetInputs {
  registry: RegisteredAgentDb[];
  workspaces: string[];
  /** Credential rows of the live global DB, then of the design-v1 DBs kept under migrated/format-upgrade-<time>/. */
  credentialTables: TableCount[];
  ledgerSources: LedgerSource[];
  legacyCredentialFiles: string[];
  /** Live maintenance/gateway lease holders, described (read from the DB as it is now). */
  liveHolders: string[];
  warnings: string[];
  /**
   * Who wrote the global DB when reset cannot clear its credentials (OpenClaw 2026.6.x, a release between, a newer
   * one): only its lease rows are read. Unset for design-v1 and OpenClaw's current format, whose rows are known.
   */
  foreignFormat?: string;
}

function defaultWorkspaces(paths: StatePaths): string[] {
  try {
    return fs
      .readdirSync(paths.stateDir)
      .filter(isWorkspaceDirName)
      .map((name) => path.join(paths.stateDir, name));
  } catch {
    return [];
  }
}

function fromDatabase(global: GlobalDatabase, paths: StatePaths, inputs: ResetInputs): void {
  // A format whose credential tables are not known here: state_leases is the one table read (same columns).
  if (!canClearCredentials(global.format)) inputs.foreignFormat = global.format.writtenBy;
  for (const lease of listLeases(global)) {
    if (lease.live && (lease.scope === MAINTENANCE_SCOPE || lease.scope === GATEWAY_SCOPE)) inputs.liveHolders.push(describeLease(lease));
  }
  if (inputs.foreignFormat) return;
  // agent_databases, migration_sources and workspace_setup_state have the same columns in both known formats;
  // OpenClaw records agent DB paths relative to the state dir.
  inputs.registry = listRegisteredAgents(global).map((r) => ({ agent_id: r.agent_id, path: path.resolve(paths.stateDir, r.path) }));
  inputs.credentialTables = countCredentialRows(global);
  inputs.ledgerSources = scopedLedgerSources(global, paths);
  const rows = global.all(global.q.selectFrom("workspace_setup_state").select("workspace_path"));
  for (const row of rows) if (row.workspace_path) inputs.workspaces.push(path.resolve(row.workspace_path));
}

/**
 * Reads the inputs; with `global` it uses that handle, otherwise it opens the global DB read-only when it
 * exists (leaving the tree byte-for-byte as it was) and degrades to the file tree alone if it cannot.
 */
export function readResetInputs(paths: StatePaths, global?: GlobalDatabase): ResetInputs {
  // Config workspaces only inform the kept list and entry kinds, so an unreadable config just means fewer hints.
  const configured = readConfiguredWorkspaces(paths).workspaces.map((w) => w.path);
  const inputs: ResetInputs = {
    registry: [],
    workspaces: [...defaultWorkspaces(paths), ...configured],
    credentialTables: [],
    ledgerSources: [],
    legacyCredentialFiles: detectLegacyCredentialFiles(paths),
    liveHolders: [],
    warnings: [],
  };
  if (global) {
    fromDatabase(global, paths, inputs);
  } else if (fs.existsSync(paths.globalDbPath)) {
    try {
      const db = openLeaseDatabase(paths, "read");
      try {
        fromDatabase(db, paths, inputs);
      } finally {
        db.close();
      }
    } catch (error) {
      inputs.warnings.push(`Could not read the global database ${paths.globalDbPath} (${describeError(error)}); the plan comes from the file tree alone.`);
    }
  }
  // Only when the live credentials can be cleared: a refused reset reads nothing more.
  if (!inputs.foreignFormat) inputs.credentialTables.push(...countKeptCredentialRows(paths, inputs.warnings));
  inputs.workspaces = [...new Set(inputs.workspaces.map((w) => path.resolve(w)))].sort();
  return inputs;
}
