// Transcript import (SPEC §4.2): v1→v2→v3 normalization, v1 ids as OpenClaw's codec derives them, identities, bad lines, orphans.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { preparedEvent, prepareTranscript } from "../../src/migration/importers/transcript-parse.js";
import { openclawTranscriptPath } from "../../src/migration/importers/transcript-v1-ids.js";
import { findSourceByKey } from "../../src/migration/ledger.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { fixturesDir, makeTempState } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

type Event = { session_id: string; seq: number; event_json: string; created_at: number };
type Identity = { session_id: string; event_id: string; seq: number; event_type: string | null; has_parent: number; parent_id: string | null; message_idempotency_key: string | null };

/**
 * The id OpenClaw 2026.9.6's doctor gives record `index` of a version-1 transcript (written here from what its codec
 * does, not from ours): 16 hex of sha256(<sessions dir, realpath'd>/<file> NUL <session id>), "-", the index in base 36.
 */
function openclawV1Id(stateDir: string, agentId: string, file: string, sessionId: string, index: number): string {
  const source = path.join(fs.realpathSync(stateDir), "agents", agentId, "sessions", file);
  return `${crypto.createHash("sha256").update(`${source}\0${sessionId}`).digest("hex").slice(0, 16)}-${index.toString(36)}`;
}

function events(file: string, sessionId: string): Array<Record<string, unknown>> {
  return rows<Event>(file, "SELECT * FROM transcript_events WHERE session_id = ? ORDER BY seq", sessionId).map((e) => JSON.parse(e.event_json) as Record<string, unknown>);
}

describe("transcript normalization", () => {
  it("normalizes v1: OpenClaw's ids (<hash of path and session>-<index>), parent chain, firstKeptEntryId, hookMessage → custom, header v3", async () => {
    const { paths, stateDir } = makeTempState("migration/transcript-versions");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const file = agentDbFile(paths);
    const ev = events(file, "session-1");
    expect(ev).toHaveLength(5);
    expect(ev[0]).toEqual({ type: "session", id: "session-1", timestamp: "2026-05-06T00:00:00.000Z", cwd: "/tmp/work", version: 3 });
    const ids = ev.slice(1).map((e) => e.id as string);
    // The header is record 0: the entries are records 1 to 4 (the repeated "hello" line too gets its own).
    expect(ids).toEqual([1, 2, 3, 4].map((i) => openclawV1Id(stateDir, "main", "session-1.jsonl", "session-1", i)));
    // 9.6's key order: the assigned id and parentId after the line's own keys, firstKeptEntryId last.
    expect(Object.keys(ev[3]!)).toEqual(["type", "timestamp", "summary", "tokensBefore", "id", "parentId", "firstKeptEntryId"]);
    expect(ev.slice(1).map((e) => e.parentId)).toEqual([null, ids[0], ids[1], ids[2]]);
    expect((ev[2]!.message as { role: string }).role).toBe("custom");
    expect(ev[3]).toMatchObject({ type: "compaction", firstKeptEntryId: ids[0], tokensBefore: 100 });
    expect(ev[3]).not.toHaveProperty("firstKeptEntryIndex");
    const identities = rows<Identity>(file, "SELECT event_id, seq, event_type, has_parent, parent_id FROM transcript_event_identities WHERE session_id = 'session-1' ORDER BY seq");
    expect(identities).toEqual([
      { event_id: ids[0], seq: 1, event_type: "message", has_parent: 0, parent_id: null },
      { event_id: ids[1], seq: 2, event_type: "message", has_parent: 1, parent_id: ids[0] },
      { event_id: ids[2], seq: 3, event_type: "compaction", has_parent: 1, parent_id: ids[1] },
      { event_id: ids[3], seq: 4, event_type: "message", has_parent: 1, parent_id: ids[2] },
    ]);
    const created = rows<Event>(file, "SELECT seq, created_at FROM transcript_events WHERE session_id = 'session-1' ORDER BY seq").map((e) => e.created_at);
    expect(created).toEqual([0, 1, 2, 3, 4].map((s) => Date.parse("2026-05-06T00:00:00.000Z") + s * 1000));
  });

  it("normalizes v2 (hookMessage → custom, ids kept) and stores v3 lines byte for byte", async () => {
    const { paths, stateDir } = makeTempState("migration/transcript-versions");
    const v3Lines = fs.readFileSync(path.join(stateDir, "agents/main/sessions/session-3.jsonl"), "utf8").trim().split("\n");
    await migrate(paths);
    const file = agentDbFile(paths);
    const v2 = events(file, "session-2");
    expect(v2.map((e) => e.id)).toEqual(["session-2", "a1", "a2", "a3"]);
    expect((v2[2]!.message as { role: string }).role).toBe("custom");
    expect(v2[0]).toMatchObject({ version: 3 });
    const stored = rows<Event>(file, "SELECT event_json FROM transcript_events WHERE session_id = 'session-3' AND seq > 0 ORDER BY seq").map((e) => e.event_json);
    expect(stored).toEqual(v3Lines.slice(1));
    const keys = rows<Identity>(file, "SELECT session_id, event_id, message_idempotency_key FROM transcript_event_identities WHERE message_idempotency_key IS NOT NULL ORDER BY session_id");
    expect(keys).toEqual([
      { session_id: "session-2", event_id: "a1", message_idempotency_key: "msg-1" },
      { session_id: "session-3", event_id: "b2", message_idempotency_key: "reply-1" },
    ]);
  });

  it("derives the same rows in two independent runs, v1 ids differing only by the path they hash (as OpenClaw's)", async () => {
    const a = makeTempState("migration/transcript-versions");
    const b = makeTempState("migration/transcript-versions");
    await migrate(a.paths);
    await migrate(b.paths);
    const q = "SELECT * FROM transcript_events ORDER BY session_id, seq";
    const qi = "SELECT * FROM transcript_event_identities ORDER BY session_id, seq";
    const prefixOf = (stateDir: string): string => openclawV1Id(stateDir, "main", "session-1.jsonl", "session-1", 0).slice(0, 16);
    const norm = (stateDir: string, query: string): string => JSON.stringify(rows(agentDbFile(stateDir === a.stateDir ? a.paths : b.paths), query)).replaceAll(prefixOf(stateDir), "<prefix>");
    expect(prefixOf(a.stateDir)).not.toBe(prefixOf(b.stateDir));
    expect(norm(a.stateDir, q)).toContain("<prefix>-4");
    expect(norm(a.stateDir, q)).toEqual(norm(b.stateDir, q));
    expect(norm(a.stateDir, qi)).toEqual(norm(b.stateDir, qi));
  });

  it("a re-import of the same content (the ledger row lost to a kill) keeps the rows and the transcript generation", async () => {
    const { paths, stateDir } = makeTempState("migration/transcript-versions");
    const first = await migrate(paths);
    expect(first.run.status).toBe("completed");
    const file = agentDbFile(paths);
    const q = "SELECT * FROM transcript_events ORDER BY session_id, seq";
    const qi = "SELECT * FROM transcript_event_identities ORDER BY session_id, seq";
    const before = { events: rows(file, q), identities: rows(file, qi) };
    // As after a kill between the agent DB's commit and the global ledger's (WAL: not atomic across files):
    // the rows are there, the ledger does not know, and the file is still in place.
    const outcome = first.run.sources.find((o) => o.relativePath.endsWith("session-1.jsonl"))!;
    fs.mkdirSync(path.dirname(path.join(stateDir, outcome.relativePath)), { recursive: true });
    fs.renameSync(outcome.retiredTo!, path.join(stateDir, outcome.relativePath));
    const global = openGlobalDatabase(paths, { mode: "write" });
    global.prepare("DELETE FROM migration_sources WHERE source_path = ?").run(outcome.relativePath);
    global.close();
    const again = await migrate(paths);
    const redo = again.run.sources.find((o) => o.relativePath === outcome.relativePath)!;
    expect(redo).toMatchObject({ status: "imported", warnings: [] });
    expect({ events: rows(file, q), identities: rows(file, qi) }).toEqual(before);
    expect(rows(file, "SELECT * FROM transcript_generations")).toEqual([]);
  });

});

describe("bad transcript input", () => {
  it("drops a truncated final line with a warning and imports the rest", async () => {
    const { paths } = makeTempState("migration/truncated-last-line");
    const { run } = await migrate(paths);
    const [outcome] = run.sources;
    expect(outcome).toMatchObject({ status: "warning", recordsParsed: 2, retired: "moved" });
    expect(outcome!.warnings[0]).toMatch(/s-trunc\.jsonl:3: truncated final line dropped/);
    expect(run.status).toBe("warning");
    expect(events(agentDbFile(paths), "s-trunc").map((e) => e.id)).toEqual(["s-trunc", "m1"]);
  });

  it("fails a file with a corrupt middle line (path:line), keeps it in place, and imports the others", async () => {
    const { paths, stateDir } = makeTempState("migration/corrupt-middle-line");
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    const bad = run.sources.find((s) => s.relativePath.endsWith("s-bad.jsonl"))!;
    expect(bad.status).toBe("failed");
    expect(bad.reason).toMatch(/agents\/main\/sessions\/s-bad\.jsonl:3: invalid JSON/);
    expect(bad.retired).toBeNull();
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-bad.jsonl"))).toBe(true);
    // No index in this fixture: the good transcript is imported as an orphan, which is always a warning.
    expect(run.sources.find((s) => s.relativePath.endsWith("s-good.jsonl"))!.status).toBe("warning");
    const file = agentDbFile(paths);
    expect(rows(file, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-bad'")).toEqual([{ n: 0 }]);
    expect(rows(file, "SELECT count(*) AS n FROM sessions WHERE session_id = 's-bad'")).toEqual([{ n: 0 }]);
    const global = openGlobalDatabase(paths, { mode: "read" });
    const plan = await planMigration({ paths, ledger: global });
    const row = findSourceByKey(global, plan.sources[0]!.sourceKey!);
    global.close();
    expect(row).toMatchObject({ status: "failed", removed_source: 0 });
    expect(plan.sources.map((s) => s.action)).toEqual(["import"]);
    expect(plan.sources[0]!.notes.join()).toMatch(/previous attempt .* failed: .*s-bad\.jsonl:3/);
  });

  it("imports a file without a session header as version 1 under its file name, with a header added (as 2026.9.6)", async () => {
    const { paths, stateDir } = makeTempState("migration/missing-header");
    const file = path.join(stateDir, "agents/main/sessions/s-nohead.jsonl");
    const mtime = Date.UTC(2026, 4, 7);
    fs.utimesSync(file, new Date(mtime), new Date(mtime));
    const plan = await planMigration({ paths });
    expect(plan.sources[0]!.notes.join()).toMatch(/no session header: read as version 1 under the file name's session id s-nohead/);
    expect(plan.sources[0]!.notes.join()).not.toMatch(/will fail/);
    const { run } = await migrate(paths);
    // Nothing indexes it: imported, recovered under its own key (a warning).
    expect(run.sources[0]!.status).toBe("warning");
    const events = rows<{ seq: number; event_json: string; created_at: number }>(agentDbFile(paths), "SELECT seq, event_json, created_at FROM transcript_events WHERE session_id = 's-nohead' ORDER BY seq");
    expect(events).toHaveLength(3);
    // No entry has a timestamp: the header is dated by the file's mtime.
    expect(JSON.parse(events[0]!.event_json)).toEqual({ type: "session", version: 3, id: "s-nohead", timestamp: new Date(mtime).toISOString(), cwd: "" });
    const [first, second] = events.slice(1).map((e) => JSON.parse(e.event_json) as { id: string; parentId: string | null; message: { content: string } });
    // Read as v1: every entry gets a fresh id and the previous entry as its parent, whatever ids the lines carried;
    // no header line, so the first entry is record 0.
    expect(first!.id).toBe(openclawV1Id(stateDir, "main", "s-nohead.jsonl", "s-nohead", 0));
    expect(first!.parentId).toBeNull();
    expect(second!.parentId).toBe(first!.id);
    expect(second!.message.content).toBe("still none");
    expect(rows(agentDbFile(paths), "SELECT session_key FROM sessions WHERE session_id = 's-nohead'")).toEqual([{ session_key: "agent:main:recovered:s-nohead" }]);
  });

  it("still fails a file whose first line is not JSON, with path:line", async () => {
    const { paths, stateDir } = makeTempState("migration/missing-header");
    fs.writeFileSync(path.join(stateDir, "agents/main/sessions/s-nohead.jsonl"), 'not json at all\n{"type":"message","message":{"role":"user"}}\n');
    const plan = await planMigration({ paths });
    expect(plan.sources[0]!.notes.join()).toMatch(/will fail: .*s-nohead\.jsonl:1: not a JSON object line/);
    const { run } = await migrate(paths);
    expect(run.sources[0]!.status).toBe("failed");
    expect(run.sources[0]!.reason).toMatch(/s-nohead\.jsonl:1: invalid JSON/);
  });

  it("fails a file with invalid UTF-8 in a middle line", async () => {
    const { paths, stateDir } = makeTempState("migration/truncated-last-line");
    const file = path.join(stateDir, "agents/main/sessions/s-trunc.jsonl");
    fs.writeFileSync(file, Buffer.concat([Buffer.from('{"type":"session","version":3,"id":"s-utf"}\n{"type":"message","id":"x","text":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]));
    const { run } = await migrate(paths);
    expect(run.sources[0]!.reason).toMatch(/s-trunc\.jsonl:2: invalid UTF-8/);
  });

  it("skips an empty file in the plan and leaves it in place", async () => {
    const { paths, stateDir } = makeTempState("migration/truncated-last-line");
    const file = path.join(stateDir, "agents/main/sessions/s-trunc.jsonl");
    fs.writeFileSync(file, "\n\n");
    const plan = await planMigration({ paths });
    expect(plan.sources[0]).toMatchObject({ action: "skip", reason: expect.stringMatching(/empty file/) });
    const { run } = await migrate(paths);
    expect(run).toMatchObject({ status: "completed" });
    expect(fs.existsSync(file)).toBe(true);
  });

  it("gives an orphan transcript the session agent:<id>:recovered:<sessionId> with an index row, dated by the file's mtime", async () => {
    const { paths, stateDir } = makeTempState("migration/orphan-transcript");
    const mtime = Date.UTC(2026, 4, 8, 12);
    fs.utimesSync(path.join(stateDir, "agents/main/sessions/S-Lost.jsonl"), new Date(mtime), new Date(mtime));
    const plan = await planMigration({ paths });
    expect(plan.sources.find((s) => s.sessionId === "S-Lost")!.notes.join()).toMatch(/orphan: .* it gets the session agent:main:recovered:s-lost/);
    expect(plan.sources.find((s) => s.sessionId === "s-known")!.notes.join()).not.toMatch(/orphan/);
    const { run } = await migrate(paths);
    // An orphan is always a warning (issue 23): the history may be one the operator looks for under another key.
    expect(run.status).toBe("warning");
    expect(run.sources.find((s) => s.relativePath.endsWith("s-known.jsonl"))).toMatchObject({ status: "imported", warnings: [] });
    const db = agentDbFile(paths);
    const sessions = rows(db, "SELECT session_id, session_key, session_scope, created_at, updated_at FROM sessions ORDER BY session_id");
    // The key as OpenClaw 2026.9.6's doctor recovers unregistered history: the session id as written, dated by the file's mtime.
    expect(sessions).toEqual([
      { session_id: "S-Lost", session_key: "agent:main:recovered:s-lost", session_scope: "conversation", created_at: mtime, updated_at: mtime },
      { session_id: "s-known", session_key: "agent:main:main", session_scope: "shared-main", created_at: 10, updated_at: 10 },
    ]);
    expect(rows(db, "SELECT session_key, session_id, entry_json, updated_at FROM session_entries WHERE session_id = 'S-Lost'")).toEqual([
      { session_key: "agent:main:recovered:s-lost", session_id: "S-Lost", entry_json: JSON.stringify({ sessionId: "S-Lost", updatedAt: mtime, archivedAt: mtime }), updated_at: mtime },
    ]);
    expect(rows(db, "SELECT session_key, session_id, updated_at FROM session_routes WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:recovered:s-lost", session_id: "S-Lost", updated_at: mtime }]);
    expect(run.sources.find((s) => s.relativePath.endsWith("S-Lost.jsonl"))).toMatchObject({
      status: "warning",
      rows: { sessions: 1, session_entries: 1, session_routes: 1, transcript_events: 2 },
      warnings: ["orphan transcript: no session index references session S-Lost; stored under agent:main:recovered:s-lost, as OpenClaw 2026.9.6 recovers unregistered history (an index imported later takes it over)"],
    });
  });
});

describe("a transcript without a session header (OpenClaw's readers accept it)", () => {
  it("an indexed one is imported into the indexed session as version 1, with the header 2026.9.6's doctor prepends", async () => {
    const { paths } = makeTempState("migration/transcript-headerless");
    const plan = await planMigration({ paths });
    const planned = plan.sources.find((s) => s.kind === "transcript")!;
    expect(planned).toMatchObject({ action: "import", sessionId: "s-headless" });
    expect(planned.notes.join()).toMatch(/no session header: read as version 1/);
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources.find((s) => s.kind === "transcript")).toMatchObject({ status: "imported", warnings: [], rows: { transcript_events: 5, sessions: 0 } });
    const db = agentDbFile(paths);
    const events = rows<{ seq: number; event_json: string; created_at: number }>(db, "SELECT seq, event_json, created_at FROM transcript_events WHERE session_id = 's-headless' ORDER BY seq")
      .map((r) => ({ ...r, event: JSON.parse(r.event_json) as Record<string, unknown> & { message?: Record<string, unknown> } }));
    // The header: version 3, the indexed session's id, the first entry's time; stored at seq 0 like any header.
    expect(events[0]!.event).toEqual({ type: "session", version: 3, id: "s-headless", timestamp: "2026-05-06T00:00:01.000Z", cwd: "" });
    expect(events[0]!.created_at).toBe(Date.parse("2026-05-06T00:00:01.000Z"));
    const [hello, hi, hook, compaction] = events.slice(1).map((e) => e.event);
    // v1: ids assigned, each entry's parent the one before it.
    expect([hello!.parentId, hi!.parentId, hook!.parentId, compaction!.parentId]).toEqual([null, hello!.id, hi!.id, hook!.id]);
    expect(new Set([hello!.id, hi!.id, hook!.id, compaction!.id]).size).toBe(4);
    // v1→v3: a hookMessage becomes custom/hook; firstKeptEntryIndex counts the file's lines from 0 (no header), so 1 is "hi".
    expect(hook!.message).toMatchObject({ role: "custom", customType: "hook", content: "from a hook" });
    expect(compaction).toMatchObject({ type: "compaction", firstKeptEntryId: hi!.id });
    expect(compaction).not.toHaveProperty("firstKeptEntryIndex");
    expect(rows(db, "SELECT count(*) AS n FROM transcript_event_identities WHERE session_id = 's-headless'")).toEqual([{ n: 4 }]);
    expect(rows(db, "SELECT session_key FROM sessions WHERE session_id = 's-headless'")).toEqual([{ session_key: "agent:main:main" }]);
  });

  it("the same file imports to the same rows twice (ids derive from its path and session, the header dated by its first entry)", async () => {
    const { paths, stateDir } = makeTempState("migration/transcript-headerless");
    const first = await migrate(paths);
    const db = agentDbFile(paths);
    const q = "SELECT seq, event_json, created_at FROM transcript_events ORDER BY seq";
    const before = rows(db, q);
    const beforeIdentities = rows(db, "SELECT * FROM transcript_event_identities ORDER BY seq");
    // The file back in place and unknown to the ledger: imported again over the same rows.
    const outcome = first.run.sources.find((o) => o.kind === "transcript")!;
    fs.mkdirSync(path.dirname(path.join(stateDir, outcome.relativePath)), { recursive: true });
    fs.renameSync(outcome.retiredTo!, path.join(stateDir, outcome.relativePath));
    const global = openGlobalDatabase(paths, { mode: "write" });
    global.prepare("DELETE FROM migration_sources WHERE source_path = ?").run(outcome.relativePath);
    global.close();
    const again = await migrate(paths);
    expect(again.run.sources.find((o) => o.relativePath === outcome.relativePath)).toMatchObject({ status: "imported" });
    expect(rows(db, q)).toEqual(before);
    expect(rows(db, "SELECT * FROM transcript_event_identities ORDER BY seq")).toEqual(beforeIdentities);
    // Indexed: the index entry's session; no header line, so "hello" is record 0.
    expect((JSON.parse((before[1] as { event_json: string }).event_json) as { id: string }).id).toBe(openclawV1Id(stateDir, "main", "s-headless.jsonl", "s-headless", 0));
  });
});

describe("a recovered session an index names later", () => {
  it("gives way to the index's key: one key for the session, the recovered entry and route gone", async () => {
    const { paths, stateDir } = makeTempState("migration/orphan-transcript");
    await migrate(paths);
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT session_key FROM session_routes WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:recovered:s-lost" }]);
    fs.mkdirSync(path.join(stateDir, "agents/main/sessions"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "agents/main/sessions/sessions.json"), '{ "agent:main:found": { "sessionId": "S-Lost", "updatedAt": 5 } }');
    const { run } = await migrate(paths);
    expect(run.sources.map((s) => s.status)).toEqual(["imported"]);
    // Older than the recovered row (dated by the file's mtime), and still it wins: a placeholder always gives way.
    expect(rows(db, "SELECT session_key, updated_at FROM sessions WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:found", updated_at: 5 }]);
    expect(rows(db, "SELECT session_key FROM session_routes WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:found" }]);
    expect(rows(db, "SELECT session_key FROM session_entries WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:found" }]);
    expect(rows(db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 'S-Lost'")).toEqual([{ n: 2 }]);
  });

  it("an orphan: row an earlier release wrote is still read as a placeholder, and gives way the same", async () => {
    const { paths, stateDir } = makeTempState("migration/orphan-transcript");
    await migrate(paths);
    const db = agentDbFile(paths);
    // The shape our releases before issue 24 left: a sessions row under the lower-cased orphan key, no entry, no route.
    const handle = new Database(db);
    handle.prepare("DELETE FROM session_entries WHERE session_id = 'S-Lost'").run();
    handle.prepare("DELETE FROM session_routes WHERE session_id = 'S-Lost'").run();
    handle.prepare("UPDATE sessions SET session_key = 'agent:main:orphan:s-lost', updated_at = 9999999999999 WHERE session_id = 'S-Lost'").run();
    handle.close();
    fs.mkdirSync(path.join(stateDir, "agents/main/sessions"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "agents/main/sessions/sessions.json"), '{ "agent:main:found": { "sessionId": "S-Lost", "updatedAt": 5 } }');
    await migrate(paths);
    expect(rows(db, "SELECT session_key FROM sessions WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:found" }]);
    expect(rows(db, "SELECT session_key FROM session_routes WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:found" }]);
  });
});

describe("wrong line shapes", () => {
  it("fails a transcript whose line is JSON but not an object, with path:line", async () => {
    const { paths, stateDir } = makeTempState("migration/truncated-last-line");
    fs.writeFileSync(path.join(stateDir, "agents/main/sessions/s-trunc.jsonl"), '{"type":"session","version":3,"id":"s-x"}\n[1,2,3]\n');
    const { run } = await migrate(paths);
    expect(run.sources[0]!.reason).toMatch(/s-trunc\.jsonl:2: expected a JSON object/);
  });

  it("fails a transcript with an unknown (newer) version and says so in the plan", async () => {
    const { paths, stateDir } = makeTempState("migration/truncated-last-line");
    fs.writeFileSync(path.join(stateDir, "agents/main/sessions/s-trunc.jsonl"), '{"type":"session","version":4,"id":"s-x"}\n');
    const plan = await planMigration({ paths });
    expect(plan.sources[0]!.notes.join()).toMatch(/will fail: unsupported transcript version 4/);
    const { run } = await migrate(paths);
    expect(run.sources[0]!.reason).toMatch(/s-trunc\.jsonl:1: unsupported transcript version 4/);
  });
});

describe("transcript: legacy hookMessage (fixture transcript-hook-message)", () => {
  it("v1/v2 hookMessage becomes custom with customType \"hook\" (an existing non-empty customType kept), v3 stays as written", async () => {
    const { paths } = makeTempState("migration/transcript-hook-message");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const file = agentDbFile(paths);
    const messages = (id: string): unknown[] => events(file, id).slice(1).map((e) => e.message);
    expect(messages("hook-v1")).toEqual([
      { role: "custom", content: "deploy finished", timestamp: 1, customType: "hook" },
      { role: "custom", customType: "deploy", content: "typed", timestamp: 2 },
    ]);
    expect(messages("hook-v2")).toEqual([
      { role: "custom", content: "legacy", timestamp: 1, customType: "hook" },
      { role: "custom", customType: "hook", content: "blank type", timestamp: 2 },
      { role: "user", customType: "not-a-hook", content: "untouched", timestamp: 3 },
    ]);
    // Key order as OpenClaw's in-place `customType ||= "hook"`: appended when absent, in place when blank.
    const v2Lines = rows<Event>(file, "SELECT event_json FROM transcript_events WHERE session_id = 'hook-v2' AND seq > 0 ORDER BY seq").map((e) => e.event_json);
    expect(v2Lines[0]).toContain('"message":{"role":"custom","content":"legacy","timestamp":1,"customType":"hook"}');
    expect(v2Lines[1]).toContain('"message":{"role":"custom","customType":"hook","content":"blank type","timestamp":2}');
    const v3Line = fs.readFileSync(path.join(fixturesDir, "migration/transcript-hook-message/agents/main/sessions/hook-v3.jsonl"), "utf8").trim().split("\n")[1];
    expect(rows<Event>(file, "SELECT event_json FROM transcript_events WHERE session_id = 'hook-v3' AND seq = 1")[0]!.event_json).toBe(v3Line);
  });
});

describe("v1 ids against what OpenClaw 2026.9.6's doctor wrote", () => {
  // fixtures/openclaw-2026.9.6/legacy-state-migrated is 9.6's migration of fixtures/legacy-state, run at /work/oc/t1/state.
  const migrated = path.join(fixturesDir, "openclaw-2026.9.6/legacy-state-migrated/agents/main/agent/openclaw-agent.sqlite");
  const theirs = (sessionId: string): string[] => {
    const db = new Database(migrated, { readonly: true });
    try {
      return (db.prepare("SELECT event_json FROM transcript_events WHERE session_id = ? AND seq > 0 ORDER BY seq").pluck().all(sessionId) as string[]);
    } finally {
      db.close();
    }
  };
  const ours = (relative: string, legacyRoot: boolean, sessionId: string): string[] => {
    const sourcePath = openclawTranscriptPath({ path: path.join("/work/oc/t1/state", relative), agentId: "main", legacyRoot });
    const prepared = prepareTranscript(path.join(fixturesDir, "legacy-state", relative), undefined, { sourcePath, sessionId });
    expect(prepared.error).toBeNull();
    return prepared.events.lineNo.map((_n, i) => {
      const e = preparedEvent(prepared.events, Buffer.from(prepared.bytes!), i);
      return typeof e.json === "string" ? e.json : Buffer.from(e.json).toString("utf8");
    });
  };

  it("an agent's transcript (ids, parents, firstKeptEntryId, hook message): byte for byte", () => {
    expect(ours("agents/main/sessions/s-ops.jsonl", false, "s-ops")).toEqual(theirs("s-ops"));
  });

  it("a root sessions/ transcript hashes the path 9.6 moved it to (agents/<default>/sessions/)", () => {
    expect(openclawTranscriptPath({ path: "/work/oc/t1/state/sessions/s-root-dm.jsonl", agentId: "main", legacyRoot: true })).toBe("/work/oc/t1/state/agents/main/sessions/s-root-dm.jsonl");
    expect(ours("sessions/s-root-dm.jsonl", true, "s-root-dm")).toEqual(theirs("s-root-dm"));
  });

  it("records 9.6 does not recognize keep their index slot, get no id and stay out of the parent chain", () => {
    const dir = makeTempState().stateDir;
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, "v1.jsonl");
    const lines = [
      { type: "session", id: "v1" },
      { type: "message", message: { role: "user", content: "a" } },
      { type: "note", text: "not an entry type" },
      { type: "message", message: { role: "system", content: "unknown role" } },
      { type: "compaction", summary: "s", firstKeptEntryIndex: 2, tokensBefore: 1 },
      { type: "compaction", summary: "s", firstKeptEntryIndex: 1, tokensBefore: 1 },
    ];
    fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const prepared = prepareTranscript(file, undefined, { sourcePath: "/s/v1.jsonl", sessionId: "v1" });
    const prefix = crypto.createHash("sha256").update("/s/v1.jsonl\0v1").digest("hex").slice(0, 16);
    expect(prepared.events.id).toEqual([`${prefix}-1`, null, null, `${prefix}-4`, `${prefix}-5`]);
    expect(prepared.events.parentId).toEqual([null, null, null, `${prefix}-1`, `${prefix}-4`]);
    const json = prepared.events.json.map((j, i) => JSON.parse(j ?? Buffer.from(prepared.bytes!).subarray(prepared.events.start[i], prepared.events.end[i]).toString("utf8")) as Record<string, unknown>);
    // Index 2 is an unrecognized record: the field goes, no id replaces it; index 1 resolves.
    expect(json[3]).not.toHaveProperty("firstKeptEntryId");
    expect(json[3]).not.toHaveProperty("firstKeptEntryIndex");
    expect(json[4]).toMatchObject({ firstKeptEntryId: `${prefix}-1` });
    expect(prepared.normalizerWarnings.join("\n")).toMatch(/line 3: not an entry/);
  });
});
