// The legacy check's findings say what will really happen: a source that fails as it is is an error naming
// `migrate skip` (never "doctor --fix imports them"); an archived copy is one info line, never a warning.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runDoctor, type DoctorResult } from "../../src/doctor/run-doctor.js";
import { makeTempState } from "../helpers/temp-state.js";

function finding(result: DoctorResult, id: string) {
  return result.findings.find((f) => f.id === id);
}

describe("legacy findings and the verdict", () => {
  it("a corrupt source is an error with the `migrate skip` command for it; the run's status is errors", async () => {
    const { paths, stateDir } = makeTempState("legacy-state");
    fs.writeFileSync(path.join(stateDir, "cron", "jobs.json"), '{"jobs": [');
    const result = await runDoctor({ paths });
    const cron = finding(result, "legacy.cron-jobs");
    expect(cron).toMatchObject({ severity: "error", title: expect.stringMatching(/1 will fail as it is/) });
    expect(cron!.fix).toBe('It fails on every `doctor --fix` as it is: repair it, or set it aside with `openclaw-state migrate skip cron/jobs.json --reason "…"`.');
    expect(cron!.fix).not.toMatch(/imports them/);
    expect(result.status).toBe("errors");
    // Kinds with nothing wrong keep the import hint.
    expect(finding(result, "legacy.transcript")?.fix).toMatch(/^`doctor --fix` imports them into SQLite/);
  });

  it("after a failed --fix, the corrupt source stays an error and the source that failed because of it gets the retry hint", async () => {
    const { paths, stateDir } = makeTempState("legacy-state");
    fs.writeFileSync(path.join(stateDir, "cron", "jobs.json"), '{"jobs": [');
    const fixed = await runDoctor({ paths, fix: true, migration: { backup: false } });
    expect(fixed.repairs.find((r) => r.id === "legacy.migrate")?.status).toBe("failed");
    expect(fixed.status).toBe("errors");
    expect(finding(fixed, "legacy.cron-jobs")).toMatchObject({ severity: "error", fix: expect.stringMatching(/migrate skip cron\/jobs\.json/) });
    expect(finding(fixed, "legacy.cron-state")).toMatchObject({ severity: "warning", fix: expect.stringMatching(/tries the source\(s\) whose previous attempt failed again; .*migrate skip <path>/) });
  });

  it("an archived *.jsonl.reset.* copy is info before and after --fix: it never holds a warning open", async () => {
    const { paths } = makeTempState("legacy-state");
    const check = await runDoctor({ paths });
    expect(finding(check, "legacy.archived")).toMatchObject({ severity: "info", detail: expect.stringContaining("s-main-old.jsonl.reset.") });
    const fixed = await runDoctor({ paths, fix: true, migration: { backup: false } });
    expect(fixed.status).toBe("ok");
    expect(finding(fixed, "legacy.archived")).toMatchObject({ severity: "info" });
    const again = await runDoctor({ paths });
    expect(again).toMatchObject({ status: "ok", summary: { errors: 0, warnings: 0 }, plannedRepairs: [] });
  });
});
