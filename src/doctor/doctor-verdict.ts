// One verdict per doctor run: `status`, `ok`, the exit code and the last human line are all derived here, and only here.
import type { Finding, RepairOutcome } from "./types.js";

export type DoctorStatus = "ok" | "warnings" | "errors";

/** What the verdict is computed from (a DoctorResult has all of it). */
export interface VerdictInput {
  mode: "check" | "fix";
  findings: readonly Finding[];
  summary: { errors: number; warnings: number; ok: number };
  repairs: readonly RepairOutcome[];
  declined?: boolean;
  /** Check mode: the repairs `doctor --fix` would apply (the footer suggests --fix only when there is one). */
  plannedRepairs?: ReadonlyArray<{ id: string }>;
}

export interface DoctorVerdict {
  /**
   * `errors` exactly when the run failed (exit 1): error findings, a failed repair, a declined --fix, a finding
   * --fix cannot resolve here, or warnings under --strict. `warnings`: exit 0 with something to look at.
   */
  status: DoctorStatus;
  ok: boolean;
  exitCode: 0 | 1;
  /** Why the run failed beyond the error count (`1 repair(s) failed`, …); empty when it did not. */
  reasons: string[];
  /** The last line of the human output: it says `FAILED` exactly when the exit code is 1. */
  line: string;
}

/** The mapping, once: every doctor output (JSON status/ok/exitCode, exit code, last line) comes from this. */
export function doctorVerdict(res: VerdictInput, strict = false): DoctorVerdict {
  const { errors, warnings, ok } = res.summary;
  const reasons: string[] = [];
  if (res.declined) reasons.push("declined, nothing was changed");
  const failed = res.repairs.filter((r) => r.status === "failed").length;
  if (failed > 0) reasons.push(`${failed} repair(s) failed`);
  const undone = res.mode === "fix" && !res.declined ? res.findings.filter((f) => f.leftUndone).length : 0;
  if (undone > 0) reasons.push(`${undone} finding(s) this --fix cannot resolve`);
  if (strict && warnings > 0 && errors === 0) reasons.push("warnings fail under --strict");
  const failedRun = errors > 0 || reasons.length > 0;
  const status: DoctorStatus = failedRun ? "errors" : warnings > 0 ? "warnings" : "ok";
  const counts = `${errors} error(s), ${warnings} warning(s), ${ok} ok`;
  const fixable = res.mode === "check" && status !== "ok" && (res.plannedRepairs?.length ?? 0) > 0;
  // Only when --fix has something to do: suggesting it for findings it cannot change sends the operator in circles.
  const hint = fixable ? " — run `openclaw-state doctor --fix` to apply the safe fixes" : "";
  const line = failedRun ? `FAILED${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}: ${counts}${hint}` : `${counts}${hint}`;
  return { status, ok: !failedRun, exitCode: failedRun ? 1 : 0, reasons, line };
}
