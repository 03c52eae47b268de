// inspect reports per-agent session counts, transcript volume and the oldest/newest session, read-only.
import { describe, expect, it } from "vitest";
import { inspectState } from "../../src/inspect/inspect-state.js";
import { seedSessions } from "../helpers/seed-sessions.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

describe("inspect session summary", () => {
  it("adds sessions, transcript events/bytes and oldest/newest to each agent database", async () => {
    const state = makeTempState();
    const events = [{ type: "session", id: "a" }, { type: "message", message: { role: "user", content: "héllo" } }];
    seedSessions(state.paths, "main", [
      { sessionId: "a", key: "agent:main:a", updatedAt: 1_767_225_600_000, events },
      { sessionId: "b", key: "agent:main:b", updatedAt: 1_767_312_000_000 },
      { sessionId: "c", key: "agent:main:c", updatedAt: 1_767_268_800_000, events: [{ type: "session", id: "c" }] },
    ]);
    seedSessions(state.paths, "empty", []);
    const before = snapshotTree(state.stateDir);
    const result = inspectState({ paths: state.paths });
    const main = result.databases.find((d) => d.agentId === "main");
    const bytes = [...events, { type: "session", id: "c" }].reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
    expect(main?.sessions).toEqual({
      sessionCount: 3,
      transcriptEvents: 3,
      transcriptBytes: bytes,
      oldest: { key: "agent:main:a", sessionId: "a", updatedAt: 1_767_225_600_000 },
      newest: { key: "agent:main:b", sessionId: "b", updatedAt: 1_767_312_000_000 },
    });
    expect(result.databases.find((d) => d.agentId === "empty")?.sessions).toEqual({ sessionCount: 0, transcriptEvents: 0, transcriptBytes: 0, oldest: null, newest: null });
    expect(result.databases.find((d) => d.role === "global")?.sessions).toBeUndefined();

    const human = await runInProcess(["inspect"], state.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`  sessions 3, transcripts 3 event(s) / ${bytes} B`);
    expect(human.stdout).toContain("  newest session agent:main:b at 2026-01-02T00:00:00Z");
    expect(human.stdout).toContain("  oldest session agent:main:a at 2026-01-01T00:00:00Z");
    const json = JSON.parse((await runInProcess(["inspect", "--json"], state.env)).stdout);
    expect(json.databases.find((d: { agentId?: string }) => d.agentId === "main").sessions.sessionCount).toBe(3);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });
});
