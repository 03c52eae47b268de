// Session-key canonicalization (SPEC §4.1): the key table, duplicates, and main-key seeding, unit and end to end.
import { describe, expect, it } from "vitest";
import { canonicalizeSessionKey, canonicalizeStore, isOrphanSessionKey, keyAgentOf, orphanSessionKey, recoveredSessionKey } from "../../src/migration/importers/session-keys.js";
import { makeTempState } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

describe("canonicalizeSessionKey", () => {
  it.each([
    ["global", "global"],
    [" UNKNOWN ", "unknown"],
    ["main", "agent:ops:main"],
    ["Main", "agent:ops:main"],
    ["work", "agent:ops:main"],
    // Another agent's key is kept (filed under that agent: keyAgentOf); agent:main:main is the store's own main.
    ["agent:main:telegram:direct:1", "agent:main:telegram:direct:1"],
    ["agent:main:main", "agent:ops:main"],
    ["agent:other:x", "agent:other:x"],
    ["Agent:Ops:Thing", "agent:ops:thing"],
    ["subagent:task-1", "agent:ops:subagent:task-1"],
    ["group:abc", "agent:ops:unknown:group:abc"],
    ["channel:News", "agent:ops:unknown:channel:news"],
    ["+1555", "agent:ops:+1555"],
    ["  spaced  ", "agent:ops:spaced"],
  ])("%j → %j (agent ops, main key work)", (raw, expected) => {
    expect(canonicalizeSessionKey(raw, "ops", "work")).toBe(expected);
  });

  it.each([
    ["agent:main:telegram:direct:1", "main"],
    ["agent:other:x", "other"],
    ["agent:ops:main", "ops"],
    ["global", "ops"],
    ["agent:bad id:x", "ops"],
    ["agent:..:x", "ops"],
    ["agent:-x:y", "ops"],
    ["agent:nocolon", "ops"],
  ])("files %j of agent ops's store under agent %j (an agent segment that is no valid id stays with the store)", (key, agent) => {
    expect(keyAgentOf(key, "ops")).toBe(agent);
  });

  it("keeps agent:main:* in the main agent's own store", () => {
    expect(canonicalizeSessionKey("agent:main:telegram:direct:1", "main")).toBe("agent:main:telegram:direct:1");
  });

  it("names an unindexed transcript's session as OpenClaw 2026.9.6 does: agent:<id>:recovered:<sessionId>, case kept", () => {
    expect(recoveredSessionKey("main", " ABC-1 ")).toBe("agent:main:recovered:abc-1");
  });

  it("still knows the orphan keys earlier releases wrote, as placeholders an index entry takes over", () => {
    expect(orphanSessionKey("main", "ABC-1")).toBe("agent:main:orphan:abc-1");
    expect(isOrphanSessionKey("agent:main:orphan:abc-1")).toBe(true);
    expect(isOrphanSessionKey("agent:ops:recovered:ABC-1")).toBe(true);
    expect(isOrphanSessionKey("agent:main:telegram:direct:orphan:1")).toBe(false);
    expect(isOrphanSessionKey("agent:main:main")).toBe(false);
  });
});

describe("canonicalizeStore", () => {
  const item = (rawKey: string, updatedAt: number, chatType?: string) => ({ rawKey, updatedAt, entry: { sessionId: rawKey, chatType } });

  it("keeps the newest of two keys that canonicalize alike", () => {
    const store = canonicalizeStore([item("group:x", 5), item("agent:main:unknown:group:x", 3)], { agentId: "main" });
    expect(store.entries.get("agent:main:unknown:group:x")!.rawKey).toBe("group:x");
    expect(store.duplicates[0]).toMatch(/kept "group:x" \(newer updatedAt\)/);
  });

  it("breaks a tie in favour of the already-canonical key, whatever the order", () => {
    for (const items of [[item("main", 7), item("agent:main:main", 7)], [item("agent:main:main", 7), item("main", 7)]]) {
      const store = canonicalizeStore(items, { agentId: "main" });
      expect(store.entries.get("agent:main:main")!.rawKey).toBe("agent:main:main");
    }
  });

  it("seeds the main key of an old root store from its newest direct legacy entry", () => {
    const store = canonicalizeStore([item("+1", 10), item("+2", 20), item("group:g", 99), item("agent:main:x", 50), item("dm-in-group", 70, "group")], { agentId: "main", seedMainKey: true });
    expect(store.seededMainFrom).toBe("+2");
    expect(store.entries.get("agent:main:main")).toMatchObject({ rawKey: "+2", seededFrom: "+2" });
    expect(store.entries.get("agent:main:+2")).toBeDefined();
  });

  it("does not seed when the main key exists in the store or elsewhere", () => {
    expect(canonicalizeStore([item("main", 1), item("+2", 20)], { agentId: "main", seedMainKey: true }).seededMainFrom).toBeNull();
    expect(canonicalizeStore([item("+2", 20)], { agentId: "main", mainKeyExists: true, seedMainKey: true }).seededMainFrom).toBeNull();
  });

  it("never seeds the main key from an agent's own store (neither 2026.6.33 nor 2026.9.6 does)", () => {
    const store = canonicalizeStore([item("+1", 10), item("+2", 20)], { agentId: "main" });
    expect(store.seededMainFrom).toBeNull();
    expect([...store.entries.keys()]).toEqual(["agent:main:+1", "agent:main:+2"]);
  });
});

describe("sessions.json import: canonical keys", () => {
  it("imports the canonical table with duplicates resolved", async () => {
    const { paths } = makeTempState("migration/canonical-keys");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const routes = rows<{ session_key: string; session_id: string }>(agentDbFile(paths), "SELECT session_key, session_id FROM session_routes ORDER BY session_key");
    expect(Object.fromEntries(routes.map((r) => [r.session_key, r.session_id]))).toEqual({
      global: "s-global",
      unknown: "s-unknown",
      "agent:main:main": "s-main",
      "agent:main:work": "s-work",
      "agent:main:subagent:task-1": "s-sub",
      "agent:main:unknown:group:abc": "s-group-old",
      "agent:main:unknown:channel:news": "s-channel",
      "agent:main:+1555": "s-direct",
      "agent:main:spaced": "s-spaced",
    });
    const sessions = rows<{ session_id: string; session_key: string; session_scope: string }>(agentDbFile(paths), "SELECT session_id, session_key, session_scope FROM sessions ORDER BY session_id");
    expect(sessions.map((s) => s.session_id)).toEqual(["s-channel", "s-direct", "s-global", "s-group-old", "s-main", "s-spaced", "s-sub", "s-unknown", "s-work"]);
    expect(sessions.find((s) => s.session_id === "s-main")!.session_scope).toBe("shared-main");
    expect(sessions.find((s) => s.session_id === "s-channel")!.session_scope).toBe("channel");
    const notes = run.sources[0]!.notes.join("\n");
    expect(notes).toMatch(/"agent:main:main" and "main" both canonicalize to agent:main:main; kept "agent:main:main" \(already canonical\)/);
  });

  it("an agent's own store without a main key gets no agent:main:main: each direct entry keeps its own key", async () => {
    const { paths } = makeTempState("migration/main-seeding");
    const { run } = await migrate(paths);
    expect(run.sources[0]!.notes.join()).not.toMatch(/seeded/);
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT session_key, session_id FROM session_routes ORDER BY session_key")).toEqual([
      { session_key: "agent:main:+1555", session_id: "s-old-dm" },
      { session_key: "agent:main:+1666", session_id: "s-new-dm" },
      { session_key: "agent:main:telegram:direct:42", session_id: "s-agent" },
      { session_key: "agent:main:unknown:group:team", session_id: "s-team" },
    ]);
    expect(rows(db, "SELECT count(*) AS n FROM session_entries WHERE session_key = 'agent:main:main'")).toEqual([{ n: 0 }]);
    expect(rows(db, "SELECT session_key, session_scope FROM sessions WHERE session_id = 's-new-dm'")).toEqual([{ session_key: "agent:main:+1666", session_scope: "conversation" }]);
  });

  it("the old root store seeds agent:main:main from its newest direct entry, as 2026.9.6 migrates that store", async () => {
    const { paths } = makeTempState("migration/main-seeding-root");
    const { run } = await migrate(paths);
    expect(run.sources.find((s) => s.relativePath === "sessions/sessions.json")!.notes.join()).toMatch(/seeded agent:main:main from the newest direct entry "\+1666"/);
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT session_key, session_id FROM session_routes ORDER BY session_key")).toEqual([
      { session_key: "agent:main:+1555", session_id: "s-old-dm" },
      { session_key: "agent:main:+1666", session_id: "s-new-dm" },
      { session_key: "agent:main:main", session_id: "s-new-dm" },
      { session_key: "agent:main:unknown:group:team", session_id: "s-team" },
    ]);
    expect(rows(db, "SELECT session_key, session_scope FROM sessions WHERE session_id = 's-new-dm'")).toEqual([{ session_key: "agent:main:main", session_scope: "shared-main" }]);
  });
});
