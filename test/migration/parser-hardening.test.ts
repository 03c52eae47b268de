// Issue 12's parser items: parse errors quote no file content, a BOM is not a missing header, deep nesting
// fails with file:line (never "Maximum call stack size exceeded").
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, runInProcess } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

const PLANTED = "API_KEY=sk-PLANTED-SECRET-0123456789";
const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-05-06T00:00:00.000Z" });
const message = (id: string) => JSON.stringify({ type: "message", id, parentId: null, message: { role: "user", content: "hi" } });

function writeTranscript(sessionsDir: string, name: string, text: string | Buffer): string {
  fs.mkdirSync(sessionsDir, { recursive: true });
  const file = path.join(sessionsDir, name);
  fs.writeFileSync(file, text);
  return file;
}

describe("transcript parse errors", () => {
  it("name the path, line and parser reason, and quote nothing from the file (output, run and ledger)", async () => {
    const { paths, stateDir, env } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    writeTranscript(dir, "leak.jsonl", `${header("leak")}\n${message("a")}\n${PLANTED} {"not": "json"}\n${message("b")}\n`);
    const cli = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], env);
    expect(cli.stdout + cli.stderr).toMatch(/leak\.jsonl:3: invalid JSON( at column \d+)?;/);
    expect(cli.stdout + cli.stderr).not.toContain("API_KEY");
    const ledger = rows<{ report_json: string }>(paths.globalDbPath, "SELECT report_json FROM migration_sources");
    const runs = rows<{ report_json: string }>(paths.globalDbPath, "SELECT report_json FROM migration_runs");
    expect(ledger.length).toBeGreaterThan(0);
    for (const r of [...ledger, ...runs]) expect(r.report_json).not.toContain("API_KEY");
    expect(JSON.parse(ledger[0]!.report_json).reason).toMatch(/leak\.jsonl:3: invalid JSON( at column \d+)?; the file was left in place/);
    // And the plan (doctor without --fix) does not quote it either.
    const plan = await runInProcess(["migrate", "plan", "--json", "--verbose"], env);
    expect(plan.stdout + plan.stderr).not.toContain("API_KEY");
  });

  it("an unknown version is named by its number or its type, never a quoted string", async () => {
    const { paths, stateDir } = makeTempState();
    writeTranscript(path.join(stateDir, "agents/main/sessions"), "v.jsonl", `${JSON.stringify({ type: "session", version: PLANTED, id: "v" })}\n`);
    const { run } = await migrate(paths);
    expect(run.sources[0]!.reason).toMatch(/v\.jsonl:1: unsupported transcript version \(a string\)/);
    expect(JSON.stringify(run)).not.toContain("API_KEY");
  });
});

describe("a UTF-8 byte-order mark", () => {
  it("before the header does not make a transcript fail as 'missing session header'", async () => {
    const { paths, stateDir } = makeTempState();
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    writeTranscript(path.join(stateDir, "agents/main/sessions"), "bom.jsonl", Buffer.concat([bom, Buffer.from(`${header("bom")}\n${message("a")}\n`)]));
    const { plan, run } = await migrate(paths);
    expect(plan!.sources[0]!.notes.join()).not.toMatch(/will fail/);
    // No index names it: imported as an orphan, whose warning is the only one.
    expect(run.sources[0]).toMatchObject({ status: "warning", warnings: [expect.stringMatching(/^orphan transcript/)] });
    expect(rows(agentDbFile(paths), "SELECT seq FROM transcript_events WHERE session_id = 'bom' ORDER BY seq")).toEqual([{ seq: 0 }, { seq: 1 }]);
  });

  it("is fine at the start of a JSON file too", async () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(path.join(stateDir, "update-check.json"), `\uFEFF${JSON.stringify({ lastAvailableVersion: "2.0.0" })}`);
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(rows(paths.globalDbPath, "SELECT last_available_version FROM update_check_state")).toEqual([{ last_available_version: "2.0.0" }]);
  });
});

describe("deeply nested JSON", () => {
  const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

  it("fails a transcript with file:line and the limit, and the other sources still import", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    // v1 (no version): the normalizer re-serializes the line, which is where the stack used to overflow.
    writeTranscript(dir, "deep.jsonl", `${JSON.stringify({ type: "session", id: "deep" })}\n{"type":"message","x":${deep(100_000)}}\n`);
    writeTranscript(dir, "fine.jsonl", `${header("fine")}\n${message("a")}\n`);
    const { run } = await migrate(paths);
    const deepOutcome = run.sources.find((s) => s.relativePath.endsWith("deep.jsonl"))!;
    expect(deepOutcome).toMatchObject({ status: "failed", retired: null });
    expect(deepOutcome.reason).toMatch(/deep\.jsonl:2: JSON nested deeper than 1000 levels; the file was left in place/);
    expect(deepOutcome.reason).not.toMatch(/call stack/);
    // Imported (as an orphan: no index names it, which is a warning of its own).
    expect(run.sources.find((s) => s.relativePath.endsWith("fine.jsonl"))).toMatchObject({ status: "warning", warnings: [expect.stringMatching(/^orphan transcript/)] });
    expect(fs.existsSync(path.join(dir, "deep.jsonl"))).toBe(true);
  });

  it("fails a control-plane JSON file with file:line", async () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(path.join(stateDir, "commitments.json"), `{\n  "commitments": [],\n  "x": ${deep(5000)}\n}\n`);
    const { run } = await migrate(paths);
    expect(run.sources[0]).toMatchObject({ status: "failed" });
    expect(run.sources[0]!.reason).toMatch(/commitments\.json:3: JSON nested deeper than 1000 levels/);
  });

  it("does not flag brackets inside strings", async () => {
    const { paths, stateDir } = makeTempState();
    writeTranscript(path.join(stateDir, "agents/main/sessions"), "text.jsonl", `${header("text")}\n${JSON.stringify({ type: "message", id: "a", message: { role: "user", content: "[".repeat(5000) } })}\n`);
    const { run } = await migrate(paths);
    // Imported; its only warning is the orphan's (no index names it).
    expect(run.sources[0]).toMatchObject({ status: "warning", warnings: [expect.stringMatching(/^orphan transcript/)] });
  });
});
