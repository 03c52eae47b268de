// mergeIntoCurrent on real OpenClaw 2026.9.6 files: append, rollback conflicts, stale and newer rows, new sessions, rollback on failure.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { mergeIntoCurrent, type MergeReport } from "../../../src/state/merge/merge-into-current.js";
import { derivedTables, tableShape, writeOrder } from "../../../src/state/merge/table-shape.js";
import { createOpenclawDatabase } from "../../../src/state/openclaw-database.js";
import { makeTempDir } from "../../helpers/temp-state.js";

type Row = Record<string, string | number | null>;

/** The sqlite3 CLI, an independent reader (not this project's better-sqlite3). */
function cli(file: string, sql: string): Row[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as Row[]);
}

const sha = (file: string): string => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
const NOW = 1_800_000_000_000;

interface Ev { id: string; type?: string; parentId?: string | null; text?: string; idem?: string }

/** A session in the shapes upgrade-agent-sessions.ts / upgrade-agent-data.ts write: node (valid), window, events, identities, watermark. */
function addSession(db: Database.Database, s: { key: string; id: string; updatedAt: number; events: Ev[]; seqs?: number[]; label?: string }): void {
  db.prepare("INSERT INTO session_nodes (session_key, current_session_id, entry_json, entry_valid, updated_at, label) VALUES (?, ?, ?, 1, ?, ?)").run(
    s.key, s.id, JSON.stringify({ sessionId: s.id, updatedAt: s.updatedAt, label: s.label ?? null }), s.updatedAt, s.label ?? null,
  );
  db.prepare("UPDATE session_nodes SET entry_valid = 1 WHERE session_key = ?").run(s.key);
  db.prepare("INSERT INTO session_windows (session_id, session_key, created_at, updated_at, session_entry_provenance) VALUES (?, ?, ?, ?, 1)").run(s.id, s.key, s.updatedAt - 100, s.updatedAt);
  addEvents(db, s.id, s.events, s.seqs);
  db.prepare("INSERT INTO transcript_rewrite_watermarks (session_id, generation, updated_at) VALUES (?, ?, ?)").run(s.id, crypto.randomUUID().replaceAll("-", ""), s.updatedAt);
}

function eventJson(sessionId: string, e: Ev): string {
  return e.type === "session"
    ? JSON.stringify({ type: "session", id: sessionId, version: 3, cwd: "/w" })
    : JSON.stringify({ type: e.type ?? "message", id: e.id, parentId: e.parentId ?? null, message: { role: "user", content: e.text ?? e.id } });
}

function addEvents(db: Database.Database, sessionId: string, events: Ev[], seqs?: number[]): void {
  events.forEach((e, i) => {
    const seq = seqs?.[i] ?? i;
    const json = eventJson(sessionId, e);
    db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) VALUES (?, ?, ?, ?, ?)").run(sessionId, seq, json, 1000 + seq, Buffer.byteLength(json));
    db.prepare("INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, message_idempotency_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      sessionId, e.type === "session" ? sessionId : e.id, seq, e.type ?? "message", e.type === "session" ? null : (e.parentId ?? null), e.idem ?? null, 1000 + seq,
    );
  });
}

/** A chain of message events after a session header. */
function chain(sessionId: string, ids: string[]): Ev[] {
  return [{ id: sessionId, type: "session" }, ...ids.map((id, i) => ({ id, parentId: i === 0 ? null : ids[i - 1]! }))];
}

function makeDb(dir: string, name: string, role: "agent" | "global", seed: (db: Database.Database) => void): string {
  const file = path.join(dir, name);
  const db = createOpenclawDatabase({ path: file, role, ...(role === "agent" ? { agentId: "main" } : {}), now: NOW - 10_000 });
  try {
    seed(db);
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return file;
}

function merge(dir: string, role: "agent" | "global", staged: string, live: string): MergeReport {
  return mergeIntoCurrent({ role, stagedPath: staged, livePath: live, keptRowsPath: path.join(dir, "kept", "kept.sqlite"), now: NOW });
}

function events(file: string, sessionId: string): Row[] {
  return cli(file, `SELECT seq, json_extract(event_json, '$.id') AS id FROM transcript_events WHERE session_id = '${sessionId}' ORDER BY seq`);
}

/** A cron job row in the shape upgrade-global-cron.ts writes (updatedAtMs lives in updated_at). */
function addCronJob(db: Database.Database, job: { id: string; everyMs: number; description: string; updatedAt: number }): void {
  const jobJson = { id: job.id, name: job.id, description: job.description, enabled: true, schedule: { kind: "every", everyMs: job.everyMs }, payload: { kind: "systemEvent", text: "tick" }, createdAtMs: 1000, state: {} };
  db.prepare(
    `INSERT INTO cron_jobs (store_key, job_id, name, description, enabled, payload_kind, job_json, grant_definition_generation, grant_definition_updated_at, state_json, runtime_updated_at_ms, schedule_identity, sort_order, updated_at)
     VALUES ('cron/jobs.json', ?, ?, ?, 1, 'systemEvent', ?, 1, ?, '{}', ?, ?, 0, ?)`,
  ).run(job.id, job.id, job.description, JSON.stringify(jobJson), job.updatedAt, job.updatedAt, JSON.stringify({ version: 2, enabled: true, schedule: { kind: "every", everyMs: job.everyMs }, hasTrigger: false }), job.updatedAt);
}

describe("mergeIntoCurrent: transcripts", () => {
  it("appends the file's events after the database's last seq, identities moved to the new seqs", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "agent", (db) => addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a", "b"]) }));
    // The file has the database's three events, then two more; a skipped malformed line left a gap at seq 3.
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) =>
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a", "b", "c", "d"]), seqs: [0, 1, 2, 4, 5] }),
    );

    const report = merge(dir, "agent", staged, live);

    // Closed clean (checked before the sqlite3 CLI, whose read-only open leaves sidecars behind).
    for (const f of [live, staged]) expect(fs.existsSync(`${f}-wal`) || fs.existsSync(`${f}-shm`), f).toBe(false);
    expect(report.appended).toEqual([{ sessionId: "s1", fromSeq: 3, count: 2 }]);
    expect(report.transcriptConflicts).toEqual([]);
    expect(report.tables.transcript_events).toEqual({ inserted: 2, identical: 3, replaced: 0, keptNewer: 0, conflicts: 0 });
    expect(report.tables.session_nodes).toMatchObject({ identical: 1, inserted: 0, replaced: 0 });
    expect(report.keptRowsPath).toBeNull();
    expect(fs.existsSync(path.join(dir, "kept", "kept.sqlite"))).toBe(false);
    expect(events(live, "s1")).toEqual([{ seq: 0, id: "s1" }, { seq: 1, id: "a" }, { seq: 2, id: "b" }, { seq: 3, id: "c" }, { seq: 4, id: "d" }]);
    expect(cli(live, "SELECT event_id, seq, parent_id FROM transcript_event_identities WHERE session_id = 's1' AND seq >= 3 ORDER BY seq")).toEqual([
      { event_id: "c", seq: 3, parent_id: "b" },
      { event_id: "d", seq: 4, parent_id: "c" },
    ]);
    // The live watermark is the runtime's: one row, unchanged count.
    expect(cli(live, "SELECT count(*) AS n FROM transcript_rewrite_watermarks")).toEqual([{ n: 1 }]);
    expect(cli(live, "PRAGMA foreign_key_check")).toEqual([]);
  });

  it("reports a rolled-back gateway's different turn as a conflict, writes nothing of that session, and still merges the others", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a", "runtime-turn"]) });
      addSession(db, { key: "agent:main:edit", id: "s3", updatedAt: 5000, events: chain("s3", ["x", "y"]) });
      addSession(db, { key: "agent:main:dup", id: "s4", updatedAt: 5000, events: chain("s4", ["p", "q"]) });
    });
    const liveS1 = events(live, "s1");
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) => {
      // s1: the file-era gateway appended a different turn at seq 2, then one more.
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a", "file-turn", "file-more"]) });
      // s3: the same id at seq 1, different content.
      addSession(db, { key: "agent:main:edit", id: "s3", updatedAt: 5000, events: [{ id: "s3", type: "session" }, { id: "x", text: "edited" }, { id: "y", parentId: "x" }] });
      // s4: the seqs both have agree, but the file's next event (after a gap) is one the database holds at seq 2.
      addSession(db, { key: "agent:main:dup", id: "s4", updatedAt: 5000, events: chain("s4", ["p", "q"]), seqs: [0, 1, 5] });
      // s2: a session the runtime never saw.
      addSession(db, { key: "agent:main:new", id: "s2", updatedAt: 6000, events: chain("s2", ["n1"]) });
    });

    const report = merge(dir, "agent", staged, live);

    expect(report.transcriptConflicts).toEqual([
      { sessionId: "s1", sessionKey: "agent:main:main", seq: 2, liveEventId: "runtime-turn", fileEventId: "file-turn" },
      { sessionId: "s3", sessionKey: "agent:main:edit", seq: 1, liveEventId: "x", fileEventId: "x" },
      { sessionId: "s4", sessionKey: "agent:main:dup", seq: 5, liveEventId: "q", fileEventId: "q" },
    ]);
    expect(report.conflictedSessions).toEqual(["s1", "s3", "s4"]);
    expect(events(live, "s1")).toEqual(liveS1);
    expect(events(live, "s3").map((r) => r.id)).toEqual(["s3", "x", "y"]);
    expect(cli(live, "SELECT json_extract(event_json, '$.message.content') AS c FROM transcript_events WHERE session_id = 's3' AND seq = 1")).toEqual([{ c: "x" }]);
    expect(events(live, "s4").map((r) => r.id)).toEqual(["s4", "p", "q"]);
    expect(events(live, "s2").map((r) => r.id)).toEqual(["s2", "n1"]);
    expect(report.appended).toEqual([]);
    // The file's disagreeing events are kept beside the merge.
    const kept = cli(report.keptRowsPath!, "SELECT side, table_name, key_json FROM merge_kept WHERE table_name = 'transcript_events' ORDER BY key_json");
    expect(kept).toEqual([
      { side: "staged-conflict", table_name: "transcript_events", key_json: '{"session_id":"s1","seq":2}' },
      { side: "staged-conflict", table_name: "transcript_events", key_json: '{"session_id":"s1","seq":3}' },
      { side: "staged-conflict", table_name: "transcript_events", key_json: '{"session_id":"s3","seq":1}' },
      { side: "staged-conflict", table_name: "transcript_events", key_json: '{"session_id":"s3","seq":2}' },
      { side: "staged-conflict", table_name: "transcript_events", key_json: '{"session_id":"s4","seq":5}' },
    ]);
  });

  it("never matches a compressed live event it cannot decode: a conflict, not an identical", () => {
    const dir = makeTempDir();
    const nav = JSON.stringify({ version: 1, report: { kind: "leaf" }, navigation: {}, reset: {}, model: {}, modelBytes: 0, modelWithoutCheckpointBytes: 0, withoutCustomDataBytes: 0 });
    const live = makeDb(dir, "live.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", []) });
      // Not a zstd frame: undecodable on every Node.
      db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES ('s1', 1, NULL, 1, ?, 40, ?)").run(Buffer.from("not zstd at all"), nav);
    });
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) => addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a", "b"]) }));
    const report = merge(dir, "agent", staged, live);
    expect(report.transcriptConflicts).toEqual([{ sessionId: "s1", sessionKey: "agent:main:main", seq: 1, liveEventId: null, fileEventId: "a" }]);
    expect(cli(live, "SELECT count(*) AS n FROM transcript_events")).toEqual([{ n: 2 }]);
  });

  it("inserts a new session (conversation, node, window, link, events) parents first, the node left valid", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "agent", () => {});
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) => {
      db.prepare("INSERT INTO conversations (conversation_id, channel, account_id, kind, peer_id, delivery_target, created_at, updated_at) VALUES ('c1', 'telegram', 'default', 'direct', '42', 'telegram:42', 1, 2)").run();
      addSession(db, { key: "agent:main:telegram:42", id: "s9", updatedAt: 7000, events: chain("s9", ["m1", "m2"]) });
      db.prepare("UPDATE session_windows SET primary_conversation_id = 'c1' WHERE session_id = 's9'").run();
      db.prepare("INSERT INTO session_conversations (session_id, conversation_id, role, first_seen_at, last_seen_at) VALUES ('s9', 'c1', 'primary', 1, 2)").run();
    });

    const report = merge(dir, "agent", staged, live);

    for (const t of ["conversations", "session_nodes", "session_windows", "session_conversations", "transcript_rewrite_watermarks"]) expect(report.tables[t]?.inserted, t).toBe(1);
    expect(report.tables.transcript_events?.inserted).toBe(3);
    expect(report.tables.transcript_event_identities?.inserted).toBe(3);
    expect(report.appended).toEqual([]); // a new transcript is inserted, not appended
    expect(cli(live, "SELECT session_key, current_session_id, entry_valid FROM session_nodes")).toEqual([{ session_key: "agent:main:telegram:42", current_session_id: "s9", entry_valid: 1 }]);
    expect(cli(live, "SELECT primary_conversation_id FROM session_windows WHERE session_id = 's9'")).toEqual([{ primary_conversation_id: "c1" }]);
    expect(events(live, "s9").map((r) => r.id)).toEqual(["s9", "m1", "m2"]);
    // The live insert trigger queued the node for canonical validation, as a runtime write would.
    expect(cli(live, "SELECT session_key FROM session_canonical_validation_pending")).toEqual([{ session_key: "agent:main:telegram:42" }]);
    expect(cli(live, "PRAGMA foreign_key_check")).toEqual([]);
    expect(cli(live, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
  });
});

describe("mergeIntoCurrent: freshness of records", () => {
  it("writes nothing on an identical re-import (JSON key order aside)", () => {
    const dir = makeTempDir();
    const seed = (swap: boolean) => (db: Database.Database) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a", "b"]) });
      db.prepare("INSERT INTO cache_entries (scope, key, value_json, blob, updated_at) VALUES ('s', 'k', ?, x'00ff', 10)").run(swap ? '{"b":2,"a":1}' : '{"a":1,"b":2}');
    };
    const live = makeDb(dir, "live.sqlite", "agent", seed(false));
    const staged = makeDb(dir, "staged.sqlite", "agent", seed(true));
    // Watermark generations are random per upgrade: the staged one is not a difference.
    const before = { sha: sha(live), mtime: fs.statSync(live).mtimeMs };

    const report = merge(dir, "agent", staged, live);

    for (const [t, c] of Object.entries(report.tables)) expect({ t, ...c, identical: c.identical > 0 || t === "transcript_rewrite_watermarks" }).toEqual({ t, inserted: 0, identical: true, replaced: 0, keptNewer: 0, conflicts: 0 });
    expect(report.tables.cache_entries).toEqual({ inserted: 0, identical: 1, replaced: 0, keptNewer: 0, conflicts: 0 });
    expect(report.keptRowsPath).toBeNull();
    expect(sha(live)).toBe(before.sha);
    expect(fs.statSync(live).mtimeMs).toBe(before.mtime);
  });

  it("keeps the runtime's newer cron job against a stale jobs.json and keeps the legacy record aside", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "global", (db) => addCronJob(db, { id: "job", everyMs: 60_000, description: "runtime", updatedAt: 2000 }));
    const staged = makeDb(dir, "staged.sqlite", "global", (db) => {
      addCronJob(db, { id: "job", everyMs: 30_000, description: "stale cli edit", updatedAt: 1000 });
      addCronJob(db, { id: "other", everyMs: 5_000, description: "only in the file", updatedAt: 900 });
    });
    const liveJob = cli(live, "SELECT * FROM cron_jobs WHERE job_id = 'job'");

    const report = merge(dir, "global", staged, live);

    expect(report.tables.cron_jobs).toEqual({ inserted: 1, identical: 0, replaced: 0, keptNewer: 1, conflicts: 0 });
    expect(report.keptNewer).toEqual([{ table: "cron_jobs", key: '{"store_key":"cron/jobs.json","job_id":"job"}', liveUpdatedAt: 2000, stagedUpdatedAt: 1000 }]);
    expect(report.replaced).toEqual([]);
    expect(cli(live, "SELECT * FROM cron_jobs WHERE job_id = 'job'")).toEqual(liveJob);
    expect(report.keptRowsPath).toBe(path.join(dir, "kept", "kept.sqlite"));
    expect(fs.statSync(report.keptRowsPath!).mode & 0o777).toBe(0o600);
    const kept = cli(report.keptRowsPath!, "SELECT side, table_name, key_json, row_json, live_updated_at, staged_updated_at, kept_at FROM merge_kept");
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ side: "staged-older", table_name: "cron_jobs", live_updated_at: 2000, staged_updated_at: 1000, kept_at: NOW });
    expect(JSON.parse(JSON.parse(kept[0]!.row_json as string).job_json as string).schedule).toEqual({ kind: "every", everyMs: 30_000 });
  });

  it("replaces an older live row with the newer staged one in place, children kept, old row in merge_kept", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a"]), label: "old" });
      db.prepare("INSERT INTO session_participants (session_key, identity_namespace, actor_id, contribution_count) VALUES ('agent:main:main', 'ns', 'u1', 3)").run();
      db.prepare("INSERT INTO cache_entries (scope, key, value_json, blob, updated_at) VALUES ('s', 'k', NULL, x'0102', 50)").run();
    });
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 9000, events: chain("s1", ["a"]), label: "new" });
      db.prepare("INSERT INTO cache_entries (scope, key, value_json, blob, updated_at) VALUES ('s', 'k', NULL, x'ffee', 40)").run();
    });

    const report = merge(dir, "agent", staged, live);

    expect(report.replaced).toContainEqual({ table: "session_nodes", key: '{"session_key":"agent:main:main"}', liveUpdatedAt: 5000, stagedUpdatedAt: 9000 });
    expect(report.tables.session_nodes).toMatchObject({ replaced: 1 });
    expect(report.tables.cache_entries).toMatchObject({ keptNewer: 1 });
    // Updated in place: the child row ON DELETE CASCADE would have taken is still there; the node stays valid.
    expect(cli(live, "SELECT label, updated_at, entry_valid FROM session_nodes")).toEqual([{ label: "new", updated_at: 9000, entry_valid: 1 }]);
    expect(cli(live, "SELECT count(*) AS n FROM session_participants")).toEqual([{ n: 1 }]);
    expect(cli(live, "SELECT hex(blob) AS b FROM cache_entries")).toEqual([{ b: "0102" }]);
    const kept = cli(report.keptRowsPath!, "SELECT side, table_name, row_json FROM merge_kept ORDER BY table_name");
    // The window differs only in its stamps: the same record, nothing written or kept for it.
    expect(report.tables.session_windows).toMatchObject({ identical: 1, replaced: 0 });
    expect(kept.map((k) => [k.side, k.table_name])).toEqual([
      ["staged-older", "cache_entries"],
      ["live-replaced", "session_nodes"],
    ]);
    expect(JSON.parse(kept[0]!.row_json as string).blob).toEqual({ $base64: Buffer.from([0xff, 0xee]).toString("base64") });
    expect(JSON.parse(kept[1]!.row_json as string)).toMatchObject({ label: "old", updated_at: 5000 });
  });
});

describe("mergeIntoCurrent: whose time counts", () => {
  it("a staged time at or after credibleBefore (the import's own clock, a future date) never wins", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "global", (db) => addCronJob(db, { id: "job", everyMs: 60_000, description: "runtime", updatedAt: 2000 }));
    const staged = makeDb(dir, "staged.sqlite", "global", (db) => addCronJob(db, { id: "job", everyMs: 30_000, description: "stamped by the import", updatedAt: 7000 }));
    const liveJob = cli(live, "SELECT * FROM cron_jobs");
    const report = mergeIntoCurrent({ role: "global", stagedPath: staged, livePath: live, keptRowsPath: path.join(dir, "kept.sqlite"), now: 8000, credibleBefore: 7000 });
    expect(report.tables.cron_jobs).toMatchObject({ replaced: 0, keptNewer: 1 });
    expect(report.keptNewer[0]).toMatchObject({ liveUpdatedAt: 2000, stagedUpdatedAt: 7000 });
    expect(cli(live, "SELECT * FROM cron_jobs")).toEqual(liveJob);
  });

  it("a newer staged row leaves the columns it has no value for as the runtime filled them", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "agent", (db) => addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a"]), label: "runtime label" }));
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 9000, events: chain("s1", ["a"]), label: "x" });
      db.prepare("UPDATE session_nodes SET label = NULL, display_name = 'from the file'").run();
    });
    const report = merge(dir, "agent", staged, live);
    expect(report.tables.session_nodes).toMatchObject({ replaced: 1 });
    expect(cli(live, "SELECT label, display_name, updated_at FROM session_nodes")).toEqual([{ label: "runtime label", display_name: "from the file", updated_at: 9000 }]);
  });
});

describe("mergeIntoCurrent: failure", () => {
  it("rolls everything back on a constraint error mid-merge: live byte-identical, no kept-rows file", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a"]) });
      db.prepare("INSERT INTO cache_entries (scope, key, value_json, updated_at) VALUES ('s', 'k', '1', 50)").run();
    });
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a", "b"]) });
      db.prepare("INSERT INTO cache_entries (scope, key, value_json, updated_at) VALUES ('s', 'k', '2', 40), ('s', 'new', '3', 40)").run();
      // A window whose node exists nowhere: the live foreign key refuses it, after earlier tables were written.
      db.pragma("foreign_keys = OFF");
      db.prepare("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES ('orphan', 'agent:main:nobody', 1, 1)").run();
    });
    const before = sha(live);
    const keptPath = path.join(dir, "kept", "kept.sqlite");

    expect(() => merge(dir, "agent", staged, live)).toThrow(/FOREIGN KEY/);

    expect(sha(live)).toBe(before);
    expect(fs.existsSync(keptPath)).toBe(false);
    expect(fs.readdirSync(path.dirname(keptPath))).toEqual([]);
    expect(fs.existsSync(`${live}-wal`) || fs.existsSync(`${live}-journal`)).toBe(false);
    expect(cli(live, "SELECT key FROM cache_entries ORDER BY key")).toEqual([{ key: "k" }]);
  });

  it("refuses a kept-rows path that already exists, before touching anything", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "global", () => {});
    const staged = makeDb(dir, "staged.sqlite", "global", (db) => addCronJob(db, { id: "job", everyMs: 1000, description: "d", updatedAt: 1 }));
    const keptPath = path.join(dir, "kept", "kept.sqlite");
    fs.mkdirSync(path.dirname(keptPath));
    fs.writeFileSync(keptPath, "mine");
    const before = sha(live);
    expect(() => merge(dir, "global", staged, live)).toThrow(/already exists/);
    expect(sha(live)).toBe(before);
    expect(fs.readFileSync(keptPath, "utf8")).toBe("mine");
  });
});

describe("mergeIntoCurrent: what it reads off the 9.6 schema", () => {
  it("picks keys, freshness columns, trigger-owned columns and derived tables from the real agent and global schemas", () => {
    const dir = makeTempDir();
    const agent = new Database(makeDb(dir, "a.sqlite", "agent", () => {}));
    const global = new Database(makeDb(dir, "g.sqlite", "global", () => {}));
    try {
      const shape = (t: string, db = agent) => tableShape(db, db, t);
      const derived = derivedTables(agent);
      for (const t of ["memory_index_state", "session_canonical_validation_pending", "standing_intents_fts", "session_transcript_fts", "session_transcript_fts_data"]) expect(derived.has(t), t).toBe(true);
      for (const t of ["session_nodes", "session_windows", "transcript_events", "session_conversations"]) expect(derived.has(t), t).toBe(false);
      expect(derivedTables(global).size).toBe(0);
      expect(shape("session_nodes")).toMatchObject({ key: ["session_key"], surrogate: null, timestamp: "updated_at", triggerReset: ["entry_valid"] });
      expect(shape("session_conversations")).toMatchObject({ key: ["session_id", "conversation_id", "role"], timestamp: "last_seen_at", triggerReset: ["route_context_json"] });
      expect(shape("memory_index_sources")).toMatchObject({ key: ["path", "source"], surrogate: "id" });
      expect(shape("memory_index_chunks")).toMatchObject({ key: ["id"], surrogate: "chunk_rowid", timestamp: "updated_at" });
      expect(shape("session_key_contract")).toMatchObject({ key: ["id"], surrogate: null });
      expect(shape("session_transcript_fts_rows")).toMatchObject({ key: [], surrogate: "id" });
      expect(shape("cron_jobs", global)).toMatchObject({ key: ["store_key", "job_id"], timestamp: "updated_at", jsonColumns: ["job_json", "state_json"] });
      expect(shape("device_identities", global)).toMatchObject({ timestamp: "updated_at_ms" });
      const order = writeOrder(["transcript_event_identities", "transcript_events", "session_windows", "session_nodes", "conversations", "cache_entries"].map((t) => shape(t))).map((s) => s.name);
      for (const [parent, child] of [["session_nodes", "session_windows"], ["conversations", "session_windows"], ["session_windows", "transcript_events"], ["transcript_events", "transcript_event_identities"]]) {
        expect(order.indexOf(parent!), `${parent} before ${child}`).toBeLessThan(order.indexOf(child!));
      }
    } finally {
      agent.close();
      global.close();
    }
  });

  it("never merges the staged file's seed rows, and adds an identity live lacks for an event it holds", () => {
    const dir = makeTempDir();
    const live = makeDb(dir, "live.sqlite", "agent", (db) => {
      addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a"]) });
      // The runtime has written its key contract; 9.6 gives the header an identity that this live file lacks.
      db.prepare("UPDATE session_key_contract SET canonical_ready = 'v2', updated_at = 4000 WHERE id = 1").run();
      db.prepare("DELETE FROM transcript_event_identities WHERE session_id = 's1' AND seq = 0").run();
    });
    const staged = makeDb(dir, "staged.sqlite", "agent", (db) => addSession(db, { key: "agent:main:main", id: "s1", updatedAt: 5000, events: chain("s1", ["a"]) }));
    const report = merge(dir, "agent", staged, live);
    expect(report.tables).not.toHaveProperty("session_key_contract");
    expect(report.keptNewer).toEqual([]);
    expect(report.tables.transcript_event_identities).toEqual({ inserted: 1, identical: 1, replaced: 0, keptNewer: 0, conflicts: 0 });
    expect(cli(live, "SELECT canonical_ready, updated_at FROM session_key_contract")).toEqual([{ canonical_ready: "v2", updated_at: 4000 }]);
    expect(cli(live, "SELECT event_id, seq FROM transcript_event_identities WHERE session_id = 's1' ORDER BY seq")).toEqual([{ event_id: "s1", seq: 0 }, { event_id: "a", seq: 1 }]);
  });
});
