// Runs the doctor checks; with `fix`, applies their repairs under the maintenance lease and re-checks.
import { describeError } from "../core/errors.js";
import { acquireMaintenanceLease } from "../state/lease.js";
import type { StatePaths } from "../state/paths.js";
import { openGlobalDatabase } from "../state/state-databases.js";
import { leaseCheck } from "./checks/lease-check.js";
import { modesCheck } from "./checks/modes-check.js";
import { storageCheck } from "./checks/storage-check.js";
import type { CheckContext, DoctorCheck, Finding, Repair, RepairOutcome } from "./types.js";

export const DEFAULT_CHECKS: readonly DoctorCheck[] = [storageCheck, leaseCheck, modesCheck];

export interface DoctorOptions {
  paths: StatePaths;
  fix?: boolean;
  deep?: boolean;
  verbose?: boolean;
  force?: boolean;
  checks?: readonly DoctorCheck[];
  /** Asked once with the planned repairs before anything is written; false aborts without changes. */
  confirm?: (repairs: readonly Repair[]) => Promise<boolean>;
}

export interface DoctorSummary {
  errors: number;
  warnings: number;
  ok: number;
}

export interface DoctorResult {
  stateDir: string;
  mode: "check" | "fix";
  status: "ok" | "warnings" | "errors";
  findings: Finding[];
  summary: DoctorSummary;
  /** Findings before the repairs ran (fix mode only). */
  findingsBefore?: Finding[];
  repairs: RepairOutcome[];
  /** Fix mode: the operator declined the confirmation; nothing was changed. */
  declined?: boolean;
}

function collect(ctx: CheckContext, checks: readonly DoctorCheck[]): { findings: Finding[]; repairs: Repair[] } {
  const findings: Finding[] = [];
  const repairs: Repair[] = [];
  for (const check of checks) {
    const result = check.run(ctx);
    findings.push(...result.findings);
    repairs.push(...result.repairs);
  }
  return { findings, repairs: repairs.sort((a, b) => a.order - b.order) };
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
  return {
    stateDir: options.paths.stateDir,
    mode: options.fix ? "fix" : "check",
    status: summary.errors > 0 ? "errors" : summary.warnings > 0 ? "warnings" : "ok",
    findings,
    summary,
    repairs: [],
    ...extra,
  };
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorResult> {
  const checks = options.checks ?? DEFAULT_CHECKS;
  const ctx: CheckContext = { paths: options.paths, deep: Boolean(options.deep), verbose: Boolean(options.verbose) };
  const before = collect(ctx, checks);
  if (!options.fix) return result(options, before.findings);
  if (before.repairs.length === 0) return result(options, before.findings, { findingsBefore: before.findings });
  if (options.confirm && !(await options.confirm(before.repairs))) {
    return result(options, before.findings, { findingsBefore: before.findings, declined: true });
  }

  const outcomes: RepairOutcome[] = [];
  const global = openGlobalDatabase(options.paths, { mode: "write", create: true });
  try {
    const lease = acquireMaintenanceLease(global, { command: "doctor --fix", force: options.force });
    try {
      for (const repair of before.repairs) {
        try {
          const detail = repair.apply({ paths: options.paths, global });
          outcomes.push({ id: repair.id, description: repair.description, status: "applied", ...(detail ? { detail } : {}) });
        } catch (error) {
          outcomes.push({ id: repair.id, description: repair.description, status: "failed", detail: describeError(error) });
        }
      }
    } finally {
      lease.release();
    }
  } finally {
    global.close();
  }
  const after = collect(ctx, checks);
  return result(options, after.findings, { findingsBefore: before.findings, repairs: outcomes });
}

/** Exit code for a doctor result: 1 on error findings or failed repairs (warnings too with strict). */
export function doctorExitCode(res: DoctorResult, strict: boolean): number {
  if (res.declined) return 1;
  if (res.repairs.some((r) => r.status === "failed")) return 1;
  if (res.summary.errors > 0) return 1;
  if (strict && res.summary.warnings > 0) return 1;
  return 0;
}
