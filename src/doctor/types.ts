// The doctor frame's vocabulary: findings are data, repairs are the safe fixes `doctor --fix` may apply.
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
}

export interface CheckContext {
  paths: StatePaths;
  deep: boolean;
  verbose: boolean;
}

export interface RepairContext {
  paths: StatePaths;
  /** Open for writing, lease held. */
  global: GlobalDatabase;
}

export interface Repair {
  id: string;
  description: string;
  /** Repairs run in ascending order (creating the global DB comes before anything that needs it). */
  order: number;
  apply(ctx: RepairContext): string | void;
}

export interface CheckResult {
  findings: Finding[];
  repairs: Repair[];
}

export interface DoctorCheck {
  id: string;
  run(ctx: CheckContext): CheckResult;
}

export interface RepairOutcome {
  id: string;
  description: string;
  status: "applied" | "failed";
  detail?: string;
}
