// Catalog pages (newest first, text-only, bounded items, continuation) and the raw delta / event reads through the runtime API.
import { describe, expect, it } from "vitest";
import {
  CATALOG_SCAN_ENTRIES,
  readSessionTranscriptCatalogPage,
  readSessionTranscriptEvents,
  readSessionTranscriptRawDelta,
  type RawDeltaResult,
} from "../../src/runtime/index.js";
import { makeTempState } from "../helpers/temp-state.js";
import { append, chain, createSession, entry, msg, replace } from "../helpers/transcripts.js";

const KEY = "agent:main:main";

function setup(entries: Array<Record<string, unknown>>) {
  const state = makeTempState();
  createSession(state.paths, "main", "s1", KEY);
  append(state.paths, "main", "s1", entries);
  return { state, base: { stateDir: state.stateDir, agentId: "main", sessionKey: KEY } };
}

describe("readSessionTranscriptCatalogPage", () => {
  it("lists nonempty user/assistant text newest first, omitting tools, reasoning, control lines and other branches", async () => {
    const { base } = setup([
      msg("u1", null, "user", "first question"),
      msg("a1", "u1", "assistant", [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "first answer" }, { type: "toolCall", id: "c1", name: "read" }]),
      msg("t1", "a1", "toolResult", "tool output", { toolCallId: "c1" }),
      msg("a2", "t1", "assistant", "NO_REPLY"),
      msg("x1", "a2", "user", "abandoned branch"),
      msg("u2", "a2", "user", "second\nHEARTBEAT_OK\nline"),
      msg("c1", "u2", "custom", "hook text"),
    ]);
    const page = await readSessionTranscriptCatalogPage(base);
    expect(page.items.map((i) => [i.entryId, i.role, i.text, i.truncated])).toEqual([
      ["u2", "user", "second\nline", false],
      ["a1", "assistant", "first answer", false],
      ["u1", "user", "first question", false],
    ]);
    expect(page.nextCursor).toBeUndefined();
  });

  it("bounds each item with truncated (never splitting a surrogate pair) and continues with nextCursor toward older items", async () => {
    const { state, base } = setup([...chain("m", 5, null), msg("e1", "m5", "user", `${"a".repeat(9)}😀tail`)]);
    const p1 = await readSessionTranscriptCatalogPage({ ...base, limit: 2, maxItemChars: 10 });
    expect(p1.items.map((i) => i.entryId)).toEqual(["e1", "m5"]);
    expect(p1.items[0]).toMatchObject({ text: "a".repeat(9), truncated: true });
    const p2 = await readSessionTranscriptCatalogPage({ ...base, limit: 2, cursor: p1.nextCursor });
    expect(p2.items.map((i) => i.entryId)).toEqual(["m4", "m3"]);
    // Appends do not disturb a continuation: new items show up on the next first page.
    append(state.paths, "main", "s1", [msg("n1", "e1", "assistant", "new")]);
    const p3 = await readSessionTranscriptCatalogPage({ ...base, limit: 2, cursor: p2.nextCursor });
    expect(p3.items.map((i) => i.entryId)).toEqual(["m2", "m1"]);
    expect(p3.nextCursor).toBeUndefined();
    expect((await readSessionTranscriptCatalogPage({ ...base, limit: 1 })).items[0]!.entryId).toBe("n1");
  });

  it("rejects malformed cursors and cursors of a rewritten transcript with a reload message", async () => {
    const { state, base } = setup(chain("m", 4, null));
    await expect(readSessionTranscriptCatalogPage({ ...base, cursor: "nope" })).rejects.toThrow(/reload the catalog/);
    const p1 = await readSessionTranscriptCatalogPage({ ...base, limit: 1 });
    replace(state.paths, "main", "s1", chain("m", 4, null));
    await expect(readSessionTranscriptCatalogPage({ ...base, cursor: p1.nextCursor })).rejects.toThrow(/rewritten.*reload the catalog/);
  });

  it("scans at most 1,000 source entries per page: a page of omitted activity is empty but continues", async () => {
    const tools: Array<Record<string, unknown>> = [msg("u0", null, "user", "start")];
    for (let i = 1; i <= CATALOG_SCAN_ENTRIES + 5; i += 1) tools.push(entry("custom", `k${i}`, i === 1 ? "u0" : `k${i - 1}`, { data: i }));
    const { base } = setup(tools);
    const p1 = await readSessionTranscriptCatalogPage(base);
    expect(p1.items).toEqual([]);
    expect(p1.nextCursor).toBeDefined();
    const p2 = await readSessionTranscriptCatalogPage({ ...base, cursor: p1.nextCursor });
    expect(p2.items.map((i) => i.entryId)).toEqual(["u0"]);
  });

  it("returns no items for a missing session", async () => {
    const state = makeTempState();
    expect(await readSessionTranscriptCatalogPage({ stateDir: state.stateDir, agentId: "main", sessionKey: KEY })).toEqual({ items: [] });
  });
});

describe("raw delta and event reads", () => {
  it("pages every stored row (header and reset rows included) with cursor; appends keep it; missing for another key", async () => {
    const { state, base } = setup([msg("m1", null, "user"), entry("session_reset", "r1", "m1", { mode: "clear" })]);
    const ident = { ...base, sessionId: "s1" };
    const first = (await readSessionTranscriptRawDelta({ ...ident, maxEvents: 2 })) as Extract<RawDeltaResult, { kind: "page" }>;
    expect(first.kind).toBe("page");
    expect(first.events.map((e) => e.seq)).toEqual([0, 1]);
    expect(first.hasMore).toBe(true);
    append(state.paths, "main", "s1", [msg("m2", "r1", "user")]);
    const next = (await readSessionTranscriptRawDelta({ ...ident, cursor: first.cursor })) as Extract<RawDeltaResult, { kind: "page" }>;
    expect(next.events.map((e) => JSON.parse(e.json).id)).toEqual(["r1", "m2"]);
    expect(await readSessionTranscriptRawDelta({ ...ident, sessionKey: "agent:main:other" })).toEqual({ kind: "missing" });
    replace(state.paths, "main", "s1", [msg("m1", null, "user")]);
    expect(await readSessionTranscriptRawDelta({ ...ident, cursor: next.cursor })).toMatchObject({ kind: "reset", reason: "generation_mismatch" });
  });

  it("readSessionTranscriptEvents: a complete read, or the newest N within a byte budget", async () => {
    const { base } = setup(chain("m", 5, null));
    const ident = { ...base, sessionId: "s1" };
    const all = await readSessionTranscriptEvents(ident);
    expect(all?.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(all?.events[1]?.event).toMatchObject({ id: "m1" });
    const last = await readSessionTranscriptEvents({ ...ident, last: 2 });
    expect(last).toMatchObject({ hasEarlier: true });
    expect(last?.events.map((e) => e.seq)).toEqual([4, 5]);
    expect(await readSessionTranscriptEvents({ ...ident, sessionId: "nope" })).toBeUndefined();
  });
});
