// Truthful convergence: a source imported but not retired fails `doctor --fix` (exit 1), the upgrade waits, and the next run retires it; a corrupt agent DB is named before and after.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { unretiredOutcomes, upgradeWaitReason } from "../../src/migration/upgrade-wait.js";
import { doctorExitCode, runDoctor } from "../../src/doctor/run-doctor.js";
import { readDatabaseFormat } from "../../src/state/state-databases.js";
import { agentDbFile, rows } from "../helpers/migration.js";
import { makeTempState } from "../helpers/temp-state.js";

const SOURCES = ["agents/main/sessions/sessions.json", "agents/main/sessions/s-main.jsonl", "agents/main/sessions/s-ops.jsonl"];

describe("a retire that cannot happen", () => {
  it("is a warning and exit 1 (the upgrade waits); the next run retires the files once the path is free and then upgrades", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    // A file sits where migrated/<run id>/… must go.
    const blocker = path.join(stateDir, "migrated");
    fs.writeFileSync(blocker, "not a directory\n");

    const first = await runDoctor({ paths, fix: true });
    expect(doctorExitCode(first, false)).toBe(1);
    const run = first.migration!.run!;
    expect(run.status).toBe("warning");
    expect(run.totals).toMatchObject({ imported: 3, failed: 0, retired: 0 });
    expect(unretiredOutcomes(run.sources).map((o) => o.relativePath).sort()).toEqual([...SOURCES].sort());
    for (const o of run.sources) {
      expect(o.status).toBe("warning");
      expect(o.warnings.join(" ")).toMatch(/not retired/);
    }
    expect(run.warnings.join("\n")).toMatch(/3 source\(s\) were imported but not retired .* the next `doctor --fix` retires them/);
    const legacy = first.repairs.find((r) => r.id === "legacy.migrate")!;
    expect(legacy.status).toBe("failed");
    expect(legacy.detail).toMatch(/3 imported but not retired/);
    // The upgrade waits: in OpenClaw's format the next run could not finish the retirement.
    const upgrade = first.repairs.find((r) => r.id === "format.upgrade")!;
    expect(upgrade.status).toBe("failed");
    expect(upgrade.detail).toMatch(/^not run: .*3 imported source\(s\) could not be retired yet/);
    expect(upgradeWaitReason(run)).not.toBeNull();
    // Nothing lost: the rows are in, every file is still where it was, the blocker untouched.
    expect(rows(agentDbFile(paths), "SELECT count(*) AS n FROM sessions")[0]).toMatchObject({ n: 2 });
    for (const rel of SOURCES) expect(fs.existsSync(path.join(stateDir, rel))).toBe(true);
    expect(fs.readFileSync(blocker, "utf8")).toBe("not a directory\n");

    // The same state again: still blocked, still exit 1, nothing imported twice.
    const still = await runDoctor({ paths, fix: true });
    expect(doctorExitCode(still, false)).toBe(1);
    expect(still.migration!.run!.sources.map((o) => o.action)).toEqual(SOURCES.map(() => "already-imported"));
    expect(unretiredOutcomes(still.migration!.run!.sources)).toHaveLength(3);

    // The path is free: the next run retires them (already imported, nothing re-written) and writes OpenClaw's format.
    fs.rmSync(blocker);
    const second = await runDoctor({ paths, fix: true });
    expect(doctorExitCode(second, false)).toBe(0);
    const run2 = second.migration!.run!;
    expect(run2.status).toBe("completed");
    expect(run2.totals).toMatchObject({ imported: 0, alreadyImported: 3, retired: 3 });
    expect(unretiredOutcomes(run2.sources)).toEqual([]);
    for (const rel of SOURCES) {
      expect(fs.existsSync(path.join(stateDir, rel))).toBe(false);
      expect(fs.existsSync(path.join(stateDir, "migrated", run2.runId, rel))).toBe(true);
    }
    expect(second.repairs.map((r) => [r.id, r.status])).toContainEqual(["format.upgrade", "applied"]);
    expect(readDatabaseFormat(paths.globalDbPath, "global").format?.id).toBe("openclaw");
  });
});

describe("a corrupt agent database in the doctor", () => {
  it("check mode names its waiting sources with the remedy; --fix migrates the other agent, exits 1 and the upgrade waits naming it", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    fs.cpSync(path.join(stateDir, "agents/main/sessions"), path.join(stateDir, "agents/ops/sessions"), { recursive: true });
    const opsDb = agentDbFile(paths, "ops");
    fs.mkdirSync(path.dirname(opsDb), { recursive: true });
    fs.writeFileSync(opsDb, Buffer.concat([Buffer.alloc(4096), Buffer.from("SQLite format 3\0".repeat(256))]));
    const bytes = fs.readFileSync(opsDb);

    const check = await runDoctor({ paths });
    const finding = check.findings.find((f) => f.id === "legacy.agent-db-unreadable")!;
    expect(finding.title).toMatch(/^3 legacy source\(s\) of agent "ops" stay in place: its database agents\/ops\/agent\/openclaw-agent\.sqlite cannot be opened/);
    expect(finding.fix).toMatch(/move it out of the state dir .* backup restore .* migrate skip/);

    const fixed = await runDoctor({ paths, fix: true });
    expect(doctorExitCode(fixed, false)).toBe(1);
    expect(fixed.repairs.find((r) => r.id === "legacy.migrate")).toMatchObject({ status: "failed", detail: expect.stringMatching(/3 imported, .*3 failed.*1 agent database\(s\) unreadable, left as they are: agents\/ops\/agent\/openclaw-agent\.sqlite/) });
    expect(fixed.repairs.find((r) => r.id === "format.upgrade")).toMatchObject({ status: "failed", detail: expect.stringMatching(/^not run: .*agent database "ops"/) });
    expect(fs.readFileSync(opsDb).equals(bytes)).toBe(true);
    expect(rows(agentDbFile(paths), "SELECT count(*) AS n FROM sessions")[0]).toMatchObject({ n: 2 });
    expect(fs.existsSync(path.join(stateDir, "agents/ops/sessions/s-ops.jsonl"))).toBe(true);
  });
});
