// Session-key canonicalization (SPEC §4.1): the key table, duplicates, and main-key seeding, unit and end to end.
import { describe, expect, it } from "vitest";
import { canonicalizeSessionKey, canonicalizeStore, orphanSessionKey } from "../../src/migration/importers/session-keys.js";
import { makeTempState } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

describe("canonicalizeSessionKey", () => {
  it.each([
    ["global", "global"],
    [" UNKNOWN ", "unknown"],
    ["main", "agent:ops:main"],
    ["Main", "agent:ops:main"],
    ["work", "agent:ops:main"],
    // agent:main:* in another agent's store is that agent's own (the runtime never reads it across agents).
    ["agent:main:telegram:direct:1", "agent:ops:telegram:direct:1"],
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

  it("keeps agent:main:* in the main agent's own store", () => {
    expect(canonicalizeSessionKey("agent:main:telegram:direct:1", "main")).toBe("agent:main:telegram:direct:1");
  });

  it("names orphans agent:<id>:orphan:<sessionId>", () => {
    expect(orphanSessionKey("main", "ABC-1")).toBe("agent:main:orphan:abc-1");
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

  it("seeds the main key from the newest direct legacy root entry", () => {
    const store = canonicalizeStore([item("+1", 10), item("+2", 20), item("group:g", 99), item("agent:main:x", 50), item("dm-in-group", 70, "group")], { agentId: "main" });
    expect(store.seededMainFrom).toBe("+2");
    expect(store.entries.get("agent:main:main")).toMatchObject({ rawKey: "+2", seededFrom: "+2" });
    expect(store.entries.get("agent:main:+2")).toBeDefined();
  });

  it("does not seed when the main key exists in the store or elsewhere", () => {
    expect(canonicalizeStore([item("main", 1), item("+2", 20)], { agentId: "main" }).seededMainFrom).toBeNull();
    expect(canonicalizeStore([item("+2", 20)], { agentId: "main", mainKeyExists: true }).seededMainFrom).toBeNull();
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

  it("seeds agent:main:main from the newest direct entry, and the session row belongs to the main key", async () => {
    const { paths } = makeTempState("migration/main-seeding");
    await migrate(paths);
    const routes = rows<{ session_key: string; session_id: string }>(agentDbFile(paths), "SELECT session_key, session_id FROM session_routes ORDER BY session_key");
    expect(routes).toEqual([
      { session_key: "agent:main:+1555", session_id: "s-old-dm" },
      { session_key: "agent:main:+1666", session_id: "s-new-dm" },
      { session_key: "agent:main:main", session_id: "s-new-dm" },
      { session_key: "agent:main:telegram:direct:42", session_id: "s-agent" },
      { session_key: "agent:main:unknown:group:team", session_id: "s-team" },
    ]);
    const [row] = rows<{ session_key: string; session_scope: string }>(agentDbFile(paths), "SELECT session_key, session_scope FROM sessions WHERE session_id = 's-new-dm'");
    expect(row).toEqual({ session_key: "agent:main:main", session_scope: "shared-main" });
  });
});
