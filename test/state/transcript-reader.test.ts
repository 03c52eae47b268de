// Bounded cursor reads: page/reset/missing, event and byte bounds, tail reads, cursor validity across appends and rewrites.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/core/errors.js";
import { openAgentDatabase } from "../../src/state/state-databases.js";
import { readTranscriptEvents, type TranscriptPage, type TranscriptReadResult } from "../../src/state/transcript-reader.js";
import { appendTranscript, replaceTranscript, seedSessions } from "../helpers/seed-sessions.js";
import { makeTempState, snapshotTree } from "../helpers/temp-state.js";
import { asLegacyV1, insertRows, withDb } from "../helpers/transcripts.js";

const header = { type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" };
const message = (i: number, text = `message ${i}`) => ({ type: "message", id: `e${i}`, parentId: i > 1 ? `e${i - 1}` : null, message: { role: "user", content: text } });

function seeded(events = 10) {
  const state = makeTempState();
  seedSessions(state.paths, "main", [{ sessionId: "s1", key: "agent:main:main", updatedAt: 1000, events: [header, ...Array.from({ length: events - 1 }, (_, i) => message(i + 1))] }]);
  return state;
}

function page(result: TranscriptReadResult): TranscriptPage {
  expect(result.kind).toBe("page");
  return result as TranscriptPage;
}

function drain(paths: ReturnType<typeof makeTempState>["paths"], maxEvents: number, maxBytes = 1_000_000) {
  const seqs: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const p = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor, maxEvents, maxBytes }));
    pages += 1;
    expect(p.events.length).toBeLessThanOrEqual(maxEvents);
    expect(p.bytes).toBeLessThanOrEqual(maxBytes);
    seqs.push(...p.events.map((e) => e.seq));
    cursor = p.nextCursor;
    if (!p.hasMore) break;
  }
  return { seqs, pages, cursor: cursor as string };
}

describe("readTranscriptEvents", () => {
  it("returns missing without a database, without the session, and for a session with no events", () => {
    const state = makeTempState();
    expect(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s1" })).toEqual({ kind: "missing" });
    seedSessions(state.paths, "main", [{ sessionId: "empty", key: "agent:main:empty", updatedAt: 1 }]);
    expect(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "nope" })).toEqual({ kind: "missing" });
    expect(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "empty" })).toEqual({ kind: "missing" });
  });

  it("pages forward oldest first within maxEvents, each event exactly once", () => {
    const { paths } = seeded(10);
    const first = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", maxEvents: 4 }));
    expect(first.events.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(first.hasMore).toBe(true);
    expect(JSON.parse(first.events[0]!.json)).toEqual(header);
    const all = drain(paths, 4);
    expect(all.seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(all.pages).toBe(3);
    // At the end the cursor stays put: an empty page, nothing more.
    const after = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor: all.cursor }));
    expect(after.events).toEqual([]);
    expect(after.hasMore).toBe(false);
    expect(after.nextCursor).toBe(all.cursor);
  });

  it("stops a page at maxBytes and counts UTF-8 bytes of the stored line", () => {
    const state = makeTempState();
    const events = [header, message(1, "é".repeat(100)), message(2, "a".repeat(100)), message(3, "b".repeat(100))];
    seedSessions(state.paths, "main", [{ sessionId: "s1", key: "k", updatedAt: 1, events }]);
    const sizes = events.map((e) => Buffer.byteLength(JSON.stringify(e)));
    const p = page(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s1", maxBytes: sizes[0]! + sizes[1]! + 5 }));
    expect(p.events.map((e) => e.seq)).toEqual([0, 1]);
    expect(p.events.map((e) => e.bytes)).toEqual([sizes[0], sizes[1]]);
    expect(p.bytes).toBe(sizes[0]! + sizes[1]!);
    expect(p.hasMore).toBe(true);
    const all = drain(state.paths, 100, Math.max(...sizes));
    expect(all.seqs).toEqual([0, 1, 2, 3]);
  });

  it("returns an empty page with requiredBytes when the next event alone is too large", () => {
    const state = makeTempState();
    seedSessions(state.paths, "main", [{ sessionId: "s1", key: "k", updatedAt: 1, events: [header, message(1, "x".repeat(5000))] }]);
    const first = page(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s1", maxBytes: 1000 }));
    expect(first.events.map((e) => e.seq)).toEqual([0]);
    const stuck = page(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s1", cursor: first.nextCursor, maxBytes: 1000 }));
    expect(stuck.events).toEqual([]);
    expect(stuck.hasMore).toBe(true);
    expect(stuck.requiredBytes).toBe(Buffer.byteLength(JSON.stringify(message(1, "x".repeat(5000)))));
    expect(stuck.nextCursor).toBe(first.nextCursor);
    const retried = page(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s1", cursor: first.nextCursor, maxBytes: stuck.requiredBytes! }));
    expect(retried.events.map((e) => e.seq)).toEqual([1]);
  });

  it("keeps a cursor valid across appends and returns only the new events", () => {
    const { paths } = seeded(5);
    const all = drain(paths, 100);
    appendTranscript(paths, "main", "s1", [message(5), message(6)]);
    const next = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor: all.cursor }));
    expect(next.events.map((e) => e.seq)).toEqual([5, 6]);
  });

  it("reads the last events backwards when from is end, oldest first, with a cursor that follows appends", () => {
    const { paths } = seeded(10);
    const tail = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", from: "end", maxEvents: 3 }));
    expect(tail.events.map((e) => e.seq)).toEqual([7, 8, 9]);
    expect(tail.hasEarlier).toBe(true);
    expect(tail.hasMore).toBe(false);
    const whole = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", from: "end", maxEvents: 50 }));
    expect(whole.events).toHaveLength(10);
    expect(whole.hasEarlier).toBe(false);
    const oneEvent = Buffer.byteLength(JSON.stringify(message(9)));
    const byBytes = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", from: "end", maxEvents: 50, maxBytes: oneEvent * 2 + 1 }));
    expect(byBytes.events.map((e) => e.seq)).toEqual([8, 9]);
    appendTranscript(paths, "main", "s1", [message(10)]);
    const follow = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor: tail.nextCursor }));
    expect(follow.events.map((e) => e.seq)).toEqual([10]);
  });

  it("resets with invalid_cursor for garbage or tampered cursors, and the fresh cursor drains from the start", () => {
    const { paths } = seeded(4);
    for (const bad of ["garbage", "otc1.!!!", "otc1." + Buffer.from('{"v":1}').toString("base64url")]) {
      const r = readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor: bad });
      expect(r).toMatchObject({ kind: "reset", reason: "invalid_cursor" });
      if (r.kind !== "reset") throw new Error("unreachable");
      expect(page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor: r.cursor })).events.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    }
  });

  it("resets with scope_mismatch for another session's or agent's cursor", () => {
    const state = makeTempState();
    const events = [header, message(1)];
    seedSessions(state.paths, "main", [
      { sessionId: "s1", key: "a", updatedAt: 1, events },
      { sessionId: "s2", key: "b", updatedAt: 1, events },
    ]);
    seedSessions(state.paths, "work", [{ sessionId: "s1", key: "a", updatedAt: 1, events }]);
    const cursor = page(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s1", maxEvents: 1 })).nextCursor;
    expect(readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s2", cursor })).toMatchObject({ kind: "reset", reason: "scope_mismatch" });
    expect(readTranscriptEvents({ paths: state.paths, agentId: "work", sessionId: "s1", cursor })).toMatchObject({ kind: "reset", reason: "scope_mismatch" });
  });

  it("resets with generation_mismatch when the transcript was replaced", () => {
    const { paths } = seeded(5);
    const cursor = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", maxEvents: 2 })).nextCursor;
    replaceTranscript(paths, "main", "s1", [{ ...header, timestamp: "2026-02-02T00:00:00.000Z" }, message(1), message(2), message(3)]);
    expect(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor })).toMatchObject({ kind: "reset", reason: "generation_mismatch" });
  });

  it("with the generation counter, any change to a stored row is a generation_mismatch, even an in-place edit", () => {
    const { paths } = seeded(6);
    const cursor = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", maxEvents: 5 })).nextCursor;
    withDb(paths, "main", (db) => db.handle.prepare("UPDATE transcript_events SET event_json = ? WHERE session_id = 's1' AND seq = 2").run(JSON.stringify(message(2, "edited"))));
    expect(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor })).toMatchObject({ kind: "reset", reason: "generation_mismatch" });
  });

  it("on an older v1 file (no counter), resets with anchor_missing when shortened or its anchor rewritten, anchor_moved when it moved", () => {
    const { paths } = seeded(6);
    const rewrite = (events: Array<Record<string, unknown>>) =>
      asLegacyV1(paths, "main", (h) => {
        h.prepare("DELETE FROM transcript_events WHERE session_id = 's1'").run();
        insertRows(h, "s1", events, 0);
      });
    rewrite([header, message(1), message(2), message(3), message(4), message(5)]);
    const cursor = page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", maxEvents: 5 })).nextCursor;
    rewrite([header, message(1), message(2)]);
    expect(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor })).toMatchObject({ kind: "reset", reason: "anchor_missing" });
    rewrite([header, message(1), message(2), message(3), message(4, "edited"), message(5)]);
    expect(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor })).toMatchObject({ kind: "reset", reason: "anchor_missing" });
    // The anchor (entry e4 at seq 4) now sits at seq 5 behind an inserted entry.
    rewrite([header, message(1), message(2), message(3), message(9), message(4), message(5)]);
    expect(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor })).toMatchObject({ kind: "reset", reason: "anchor_moved" });
    // The same content at the same place is the same anchor: a rewrite that changed nothing keeps the cursor.
    rewrite([header, message(1), message(2), message(3), message(4), message(5)]);
    expect(page(readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", cursor })).events.map((e) => e.seq)).toEqual([5]);
  });

  it("rejects limits outside 1..cap", () => {
    const { paths } = seeded(2);
    for (const bad of [{ maxEvents: 0 }, { maxEvents: 10_001 }, { maxBytes: 0 }, { maxBytes: 64 * 1024 * 1024 + 1 }, { maxEvents: 1.5 }]) {
      expect(() => readTranscriptEvents({ paths, agentId: "main", sessionId: "s1", ...bad })).toThrow(UsageError);
    }
  });

  it("reuses an open database and never creates or modifies a file", () => {
    const state = seeded(8);
    const before = snapshotTree(state.stateDir);
    drain(state.paths, 3);
    readTranscriptEvents({ paths: state.paths, agentId: "main", sessionId: "s1", from: "end", maxEvents: 2 });
    readTranscriptEvents({ paths: state.paths, agentId: "other", sessionId: "s1" });
    const db = openAgentDatabase(state.paths, "main", { mode: "read" });
    try {
      expect(page(readTranscriptEvents({ db, agentId: "main", sessionId: "s1", maxEvents: 2 })).events).toHaveLength(2);
    } finally {
      db.close();
    }
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });
});
