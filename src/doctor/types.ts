// The doctor frame's vocabulary: findings are data, repairs are the safe fixes `doctor --fix` may apply.
import type { MigrationPlan, MigrationProgress, MigrationRunResult } from "../migration/types.js";
import type { UpgradeFormatResult } from "../migration/upgrade-format.js";
import type { GlobalDatabase } from "../state/state-databases.js";
import type { StatePaths } from "../state/paths.js";

export type Severity = "error" | "warning" | "info";

export interface Finding {
  id: string;
  severity: Severity;
  title: string;
  detail?: string;
  /** What `doctor --fix` (or the operator) does about it. */
  fix?: string;
  path?: string;
  /**
   * `doctor --fix` cannot do this here (another program's step, e.g. `openclaw doctor --fix`): while such a
   * finding stands after the repairs, fix mode exits 1 — the state is not where --fix promised to leave it.
   */
  leftUndone?: boolean;
}

export type DoctorProgress = MigrationProgress;

export interface CheckContext {
  paths: StatePaths;
  deep: boolean;
  verbose: boolean;
  onProgress?: (event: DoctorProgress) => void;
  /** The legacy plan, once the legacy check has run (later checks see what the migration will create). */
  migrationPlan?: MigrationPlan;
  /** A dry run: the legacy plan decides conditional destinations from each file (PlanMigrationOptions.reach). */
  planReach?: boolean;
}

/** `doctor --fix` options that shape the legacy migration. */
export interface MigrationFixOptions {
  /** false = `--no-backup`. */
  backup: boolean;
  backupDir?: string;
  removeSources: boolean;
}

export interface RepairContext {
  paths: StatePaths;
  /** Open for writing, lease held. */
  global: GlobalDatabase;
  migration: MigrationFixOptions;
  /** The migration run this `doctor --fix` applied before this repair, if any (its verified archive covers the state before it). */
  run?: MigrationRunResult;
  onProgress?: (event: DoctorProgress) => void;
}

/** One row a repair moved, as labels (database keys JSON-quoted): from where to where. */
export interface MovedRow {
  from: string;
  to: string;
  /** moved: its value is now at `to`; superseded: removed, the row already at `to` was as new or newer and is kept. */
  action: "moved" | "superseded";
}

/** One row a repair looked at and left as it is, with why. */
export interface LeftRow {
  row: string;
  reason: string;
}

/** What a repair that moves database rows did, row by row, and the verified archive taken before it. */
export interface RowRepairReport {
  /** null: nothing was changed, or `--no-backup`. */
  backupPath: string | null;
  moved: MovedRow[];
  left: LeftRow[];
}

/** What a repair may return besides a one-line detail. */
export interface RepairReport {
  detail?: string;
  /** The repair ran but did not do its job (e.g. a migration run that failed). */
  failed?: boolean;
  migration?: MigrationRunResult;
  formatUpgrade?: UpgradeFormatResult;
  rows?: RowRepairReport;
}

/** What a repair that runs after the lease phase sees: the files are closed, the migration (if any) has run. */
export interface AfterLeaseContext {
  paths: StatePaths;
  migration: MigrationFixOptions;
  /** The migration run of this `doctor --fix`, if one ran (its verified archive covers what came after it). */
  run?: MigrationRunResult;
  force: boolean;
  onProgress?: (event: DoctorProgress) => void;
}

export type RepairApplyResult = string | void | RepairReport;

export interface Repair {
  id: string;
  description: string;
  /** Repairs run in ascending order (creating the global DB comes before anything that needs it). */
  order: number;
  apply?(ctx: RepairContext): RepairApplyResult | Promise<RepairApplyResult>;
  /**
   * Runs before the global DB is opened (which creates the state dir) and before the lease: only for
   * moving a whole legacy state dir into the place of a state dir that does not exist yet.
   */
  applyBeforeOpen?(ctx: { paths: StatePaths }): RepairApplyResult;
  /**
   * Runs after every other repair, once the lease is released and the global DB closed: for a repair that replaces
   * the database files themselves (the format upgrade takes its own lease and lock file).
   */
  applyAfterLease?(ctx: AfterLeaseContext): Promise<RepairApplyResult>;
}

export interface CheckResult {
  findings: Finding[];
  repairs: Repair[];
  /** The legacy migration plan (only the legacy check sets it). */
  migrationPlan?: MigrationPlan;
}

export interface DoctorCheck {
  id: string;
  run(ctx: CheckContext): CheckResult | Promise<CheckResult>;
}

export interface RepairOutcome {
  id: string;
  description: string;
  status: "applied" | "failed";
  detail?: string;
  /** Row repairs: every row moved or left, and the archive that covers them. */
  rows?: RowRepairReport;
}
