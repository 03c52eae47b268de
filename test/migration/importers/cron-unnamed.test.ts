// Legacy cron jobs without a name (issue 24), fixture cron-unnamed. Expectations from openclaw@2026.9.6's dist:
// normalizeStoredCronJobs (store-migration-*.mjs) names a job whose `name` is not a non-blank string with
// inferCronJobName (normalize-*.mjs) — before it builds a payload from top-level fields or normalizes the payload's
// kind — and trims any other name. The fixture's jobs were also run through that dist function: each name below is
// what it returned.
import { describe, expect, it } from "vitest";
import { inferCronJobName } from "../../../src/migration/importers/cron-defaults.js";
import { makeTempState } from "../../helpers/temp-state.js";
import { migrate, rows } from "../../helpers/migration.js";

type Row = Record<string, unknown>;

describe("unnamed cron jobs (fixture cron-unnamed)", () => {
  it("names each job as upstream's doctor does: payload text first, then the schedule", async () => {
    const { paths } = makeTempState("migration/cron-unnamed");
    const { run } = await migrate(paths);
    const all = rows<Row>(paths.globalDbPath, "SELECT job_id, name, job_json FROM cron_jobs ORDER BY sort_order");
    expect(all.map((r) => [r.job_id, r.name])).toEqual([
      // The first non-blank line of a systemEvent's text, trimmed.
      ["system-text", "Check the mail"],
      // An agent turn's message, cut to 60 characters with "…".
      ["long-message", "Summarize every unread newsletter in the inbox and file the…"],
      // A top-level `message` is not a payload yet when upstream names the job: the schedule names it.
      ["top-level-message", "Cron: 45 6 * * *"],
      // A payload kind upstream has not normalized yet ("agentturn") is not read for the name.
      ["lowercase-kind", "Every: 900000ms"],
      // everyMs as a string is not a number to upstream's namer.
      ["string-interval", "Automation"],
      ["one-shot", "One-shot"],
      // A blank name counts as none; a string schedule is a cron expression by then.
      ["blank-name", "Cron: 30 3 * * *"],
      ["trimmed-name", "Daily report"],
      // Not text: replaced like a missing name (with a warning; the retired file keeps the 42).
      ["numeric-name", "lunch"],
      // The expression cut to 52 characters.
      ["long-expr", "Cron: 0,5,10,15,20,25,30,35,40,45,50,55 0,2,4,6,8,10,12,1…"],
      // Top-level schedule fields are no schedule to upstream's namer.
      ["legacy-top-level", "Automation"],
    ]);
    // The name is in the job's JSON too (what the runtime reads), next to everything else the file said.
    const byId = new Map(all.map((r) => [String(r.job_id), JSON.parse(String(r.job_json)) as Row]));
    expect(byId.get("top-level-message")).toMatchObject({ name: "Cron: 45 6 * * *", payload: { kind: "agentTurn", message: "Plan my day" } });
    expect(byId.get("trimmed-name")!.name).toBe("Daily report");
    // The event text itself is stored trimmed, as 2026.9.6's payload normalizer stores it (the name came from it first).
    expect(byId.get("system-text")!.payload).toEqual({ kind: "systemEvent", text: "Check the mail  \nthen the calendar" });
    const source = run.sources.find((s) => s.kind === "cron-jobs")!;
    expect(source.notes[0]).toMatch(/name inferred/);
    expect(source.warnings).toContain('job "numeric-name": its name 42 is not text; named as OpenClaw names a job without one (the retired file keeps it)');
  });

  it("a named job keeps its name (no note)", async () => {
    const { paths } = makeTempState("migration/cron");
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT name FROM cron_jobs WHERE job_id = 'daily-brief'")).toEqual([{ name: "Daily brief" }]);
    expect(run.sources.find((s) => s.kind === "cron-jobs")!.notes.join()).not.toMatch(/name inferred/);
  });
});

describe("inferCronJobName (normalize-*.mjs of openclaw@2026.9.6)", () => {
  it("cuts on a UTF-16 boundary, never inside a surrogate pair, and reads command argv", () => {
    // 58 letters then an emoji (2 units) straddling the 59-unit cut: the pair is left out whole.
    expect(inferCronJobName(null, { kind: "agentTurn", message: `${"a".repeat(58)}😀 and more text` })).toBe(`${"a".repeat(58)}…`);
    // Trailing blanks before the cut are trimmed.
    expect(inferCronJobName(null, { kind: "systemEvent", text: `${"b".repeat(50)}         tail of it` })).toBe(`${"b".repeat(50)}…`);
    expect(inferCronJobName(null, { kind: "command", argv: ["/bin/echo", "hi"] })).toBe("/bin/echo hi");
    expect(inferCronJobName({ kind: "every", everyMs: 1.5 }, null)).toBe("Every: 1.5ms");
    expect(inferCronJobName({ kind: "cron" }, null)).toBe("Automation");
    expect(inferCronJobName(null, null)).toBe("Automation");
  });
});
