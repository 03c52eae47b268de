// The merge path on a state OpenClaw 2026.9.6 itself migrated: legacy files that reappear are merged record by record (issue 23's freshness rule), never over what the runtime wrote.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { doctorExitCode, runDoctor } from "../../src/doctor/run-doctor.js";
import { fixturesDir, makeTempState, runInProcess, type TempState } from "../helpers/temp-state.js";

const V96 = "openclaw-2026.9.6/legacy-state-migrated";

/** A copy of the state 2026.9.6's own doctor wrote, its cron rows keyed for this place (as the runtime keys them). */
function liveState(): TempState {
  const state = makeTempState(V96);
  fs.rmSync(path.join(state.stateDir, "README.md"));
  const global = new Database(path.join(state.stateDir, "state/openclaw.sqlite"));
  for (const t of ["cron_jobs", "cron_job_scratch", "cron_run_receipts"]) global.prepare(`UPDATE ${t} SET store_key = ?`).run(path.join(state.stateDir, "cron", "jobs.json"));
  global.close();
  return state;
}

const agentDb = (s: TempState): string => path.join(s.stateDir, "agents/main/agent/openclaw-agent.sqlite");
const globalDb = (s: TempState): string => path.join(s.stateDir, "state/openclaw.sqlite");

/** Read through the sqlite3 CLI: an independent reader of what we wrote. */
function sql(file: string, query: string): string[][] {
  const out = execFileSync("sqlite3", ["-readonly", "-separator", "\t", file, query], { encoding: "utf8" });
  return out.split("\n").filter((l) => l !== "").map((l) => l.split("\t"));
}

function events(s: TempState, sessionId: string): Array<{ seq: number; json: Record<string, unknown> }> {
  return sql(agentDb(s), `SELECT seq, event_json FROM transcript_events WHERE session_id = '${sessionId}' ORDER BY seq`).map(([seq, json]) => ({ seq: Number(seq), json: JSON.parse(json!) as Record<string, unknown> }));
}

/** The session's events as the file-era gateway wrote them: the stored lines, in order. */
function linesOf(s: TempState, sessionId: string): string[] {
  return events(s, sessionId).map((e) => JSON.stringify(e.json));
}

function writeTranscript(s: TempState, sessionId: string, lines: string[]): string {
  const file = path.join(s.stateDir, "agents/main/sessions", `${sessionId}.jsonl`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

const turn = (id: string, parentId: string, text: string): string =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:09.000Z", message: { role: "user", content: text, timestamp: 1767225609000 } });

/** What the 9.6 runtime does on a turn: the event row and its identity, in the same file. */
function runtimeAppend(s: TempState, sessionId: string, line: string): void {
  const db = new Database(agentDb(s));
  const seq = (db.prepare("SELECT max(seq) AS m FROM transcript_events WHERE session_id = ?").get(sessionId) as { m: number }).m + 1;
  const event = JSON.parse(line) as { id: string; parentId: string | null; type: string };
  db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) VALUES (?, ?, ?, ?, ?)").run(sessionId, seq, line, Date.now(), Buffer.byteLength(line));
  db.prepare("INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(sessionId, event.id, seq, event.type, event.parentId, Date.now());
  db.close();
}

function retiredCopies(s: TempState, name: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === name) found.push(path.relative(s.stateDir, p));
    }
  };
  walk(path.join(s.stateDir, "migrated"));
  return found;
}

describe("merge into a state in OpenClaw 2026.9.6's format", () => {
  it("a pure append: the file's new events are appended after the database's, the file is retired, no second session appears", async () => {
    const s = liveState();
    const nodesBefore = sql(agentDb(s), "SELECT session_key, current_session_id FROM session_nodes ORDER BY session_key");
    const before = linesOf(s, "s-main");
    expect(before.length).toBe(3);
    const file = writeTranscript(s, "s-main", [...before, turn("e3", "e2", "one more"), turn("e4", "e3", "and another")]);

    const result = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(result, false), JSON.stringify(result.repairs, null, 2)).toBe(0);

    const after = events(s, "s-main");
    expect(after.map((e) => [e.seq, e.json.id])).toEqual([[0, "s-main"], [1, "e1"], [2, "e2"], [3, "e3"], [4, "e4"]]);
    expect(sql(agentDb(s), "SELECT event_id, seq, parent_id FROM transcript_event_identities WHERE session_id = 's-main' AND event_id IN ('e3','e4') ORDER BY seq")).toEqual([["e3", "3", "e2"], ["e4", "4", "e3"]]);
    // The runtime's session rows are the ones that stay: no orphan or duplicate node for the same session.
    expect(sql(agentDb(s), "SELECT session_key, current_session_id FROM session_nodes ORDER BY session_key")).toEqual(nodesBefore);
    expect(fs.existsSync(file)).toBe(false);
    expect(retiredCopies(s, "s-main.jsonl")).toHaveLength(1);
    // The run is in the live ledger, and the live databases are still OpenClaw's current format.
    const run = result.migration!.run!;
    expect(sql(globalDb(s), `SELECT status FROM migration_runs WHERE id = '${run.runId}'`)).toEqual([[run.status]]);
    expect(sql(globalDb(s), `SELECT status, removed_source FROM migration_sources WHERE last_run_id = '${run.runId}'`)).toEqual([["imported", "1"]]);
    expect(sql(agentDb(s), "PRAGMA user_version")).toEqual([["23"]]);
    expect(sql(globalDb(s), "PRAGMA user_version")).toEqual([["18"]]);

    // Again: nothing left to merge, nothing changes.
    const again = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(again, false)).toBe(0);
    expect(events(s, "s-main")).toHaveLength(5);
  });

  it("a store holding other agents' keys: each is merged into the live database of the agent it names, or a new one, with its transcript", async () => {
    const s = liveState();
    fs.cpSync(path.join(fixturesDir, "migration/agent-main-keys/agents/ops"), path.join(s.stateDir, "agents/ops"), { recursive: true });
    const mainBefore = sql(agentDb(s), "SELECT session_key FROM session_nodes ORDER BY session_key").map(([k]) => k);

    const result = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(result, false), JSON.stringify(result.repairs, null, 2)).toBe(0);

    const db = (agent: string): string => path.join(s.stateDir, "agents", agent, "agent/openclaw-agent.sqlite");
    const withEvents = (agent: string): string[][] => sql(db(agent), "SELECT n.session_key, n.current_session_id, (SELECT count(*) FROM transcript_events e WHERE e.session_id = n.current_session_id) FROM session_nodes n ORDER BY n.session_key");
    // The live main database gains the one key that names main, next to what it held.
    expect(withEvents("main").map(([k]) => k)).toEqual([...mainBefore, "agent:main:telegram:direct:+15550009"].sort());
    expect(withEvents("main").find(([k]) => k === "agent:main:telegram:direct:+15550009")).toEqual(["agent:main:telegram:direct:+15550009", "s-ops-dm", "2"]);
    expect(withEvents("ops")).toEqual([
      ["agent:ops:main", "s-ops-main", "2"],
      ["agent:ops:telegram:direct:+15550009", "s-ops-dm-newer", "2"],
    ]);
    expect(withEvents("other")).toEqual([["agent:other:x", "s-other", "2"]]);
    for (const agent of ["main", "ops", "other"]) expect(sql(db(agent), "PRAGMA user_version")).toEqual([["23"]]);
    expect(fs.existsSync(path.join(s.stateDir, "agents/ops/sessions/sessions.json"))).toBe(false);
  });

  it("a rolled-back gateway wrote a different turn where the runtime wrote one: the database's event stays, the file stays, exit 1 naming migrate skip", async () => {
    const s = liveState();
    const base = linesOf(s, "s-main");
    runtimeAppend(s, "s-main", turn("rt3", "e2", "the runtime's turn"));
    const file = writeTranscript(s, "s-main", [...base, turn("fe3", "e2", "the file-era turn")]);
    // Another session's pure append in the same run still merges.
    const ops = linesOf(s, "s-lost");
    const other = writeTranscript(s, "s-lost", [...ops, turn("l9", String((JSON.parse(ops.at(-1)!) as { id: string }).id), "appended")]);

    const result = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(result, false)).toBe(1);
    const outcome = result.migration!.run!.sources.find((o) => o.path === file)!;
    expect(outcome.status).toBe("failed");
    expect(outcome.reason).toMatch(/rt3 at seq 3 .*fe3 there.*migrate skip/s);

    expect(events(s, "s-main").map((e) => e.json.id)).toEqual(["s-main", "e1", "e2", "rt3"]);
    expect(fs.readFileSync(file, "utf8")).toContain("fe3");
    expect(events(s, "s-lost").at(-1)!.json.id).toBe("l9");
    expect(fs.existsSync(other)).toBe(false);
    const run = result.migration!.run!;
    expect(sql(globalDb(s), `SELECT status, removed_source FROM migration_sources WHERE last_run_id = '${run.runId}' AND source_path = '${file}'`)).toEqual([["failed", "0"]]);

    // The way out the message names: set the file aside; the next --fix leaves it and succeeds.
    const skip = await runInProcess(["migrate", "skip", "agents/main/sessions/s-main.jsonl", "--reason", "the runtime's turn is the real one"], s.env);
    expect(skip.code, skip.stdout + skip.stderr).toBe(0);
    const after = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(after, false), JSON.stringify(after.repairs, null, 2)).toBe(0);
    // Set aside under migrated/<run>/skipped/, nothing merged from it.
    expect(fs.existsSync(file)).toBe(false);
    expect(retiredCopies(s, "s-main.jsonl").filter((p) => p.includes(`${path.sep}skipped${path.sep}`))).toHaveLength(1);
    expect(events(s, "s-main").map((e) => e.json.id)).toEqual(["s-main", "e1", "e2", "rt3"]);
  });

  it("a stale cron/jobs.json never rolls back a job the runtime changed later; the legacy record is kept, named", async () => {
    const s = liveState();
    const [job] = sql(globalDb(s), "SELECT job_id, job_json, updated_at FROM cron_jobs");
    const runtimeJob = { ...(JSON.parse(job![1]!) as Record<string, unknown>), schedule: { kind: "every", everyMs: 3_600_000 } };
    const later = Date.now() - 1000;
    const db = new Database(globalDb(s));
    db.prepare("UPDATE cron_jobs SET job_json = ?, updated_at = ?, runtime_updated_at_ms = ?").run(JSON.stringify(runtimeJob), later, later);
    db.close();
    // An older CLI rewrote the file with its own (older) copy of the job and an unrelated edit.
    const jobs = { version: 1, jobs: [{ id: job![0], name: "Daily brief (renamed)", enabled: true, schedule: { kind: "cron", expr: "0 8 * * *", tz: "UTC" }, sessionTarget: "isolated", wakeMode: "now", payload: { kind: "agentTurn", message: "Summarize my inbox" }, updatedAtMs: later - 86_400_000 }] };
    fs.mkdirSync(path.join(s.stateDir, "cron"), { recursive: true });
    fs.writeFileSync(path.join(s.stateDir, "cron/jobs.json"), JSON.stringify(jobs, null, 2));

    const result = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(result, false)).toBe(0);
    const [row] = sql(globalDb(s), "SELECT job_json, updated_at FROM cron_jobs");
    expect(JSON.parse(row![0]!)).toMatchObject({ schedule: { kind: "every", everyMs: 3_600_000 } });
    expect(Number(row![1])).toBe(later);
    const warnings = result.migration!.run!.warnings.join("\n");
    expect(warnings).toMatch(/kept OpenClaw's newer row cron_jobs/);
    // Named in the live ledger too: the run's report lists the record kept out.
    const [[report]] = sql(globalDb(s), `SELECT report_json FROM migration_runs WHERE id = '${result.migration!.run!.runId}'`) as [[string]];
    expect(report).toMatch(/kept OpenClaw's newer row cron_jobs/);
    const kept = fs.readdirSync(path.join(s.stateDir, "migrated")).filter((d) => d.startsWith("merge-"));
    expect(kept).toHaveLength(1);
    const keptRows = sql(path.join(s.stateDir, "migrated", kept[0]!, "kept", "global.sqlite"), "SELECT side, table_name FROM merge_kept");
    expect(keptRows).toContainEqual(["staged-older", "cron_jobs"]);
  });
  it("a moved state (cron rows keyed by the old mount) with a stale jobs.json: one row per job, under this mount, the runtime's newer schedule", async () => {
    const s = makeTempState(V96);
    fs.rmSync(path.join(s.stateDir, "README.md"));
    const db = new Database(globalDb(s));
    const later = Date.now() - 1000;
    db.prepare("UPDATE cron_jobs SET updated_at = ?, runtime_updated_at_ms = ? WHERE job_id = 'daily-brief'").run(later, later);
    db.close();
    const jobs = { version: 1, jobs: [{ id: "daily-brief", name: "Daily brief (stale copy)", enabled: true, schedule: { kind: "cron", expr: "0 9 * * *", tz: "UTC" }, sessionTarget: "isolated", wakeMode: "now", payload: { kind: "agentTurn", message: "Summarize my inbox" }, updatedAtMs: later - 60_000 }] };
    fs.mkdirSync(path.join(s.stateDir, "cron"), { recursive: true });
    fs.writeFileSync(path.join(s.stateDir, "cron/jobs.json"), JSON.stringify(jobs));

    const result = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(result, false), JSON.stringify(result.repairs, null, 2)).toBe(0);
    const rows = sql(globalDb(s), "SELECT store_key, job_json FROM cron_jobs WHERE job_id = 'daily-brief'");
    expect(rows).toHaveLength(1);
    expect(rows[0]![0]).toBe(path.join(s.stateDir, "cron", "jobs.json"));
    expect(JSON.parse(rows[0]![1]!)).toMatchObject({ name: "Daily brief", schedule: { expr: "0 8 * * *" } });
  });
});

describe("a version-1 transcript reappearing beside the state 9.6 migrated from it (issue 24: one id codec)", () => {
  const legacy = path.join(fixturesDir, "legacy-state");
  /** The 16-hex prefix 9.6 gives a v1 transcript read from `source` (its ids: `<prefix>-<record index>`). */
  const prefix = (source: string, sessionId: string): string => crypto.createHash("sha256").update(`${source}\0${sessionId}`).digest("hex").slice(0, 16);
  /** The fixture was migrated at /work/oc/t1/state: its v1 ids as 9.6 would have written them at this state dir. */
  function rehome(s: TempState): void {
    const db = new Database(agentDb(s));
    for (const id of ["s-ops", "s-root-dm"]) {
      const from = prefix(`/work/oc/t1/state/agents/main/sessions/${id}.jsonl`, id);
      const to = prefix(path.join(fs.realpathSync(s.stateDir), "agents/main/sessions", `${id}.jsonl`), id);
      db.prepare("UPDATE transcript_events SET event_json = replace(event_json, ?, ?) WHERE session_id = ?").run(from, to, id);
      db.prepare("UPDATE transcript_event_identities SET event_id = replace(event_id, ?, ?), parent_id = replace(parent_id, ?, ?) WHERE session_id = ?").run(from, to, from, to, id);
    }
    db.close();
  }
  function reappear(s: TempState): { ops: string; dm: string } {
    const ops = path.join(s.stateDir, "agents/main/sessions/s-ops.jsonl");
    const dm = path.join(s.stateDir, "sessions/s-root-dm.jsonl");
    fs.mkdirSync(path.dirname(ops), { recursive: true });
    fs.mkdirSync(path.dirname(dm), { recursive: true });
    fs.copyFileSync(path.join(legacy, "agents/main/sessions/s-ops.jsonl"), ops);
    fs.copyFileSync(path.join(legacy, "sessions/s-root-dm.jsonl"), dm);
    return { ops, dm };
  }

  it("at the path 9.6 read it from: the same ids, nothing to merge, no conflict, no duplicated event, the files retired", async () => {
    const s = liveState();
    rehome(s);
    const before = { ops: linesOf(s, "s-ops"), dm: linesOf(s, "s-root-dm") };
    expect(before.ops).toHaveLength(4);
    const { ops, dm } = reappear(s);

    const result = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(result, false), JSON.stringify(result.migration?.run?.sources, null, 2)).toBe(0);
    expect(linesOf(s, "s-ops")).toEqual(before.ops);
    expect(linesOf(s, "s-root-dm")).toEqual(before.dm);
    expect(sql(agentDb(s), "SELECT count(*) FROM transcript_event_identities WHERE session_id IN ('s-ops', 's-root-dm')")).toEqual([["7"]]);
    expect(fs.existsSync(ops)).toBe(false);
    expect(fs.existsSync(dm)).toBe(false);
  });

  it("at another path (9.6's ids hash the absolute path): reported as a conflict, the file kept in place, the database unchanged", async () => {
    const s = liveState();
    const before = linesOf(s, "s-ops");
    const { ops } = reappear(s);

    const result = await runDoctor({ paths: s.paths, fix: true });
    expect(doctorExitCode(result, false)).toBe(1);
    const outcome = result.migration!.run!.sources.find((o) => o.path === ops)!;
    expect(outcome.status).toBe("failed");
    expect(outcome.reason).toMatch(/migrate skip/);
    expect(linesOf(s, "s-ops")).toEqual(before);
    expect(fs.readFileSync(ops, "utf8")).toBe(fs.readFileSync(path.join(legacy, "agents/main/sessions/s-ops.jsonl"), "utf8"));
  });
});
