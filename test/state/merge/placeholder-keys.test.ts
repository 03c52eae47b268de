// Placeholder keys in the merge (issue 24): a live `agent:<id>:recovered:<sessionId>` session yields to the key a staged index gives it.
import { execFileSync } from "node:child_process";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { mergeIntoCurrent } from "../../../src/state/merge/merge-into-current.js";
import { isPlaceholderKeyFor } from "../../../src/state/merge/placeholder-keys.js";
import { adoptLiveSessionKeys } from "../../../src/state/merge/staged-files.js";
import { createOpenclawDatabase } from "../../../src/state/openclaw-database.js";
import { makeTempDir } from "../../helpers/temp-state.js";

type Row = Record<string, string | number | null>;
const NOW = 1_800_000_000_000;

function cli(file: string, sql: string): Row[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as Row[]);
}

function makeDb(file: string, seed: (db: Database.Database) => void): string {
  const db = createOpenclawDatabase({ path: file, role: "agent", agentId: "main", now: NOW - 10_000 });
  try {
    seed(db);
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return file;
}

function addNode(db: Database.Database, key: string, id: string, updatedAt: number, entry: Record<string, unknown>): void {
  db.prepare("INSERT INTO session_nodes (session_key, current_session_id, entry_json, entry_valid, updated_at) VALUES (?, ?, ?, 1, ?)").run(key, id, JSON.stringify({ sessionId: id, updatedAt, ...entry }), updatedAt);
  db.prepare("UPDATE session_nodes SET entry_valid = 1 WHERE session_key = ?").run(key);
}

function addEvent(db: Database.Database, id: string, seq: number, event: Record<string, unknown>): void {
  const json = JSON.stringify(event);
  db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) VALUES (?, ?, ?, ?, ?)").run(id, seq, json, 1000 + seq, Buffer.byteLength(json));
  db.prepare("INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(id, String(event.id), seq, String(event.type), (event.parentId as string | undefined) ?? null, 1000 + seq);
}

/** Live: what run 1 left for a lone trajectory (a placeholder session dated by the file, its run events, one participant row). */
function livePlaceholder(file: string, key = "agent:main:recovered:s-late"): string {
  return makeDb(file, (db) => {
    addNode(db, key, "s-late", 9000, { delivery: { kind: "none" } });
    db.prepare("INSERT INTO session_windows (session_id, session_key, created_at, updated_at, transcript_observed_at, session_entry_provenance) VALUES ('s-late', ?, 9000, 9000, 9000, 1)").run(key);
    for (const seq of [1, 2]) db.prepare("INSERT INTO trajectory_runtime_events (session_id, seq, run_id, event_json, created_at) VALUES ('s-late', ?, 'run-1', ?, ?)").run(seq, JSON.stringify({ type: "session.started", seq }), 8000 + seq);
    db.prepare("INSERT INTO session_participants (session_key, identity_namespace, actor_id, contribution_count) VALUES (?, 'user', 'u1', 1)").run(key);
  });
}

/** Staged: run 2's index entry (older than the placeholder's file date) and its transcript. */
function stagedIndexed(file: string): string {
  return makeDb(file, (db) => {
    addNode(db, "agent:main:main", "s-late", 5000, { chatType: "direct", label: "late" });
    db.prepare("INSERT INTO session_windows (session_id, session_key, session_scope, created_at, updated_at, session_entry_provenance, chat_type) VALUES ('s-late', 'agent:main:main', 'shared-main', 5000, 5000, 1, 'direct')").run();
    addEvent(db, "s-late", 0, { type: "session", id: "s-late", version: 3 });
    addEvent(db, "s-late", 1, { type: "message", id: "m1", parentId: null });
  });
}

describe("isPlaceholderKeyFor", () => {
  it("names the recovered key (lower-cased as OpenClaw stores it, or as our earlier releases wrote it) and the older orphan key of that session only", () => {
    expect(isPlaceholderKeyFor("agent:main:recovered:s-late", "S-Late")).toBe(true);
    expect(isPlaceholderKeyFor("agent:main:recovered:S-Late", "S-Late")).toBe(true);
    expect(isPlaceholderKeyFor("agent:ops:orphan:s-late", "S-Late")).toBe(true);
    expect(isPlaceholderKeyFor("agent:ops:orphan:S-Late", "S-Late")).toBe(false);
    expect(isPlaceholderKeyFor("agent:main:recovered:S-LATE", "S-Late")).toBe(false);
    expect(isPlaceholderKeyFor("agent:main:recovered:other", "s-late")).toBe(false);
    expect(isPlaceholderKeyFor("agent:main:main", "s-late")).toBe(false);
  });
});

describe("mergeIntoCurrent: a live placeholder session and a staged index naming it", () => {
  it("moves the live session under the index's key, keeps its run events and rows, drops the placeholder node, keeps both old rows", () => {
    const dir = makeTempDir();
    const live = livePlaceholder(path.join(dir, "live.sqlite"));
    const staged = stagedIndexed(path.join(dir, "staged.sqlite"));
    // Not adopted the other way round (the staged window keeps the index's key), and its empty columns are filled.
    expect(adoptLiveSessionKeys(staged, live)).toEqual([]);
    expect(cli(staged, "SELECT session_key, transcript_observed_at FROM session_windows")).toEqual([{ session_key: "agent:main:main", transcript_observed_at: 9000 }]);

    const report = mergeIntoCurrent({ role: "agent", stagedPath: staged, livePath: live, keptRowsPath: path.join(dir, "kept.sqlite"), now: NOW });
    expect(report.claimed).toEqual([{ sessionId: "s-late", from: "agent:main:recovered:s-late", to: "agent:main:main" }]);
    expect(report.keptNewer).toEqual([]);
    expect(cli(live, "SELECT session_key, current_session_id, json_extract(entry_json, '$.label') AS label FROM session_nodes")).toEqual([{ session_key: "agent:main:main", current_session_id: "s-late", label: "late" }]);
    expect(cli(live, "SELECT session_key, session_scope, chat_type, updated_at, transcript_observed_at FROM session_windows")).toEqual([
      { session_key: "agent:main:main", session_scope: "shared-main", chat_type: "direct", updated_at: 5000, transcript_observed_at: 9000 },
    ]);
    expect(cli(live, "SELECT count(*) AS n FROM trajectory_runtime_events WHERE session_id = 's-late'")).toEqual([{ n: 2 }]);
    expect(cli(live, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-late'")).toEqual([{ n: 2 }]);
    expect(cli(live, "SELECT session_key, actor_id FROM session_participants")).toEqual([{ session_key: "agent:main:main", actor_id: "u1" }]);
    expect(cli(live, "PRAGMA foreign_key_check")).toEqual([]);
    expect(cli(report.keptRowsPath!, "SELECT side, table_name, json_extract(row_json, '$.session_key') AS key FROM merge_kept ORDER BY table_name")).toEqual([
      { side: "live-replaced", table_name: "session_nodes", key: "agent:main:recovered:s-late" },
      { side: "live-replaced", table_name: "session_windows", key: "agent:main:recovered:s-late" },
    ]);
  });

  it("a live session that names the placeholder (a subagent or fork the runtime started from it) names the real key after the claim", () => {
    const dir = makeTempDir();
    const live = livePlaceholder(path.join(dir, "live.sqlite"));
    const from = "agent:main:recovered:s-late";
    const db = new Database(live);
    try {
      addNode(db, "agent:main:subagent:c1", "s-child", 9500, { spawnedBy: from, parentSessionKey: from, forkSource: { sessionKey: from, sessionId: "s-late" }, label: "child" });
      db.prepare("UPDATE session_nodes SET parent_session_key = ?, spawned_by = ?, fork_source_session_key = ? WHERE session_key = 'agent:main:subagent:c1'").run(from, from, from);
      db.prepare("INSERT INTO session_windows (session_id, session_key, created_at, updated_at, parent_session_key, spawned_by) VALUES ('s-child', 'agent:main:subagent:c1', 9500, 9500, ?, ?)").run(from, from);
      // A session naming another key is left alone.
      addNode(db, "agent:main:subagent:c2", "s-other", 9500, { spawnedBy: "agent:main:ops" });
      db.prepare("UPDATE session_nodes SET spawned_by = 'agent:main:ops' WHERE session_key = 'agent:main:subagent:c2'").run();
      db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      db.close();
    }
    const staged = stagedIndexed(path.join(dir, "staged.sqlite"));
    expect(adoptLiveSessionKeys(staged, live)).toEqual([]);
    const report = mergeIntoCurrent({ role: "agent", stagedPath: staged, livePath: live, keptRowsPath: path.join(dir, "kept.sqlite"), now: NOW });
    expect(report.claimed).toEqual([{ sessionId: "s-late", from, to: "agent:main:main" }]);
    const child = "json_extract(entry_json, '$.parentSessionKey') AS p, json_extract(entry_json, '$.spawnedBy') AS s, json_extract(entry_json, '$.forkSource.sessionKey') AS f, json_extract(entry_json, '$.label') AS label";
    expect(cli(live, `SELECT session_key, parent_session_key, spawned_by, fork_source_session_key, ${child} FROM session_nodes WHERE session_key LIKE 'agent:main:subagent:%' ORDER BY session_key`)).toEqual([
      { session_key: "agent:main:subagent:c1", parent_session_key: "agent:main:main", spawned_by: "agent:main:main", fork_source_session_key: "agent:main:main", p: "agent:main:main", s: "agent:main:main", f: "agent:main:main", label: "child" },
      { session_key: "agent:main:subagent:c2", parent_session_key: null, spawned_by: "agent:main:ops", fork_source_session_key: null, p: null, s: "agent:main:ops", f: null, label: null },
    ]);
    expect(cli(live, "SELECT parent_session_key, spawned_by FROM session_windows WHERE session_id = 's-child'")).toEqual([{ parent_session_key: "agent:main:main", spawned_by: "agent:main:main" }]);
    expect(cli(live, `SELECT count(*) AS n FROM session_nodes WHERE session_key = '${from}' OR parent_session_key = '${from}' OR spawned_by = '${from}'`)).toEqual([{ n: 0 }]);
    expect(cli(live, "PRAGMA foreign_key_check")).toEqual([]);
    // The rows as they were are kept.
    expect(cli(report.keptRowsPath!, "SELECT table_name, json_extract(row_json, '$.session_key') AS key, json_extract(row_json, '$.spawned_by') AS spawned FROM merge_kept WHERE json_extract(row_json, '$.session_key') = 'agent:main:subagent:c1' ORDER BY table_name")).toEqual([
      { table_name: "session_nodes", key: "agent:main:subagent:c1", spawned: from },
      { table_name: "session_windows", key: "agent:main:subagent:c1", spawned: from },
    ]);
  });

  it("a live session under a real key is not a placeholder: the runtime's key stays (adopted by the staged copy)", () => {
    const dir = makeTempDir();
    const live = livePlaceholder(path.join(dir, "live.sqlite"), "agent:main:telegram:direct:42");
    const staged = stagedIndexed(path.join(dir, "staged.sqlite"));
    expect(adoptLiveSessionKeys(staged, live)).toEqual([{ sessionId: "s-late", from: "agent:main:main", to: "agent:main:telegram:direct:42" }]);
    const report = mergeIntoCurrent({ role: "agent", stagedPath: staged, livePath: live, keptRowsPath: path.join(dir, "kept.sqlite"), now: NOW });
    expect(report.claimed).toEqual([]);
    expect(cli(live, "SELECT session_key FROM session_windows")).toEqual([{ session_key: "agent:main:telegram:direct:42" }]);
  });
});
