// Session rows by identity: entry by key and by id (exact, trimmed legacy, updatedAt order), listing, updatedAt, conversation binding.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/core/errors.js";
import {
  getConversationSessionAsync,
  getSessionEntryAsync,
  getSessionEntryByIdAsync,
  listSessionEntries,
  readSessionUpdatedAtAsync,
} from "../../src/runtime/index.js";
import { seedRoute, seedSessions } from "../helpers/seed-sessions.js";
import { makeTempState, snapshotTree } from "../helpers/temp-state.js";
import { withDb } from "../helpers/transcripts.js";

function seeded() {
  const state = makeTempState();
  seedSessions(state.paths, "main", [
    { sessionId: "s-main", key: "agent:main:main", updatedAt: 300, entry: { sessionId: "stale", updatedAt: 1, thinkingLevel: "high", sessionFile: "/old/path.jsonl" }, conversation: { channel: "telegram", kind: "direct", accountId: "default", peerId: "+1555" } },
    { sessionId: "s-b", key: "agent:main:b", updatedAt: 100 },
    { sessionId: "s-a", key: "agent:main:a", updatedAt: 200, conversation: { channel: "discord", kind: "group", peerId: "g1", threadId: "t1" } },
  ]);
  return state;
}

describe("session entry helpers", () => {
  it("getSessionEntryAsync returns the public projection (row ids and time, no file-era pointers) or undefined", async () => {
    const state = seeded();
    const base = { stateDir: state.stateDir, agentId: "main" };
    expect(await getSessionEntryAsync({ ...base, sessionKey: "agent:main:main" })).toEqual({ sessionId: "s-main", updatedAt: 300, thinkingLevel: "high" });
    expect(await getSessionEntryAsync({ ...base, sessionKey: "agent:main:none" })).toBeUndefined();
    expect(await getSessionEntryAsync({ ...base, agentId: "work", sessionKey: "agent:work:main" })).toBeUndefined();
    await expect(getSessionEntryAsync({ ...base, sessionKey: "" })).rejects.toThrow(UsageError);
    await expect(getSessionEntryAsync({ ...base, stateDir: "", sessionKey: "agent:main:main" })).rejects.toThrow(/stateDir is empty/);
    await expect(getSessionEntryAsync({ ...base, agentId: "../x", sessionKey: "k" })).rejects.toThrow();
  });

  it("getSessionEntryByIdAsync: first exact match in key order, trimmed legacy ids only without one, or the newest with orderBy updatedAt", async () => {
    const state = seeded();
    const base = { stateDir: state.stateDir, agentId: "main" };
    // Two keys for one session id, and a legacy id stored with spaces.
    seedRoute(state.paths, "main", "agent:main:alias", "s-a", 5);
    withDb(state.paths, "main", (db) => {
      db.handle.prepare("INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES ('agent:main:alias', 's-a', '{}', 50)").run();
      db.handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (' s-x ', 'agent:main:legacy', 'conversation', 1, 900)").run();
      db.handle.prepare("INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES ('agent:main:legacy', ' s-x ', '{}', 900)").run();
      db.handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES ('s-x', 'agent:main:exact', 'conversation', 1, 10)").run();
      db.handle.prepare("INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES ('agent:main:exact', 's-x', '{}', 10)").run();
    });
    expect(await getSessionEntryByIdAsync({ ...base, sessionId: "s-a" })).toMatchObject({ sessionKey: "agent:main:a", entry: { sessionId: "s-a", updatedAt: 200 } });
    expect(await getSessionEntryByIdAsync({ ...base, sessionId: "s-a", orderBy: "updatedAt" })).toMatchObject({ sessionKey: "agent:main:a" });
    expect(await getSessionEntryByIdAsync({ ...base, sessionId: "s-x" })).toMatchObject({ sessionKey: "agent:main:exact" });
    expect(await getSessionEntryByIdAsync({ ...base, sessionId: "s-x", orderBy: "updatedAt" })).toMatchObject({ sessionKey: "agent:main:legacy", entry: { sessionId: " s-x " } });
    withDb(state.paths, "main", (db) => db.handle.prepare("DELETE FROM sessions WHERE session_id = 's-x'").run());
    expect(await getSessionEntryByIdAsync({ ...base, sessionId: "s-x" })).toMatchObject({ sessionKey: "agent:main:legacy" });
    expect(await getSessionEntryByIdAsync({ ...base, sessionId: "nope" })).toBeUndefined();
  });

  it("listSessionEntries streams every entry in key order (across chunks) and stops cleanly when the caller breaks", () => {
    const state = makeTempState();
    seedSessions(state.paths, "main", Array.from({ length: 600 }, (_, i) => ({ sessionId: `s${i}`, key: `agent:main:k${String(i).padStart(4, "0")}`, updatedAt: i })));
    const keys = [...listSessionEntries({ stateDir: state.stateDir, agentId: "main" })].map((m) => m.sessionKey);
    expect(keys).toHaveLength(600);
    expect(keys).toEqual([...keys].sort());
    let n = 0;
    for (const m of listSessionEntries({ stateDir: state.stateDir, agentId: "main" })) {
      expect(m.entry.sessionId).toBe(`s${Number(m.sessionKey.slice(-4))}`);
      if (++n === 3) break;
    }
    expect([...listSessionEntries({ stateDir: state.stateDir, agentId: "nobody" })]).toEqual([]);
  });

  it("readSessionUpdatedAtAsync reads the entry's time, else the routed session's", async () => {
    const state = seeded();
    const base = { stateDir: state.stateDir, agentId: "main" };
    expect(await readSessionUpdatedAtAsync({ ...base, sessionKey: "agent:main:b" })).toBe(100);
    seedSessions(state.paths, "main", [{ sessionId: "s-c", key: "agent:main:c", updatedAt: 77, entry: null }]);
    expect(await readSessionUpdatedAtAsync({ ...base, sessionKey: "agent:main:c" })).toBe(77);
    expect(await readSessionUpdatedAtAsync({ ...base, sessionKey: "agent:main:zz" })).toBeUndefined();
  });

  it("getConversationSessionAsync finds the address's session by natural identity, exact thread, and follows a reset", async () => {
    const state = seeded();
    const base = { stateDir: state.stateDir, agentId: "main" };
    expect(await getConversationSessionAsync({ ...base, channel: "Telegram", accountId: "default", kind: "direct", peerId: "+1555" })).toEqual({ sessionKey: "agent:main:main", sessionId: "s-main" });
    expect(await getConversationSessionAsync({ ...base, channel: "telegram", kind: "direct", peerId: "+1555" })).toBeUndefined();
    expect(await getConversationSessionAsync({ ...base, channel: "discord", kind: "group", peerId: "g1", threadId: "t1" })).toEqual({ sessionKey: "agent:main:a", sessionId: "s-a" });
    // No parent address is inferred: the thread-less conversation does not exist.
    expect(await getConversationSessionAsync({ ...base, channel: "discord", kind: "group", peerId: "g1" })).toBeUndefined();
    // A reset gives the key a new session; the binding follows the key's route.
    seedSessions(state.paths, "main", [{ sessionId: "s-main-2", key: "agent:main:main", updatedAt: 400 }]);
    expect(await getConversationSessionAsync({ ...base, channel: "telegram", accountId: "default", kind: "direct", peerId: "+1555" })).toEqual({ sessionKey: "agent:main:main", sessionId: "s-main-2" });
    await expect(getConversationSessionAsync({ ...base, channel: "x", kind: "dm" as never, peerId: "p" })).rejects.toThrow(UsageError);
  });

  it("never creates a missing database or directory, and leaves an existing one byte for byte", async () => {
    const empty = makeTempState();
    expect(await getSessionEntryAsync({ stateDir: empty.stateDir, agentId: "main", sessionKey: "k" })).toBeUndefined();
    expect(fs.existsSync(empty.stateDir)).toBe(false);
    const state = seeded();
    const before = snapshotTree(state.stateDir);
    await getSessionEntryByIdAsync({ stateDir: state.stateDir, agentId: "main", sessionId: "s-a", orderBy: "updatedAt" });
    [...listSessionEntries({ stateDir: state.stateDir, agentId: "main" })];
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("uses OPENCLAW_STATE_DIR from env when stateDir is omitted", async () => {
    const state = seeded();
    expect(await getSessionEntryAsync({ env: state.env, agentId: "main", sessionKey: "agent:main:b" })).toMatchObject({ sessionId: "s-b" });
  });
});
