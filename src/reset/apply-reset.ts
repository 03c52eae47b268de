// Runs a reset: plan, consent, maintenance lease, optional verified backup, removals (global DB last), registry cleanup.
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import { acquireStateLock, type StateLock } from "../state/lease.js";
import { openLeaseDatabase } from "../state/open-lease-database.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { listRegisteredAgents, type GlobalDatabase } from "../state/state-databases.js";
import { checkOwnedPath, UnsafeOwnedPathError } from "../state/owned-path.js";
import { scanForArchives } from "./archive-guard.js";
import { assertSafeTarget, entryType, removeNoFollow } from "./path-safety.js";
import { planReset, type PlanResetInput, type ResetKind, type ResetNote, type ResetPlan, type ResetScope, type ResetTarget } from "./plan-reset.js";
import { canClearCredentials, clearCredentialTables, clearKeptCredentialRows, type TableCount } from "./credential-stores.js";
import type { ResetBackupInfo } from "./reset-backup.js";
import { readResetInputs } from "./reset-inputs.js";

export type { ResetBackupInfo };

export interface ResetDecision {
  proceed: boolean;
  /** Take a verified backup first (an interactive offer accepted). */
  backup?: boolean;
}

export type ResetEvent =
  | { type: "backup-started" }
  | { type: "backup-written"; archivePath: string }
  | { type: "removed"; path: string; kind: ResetKind }
  | { type: "cleared"; table: string; rows: number }
  | { type: "failed"; path: string; kind: ResetKind; error: string };

export interface ResetOptions {
  paths: StatePaths;
  scope: ResetScope;
  /** List what would be removed; remove nothing, open nothing for writing. */
  dryRun?: boolean;
  /** Take the lease even when another live holder has it; also proceed when the global DB cannot be opened. */
  force?: boolean;
  /** Write a verified backup before removing anything (`--backup`). */
  backup?: boolean;
  /** Asked once with the plan before anything is written; may also accept a backup offer. */
  confirm?: (plan: ResetPlan) => Promise<ResetDecision>;
  /** Each removal as it happens (the CLI prints them live). */
  onEvent?: (event: ResetEvent) => void;
  /** Writes and verifies the backup; defaults to createBackup() from src/backup. */
  takeBackup?: (paths: StatePaths) => Promise<ResetBackupInfo>;
}

export interface ResetRemoved {
  path: string;
  kind: ResetKind;
}

export interface ResetFailure {
  path: string;
  kind: ResetKind;
  error: string;
}

export interface ResetResult {
  scope: ResetScope;
  dryRun: boolean;
  status: "completed" | "dry-run" | "declined" | "partial";
  stateDir: string;
  /** Removed paths; under dryRun, the paths that would be removed. */
  removed: ResetRemoved[];
  kept: ResetNote[];
  skipped: ResetNote[];
  failed: ResetFailure[];
  /** agent_databases rows dropped because their database is gone. */
  registryRowsRemoved: string[];
  /** Credential tables of the global DB cleared (rows deleted); under dryRun, the rows that would be. */
  tablesCleared: TableCount[];
  backupPath?: string;
  warnings: string[];
}

function baseResult(options: ResetOptions, plan: ResetPlan, status: ResetResult["status"], warnings: string[]): ResetResult {
  return {
    scope: options.scope,
    dryRun: Boolean(options.dryRun),
    status,
    stateDir: options.paths.stateDir,
    removed: [],
    kept: plan.kept,
    skipped: plan.skipped,
    failed: [],
    registryRowsRemoved: [],
    tablesCleared: [],
    warnings,
  };
}

async function defaultTakeBackup(paths: StatePaths): Promise<ResetBackupInfo> {
  const { takeResetBackup } = await import("./reset-backup.js");
  return takeResetBackup(paths);
}

/** Opens the global DB for the lease; a state without one has nothing to lock (and nothing is created for it). */
function openForLease(options: ResetOptions, warnings: string[]): GlobalDatabase | undefined {
  if (!fs.existsSync(options.paths.globalDbPath)) return undefined;
  try {
    // Any format: the lease row only (state_leases is the same in OpenClaw's formats); no other table is written there.
    return openLeaseDatabase(options.paths);
  } catch (error) {
    if (!options.force) {
      throw new OperationError(
        "reset_lease_unavailable",
        `Cannot open the global database ${options.paths.globalDbPath} to take the state lease (${describeError(error)}); nothing was removed — fix it with \`openclaw-state doctor\`, or pass --force to reset without the lease.`,
        { path: options.paths.globalDbPath, cause: error },
      );
    }
    warnings.push(`Reset without the state lease: the global database could not be opened (${describeError(error)}).`);
    return undefined;
  }
}

/**
 * Drops agent_databases rows whose database this reset removed or that no longer exists inside the state dir.
 * Rows are matched by agent id and stored path (OpenClaw's key is both; its paths are relative to the state dir).
 */
function dropStaleRegistryRows(global: GlobalDatabase, paths: StatePaths, removed: ReadonlySet<string>): string[] {
  return global.immediate(() => {
    const dropped: string[] = [];
    for (const row of listRegisteredAgents(global)) {
      const p = path.resolve(paths.stateDir, row.path);
      if (removed.has(p) || (isPathInside(paths.stateDir, p) && !fs.existsSync(p))) {
        global.run(global.q.deleteFrom("agent_databases").where("agent_id", "=", row.agent_id).where("path", "=", row.path));
        dropped.push(row.agent_id);
      }
    }
    return dropped;
  });
}

function removeTargets(targets: readonly ResetTarget[], options: ResetOptions, result: ResetResult): void {
  for (const target of targets) {
    try {
      // Re-checked at removal time through the shared boundary check: the tree may have changed since the plan.
      const now = assertSafeTarget({ path: target.path, root: target.root, isStateDir: target.kind === "state-dir" }, options.paths);
      if (now.kind === "missing" || removeNoFollow(target.path, { emptyOnly: target.kind === "state-dir" }) === "missing") {
        result.skipped.push({ path: target.path, reason: "already gone" });
        continue;
      }
      result.removed.push({ path: target.path, kind: target.kind });
      options.onEvent?.({ type: "removed", path: target.path, kind: target.kind });
    } catch (error) {
      const failure = { path: target.path, kind: target.kind, error: describeError(error) };
      result.failed.push(failure);
      options.onEvent?.({ type: "failed", ...failure });
    }
  }
}

/**
 * config+creds+sessions deletes the credential rows of the global DB. This tool knows where they are in its own
 * format and in OpenClaw's current one (credential-stores.ts); in any other (OpenClaw 2026.6.x, a release between,
 * a newer one) a reset that left them would claim credentials gone that are not: refused, before anything is removed.
 */
function refuseForeignCredentials(scope: ResetScope, foreignFormat: string | undefined, paths: StatePaths): void {
  if (!foreignFormat || scope !== "config+creds+sessions") return;
  throw new OperationError(
    "reset_foreign_format",
    `The global database ${paths.globalDbPath} was written by ${foreignFormat}: openclaw-state does not know where that format keeps its credentials, so it cannot clear them; nothing was removed — use \`--scope config\` or \`--scope full\` (file removals only), or OpenClaw's own commands for its credentials.`,
    { path: paths.globalDbPath },
  );
}

/**
 * Reset opens the global DB (read for the plan, write for the lease row): never through a link. A symlinked
 * `<stateDir>/state` (or a linked database file) would put the lease row, and the credential deletes, into
 * whatever database it points at; refused before anything is read or written, dry run included.
 */
function refuseLinkedGlobalDb(paths: StatePaths): void {
  // A state dir that is missing, a file or itself a link: planReset refuses (or plans nothing) with its own message.
  if (entryType(paths.stateDir) !== "dir") return;
  try {
    checkOwnedPath(paths.stateDir, paths.globalDbPath, { action: "open", allowMissing: true, expect: "file" });
  } catch (error) {
    if (!(error instanceof UnsafeOwnedPathError)) throw error;
    const db = paths.globalDbPath;
    const link = [path.dirname(db), db].find((p) => entryType(p) === "symlink");
    if (link) {
      let to = "";
      try {
        to = ` to ${fs.readlinkSync(link)}`;
      } catch {
        // Gone meanwhile: the message still names the link.
      }
      throw new OperationError(
        "reset_unsafe_path",
        `Refusing to reset: ${link} is a symbolic link${to}, and reset never opens the global database ${db} through a link; nothing was read or written — replace the link with the real ${link === db ? "file" : "directory"}, or run reset with --state-dir on the state that really holds it.`,
        { path: link, cause: error },
      );
    }
    // Not a link but not a database file either (a directory, a FIFO that would block the open, a device).
    throw new OperationError("reset_unsafe_path", `Refusing to reset: the global database ${db} cannot be opened safely (${error.reason}); nothing was read or written — move that path aside and retry.`, {
      path: db,
      cause: error,
    });
  }
}

/**
 * The plan, with every archive this tool wrote under the paths the scope names found by content and kept:
 * a first plan names the paths, the scan reads what is under them (links never followed), the final plan keeps
 * each folder holding an archive.
 */
async function planWithArchives(input: PlanResetInput): Promise<ResetPlan> {
  const draft = planReset(input);
  const archives = await scanForArchives(
    draft.targets.filter((t) => !t.link).map((t) => t.path),
    { skip: [input.paths.backupDir] },
  );
  return planReset({ ...input, archives });
}

export async function runReset(options: ResetOptions): Promise<ResetResult> {
  const { paths, scope } = options;
  refuseLinkedGlobalDb(paths);
  const preview = readResetInputs(paths);
  refuseForeignCredentials(scope, preview.foreignFormat, paths);
  const plan = await planWithArchives({ scope, paths, ...preview });

  if (options.dryRun) {
    const warnings = [...preview.warnings, ...plan.warnings];
    if (preview.liveHolders.length > 0) warnings.push(`The state is locked by ${preview.liveHolders.join(", ")}: a real run would exit 75 now.`);
    if (options.backup) warnings.push("Dry run: no backup was written.");
    const result = baseResult(options, plan, "dry-run", warnings);
    result.removed = plan.targets.map((t) => ({ path: t.path, kind: t.kind }));
    result.tablesCleared = plan.tables;
    return result;
  }

  const decision = options.confirm ? await options.confirm(plan) : { proceed: true };
  if (!decision.proceed) return baseResult(options, plan, "declined", [...preview.warnings, ...plan.warnings]);
  const wantBackup = Boolean(options.backup || decision.backup);

  const warnings: string[] = [];
  // Checked again right before the write open: the link may have appeared while the prompt waited.
  refuseLinkedGlobalDb(paths);
  const global = openForLease(options, warnings);
  let lock: StateLock | undefined;
  let open = global;
  try {
    // The lease on the global DB; without one (a legacy-only state) the lock file, so no restore or
    // `doctor --fix` can start on this state meanwhile.
    lock = acquireStateLock(paths, global, { command: `reset --scope ${scope}`, force: options.force });
    // Planned again under the lock: what is removed is what exists now, not what existed at the prompt.
    const inputs = readResetInputs(paths, global);
    refuseForeignCredentials(scope, inputs.foreignFormat, paths);
    const final = await planWithArchives({ scope, paths, ...inputs });
    const result = baseResult(options, final, "completed", [...warnings, ...inputs.warnings, ...final.warnings]);

    if (wantBackup) {
      options.onEvent?.({ type: "backup-started" });
      const backup = await (options.takeBackup ?? defaultTakeBackup)(paths);
      if (!backup.verified) {
        throw new OperationError("reset_backup_unverified", `The backup ${backup.archivePath} did not verify; nothing was removed — check it with \`openclaw-state backup verify\`.`, {
          path: backup.archivePath,
        });
      }
      result.backupPath = backup.archivePath;
      options.onEvent?.({ type: "backup-written", archivePath: backup.archivePath });
    }

    clearTables(global, final, options, result);
    removeTargets(final.targets.filter((t) => !t.afterClose), options, result);
    if (global && canClearCredentials(global.format) && scope === "config+creds+sessions") {
      const removedDbs = new Set(result.removed.filter((r) => r.kind === "agent-db").map((r) => r.path));
      result.registryRowsRemoved = dropStaleRegistryRows(global, paths, removedDbs);
    }
    const last = final.targets.filter((t) => t.afterClose);
    if (last.length > 0) {
      // The lease row goes with the file: detaching (not releasing) leaves no moment where another process could take it.
      lock?.detach();
      lock = undefined;
      global?.close();
      open = undefined;
      removeTargets(last, options, result);
    }
    if (result.failed.length > 0) result.status = "partial";
    return result;
  } finally {
    lock?.release();
    open?.close();
  }
}

/** `config_machine_state 'authProfiles.store'`, `auth_profile_stores in migrated/…/openclaw.sqlite`: for the live lines. */
function tableLabel(t: TableCount, paths: StatePaths): string {
  const key = t.key !== undefined ? ` '${t.key}'` : "";
  return t.database ? `${t.table}${key} in ${path.relative(paths.stateDir, t.database)}` : `${t.table}${key}`;
}

function clearFailed(options: ResetOptions, result: ResetResult, where: string, error: string): void {
  const failure = { path: where, kind: "global-db" as const, error };
  result.failed.push(failure);
  options.onEvent?.({ type: "failed", ...failure });
}

/**
 * Deletes the credential rows the plan names: the live global DB's in one transaction, then each kept design-v1
 * DB's in one transaction of its own; a failure is reported like a failed removal and the rest goes on.
 */
function clearTables(global: GlobalDatabase | undefined, plan: ResetPlan, options: ResetOptions, result: ResetResult): void {
  if (plan.tables.length === 0) return;
  const live = plan.tables.filter((t) => t.database === undefined);
  const done = (cleared: TableCount[]): void => {
    result.tablesCleared.push(...cleared);
    for (const t of cleared) options.onEvent?.({ type: "cleared", table: tableLabel(t, options.paths), rows: t.rows });
  };
  if (live.length > 0) {
    const where = options.paths.globalDbPath;
    if (!global) clearFailed(options, result, where, `credential rows in ${live.map((t) => t.table).join(", ")} were not deleted: the global database could not be opened`);
    else {
      try {
        done(clearCredentialTables(global, live));
      } catch (error) {
        clearFailed(options, result, where, `credential rows were not deleted: ${describeError(error)}`);
      }
    }
  }
  for (const file of [...new Set(plan.tables.flatMap((t) => (t.database ? [t.database] : [])))]) {
    try {
      // Re-checked now: still a regular file inside the state dir, reached without a link.
      checkOwnedPath(options.paths.stateDir, file, { action: "clear credential rows in", expect: "file" });
      done(clearKeptCredentialRows(file, plan.tables));
    } catch (error) {
      clearFailed(options, result, file, `credential rows of this kept design-v1 database were not deleted: ${describeError(error)}`);
    }
  }
}

/** 0 done or dry run; 1 declined or any removal failed. */
export function resetExitCode(result: ResetResult): number {
  return result.status === "completed" || result.status === "dry-run" ? 0 : 1;
}
