// `migrate upgrade`: this tool's design-v1 databases → OpenClaw's current format, behind a verified backup; the replaced files are kept.
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import type { DbRole } from "../state/database.js";
import { isOurFormat, OPENCLAW_CURRENT } from "../state/db-format.js";
import { acquireBootstrapLock, type BootstrapLock } from "../state/bootstrap-lock.js";
import { acquireStateLock, type StateLock } from "../state/lease.js";
import { openLeaseDatabase } from "../state/open-lease-database.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { ensurePrivateDirBelow, fsyncDir } from "../state/private-fs.js";
import { discoverAgentDirs, readDatabaseFormat } from "../state/state-databases.js";
import { upgradeStateDatabases, type UpgradeTarget } from "../state/upgrade/upgrade-state.js";
import { authAgentIds, readModelCatalogRows } from "../state/upgrade/upgrade-global-db.js";
import { tryNormalizeAgentId } from "../state/agent-id.js";
import { agentDbPath } from "../state/paths.js";
import { modelCatalogFile } from "./importers/model-catalogs.js";
import { mediaWriteBackPlan, writeBackMedia } from "./media-write-back.js";
import type { DbUpgradeResult } from "../state/upgrade/types.js";
import { takePreMigrationBackup, type PreMigrationBackupFn } from "./backup-step.js";
import { brokenDatabaseRemedy } from "./broken-databases.js";

export type UpgradeAction = "upgrade" | "current" | "blocked";

export interface UpgradePlanItem {
  role: DbRole;
  agentId?: string;
  path: string;
  /** Who wrote it (db-format's attribution); null when it could not be opened. */
  writtenBy: string | null;
  action: UpgradeAction;
  /** For `blocked`: why, with the next step. */
  reason?: string;
}

export interface UpgradeFormatOptions {
  paths: StatePaths;
  dryRun?: boolean;
  /** Default true: a verified archive before any file is replaced. */
  backup?: boolean;
  /**
   * A verified archive the caller took earlier in the same maintenance run (`doctor --fix`'s pre-migration backup):
   * with the replaced files kept under migrated/, it covers this run, so no second archive is written.
   */
  coveredBy?: string;
  /** Who holds the lease, as shown to other commands (default `migrate upgrade`). */
  command?: string;
  backupDir?: string;
  force?: boolean;
  now?: () => number;
  takeBackup?: PreMigrationBackupFn;
  onProgress?: (message: string) => void;
}

export interface UpgradedDatabase extends DbUpgradeResult {
  /** Where the replaced design-v1 file now lives (kept; removed only by the operator); null for a file this run created. */
  keptAt: string | null;
}

export interface UpgradeFormatResult {
  status: "planned" | "nothing-to-do" | "completed";
  /** The format written: OpenClaw's current release. */
  targetFormat: { release: string; global: number; agent: number };
  plan: UpgradePlanItem[];
  backupPath: string | null;
  /** Where the replaced files were moved (under `<stateDir>/migrated/`), null for a dry run or nothing to do. */
  keptDir: string | null;
  databases: UpgradedDatabase[];
  /** Files OpenClaw reads that the design-v1 migration had retired into rows (agent model catalogs), written back. */
  restoredFiles: string[];
  /**
   * Besides the planned databases, what the run creates: agent DBs for agents whose only state is auth rows, and
   * the model catalog files it writes back (a dry run shows them; a real run reports the same in `databases` and
   * `restoredFiles`).
   */
  alsoCreates: string[];
  warnings: string[];
}

function planItem(paths: StatePaths, role: DbRole, file: string, agentId?: string): UpgradePlanItem {
  const { format, error } = readDatabaseFormat(file, role);
  const base = { role, ...(agentId ? { agentId } : {}), path: file, writtenBy: format?.writtenBy ?? null };
  if (!format) {
    // Named with the way forward: nothing is upgraded while one file of the state cannot be read (one format or none).
    const remedy = role === "agent" && agentId ? brokenDatabaseRemedy(paths, agentId, file) : "restore it from an earlier archive (`openclaw-state backup restore <archive>`)";
    return { ...base, action: "blocked", reason: `it cannot be opened (${error}); ${remedy}` };
  }
  if (isOurFormat(format)) return { ...base, action: "upgrade" };
  if (format.id === "openclaw" && format.current) return { ...base, action: "current" };
  return { ...base, action: "blocked", reason: `it is in the format of ${format.writtenBy}, which this command does not upgrade; run \`openclaw doctor --fix\` (OpenClaw ${OPENCLAW_CURRENT.release}) for it` };
}

/** Every database of the state: the global DB and each agent DB under agents/ (one format for all, or nothing moves). */
export function planFormatUpgrade(paths: StatePaths): UpgradePlanItem[] {
  const items: UpgradePlanItem[] = [];
  if (fs.existsSync(paths.globalDbPath)) items.push(planItem(paths, "global", paths.globalDbPath));
  for (const agent of discoverAgentDirs(paths)) {
    if (!agent.agentId) continue; // an invalid id never names a path; doctor reports the directory
    items.push(planItem(paths, "agent", agent.dbPath, agent.agentId));
  }
  return items;
}

function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, "-");
}

export async function upgradeFormat(options: UpgradeFormatOptions): Promise<UpgradeFormatResult> {
  const { paths } = options;
  const now = options.now ?? Date.now;
  const plan = planFormatUpgrade(paths);
  const result: UpgradeFormatResult = {
    status: "planned",
    targetFormat: { release: OPENCLAW_CURRENT.release, global: OPENCLAW_CURRENT.global, agent: OPENCLAW_CURRENT.agent },
    plan,
    backupPath: null,
    keptDir: null,
    databases: [],
    restoredFiles: [],
    alsoCreates: [],
    warnings: [],
  };
  const blocked = plan.filter((p) => p.action === "blocked");
  if (blocked.length > 0) {
    // Half a state in one format and half in another is worse than either: nothing moves until every file can.
    throw new OperationError(
      "upgrade_blocked",
      `Cannot upgrade the state's databases: ${blocked.map((b) => `${b.path} — ${b.reason}`).join("; ")} (nothing was changed).`,
      { path: blocked[0]!.path },
    );
  }
  const todo = plan.filter((p) => p.action === "upgrade");
  if (plan.some((p) => p.role === "global" && p.action === "upgrade")) result.alsoCreates = alsoCreated(paths, plan);
  if (options.dryRun) return result;
  if (todo.length === 0) return { ...result, status: "nothing-to-do" };
  if (!plan.some((p) => p.role === "global")) {
    throw new OperationError("upgrade_no_global", `The state has agent databases but no global database ${paths.globalDbPath}; run \`openclaw-state doctor --fix\` first (nothing was changed).`, { path: paths.globalDbPath });
  }

  const lease = openLeaseDatabase(paths, "write");
  let lock: StateLock | undefined;
  let lockFile: BootstrapLock | null = null;
  try {
    const command = options.command ?? "migrate upgrade";
    lock = acquireStateLock(paths, lease, { command, force: options.force ?? false });
    // The lease row lives in the global file this replaces: the <stateDir>.lock file holds the state across the swap.
    lockFile = acquireBootstrapLock(paths.stateDir, { command, force: options.force ?? false });
    if (options.coveredBy) {
      result.backupPath = options.coveredBy;
    } else if (options.backup !== false) {
      options.onProgress?.("backing up…");
      const backup = await (options.takeBackup ?? takePreMigrationBackup)({ paths, ...(options.backupDir ? { output: options.backupDir } : {}) });
      result.backupPath = backup.archivePath;
      result.warnings.push(...backup.warnings);
    } else {
      result.warnings.push("No backup was taken (--no-backup): the replaced files are kept under migrated/, nothing else protects this run.");
    }
    const keptDir = path.join(paths.stateDir, "migrated", `format-upgrade-${stamp(now())}`);
    const targets: UpgradeTarget[] = todo.map((item) => ({
      role: item.role,
      ...(item.agentId ? { agentId: item.agentId } : {}),
      path: item.path,
      keepAt: path.join(keptDir, path.relative(paths.stateDir, item.path)),
    }));
    for (const t of targets) {
      if (!isPathInside(paths.stateDir, t.path) || !isPathInside(keptDir, t.keepAt)) {
        throw new OperationError("upgrade_outside", `${t.path} is not inside the state dir ${paths.stateDir}; nothing was changed.`, { path: t.path });
      }
    }
    for (const t of targets) ensurePrivateDirBelow(paths.stateDir, path.dirname(t.keepAt));
    options.onProgress?.("upgrading…");
    const catalogs = plan.some((p) => p.role === "global" && p.action === "upgrade") ? readModelCatalogRows(paths.globalDbPath) : [];
    // Release the lease row and close that file before it is checkpointed and moved; the lock file stays held.
    lock.release();
    lock = undefined;
    lease.close();
    const upgraded = upgradeStateDatabases({ paths, targets, now: now() });
    fsyncDir(keptDir);
    const restored = restoreModelCatalogs(paths, catalogs, result);
    result.databases = upgraded.map((u, i) => ({ ...u, keptAt: targets[i]?.keepAt ?? null }));
    const global = result.databases.find((d) => d.role === "global");
    let media = 0;
    if (global?.keptAt) {
      const back = writeBackMedia(paths, global.keptAt);
      result.restoredFiles.push(...back.written);
      result.warnings.push(...back.warnings);
      media = back.written.length;
    }
    // A catalog or a media file written back has its place (the file OpenClaw reads): only the others stay "unmapped".
    if (global) {
      settleUnmapped(global.unmapped, "agent_model_catalogs", restored);
      settleUnmapped(global.unmapped, "media_blobs", media);
    }
    result.keptDir = keptDir;
    result.status = "completed";
    return result;
  } finally {
    lock?.release();
    lease.close();
    lockFile?.release();
  }
}

function settleUnmapped(unmapped: Record<string, number>, table: string, placed: number): void {
  if (unmapped[table] === undefined) return;
  const left = unmapped[table] - placed;
  if (left > 0) unmapped[table] = left;
  else delete unmapped[table];
}

/** The files a run would create besides the new databases (read-only: nothing is written to find out). */
function alsoCreated(paths: StatePaths, plan: UpgradePlanItem[]): string[] {
  const agents = new Set(plan.filter((p) => p.role === "agent").map((p) => p.agentId));
  const created = authAgentIds(paths.globalDbPath)
    .filter((id) => !agents.has(id) && tryNormalizeAgentId(id) === id)
    .map((id) => agentDbPath(paths, id))
    .filter((file) => !fs.existsSync(file));
  const catalogs = readModelCatalogRows(paths.globalDbPath)
    .map((c) => modelCatalogFile(paths.stateDir, c.catalogKey))
    .filter((file): file is string => file !== null && !fs.existsSync(file));
  return [...created, ...catalogs, ...mediaWriteBackPlan(paths, paths.globalDbPath)];
}

/**
 * OpenClaw 2026.9.6 reads agents/<id>/agent/models.json as a live file; the design-v1 migration had retired it into
 * agent_model_catalogs. Each is written back (0600, never over an existing file, never through a link); a row whose
 * key names no valid agent dir, or whose file is already there, stays only in the kept database and is named.
 */
function restoreModelCatalogs(paths: StatePaths, catalogs: Array<{ catalogKey: string; rawJson: string }>, result: UpgradeFormatResult): number {
  let written = 0;
  for (const catalog of catalogs) {
    const file = modelCatalogFile(paths.stateDir, catalog.catalogKey);
    if (!file || !isPathInside(paths.stateDir, file)) {
      result.warnings.push(`Model catalog ${JSON.stringify(catalog.catalogKey)} names no agent dir of this state; it stays in the kept global database only.`);
      continue;
    }
    try {
      ensurePrivateDirBelow(paths.stateDir, path.dirname(file));
      const text = `${JSON.stringify(JSON.parse(catalog.rawJson), null, 2)}\n`;
      fs.writeFileSync(file, text, { mode: 0o600, flag: "wx" });
      result.restoredFiles.push(file);
      written += 1;
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === "EEXIST" ? "a file is already there (left as it is)" : describeError(error);
      result.warnings.push(`Model catalog of ${catalog.catalogKey} not written back to ${file}: ${why}; the rows stay in the kept global database.`);
    }
  }
  return written;
}
