// sessions show core: lookup by key/id/agent-relative key, unknown keys, bounded last events, conversations, export.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NotFoundError, OpenclawStateError, UsageError } from "../../src/core/errors.js";
import { showSession } from "../../src/sessions/show-session.js";
import { exportTranscript } from "../../src/sessions/export-transcript.js";
import { seedRoute, seedSessions } from "../helpers/seed-sessions.js";
import { makeTempDir, makeTempState, modeOf, snapshotTree } from "../helpers/temp-state.js";

const header = { type: "session", version: 3, id: "s-main", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/home/demo" };
const msg = (i: number, role = "user", content: unknown = `line ${i}`) => ({ type: "message", id: `e${i}`, parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role, content } });

function seeded() {
  const state = makeTempState();
  seedSessions(state.paths, "main", [
    { sessionId: "s-old", key: "agent:main:main", updatedAt: 1, scope: "shared-main" },
    {
      sessionId: "s-main",
      key: "agent:main:main",
      scope: "shared-main",
      chatType: "direct",
      channel: "telegram",
      model: "claude-sonnet-4",
      modelProvider: "anthropic",
      updatedAt: 100,
      entry: { sessionId: "s-main", updatedAt: 100, totalTokens: 1200, contextTokens: 200000, thinkingLevel: "low", deliveryContext: { channel: "telegram", to: "+1555" } },
      conversation: { channel: "telegram", kind: "direct", peerId: "+1555", accountId: "default" },
      events: [header, ...Array.from({ length: 30 }, (_, i) => msg(i + 1, i % 2 ? "assistant" : "user"))],
    },
    { sessionId: "s-ops", key: "agent:main:unknown:group:ops", chatType: "group", scope: "group", updatedAt: 50 },
  ]);
  seedRoute(state.paths, "main", "agent:main:legacy-alias", "s-main");
  return state;
}

describe("showSession", () => {
  it("finds a session by key, by id, and by agent-relative key", () => {
    const { paths } = seeded();
    expect(showSession({ paths, ref: "agent:main:main" })).toMatchObject({ matchedBy: "key", session: { sessionId: "s-main" } });
    expect(showSession({ paths, ref: "s-ops" })).toMatchObject({ matchedBy: "session-id", session: { key: "agent:main:unknown:group:ops", kind: "group" } });
    expect(showSession({ paths, ref: "main" })).toMatchObject({ matchedBy: "agent-relative-key", session: { sessionId: "s-main" } });
    expect(showSession({ paths, ref: "s-old" })).toMatchObject({ matchedBy: "session-id", session: { route: "superseded" } });
  });

  it("returns the row, routes, other sessions of the key, conversations, entry and transcript stats", () => {
    const { paths } = seeded();
    const r = showSession({ paths, ref: "agent:main:main", events: 0 });
    expect(r.session).toMatchObject({ kind: "direct", model: "claude-sonnet-4", totalTokens: 1200, contextTokens: 200000, primaryConversationId: "conv-s-main" });
    expect(r.routes.map((x) => x.key)).toEqual(["agent:main:legacy-alias", "agent:main:main"]);
    expect(r.otherSessionsForKey).toEqual({ count: 1, sessions: [{ sessionId: "s-old", updatedAt: 1 }] });
    expect(r.conversations).toEqual([expect.objectContaining({ role: "primary", channel: "telegram", kind: "direct", peerId: "+1555", accountId: "default" })]);
    expect(r.entry).toMatchObject({ thinkingLevel: "low", deliveryContext: { to: "+1555" } });
    expect(r.transcript).toMatchObject({ eventCount: 31, firstSeq: 0, lastSeq: 30 });
    expect(r.transcript.bytes).toBeGreaterThan(31 * 50);
    expect(r.events).toEqual({ requested: 0, maxBytes: 1_000_000, items: [], hasEarlier: true });
  });

  it("returns the last N events oldest first, bounded by events and bytes", () => {
    const { paths } = seeded();
    const r = showSession({ paths, ref: "s-main", events: 5 });
    expect(r.events.items.map((e) => e.seq)).toEqual([26, 27, 28, 29, 30]);
    expect(r.events.items[4]!.event).toMatchObject({ type: "message", message: { content: "line 30" } });
    expect(r.events.hasEarlier).toBe(true);
    const one = r.events.items[4]!.bytes;
    const bounded = showSession({ paths, ref: "s-main", events: 20, maxBytes: one * 3 + 2 });
    expect(bounded.events.items.map((e) => e.seq)).toEqual([28, 29, 30]);
    const tooSmall = showSession({ paths, ref: "s-main", events: 20, maxBytes: 10 });
    expect(tooSmall.events.items).toEqual([]);
    expect(tooSmall.events.requiredBytes).toBe(one);
  });

  it("throws NotFoundError for an unknown key and for an agent without a database", () => {
    const { paths } = seeded();
    expect(() => showSession({ paths, ref: "agent:main:nope" })).toThrow(NotFoundError);
    expect(() => showSession({ paths, ref: "agent:main:nope" })).toThrow(/No session "agent:main:nope" in agent main .*sessions list --agent main/);
    expect(() => showSession({ paths, ref: "s-main", agentId: "work" })).toThrow(/No session database for agent work/);
    expect(() => showSession({ paths, ref: "  " })).toThrow(UsageError);
    expect(() => showSession({ paths, ref: "s-main", events: -1 })).toThrow(UsageError);
  });

  it("never creates or modifies a file in the state dir", () => {
    const state = seeded();
    const before = snapshotTree(state.stateDir);
    showSession({ paths: state.paths, ref: "main", events: 10 });
    expect(() => showSession({ paths: state.paths, ref: "missing" })).toThrow(NotFoundError);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });
});

describe("transcript export", () => {
  it("writes every event as JSONL to a new 0600 file, page by page, and leaves no temp file", () => {
    const state = seeded();
    const out = path.join(makeTempDir(), "t.jsonl");
    const r = showSession({ paths: state.paths, ref: "main", events: 1, exportPath: out });
    const lines = fs.readFileSync(out, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(31);
    expect(JSON.parse(lines[0]!)).toEqual(header);
    expect(JSON.parse(lines[30]!)).toMatchObject({ id: "e30" });
    expect(r.export).toEqual({ path: out, events: 31, bytes: fs.statSync(out).size });
    expect(modeOf(out)).toBe(0o600);
    expect(fs.readdirSync(path.dirname(out))).toEqual(["t.jsonl"]);
  });

  it("handles events larger than a page and an empty transcript", () => {
    const state = makeTempState();
    const big = msg(1, "user", "x".repeat(9 * 1024 * 1024));
    seedSessions(state.paths, "main", [
      { sessionId: "big", key: "k-big", updatedAt: 1, events: [header, big, msg(2)] },
      { sessionId: "empty", key: "k-empty", updatedAt: 1 },
    ]);
    const dir = makeTempDir();
    const r = exportTranscript({ paths: state.paths, agentId: "main", sessionId: "big", file: path.join(dir, "big.jsonl") });
    expect(r.events).toBe(3);
    expect(fs.statSync(path.join(dir, "big.jsonl")).size).toBe(r.bytes);
    expect(exportTranscript({ paths: state.paths, agentId: "main", sessionId: "empty", file: path.join(dir, "empty.jsonl") })).toMatchObject({ events: 0, bytes: 0 });
    expect(fs.readFileSync(path.join(dir, "empty.jsonl"), "utf8")).toBe("");
  });

  it("refuses an existing file or a missing directory before reading anything", () => {
    const state = seeded();
    const dir = makeTempDir();
    const existing = path.join(dir, "there.jsonl");
    fs.writeFileSync(existing, "keep me");
    expect(() => showSession({ paths: state.paths, ref: "main", exportPath: existing })).toThrow(/already exists; choose another --export path/);
    expect(fs.readFileSync(existing, "utf8")).toBe("keep me");
    fs.symlinkSync(path.join(dir, "nowhere"), path.join(dir, "dangling"));
    expect(() => showSession({ paths: state.paths, ref: "main", exportPath: path.join(dir, "dangling") })).toThrow(OpenclawStateError);
    expect(() => showSession({ paths: state.paths, ref: "main", exportPath: path.join(dir, "no", "such", "x.jsonl") })).toThrow(/does not exist/);
    expect(fs.readdirSync(dir).sort()).toEqual(["dangling", "there.jsonl"]);
  });
});
