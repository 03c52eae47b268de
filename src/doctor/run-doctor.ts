// Runs the doctor checks; with `fix`, applies their repairs under the maintenance lease and re-checks.
import { describeError } from "../core/errors.js";
import { releaseMemory } from "../core/heap.js";
import type { MigrationPlan, MigrationRunResult } from "../migration/types.js";
import fs from "node:fs";
import { acquireBootstrapLock, assertNoForeignBootstrapLock, type BootstrapLock } from "../state/bootstrap-lock.js";
import { acquireMaintenanceLease, acquireStateLock, type MaintenanceLease } from "../state/lease.js";
import { openLeaseDatabase } from "../state/open-lease-database.js";
import type { StatePaths } from "../state/paths.js";
import { assertStateDir } from "../state/state-dir.js";
import type { GlobalDatabase } from "../state/state-databases.js";
import type { UpgradeFormatResult } from "../migration/upgrade-format.js";
import { configCheck } from "./checks/config-check.js";
import { leaseCheck } from "./checks/lease-check.js";
import { keySpellingCheck } from "./checks/key-spelling-check.js";
import { legacyCheck } from "./checks/legacy-check.js";
import { misplacedRowsCheck } from "./checks/misplaced-rows-check.js";
import { movedCronStoreCheck } from "./checks/moved-cron-store-check.js";
import { formatCheck } from "./checks/format-check.js";
import { modesCheck } from "./checks/modes-check.js";
import { restoreLeftoverCheck } from "./checks/restore-leftover-check.js";
import { storageCheck } from "./checks/storage-check.js";
import { doctorVerdict, type DoctorStatus } from "./doctor-verdict.js";
import { doctorDryRun, type DoctorDryRun } from "./dry-run.js";
import { assertStateUnchanged, lockedReadError, observeState } from "./planned-state.js";
import type { CheckContext, DoctorCheck, DoctorProgress, Finding, MigrationFixOptions, Repair, RepairApplyResult, RepairOutcome } from "./types.js";

export const DEFAULT_CHECKS: readonly DoctorCheck[] = [restoreLeftoverCheck, storageCheck, configCheck, leaseCheck, legacyCheck, misplacedRowsCheck, movedCronStoreCheck, keySpellingCheck, formatCheck, modesCheck];

export interface DoctorOptions {
  paths: StatePaths;
  fix?: boolean;
  /** With `fix`: plan it and say exactly what it would touch (DoctorResult.dryRun), write nothing. */
  dryRun?: boolean;
  deep?: boolean;
  verbose?: boolean;
  force?: boolean;
  checks?: readonly DoctorCheck[];
  /** Legacy migration flags for --fix (default: verified backup, retired sources moved under migrated/). */
  migration?: Partial<MigrationFixOptions>;
  onProgress?: (event: DoctorProgress) => void;
  /** Asked once with the planned repairs before anything is written; false aborts without changes. */
  confirm?: (repairs: readonly Repair[]) => Promise<boolean>;
}

export interface DoctorSummary {
  errors: number;
  warnings: number;
  ok: number;
}

export interface DoctorMigration {
  /** The legacy plan (check mode), or the plan `--fix` started from. */
  plan: MigrationPlan;
  /** The migration run `--fix` applied. */
  run?: MigrationRunResult;
}

export interface DoctorResult {
  stateDir: string;
  mode: "check" | "fix";
  /** From doctorVerdict (without --strict): "errors" exactly when the run fails (exit 1). */
  status: DoctorStatus;
  findings: Finding[];
  summary: DoctorSummary;
  /** Findings before the repairs ran (fix mode only). */
  findingsBefore?: Finding[];
  repairs: RepairOutcome[];
  /** Check mode: the repairs `doctor --fix` would apply now (none: --fix would change nothing). */
  plannedRepairs?: Array<{ id: string; description: string }>;
  /** Fix mode: the operator declined the confirmation; nothing was changed. */
  declined?: boolean;
  migration?: DoctorMigration;
  /** `--fix --dry-run`: what --fix would touch (the result is otherwise check mode's; nothing was written). */
  dryRun?: DoctorDryRun;
  /** Fix mode: the upgrade of this tool's design-v1 databases to OpenClaw's format, when it ran. */
  formatUpgrade?: UpgradeFormatResult;
}

interface Collected {
  findings: Finding[];
  repairs: Repair[];
  migrationPlan?: MigrationPlan;
}

async function collect(base: CheckContext, checks: readonly DoctorCheck[]): Promise<Collected> {
  const out: Collected = { findings: [], repairs: [] };
  const ctx: CheckContext = { ...base };
  for (const check of checks) {
    const result = await check.run(ctx);
    out.findings.push(...result.findings);
    out.repairs.push(...result.repairs);
    if (result.migrationPlan) out.migrationPlan = ctx.migrationPlan = result.migrationPlan;
  }
  out.repairs.sort((a, b) => a.order - b.order);
  return out;
}

export function summarize(findings: readonly Finding[]): DoctorSummary {
  return {
    errors: findings.filter((f) => f.severity === "error").length,
    warnings: findings.filter((f) => f.severity === "warning").length,
    ok: findings.filter((f) => f.severity === "info").length,
  };
}

function result(options: DoctorOptions, findings: Finding[], extra: Partial<DoctorResult> = {}): DoctorResult {
  const summary = summarize(findings);
  const res: DoctorResult = { stateDir: options.paths.stateDir, mode: options.fix ? "fix" : "check", status: "ok", findings, summary, repairs: [], ...extra };
  // The same mapping the CLI uses for its exit code and last line (it adds --strict).
  res.status = doctorVerdict(res).status;
  return res;
}

interface Sink {
  run?: MigrationRunResult;
  formatUpgrade?: UpgradeFormatResult;
}

function outcome(repair: Repair, applied: RepairApplyResult, sink: Sink): RepairOutcome {
  if (typeof applied === "string") return { id: repair.id, description: repair.description, status: "applied", detail: applied };
  if (!applied) return { id: repair.id, description: repair.description, status: "applied" };
  if (applied.migration) sink.run = applied.migration;
  if (applied.formatUpgrade) sink.formatUpgrade = applied.formatUpgrade;
  return { id: repair.id, description: repair.description, status: applied.failed ? "failed" : "applied", ...(applied.detail ? { detail: applied.detail } : {}), ...(applied.rows ? { rows: applied.rows } : {}) };
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorResult> {
  const checks = options.checks ?? DEFAULT_CHECKS;
  const ctx: CheckContext = { paths: options.paths, deep: Boolean(options.deep), verbose: Boolean(options.verbose), ...(options.dryRun ? { planReach: true } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) };
  // --fix plans without the lock (it shows the plan and asks first): what the plan was made from is checked again
  // under the lock, and a read that another process's changes broke is "locked, retry" (75), never an internal error.
  const planned = options.fix && !options.dryRun ? observeState(options.paths) : null;
  let before: Collected;
  try {
    before = await collect(ctx, checks);
  } catch (error) {
    throw planned ? lockedReadError(options.paths, planned, error) : error;
  }
  const migration = (run?: MigrationRunResult): Partial<DoctorResult> => (before.migrationPlan ? { migration: { plan: before.migrationPlan, ...(run ? { run } : {}) } } : {});
  const plannedNow = { plannedRepairs: before.repairs.map((r) => ({ id: r.id, description: r.description })), ...migration() };
  if (!options.fix) return result(options, before.findings, plannedNow);
  const fix: MigrationFixOptions = { backup: options.migration?.backup ?? true, removeSources: options.migration?.removeSources ?? false, ...(options.migration?.backupDir ? { backupDir: options.migration.backupDir } : {}) };
  // A dry run is check mode (nothing written, check mode's verdict) plus the exact list of what --fix would touch.
  if (options.dryRun) return result({ ...options, fix: false }, before.findings, { ...plannedNow, dryRun: doctorDryRun(options.paths, before.repairs, before.migrationPlan, fix) });
  if (before.repairs.length === 0) return result(options, before.findings, { findingsBefore: before.findings, ...migration() });
  if (options.confirm && !(await options.confirm(before.repairs))) {
    return result(options, before.findings, { findingsBefore: before.findings, declined: true, ...migration() });
  }

  assertStateDir(options.paths, "write");
  const outcomes: RepairOutcome[] = [];
  const sink: Sink = {};
  // No global DB yet, so no lease row: the lock file holds the state from the first change (a legacy dir
  // move) until the lease is taken on the DB this run creates.
  const bootstrap = fs.existsSync(options.paths.globalDbPath) ? null : acquireStateLock(options.paths, undefined, { command: "doctor --fix", force: options.force });
  try {
    // A run that holds the lock file (creating the global DB, or swapping it in a format upgrade) is waited for
    // before the file is opened for writing; then the databases must still be the ones planned against.
    if (!bootstrap && !options.force) assertNoForeignBootstrapLock(options.paths.stateDir);
    if (bootstrap && planned) assertStateUnchanged(options.paths, planned);
  } catch (error) {
    bootstrap?.release();
    throw error;
  }
  let global: GlobalDatabase;
  let bridge: BootstrapLock | null = null;
  try {
    for (const repair of before.repairs) {
      if (!repair.applyBeforeOpen) continue;
      try {
        outcomes.push(outcome(repair, repair.applyBeforeOpen({ paths: options.paths }), sink));
      } catch (error) {
        outcomes.push({ id: repair.id, description: repair.description, status: "failed", detail: describeError(error) });
      }
    }
    // Any format: OpenClaw's own databases get only the lease row (state_leases has the same columns in every
    // format); the repairs that write this tool's tables are not offered on them (legacy, misplaced rows).
    global = openLeaseDatabase(options.paths);
  } catch (error) {
    bootstrap?.release();
    throw error;
  }
  try {
    let lease: MaintenanceLease;
    try {
      lease = acquireMaintenanceLease(global, { command: "doctor --fix", force: options.force });
    } finally {
      bootstrap?.release();
    }
    // Without the lock file this run created nothing yet: the planned databases must be the ones it now holds.
    if (!bootstrap && planned) {
      try {
        assertStateUnchanged(options.paths, planned);
      } catch (error) {
        lease.release();
        throw error;
      }
    }
    try {
      for (const repair of before.repairs) {
        if (!repair.apply) continue;
        try {
          // sink.run: a later repair reuses the migration's verified archive instead of taking a second one.
          const applied = await repair.apply({ paths: options.paths, global, migration: fix, ...(sink.run ? { run: sink.run } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
          outcomes.push(outcome(repair, applied, sink));
        } catch (error) {
          outcomes.push({ id: repair.id, description: repair.description, status: "failed", detail: describeError(error) });
        }
      }
      // The lock file bridges the lease and the repairs after it: another run taking the lease in between would
      // make this run's format upgrade fail as locked, after its import.
      if (before.repairs.some((r) => r.applyAfterLease)) bridge = bridgeLock(options);
    } finally {
      lease.release();
    }
  } finally {
    global.close();
  }
  try {
    // Last, with every file closed: repairs that replace the database files (the format upgrade takes its own lease).
    for (const repair of before.repairs) {
      if (!repair.applyAfterLease) continue;
      try {
        const applied = await repair.applyAfterLease({ paths: options.paths, migration: fix, force: Boolean(options.force), ...(sink.run ? { run: sink.run } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
        outcomes.push(outcome(repair, applied, sink));
      } catch (error) {
        outcomes.push({ id: repair.id, description: repair.description, status: "failed", detail: describeError(error) });
      }
    }
  } finally {
    bridge?.release();
  }
  // The repairs (a migration of thousands of sources) leave a large heap behind; the re-check starts from what is live.
  releaseMemory();
  const after = await collect(ctx, checks);
  return result(options, after.findings, { findingsBefore: before.findings, repairs: outcomes, ...migration(sink.run), ...(sink.formatUpgrade ? { formatUpgrade: sink.formatUpgrade } : {}) });
}

/** The lock file, taken while the lease is still held; null when it cannot be (the repairs after the lease then lock alone, as before). */
function bridgeLock(options: DoctorOptions): BootstrapLock | null {
  try {
    return acquireBootstrapLock(options.paths.stateDir, { command: "doctor --fix", force: Boolean(options.force) });
  } catch {
    return null;
  }
}

/** Exit code for a doctor result (doctorVerdict's): 1 on error findings, failed repairs, declined, --strict warnings. */
export function doctorExitCode(res: DoctorResult, strict: boolean): number {
  return doctorVerdict(res, strict).exitCode;
}
