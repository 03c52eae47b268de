// The visible message cursor contract, case by case, on transcripts written through the real schema (events + identities).
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/core/errors.js";
import {
  readSessionTranscriptVisibleMessageDelta as readDelta,
  type VisibleMessageDeltaParams,
  type VisibleMessageDeltaResult,
  type VisibleMessagePage,
} from "../../src/runtime/visible-delta.js";
import { readVisibleSessionTranscriptMessageEntries } from "../../src/runtime/transcript-reads.js";
import { makeTempState, snapshotTree, type TempState } from "../helpers/temp-state.js";
import { append, asLegacyV1, chain, createSession, entry, insertRows, msg, replace, withDb } from "../helpers/transcripts.js";

const KEY = "agent:main:main";
const SID = "s1";

function setup(entries: Array<Record<string, unknown>> = chain("m", 6, null)): TempState {
  const state = makeTempState();
  createSession(state.paths, "main", SID, KEY);
  if (entries.length > 0) append(state.paths, "main", SID, entries);
  return state;
}

function params(state: TempState, extra: Partial<VisibleMessageDeltaParams> = {}): VisibleMessageDeltaParams {
  return { stateDir: state.stateDir, agentId: "main", sessionKey: KEY, sessionId: SID, ...extra };
}

function page(r: VisibleMessageDeltaResult): VisibleMessagePage {
  if (r.kind !== "page") throw new Error(`expected a page, got ${JSON.stringify(r)}`);
  return r;
}

async function drain(state: TempState, extra: Partial<VisibleMessageDeltaParams> = {}) {
  const ids: string[] = [];
  const ordinals: number[] = [];
  let cursor = extra.cursor;
  let pages = 0;
  for (;;) {
    const p = page(await readDelta(params(state, { ...extra, cursor })));
    pages += 1;
    ids.push(...p.entries.map((e) => e.entryId));
    ordinals.push(...p.entries.map((e) => e.seq));
    cursor = p.cursor;
    if (!p.hasMore) return { ids, ordinals, cursor: cursor as string, pages };
  }
}

describe("readSessionTranscriptVisibleMessageDelta", () => {
  it("is missing without a database (creating nothing), for another key, and for a session without rows", async () => {
    const state = makeTempState();
    expect(await readDelta(params(state))).toEqual({ kind: "missing" });
    expect(fs.existsSync(state.stateDir)).toBe(false);
    setup();
    expect(await readDelta(params(state, { sessionKey: "agent:main:other" }))).toEqual({ kind: "missing" });
    expect(await readDelta(params(state, { sessionId: "nope" }))).toEqual({ kind: "missing" });
    withDb(state.paths, "main", (db) => db.handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES ('empty', ?, 'conversation', 1, 1)").run(KEY));
    expect(await readDelta(params(state, { sessionId: "empty" }))).toEqual({ kind: "missing" });
  });

  it("drains active-path messages oldest first with ordinals, parent ids and idempotency keys, skipping other entries", async () => {
    const state = setup([
      msg("m1", null, "user", "hi"),
      entry("model_change", "c1", "m1", { provider: "anthropic", modelId: "x" }),
      { ...msg("m2", "c1", "assistant", [{ type: "text", text: "hello" }]), idempotencyKey: "run-1:a" },
      entry("compaction", "k1", "m2", { summary: "s", firstKeptEntryId: "m2" }),
      msg("m3", "k1", "user", "again"),
    ]);
    const p = page(await readDelta(params(state)));
    expect(p.entries.map((e) => [e.entryId, e.parentId, e.seq, e.role])).toEqual([
      ["m1", null, 1, "user"],
      ["m2", "c1", 2, "assistant"],
      ["m3", "k1", 3, "user"],
    ]);
    expect(p.entries[1]).toMatchObject({ idempotencyKey: "run-1:a", message: { role: "assistant", content: [{ type: "text", text: "hello" }] }, createdAt: "2026-01-01T00:00:01.000Z" });
    expect(p.hasMore).toBe(false);
    expect(p.bytes).toBeGreaterThan(0);
    expect(await readVisibleSessionTranscriptMessageEntries(params(state))).toEqual(p.entries);
  });

  it("keeps the cursor across appends (compaction rows included): the next read returns only the new messages", async () => {
    const state = setup(chain("m", 4, null));
    const first = await drain(state);
    expect(first.ids).toEqual(["m1", "m2", "m3", "m4"]);
    const empty = page(await readDelta(params(state, { cursor: first.cursor })));
    expect(empty.entries).toEqual([]);
    expect(empty.hasMore).toBe(false);
    append(state.paths, "main", SID, [entry("compaction", "k1", "m4", { summary: "s" }), msg("m5", "k1", "user"), msg("m6", "m5", "assistant")]);
    const next = page(await readDelta(params(state, { cursor: empty.cursor })));
    expect(next.entries.map((e) => [e.entryId, e.seq])).toEqual([
      ["m5", 5],
      ["m6", 6],
    ]);
    append(state.paths, "main", SID, chain("n", 3, "m6"));
    const again = await drain(state, { cursor: next.cursor, maxMessages: 2 });
    expect(again.ids).toEqual(["n1", "n2", "n3"]);
    expect(again.ordinals).toEqual([7, 8, 9]);
  });

  it("pages by maxMessages and maxBytes; validates limits against the caps", async () => {
    const state = setup(chain("m", 7, null));
    const all = await drain(state, { maxMessages: 3 });
    expect(all.ids).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(all.pages).toBe(3);
    const one = page(await readDelta(params(state, { maxMessages: 3 })));
    expect(one.entries).toHaveLength(3);
    expect(one.hasMore).toBe(true);
    const sizes = one.entries.map((e) => Buffer.byteLength(JSON.stringify(msg(e.entryId, e.parentId, e.role))));
    const byBytes = page(await readDelta(params(state, { maxBytes: sizes[0]! + sizes[1]! + 1 })));
    expect(byBytes.entries.map((e) => e.entryId)).toEqual(["m1", "m2"]);
    expect(byBytes.bytes).toBe(sizes[0]! + sizes[1]!);
    expect(byBytes.hasMore).toBe(true);
    for (const bad of [{ maxMessages: 0 }, { maxMessages: 10_001 }, { maxBytes: 0 }, { maxBytes: 64 * 1024 * 1024 + 1 }, { maxMessages: 2.5 }]) {
      await expect(readDelta(params(state, bad))).rejects.toThrow(UsageError);
    }
    expect(page(await readDelta(params(state, { maxMessages: 10_000, maxBytes: 64 * 1024 * 1024 }))).entries).toHaveLength(7);
  });

  it("returns an empty page with requiredBytes when the next message alone exceeds maxBytes; a retry with that size reads it", async () => {
    const big = msg("m2", "m1", "assistant", "x".repeat(5000));
    const state = setup([msg("m1", null, "user"), big, msg("m3", "m2", "user")]);
    const first = page(await readDelta(params(state, { maxBytes: 1000 })));
    expect(first.entries.map((e) => e.entryId)).toEqual(["m1"]);
    expect(first.hasMore).toBe(true);
    expect(first.requiredBytes).toBeUndefined();
    const stuck = page(await readDelta(params(state, { cursor: first.cursor, maxBytes: 1000 })));
    expect(stuck.entries).toEqual([]);
    expect(stuck.hasMore).toBe(true);
    expect(stuck.requiredBytes).toBe(Buffer.byteLength(JSON.stringify(big)));
    const retry = page(await readDelta(params(state, { cursor: stuck.cursor, maxBytes: stuck.requiredBytes! })));
    expect(retry.entries.map((e) => e.entryId)).toEqual(["m2"]);
    expect(page(await readDelta(params(state, { cursor: retry.cursor }))).entries.map((e) => e.entryId)).toEqual(["m3"]);
  });

  it("invalid_cursor for malformed or altered cursors; the fresh cursor follows start", async () => {
    const state = setup([entry("session_reset", "r1", null, { mode: "clear" }), msg("m1", "r1", "user")]);
    const good = page(await readDelta(params(state, { maxMessages: 1 }))).cursor;
    const altered = good.slice(0, 8) + (good[8] === "A" ? "B" : "A") + good.slice(9);
    for (const bad of ["", "garbage", altered, good.slice(0, -1), "otc2.e30.abc"]) {
      const r = await readDelta(params(state, { cursor: bad, start: "reset-window" }));
      expect(r).toMatchObject({ kind: "reset", reason: "invalid_cursor" });
      if (r.kind !== "reset") throw new Error("unreachable");
      // A reset-window fresh cursor is bound to the window: an unchanged transcript drains from it.
      expect((await drain(state, { cursor: r.cursor, start: "reset-window" })).ids).toEqual(["m1"]);
    }
  });

  it("scope_mismatch for a cursor of another session or agent", async () => {
    const state = setup();
    createSession(state.paths, "main", "s2", "agent:main:two");
    append(state.paths, "main", "s2", chain("x", 2, null));
    createSession(state.paths, "work", SID, KEY);
    append(state.paths, "work", SID, chain("m", 6, null));
    const cursor = page(await readDelta(params(state, { maxMessages: 2 }))).cursor;
    const other = await readDelta(params(state, { sessionKey: "agent:main:two", sessionId: "s2", cursor }));
    expect(other).toMatchObject({ kind: "reset", reason: "scope_mismatch" });
    if (other.kind !== "reset") throw new Error("unreachable");
    expect((await drain(state, { sessionKey: "agent:main:two", sessionId: "s2", cursor: other.cursor })).ids).toEqual(["x1", "x2"]);
    expect(await readDelta(params(state, { agentId: "work", cursor }))).toMatchObject({ kind: "reset", reason: "scope_mismatch" });
  });

  it("generation_mismatch when the transcript was replaced or a stored row edited", async () => {
    const state = setup(chain("m", 4, null));
    const cursor = page(await readDelta(params(state, { maxMessages: 2 }))).cursor;
    replace(state.paths, "main", SID, chain("m", 4, null));
    const r = await readDelta(params(state, { cursor }));
    expect(r).toMatchObject({ kind: "reset", reason: "generation_mismatch" });
    if (r.kind !== "reset") throw new Error("unreachable");
    const fresh = (await drain(state, { cursor: r.cursor })).cursor;
    withDb(state.paths, "main", (db) => db.handle.prepare("UPDATE transcript_events SET event_json = json_set(event_json, '$.message.content', 'edited') WHERE session_id = ? AND seq = 2").run(SID));
    expect(await readDelta(params(state, { cursor: fresh }))).toMatchObject({ kind: "reset", reason: "generation_mismatch" });
  });

  it("anchor_missing when a branch change or a rewrite takes the anchor off the active path; supersedesEntryId maps the copies", async () => {
    const state = setup(chain("m", 4, null));
    const cursor = page(await readDelta(params(state, { maxMessages: 3 }))).cursor; // anchor m3
    // A rewrite (say, a tool-result truncation) copies the active suffix from m3 under new ids.
    append(state.paths, "main", SID, [
      { ...msg("m3b", "m2", "assistant", "truncated"), supersedesEntryId: "m3" },
      { ...msg("m4b", "m3b", "user"), supersedesEntryId: "m4" },
    ]);
    const r = await readDelta(params(state, { cursor }));
    expect(r).toMatchObject({ kind: "reset", reason: "anchor_missing" });
    if (r.kind !== "reset") throw new Error("unreachable");
    const p = page(await readDelta(params(state, { cursor: r.cursor })));
    expect(p.entries.map((e) => [e.entryId, e.seq, e.supersedesEntryId ?? null])).toEqual([
      ["m1", 1, null],
      ["m2", 2, null],
      ["m3b", 3, "m3"],
      ["m4b", 4, "m4"],
    ]);
  });

  it("a branch after the anchor keeps the cursor: only the new branch's messages follow", async () => {
    const state = setup(chain("m", 3, null));
    const { cursor } = await drain(state); // anchor m3
    append(state.paths, "main", SID, [msg("m4", "m3", "assistant"), msg("m5", "m4", "user"), msg("m4x", "m3", "assistant", "retry"), msg("m5x", "m4x", "user")]);
    const p = page(await readDelta(params(state, { cursor })));
    expect(p.entries.map((e) => [e.entryId, e.seq])).toEqual([
      ["m4x", 4],
      ["m5x", 5],
    ]);
  });

  it("anchor_moved on an older v1 file (no generation counter) when the anchor entry sits at another position", async () => {
    const state = setup(chain("m", 4, null));
    asLegacyV1(state.paths, "main");
    const cursor = page(await readDelta(params(state, { maxMessages: 3 }))).cursor; // anchor m3 at seq 3
    asLegacyV1(state.paths, "main", (h) => {
      h.prepare("DELETE FROM transcript_events WHERE session_id = ? AND seq > 0").run(SID);
      insertRows(h, SID, [msg("m1", null, "user"), msg("m2", "m1", "assistant"), msg("m9", "m2", "user"), msg("m3", "m9", "user"), msg("m4", "m3", "assistant")], 1);
    });
    expect(await readDelta(params(state, { cursor }))).toMatchObject({ kind: "reset", reason: "anchor_moved" });
    asLegacyV1(state.paths, "main", (h) => {
      h.prepare("DELETE FROM transcript_events WHERE session_id = ? AND seq > 0").run(SID);
      insertRows(h, SID, chain("z", 4, null), 1);
    });
    expect(await readDelta(params(state, { cursor }))).toMatchObject({ kind: "reset", reason: "anchor_missing" });
  });

  it("transcript cursors continue through reset rows; reset-window cursors report session_reset with a cursor for the new window", async () => {
    const state = setup(chain("m", 2, null));
    const plain = (await drain(state)).cursor;
    const windowed = (await drain(state, { start: "reset-window" })).cursor;
    append(state.paths, "main", SID, [entry("session_reset", "r1", "m2", { mode: "clear" }), msg("m3", "r1", "user")]);
    expect(page(await readDelta(params(state, { cursor: plain }))).entries.map((e) => e.entryId)).toEqual(["m3"]);
    const r = await readDelta(params(state, { cursor: windowed, start: "reset-window" }));
    expect(r).toMatchObject({ kind: "reset", reason: "session_reset" });
    if (r.kind !== "reset") throw new Error("unreachable");
    const next = await drain(state, { cursor: r.cursor, start: "reset-window" });
    expect(next.ids).toEqual(["m3"]);
    expect(next.ordinals).toEqual([3]);
    // The window stays reset-aware after draining.
    append(state.paths, "main", SID, [msg("m4", "m3", "assistant"), entry("session_reset", "r2", "m4", { mode: "clear" })]);
    expect(await readDelta(params(state, { cursor: next.cursor, start: "reset-window" }))).toMatchObject({ kind: "reset", reason: "session_reset" });
  });

  it("reset-window: a preserve-tail reset returns the retained tail first (user/assistant + paired tool results), then what follows", async () => {
    const state = setup([
      msg("u1", null, "user", "old question"),
      msg("a1", "u1", "assistant", "old answer"),
      msg("u2", "a1", "user", "keep me"),
      msg("a2", "u2", "assistant", [{ type: "text", text: "calling" }, { type: "toolCall", id: "call-1", name: "read" }]),
      msg("t1", "a2", "toolResult", "result", { toolCallId: "call-1" }),
      msg("t9", "t1", "toolResult", "orphan result", { toolCallId: "call-9" }),
      msg("c1", "t9", "custom", "hook"),
      entry("session_reset", "r1", "c1", { mode: "preserve-tail", firstKeptEntryId: "u2" }),
      msg("u3", "r1", "user", "after"),
    ]);
    const w = await drain(state, { start: "reset-window", maxMessages: 2 });
    expect(w.ids).toEqual(["u2", "a2", "t1", "u3"]);
    expect(w.ordinals).toEqual([3, 4, 5, 8]);
    const t = await drain(state, { start: "transcript" });
    expect(t.ids).toEqual(["u1", "a1", "u2", "a2", "t1", "t9", "c1", "u3"]);
  });

  it("reset-window: a clear reset returns only later messages; without a reset it matches transcript", async () => {
    const none = setup(chain("m", 3, null));
    expect((await drain(none, { start: "reset-window" })).ids).toEqual(["m1", "m2", "m3"]);
    const state = setup([...chain("m", 3, null), entry("session_reset", "r1", "m3", { mode: "clear" }), msg("m4", "r1", "user"), entry("label", "l1", "m4", { label: "x" }), msg("m5", "l1", "assistant")]);
    const w = await drain(state, { start: "reset-window" });
    expect(w.ids).toEqual(["m4", "m5"]);
    expect(w.ordinals).toEqual([4, 5]);
  });

  it("reports one reason in the documented precedence", async () => {
    const state = setup(chain("m", 3, null));
    const windowed = page(await readDelta(params(state, { start: "reset-window", maxMessages: 1 }))).cursor;
    // generation change + anchor gone + newer reset: session_reset wins for a reset-window cursor…
    replace(state.paths, "main", SID, [msg("z1", null, "user"), entry("session_reset", "r1", "z1", { mode: "clear" })]);
    expect(await readDelta(params(state, { cursor: windowed, start: "reset-window" }))).toMatchObject({ reason: "session_reset" });
    // …while the same change is a generation_mismatch for a transcript cursor (not anchor_missing).
    const state2 = setup(chain("m", 3, null));
    const plain = page(await readDelta(params(state2, { maxMessages: 1 }))).cursor;
    replace(state2.paths, "main", SID, [msg("z1", null, "user")]);
    expect(await readDelta(params(state2, { cursor: plain }))).toMatchObject({ reason: "generation_mismatch" });
    // scope beats session_reset; invalid beats scope.
    createSession(state.paths, "main", "s2", "agent:main:two");
    append(state.paths, "main", "s2", [entry("session_reset", "r9", null, { mode: "clear" })]);
    expect(await readDelta(params(state, { sessionKey: "agent:main:two", sessionId: "s2", cursor: windowed }))).toMatchObject({ reason: "scope_mismatch" });
    expect(await readDelta(params(state, { cursor: `${windowed}x` }))).toMatchObject({ reason: "invalid_cursor" });
    // Same reset id after a rewrite: not a session reset, a generation mismatch.
    const state3 = setup([...chain("m", 2, null), entry("session_reset", "r1", "m2", { mode: "clear" }), msg("m3", "r1", "user")]);
    const w3 = (await drain(state3, { start: "reset-window" })).cursor;
    replace(state3.paths, "main", SID, [...chain("m", 2, null), entry("session_reset", "r1", "m2", { mode: "clear" }), msg("m3", "r1", "user", "edited")]);
    expect(await readDelta(params(state3, { cursor: w3, start: "reset-window" }))).toMatchObject({ reason: "generation_mismatch" });
  });

  it("unavailable while the newest entry has no identity row yet; the kept cursor then resumes", async () => {
    const state = setup(chain("m", 2, null));
    const { cursor } = await drain(state);
    withDb(state.paths, "main", (db) => db.handle.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, 3, ?, 1)").run(SID, JSON.stringify(msg("m3", "m2", "user"))));
    expect(await readDelta(params(state, { cursor }))).toEqual({ kind: "unavailable", reason: "projection_rebuilding" });
    withDb(state.paths, "main", (db) =>
      db.handle.prepare("INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, has_parent, parent_id, created_at) VALUES (?, 'm3', 3, 'message', 1, 'm2', 1)").run(SID),
    );
    expect(page(await readDelta(params(state, { cursor }))).entries.map((e) => e.entryId)).toEqual(["m3"]);
  });

  it("drains a branched transcript along the active path only, across many runs and small pages", async () => {
    // 40 abandoned side branches: the active path is split into 41 runs (more than a cursor carries).
    const entries: Array<Record<string, unknown>> = [];
    let parent: string | null = null;
    const expected: string[] = [];
    for (let i = 0; i < 40; i += 1) {
      entries.push(msg(`side${i}`, parent, "assistant", "abandoned"));
      entries.push(msg(`main${i}`, parent, "user"));
      expected.push(`main${i}`);
      parent = `main${i}`;
    }
    const state = setup(entries);
    const d = await drain(state, { maxMessages: 3 });
    expect(d.ids).toEqual(expected);
    expect(d.ordinals).toEqual(expected.map((_, i) => i + 1));
    append(state.paths, "main", SID, [msg("tail1", parent, "assistant")]);
    expect(page(await readDelta(params(state, { cursor: d.cursor }))).entries.map((e) => [e.entryId, e.seq])).toEqual([["tail1", 41]]);
  });

  it("never creates or modifies a file in the state dir", async () => {
    const state = setup();
    const before = snapshotTree(state.stateDir);
    await drain(state, { maxMessages: 2 });
    await drain(state, { start: "reset-window" });
    await readDelta(params(state, { agentId: "nobody" }));
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });
});
