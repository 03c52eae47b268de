// Session kind comes from typed columns (and the cron run history), never from the key's segments.
import { describe, expect, it } from "vitest";
import { deriveSessionKind, type SessionKindInput } from "../../src/sessions/session-kind.js";
import { listSessions } from "../../src/sessions/list-sessions.js";
import { seedCronRun, seedSessions } from "../helpers/seed-sessions.js";
import { makeTempState } from "../helpers/temp-state.js";

const base: SessionKindInput = {
  sessionKey: "agent:main:x",
  sessionScope: "conversation",
  chatType: null,
  spawnedBy: null,
  parentSessionKey: null,
  conversationKind: null,
  cronRun: false,
};

describe("deriveSessionKind", () => {
  it.each<[Partial<SessionKindInput>, string]>([
    [{}, "unknown"],
    [{ sessionKey: "global", sessionScope: "shared-main" }, "global"],
    [{ spawnedBy: "agent:main:main" }, "spawn-child"],
    [{ parentSessionKey: "agent:main:main", chatType: "group" }, "spawn-child"],
    [{ spawnedBy: "  " }, "unknown"],
    [{ cronRun: true }, "cron"],
    [{ cronRun: true, spawnedBy: "agent:main:main" }, "spawn-child"],
    [{ chatType: "direct" }, "direct"],
    [{ chatType: "group" }, "group"],
    [{ chatType: "channel" }, "channel"],
    [{ sessionScope: "group" }, "group"],
    [{ sessionScope: "channel" }, "channel"],
    [{ sessionScope: "shared-main" }, "direct"],
    [{ chatType: "direct", sessionScope: "group" }, "direct"],
    [{ conversationKind: "channel" }, "channel"],
    [{ chatType: "bogus", conversationKind: "direct" }, "direct"],
  ])("%j → %s", (input, kind) => {
    expect(deriveSessionKind({ ...base, ...input })).toBe(kind);
  });

  it("ignores what the key looks like", () => {
    expect(deriveSessionKind({ ...base, sessionKey: "agent:main:telegram:group:123" })).toBe("unknown");
    expect(deriveSessionKind({ ...base, sessionKey: "agent:main:cron:job-1" })).toBe("unknown");
    expect(deriveSessionKind({ ...base, sessionKey: "agent:main:subagent:abc" })).toBe("unknown");
    expect(deriveSessionKind({ ...base, sessionKey: "cron:job-1", chatType: "direct" })).toBe("direct");
  });

  it("derives kinds from the rows of a real agent DB and the global cron history", () => {
    const state = makeTempState();
    seedSessions(state.paths, "main", [
      { sessionId: "d", key: "agent:main:main", scope: "shared-main", updatedAt: 9 },
      { sessionId: "g", key: "agent:main:unknown:group:ops", chatType: "group", scope: "group", updatedAt: 8 },
      { sessionId: "c", key: "agent:main:discord:channel:1", chatType: "channel", scope: "channel", updatedAt: 7 },
      { sessionId: "gl", key: "global", scope: "shared-main", updatedAt: 6 },
      { sessionId: "cr", key: "agent:main:cron:job-1", updatedAt: 5 },
      { sessionId: "cr-key-only", key: "agent:main:cron:job-2", updatedAt: 4 },
      { sessionId: "sp", key: "agent:main:subagent:abc", spawnedBy: "agent:main:main", updatedAt: 3 },
      { sessionId: "cv", key: "agent:main:whatsapp:+1555", updatedAt: 2, conversation: { channel: "whatsapp", kind: "direct", peerId: "+1555" } },
      { sessionId: "u", key: "agent:main:group:looks-like-a-group", updatedAt: 1 },
    ]);
    seedCronRun(state.paths, "cr", "agent:main:cron:job-1");
    const kinds = Object.fromEntries(listSessions({ paths: state.paths }).sessions.map((s) => [s.sessionId, s.kind]));
    expect(kinds).toEqual({
      d: "direct",
      g: "group",
      c: "channel",
      gl: "global",
      cr: "cron",
      "cr-key-only": "unknown",
      sp: "spawn-child",
      cv: "direct",
      u: "unknown",
    });
  });
});
