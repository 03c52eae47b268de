// doctorVerdict: the one mapping from a doctor run to status / ok / exit code / last line; they never disagree.
import { describe, expect, it } from "vitest";
import { doctorVerdict, type VerdictInput } from "../../src/doctor/doctor-verdict.js";
import type { Finding, RepairOutcome } from "../../src/doctor/types.js";

const warning: Finding = { id: "modes.loose", severity: "warning", title: "loose" };
const error: Finding = { id: "legacy.cron-jobs", severity: "error", title: "will fail" };
const info: Finding = { id: "legacy.archived", severity: "info", title: "archived" };
const waiting: Finding = { id: "legacy.foreign-format", severity: "warning", title: "waits", leftUndone: true };
const failedRepair: RepairOutcome = { id: "legacy.migrate", description: "import", status: "failed", detail: "1 failed" };
const appliedRepair: RepairOutcome = { id: "modes.tighten", description: "tighten", status: "applied" };

function input(mode: "check" | "fix", findings: Finding[], extra: Partial<VerdictInput> = {}): VerdictInput {
  const count = (s: Finding["severity"]): number => findings.filter((f) => f.severity === s).length;
  return { mode, findings, summary: { errors: count("error"), warnings: count("warning"), ok: count("info") }, repairs: [], ...extra };
}

describe("doctorVerdict", () => {
  it("one corrupt source after --fix: a failed repair with only warnings left is a failure everywhere (issue 25)", () => {
    const v = doctorVerdict(input("fix", [warning, warning, info], { repairs: [appliedRepair, failedRepair] }));
    expect(v).toMatchObject({ status: "errors", ok: false, exitCode: 1 });
    expect(v.line).toBe("FAILED (1 repair(s) failed): 0 error(s), 2 warning(s), 1 ok");
  });

  it("healthy, warnings, errors, declined, left undone and --strict each map to one answer", () => {
    expect(doctorVerdict(input("check", [info, info]))).toEqual({ status: "ok", ok: true, exitCode: 0, reasons: [], line: "0 error(s), 0 warning(s), 2 ok" });
    expect(doctorVerdict(input("check", [warning], { plannedRepairs: [{ id: "modes.tighten" }] })).line).toBe(
      "0 error(s), 1 warning(s), 0 ok — run `openclaw-state doctor --fix` to apply the safe fixes",
    );
    // Nothing --fix would do: the footer does not send the operator to it.
    expect(doctorVerdict(input("check", [warning], { plannedRepairs: [] }))).toMatchObject({ status: "warnings", ok: true, exitCode: 0, line: "0 error(s), 1 warning(s), 0 ok" });
    expect(doctorVerdict(input("check", [error, warning]))).toMatchObject({ status: "errors", exitCode: 1, line: "FAILED: 1 error(s), 1 warning(s), 0 ok" });
    expect(doctorVerdict(input("fix", [warning], { declined: true })).line).toBe("FAILED (declined, nothing was changed): 0 error(s), 1 warning(s), 0 ok");
    expect(doctorVerdict(input("fix", [waiting])).line).toBe("FAILED (1 finding(s) this --fix cannot resolve): 0 error(s), 1 warning(s), 0 ok");
    expect(doctorVerdict(input("check", [waiting]))).toMatchObject({ status: "warnings", exitCode: 0 });
    expect(doctorVerdict(input("check", [warning]), true)).toMatchObject({ status: "errors", ok: false, exitCode: 1, line: "FAILED (warnings fail under --strict): 0 error(s), 1 warning(s), 0 ok" });
  });

  it("status, ok, exit code and the last line agree in every combination", () => {
    const sets: Finding[][] = [[], [info], [warning], [error], [waiting], [warning, error, info], [waiting, info]];
    for (const mode of ["check", "fix"] as const) {
      for (const findings of sets) {
        for (const repairs of [[], [appliedRepair], [failedRepair]]) {
          for (const declined of [false, true]) {
            for (const strict of [false, true]) {
              const v = doctorVerdict(input(mode, findings, { repairs, declined }), strict);
              const failed = v.status === "errors";
              expect(v.ok).toBe(!failed);
              expect(v.exitCode).toBe(failed ? 1 : 0);
              expect(v.line.startsWith("FAILED")).toBe(failed);
            }
          }
        }
      }
    }
  });
});
