// sessions list core: order, limit/active/agent/all-agents combinations, typed-over-entry fields, routes, read-only.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/core/errors.js";
import { listSessions, openSessionList } from "../../src/sessions/list-sessions.js";
import { seedRoute, seedSessions, type SeedSession } from "../helpers/seed-sessions.js";
import { makeTempState, snapshotTree } from "../helpers/temp-state.js";

const NOW = 1_800_000_000_000;
const min = (n: number) => NOW - n * 60_000;

function mainSessions(): SeedSession[] {
  return [
    { sessionId: "m1", key: "agent:main:main", scope: "shared-main", updatedAt: min(1) },
    { sessionId: "m2", key: "agent:main:telegram:group:ops", chatType: "group", scope: "group", updatedAt: min(30) },
    { sessionId: "m3", key: "agent:main:b", updatedAt: min(90) },
    { sessionId: "m4", key: "agent:main:a", updatedAt: min(90) },
    { sessionId: "m5", key: "agent:main:old", updatedAt: min(60 * 24 * 3) },
  ];
}

function twoAgents() {
  const state = makeTempState();
  seedSessions(state.paths, "main", mainSessions());
  seedSessions(state.paths, "work", [
    { sessionId: "w1", key: "agent:work:main", scope: "shared-main", updatedAt: min(5) },
    { sessionId: "w2", key: "agent:work:a", updatedAt: min(90) },
  ]);
  return state;
}

const ids = (r: { sessions: Array<{ sessionId: string }> }) => r.sessions.map((s) => s.sessionId);

describe("listSessions", () => {
  it("lists the main agent newest first, ties by key then id", () => {
    const { paths } = twoAgents();
    const r = listSessions({ paths, now: NOW });
    expect(ids(r)).toEqual(["m1", "m2", "m4", "m3", "m5"]);
    expect(r).toMatchObject({ count: 5, totalCount: 5, hasMore: false, limit: 100, activeMinutes: null });
    expect(r.stores).toEqual([{ agentId: "main", path: expect.stringMatching(/agents\/main\/agent\/openclaw-agent\.sqlite$/), exists: true, totalCount: 5 }]);
  });

  it("applies --limit, reporting the total and hasMore", () => {
    const { paths } = twoAgents();
    const r = listSessions({ paths, limit: 2, now: NOW });
    expect(ids(r)).toEqual(["m1", "m2"]);
    expect(r).toMatchObject({ count: 2, totalCount: 5, hasMore: true, limit: 2 });
    expect(ids(listSessions({ paths, limit: "all", now: NOW }))).toHaveLength(5);
  });

  it("applies --active to rows and totals, combined with --limit", () => {
    const { paths } = twoAgents();
    const r = listSessions({ paths, activeMinutes: 60, now: NOW });
    expect(ids(r)).toEqual(["m1", "m2"]);
    expect(r).toMatchObject({ count: 2, totalCount: 2, activeMinutes: 60 });
    const limited = listSessions({ paths, activeMinutes: 120, limit: 3, now: NOW });
    expect(ids(limited)).toEqual(["m1", "m2", "m4"]);
    expect(limited).toMatchObject({ count: 3, totalCount: 4, hasMore: true });
  });

  it("selects another agent with --agent (normalized) and rejects unsafe ids", () => {
    const { paths } = twoAgents();
    expect(ids(listSessions({ paths, agentId: " WORK ", now: NOW }))).toEqual(["w1", "w2"]);
    expect(() => listSessions({ paths, agentId: "../etc" })).toThrow(UsageError);
  });

  it("merges every agent with --all-agents, newest first, with limit and active applied across them", () => {
    const { paths } = twoAgents();
    const all = listSessions({ paths, allAgents: true, now: NOW });
    expect(all.sessions.map((s) => `${s.agentId}/${s.sessionId}`)).toEqual(["main/m1", "work/w1", "main/m2", "main/m4", "main/m3", "work/w2", "main/m5"]);
    expect(all.stores.map((s) => [s.agentId, s.totalCount])).toEqual([["main", 5], ["work", 2]]);
    expect(all).toMatchObject({ count: 7, totalCount: 7 });
    const page = listSessions({ paths, allAgents: true, limit: 3, activeMinutes: 100, now: NOW });
    expect(page.sessions.map((s) => s.sessionId)).toEqual(["m1", "w1", "m2"]);
    expect(page).toMatchObject({ count: 3, totalCount: 6, hasMore: true });
    expect(() => listSessions({ paths, allAgents: true, agentId: "main" })).toThrow(UsageError);
  });

  it("reports a missing store as empty instead of creating it", () => {
    const state = makeTempState();
    const before = snapshotTree(state.root);
    const r = listSessions({ paths: state.paths, agentId: "ghost" });
    expect(r).toMatchObject({ count: 0, totalCount: 0, sessions: [] });
    expect(r.stores[0]).toMatchObject({ agentId: "ghost", exists: false });
    expect(listSessions({ paths: state.paths, allAgents: true }).stores).toEqual([]);
    expect(snapshotTree(state.root)).toEqual(before);
  });

  it("takes typed columns over entry_json, tokens from entry_json, and flags from both", () => {
    const state = makeTempState();
    seedSessions(state.paths, "main", [
      {
        sessionId: "s1",
        key: "agent:main:main",
        scope: "shared-main",
        updatedAt: 10,
        model: "typed-model",
        displayName: "Typed name",
        status: "running",
        entry: {
          sessionId: "s1",
          updatedAt: 10,
          model: "entry-model",
          modelProvider: "anthropic",
          displayName: "Entry name",
          label: "my label",
          chatType: "group",
          totalTokens: 1200,
          contextTokens: 200000,
          inputTokens: 700,
          outputTokens: 500,
          thinkingLevel: "high",
          systemSent: true,
          abortedLastRun: false,
          channel: "telegram",
        },
      },
      { sessionId: "s2", key: "agent:main:bare", updatedAt: 5, entry: { sessionId: "s2", totalTokens: "many", contextTokens: -1 } },
      { sessionId: "s3", key: "agent:main:noentry", updatedAt: 4, entry: null, route: false },
    ]);
    const [s1, s2, s3] = listSessions({ paths: state.paths }).sessions;
    expect(s1).toEqual({
      agentId: "main",
      key: "agent:main:main",
      sessionId: "s1",
      updatedAt: 10,
      createdAt: 10,
      kind: "direct",
      scope: "shared-main",
      status: "running",
      chatType: "group",
      channel: "telegram",
      accountId: null,
      model: "typed-model",
      modelProvider: "anthropic",
      totalTokens: 1200,
      contextTokens: 200000,
      inputTokens: 700,
      outputTokens: 500,
      displayName: "Typed name",
      label: "my label",
      thinkingLevel: "high",
      spawnedBy: null,
      parentSessionKey: null,
      route: "current",
      flags: ["running", "think:high", "system"],
    });
    expect(s2).toMatchObject({ totalTokens: null, contextTokens: null, model: null, kind: "unknown", route: "current", flags: [] });
    expect(s3).toMatchObject({ totalTokens: null, route: "unrouted", flags: ["unrouted"] });
  });

  it("lists a reset key's old session as superseded, once per session even with alias routes", () => {
    const state = makeTempState();
    seedSessions(state.paths, "main", [
      { sessionId: "old", key: "agent:main:main", updatedAt: 1 },
      { sessionId: "new", key: "agent:main:main", updatedAt: 2 },
    ]);
    seedRoute(state.paths, "main", "agent:main:alias", "new");
    const r = listSessions({ paths: state.paths });
    expect(r.sessions.map((s) => [s.sessionId, s.route])).toEqual([
      ["new", "current"],
      ["old", "superseded"],
    ]);
    expect(r.sessions[1]!.flags).toContain("superseded");
  });

  it("streams rows from one snapshot and closes cleanly when abandoned midway", () => {
    const state = makeTempState();
    seedSessions(state.paths, "main", Array.from({ length: 50 }, (_, i) => ({ sessionId: `s${i}`, key: `k${i}`, updatedAt: i })));
    const before = snapshotTree(state.stateDir);
    const list = openSessionList({ paths: state.paths, limit: "all" });
    let seen = 0;
    for (const row of list.rows()) {
      expect(row.sessionId).toBe(`s${49 - seen}`);
      if (++seen === 10) break;
    }
    list.close();
    expect(seen).toBe(10);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("rejects a bad limit or active window", () => {
    const { paths } = twoAgents();
    expect(() => listSessions({ paths, limit: 0 })).toThrow(UsageError);
    expect(() => listSessions({ paths, activeMinutes: -5 })).toThrow(UsageError);
  });
});
