// Crash loop over the merge path: SIGKILL at random moments of `doctor --fix` merging legacy files into a state OpenClaw 2026.9.6 migrated; every kill leaves whole databases, no event twice, nothing retired without its events, and a re-run converges to an uninterrupted run.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { prng } from "../../bench/legacy-corpus.mjs";
import { runAndKill } from "../helpers/crash.js";
import { makeTempDir, makeTempState, runBin, type TempState } from "../helpers/temp-state.js";

const KILLS = Number(process.env.RELIABILITY_MERGE_KILLS ?? 8);
const NEW_SESSIONS = 150;
const ARGS = ["doctor", "--fix", "--yes", "--no-backup", "--json"];

/** The state 2026.9.6's doctor wrote, plus legacy files that came back: an append to s-main and new sessions. */
function liveStateWithLegacy(): TempState {
  const state = makeTempState("openclaw-2026.9.6/legacy-state-migrated");
  fs.rmSync(path.join(state.stateDir, "README.md"));
  const agent = path.join(state.stateDir, "agents/main/agent/openclaw-agent.sqlite");
  const db = new Database(agent, { readonly: true });
  const main = (db.prepare("SELECT event_json FROM transcript_events WHERE session_id = 's-main' ORDER BY seq").all() as Array<{ event_json: string }>).map((r) => r.event_json);
  db.close();
  const sessions = path.join(state.stateDir, "agents/main/sessions");
  fs.mkdirSync(sessions, { recursive: true });
  const msg = (id: string, parentId: string | null, text: string): string => JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-05T00:00:00.000Z", message: { role: "user", content: text } });
  fs.writeFileSync(path.join(sessions, "s-main.jsonl"), `${[...main, msg("e3", "e2", "appended by a rolled-back gateway")].join("\n")}\n`);
  const index: Record<string, unknown> = {};
  for (let i = 0; i < NEW_SESSIONS; i += 1) {
    const id = `s-new-${i}`;
    const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-04T00:00:00.000Z", cwd: "/home/demo" })];
    let parent: string | null = null;
    for (let j = 0; j < 20; j += 1) {
      const eid = `${id}-m${j}`;
      lines.push(msg(eid, parent, `turn ${j} ${"x".repeat(200)}`));
      parent = eid;
    }
    fs.writeFileSync(path.join(sessions, `${id}.jsonl`), `${lines.join("\n")}\n`);
    index[`agent:main:new-${i}`] = { sessionId: id, updatedAt: Date.UTC(2026, 0, 4) };
  }
  fs.writeFileSync(path.join(sessions, "sessions.json"), JSON.stringify(index));
  return state;
}

function openAgent(state: TempState): Database.Database {
  return new Database(path.join(state.stateDir, "agents/main/agent/openclaw-agent.sqlite"), { readonly: true });
}

/** Session id → its event ids in seq order. */
function eventIds(state: TempState): Record<string, string[]> {
  const db = openAgent(state);
  try {
    const out: Record<string, string[]> = {};
    for (const r of db.prepare("SELECT session_id, event_json FROM transcript_events ORDER BY session_id, seq").all() as Array<{ session_id: string; event_json: string }>) {
      (out[r.session_id] ??= []).push(String((JSON.parse(r.event_json) as { id?: unknown }).id ?? ""));
    }
    return out;
  } finally {
    db.close();
  }
}

/** After any kill: both files whole, each session's seqs 0..n-1 with no event twice, every retired transcript's events in the database. */
function assertWhole(state: TempState, context: string): void {
  // better-sqlite3's SQLite, not the system sqlite3: 9.6's CHECKs use octet_length(), which Debian's 3.40 lacks.
  for (const file of ["state/openclaw.sqlite", "agents/main/agent/openclaw-agent.sqlite"]) {
    // Checked on a copy (the file and its -wal): after a SIGKILL the WAL may need recovery, which a read-only
    // connection cannot run ("attempt to write a readonly database"), and the live files stay as the kill left them.
    const copy = path.join(makeTempDir("ocs-merge-check-"), path.basename(file));
    for (const suffix of ["", "-wal"]) if (fs.existsSync(path.join(state.stateDir, file + suffix))) fs.copyFileSync(path.join(state.stateDir, file + suffix), copy + suffix);
    const db = new Database(copy);
    try {
      expect(db.pragma("integrity_check", { simple: true }), `${file} ${context}`).toBe("ok");
      expect(db.pragma("foreign_key_check"), `${file} ${context}`).toEqual([]);
    } finally {
      db.close();
    }
  }
  const db = openAgent(state);
  try {
    for (const r of db.prepare("SELECT session_id, count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM transcript_events GROUP BY session_id").all() as Array<{ session_id: string; n: number; lo: number; hi: number }>) {
      expect([r.lo, r.hi], `${r.session_id} seqs ${context}`).toEqual([0, r.n - 1]);
    }
  } finally {
    db.close();
  }
  const ids = eventIds(state);
  for (const [session, list] of Object.entries(ids)) expect(new Set(list).size, `${session} has an event twice ${context}`).toBe(list.length);
  const sessions = path.join(state.stateDir, "agents/main/sessions");
  for (let i = 0; i < NEW_SESSIONS; i += 1) {
    const id = `s-new-${i}`;
    // Gone from its place means merged: all its 21 events are in the live database.
    if (!fs.existsSync(path.join(sessions, `${id}.jsonl`))) expect(ids[id]?.length ?? 0, `${id} retired without its events ${context}`).toBe(21);
  }
  if (!fs.existsSync(path.join(sessions, "s-main.jsonl"))) expect(ids["s-main"], context).toContain("e3");
}

describe("crash loop: doctor --fix merging into OpenClaw's format", () => {
  it(`${KILLS} SIGKILLs at random moments: whole databases, no duplicate events, nothing retired without its events; the re-run equals an uninterrupted run`, async () => {
    const reference = liveStateWithLegacy();
    const t0 = Date.now();
    const ref = await runBin(ARGS, reference.env, { timeoutMs: 120_000 });
    const fullMs = Date.now() - t0;
    expect(ref.code, ref.stdout + ref.stderr).toBe(0);
    const expected = eventIds(reference);
    expect(expected["s-main"]).toContain("e3");
    expect(Object.keys(expected).length).toBe(4 + NEW_SESSIONS);

    const rand = prng(Number(process.env.CRASH_SEED ?? 7));
    const state = liveStateWithLegacy();
    const log: string[] = [];
    for (let i = 0; i < KILLS; i += 1) {
      const ms = Math.floor(150 + rand() * fullMs);
      log.push(`${await runAndKill(ARGS, state.env, ms)}@${ms}`);
      assertWhole(state, `after ${log.join(", ")}`);
    }
    const last = await runBin(ARGS, state.env, { timeoutMs: 120_000 });
    expect(last.code, `${log.join(", ")}: ${last.stdout}${last.stderr}`).toBe(0);
    assertWhole(state, "after the final run");
    expect(eventIds(state)).toEqual(expected);
    // Every source retired (the emptied sessions/ dir goes too), and at least one kill landed mid-run.
    expect(fs.existsSync(path.join(state.stateDir, "agents/main/sessions"))).toBe(false);
    expect(log.some((l) => l.startsWith("killed")), log.join(", ")).toBe(true);
  });
});
