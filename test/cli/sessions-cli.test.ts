// `sessions list|show` through the CLI: human table, JSON shape, usage errors, unknown keys, export, read-only runs.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentDbPath } from "../../src/state/paths.js";
import { seedCronRun, seedSessions } from "../helpers/seed-sessions.js";
import { makeTempDir, makeTempState, modeOf, runBin, runInProcess, snapshotTree } from "../helpers/temp-state.js";

const NOW = Date.now();

function seeded() {
  const state = makeTempState("legacy-state");
  seedSessions(state.paths, "main", [
    {
      sessionId: "s-main",
      key: "agent:main:main",
      scope: "shared-main",
      chatType: "direct",
      model: "claude-sonnet-4",
      modelProvider: "anthropic",
      updatedAt: NOW - 5 * 60_000,
      entry: { sessionId: "s-main", totalTokens: 1200, contextTokens: 200000, thinkingLevel: "high" },
      events: [
        { type: "session", version: 3, id: "s-main", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/home/demo" },
        { type: "message", id: "e1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "hello" } },
        { type: "message", id: "e2", parentId: "e1", timestamp: "2026-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "text", text: "Hi! How can I help?" }] } },
      ],
    },
    { sessionId: "s-ops", key: "agent:main:unknown:group:ops", chatType: "group", scope: "group", updatedAt: NOW - 3 * 3600_000, entry: { sessionId: "s-ops" } },
    { sessionId: "s-cron", key: "agent:main:cron:nightly", updatedAt: NOW - 3 * 86_400_000, entry: { sessionId: "s-cron", contextTokens: 128000 } },
  ]);
  seedSessions(state.paths, "work", [{ sessionId: "w1", key: "agent:work:main", scope: "shared-main", updatedAt: NOW - 60_000 }]);
  seedCronRun(state.paths, "s-cron", "agent:main:cron:nightly");
  return state;
}

describe("sessions list (CLI)", () => {
  it("prints the store path, the counts, the one agent and a table of its keys without their agent prefix", async () => {
    const { env, paths } = seeded();
    const r = await runInProcess(["sessions", "list"], env);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`Session store: ${agentDbPath(paths, "main")}`);
    expect(lines[1]).toBe("Sessions listed: 3 of 3");
    expect(lines[2]).toBe('Keys without "agent:main:" (`sessions show <key>` takes them as shown)');
    expect(lines[2]!.length).toBeLessThanOrEqual(80);
    expect(lines[3]).toMatch(/^Kind\s+Key\s+Age\s+Model\s+Tokens \(ctx %\)\s+Flags$/);
    expect(lines[4]).toMatch(/^direct\s+main\s+5m ago\s+claude-sonnet-4\s+1\.2k\/200k \(1%\)\s+think:high$/);
    expect(lines[5]).toMatch(/^group\s+unknown:group:ops\s+3h ago\s+-\s+unknown$/);
    expect(lines[6]).toMatch(/^cron\s+cron:nightly\s+3d ago\s+-\s+\?\/128k$/);
    expect(lines).toHaveLength(7);
    // Columns are as wide as what they hold: the key column is the longest key, not a fixed share of the width.
    expect(lines[3]!.indexOf("Age") - lines[3]!.indexOf("Key")).toBe("unknown:group:ops ".length);
    // --verbose prints whole keys (no prefix dropped).
    expect((await runInProcess(["sessions", "list", "--verbose"], env)).stdout).toMatch(/^direct\s+agent:main:main\s/m);
  });

  it("adds the Agent column and every store with --all-agents, and honours --limit/--active", async () => {
    const { env } = seeded();
    const r = await runInProcess(["sessions", "list", "--all-agents", "--limit", "2"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Session stores:\n  main: ");
    expect(r.stdout).toContain("\n  work: ");
    expect(r.stdout).toContain("Sessions listed: 2 of 4 (--limit all shows every row)");
    const rows = r.stdout.trimEnd().split("\n").slice(-3);
    expect(rows[0]).toMatch(/^Agent\s+Kind\s+Key/);
    expect(rows[1]).toMatch(/^work\s+direct\s+agent:work:main/);
    expect(rows[2]).toMatch(/^main\s+direct\s+agent:main:main/);
    const active = await runInProcess(["sessions", "list", "--agent", "main", "--active", "60"], env);
    expect(active.stdout).toContain("Active within the last 60 minute(s)\nSessions listed: 1 of 1");
  });

  it("prints one JSON document with the documented shape", async () => {
    const { env, paths } = seeded();
    const r = await runInProcess(["sessions", "list", "--json", "--limit", "2"], env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(["version", "command", "stores", "count", "totalCount", "limit", "hasMore", "activeMinutes", "warnings", "sessions", "ok"]);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "sessions list", count: 2, totalCount: 3, limit: 2, hasMore: true, activeMinutes: null, warnings: [] });
    expect(doc.stores).toEqual([{ agentId: "main", path: agentDbPath(paths, "main"), exists: true, totalCount: 3 }]);
    expect(doc.sessions[0]).toMatchObject({ agentId: "main", key: "agent:main:main", sessionId: "s-main", kind: "direct", chatType: "direct", model: "claude-sonnet-4", modelProvider: "anthropic", totalTokens: 1200, contextTokens: 200000, displayName: null });
    expect(doc.sessions[1]).toMatchObject({ kind: "group", totalTokens: null, contextTokens: null });
    const all = JSON.parse((await runInProcess(["sessions", "list", "--json", "--limit", "all", "--all-agents"], env)).stdout);
    expect(all).toMatchObject({ count: 4, totalCount: 4, limit: "all", hasMore: false });
    const empty = JSON.parse((await runInProcess(["--json", "sessions", "list", "--agent", "nobody"], env)).stdout);
    expect(empty).toMatchObject({ ok: true, count: 0, sessions: [], stores: [{ agentId: "nobody", exists: false }] });
  });

  it.each([
    [["--limit", "abc"], /Invalid --limit value "abc": use a positive whole number or "all" \(for example --limit 50 or --limit all\)/],
    [["--limit", "0"], /Invalid --limit value "0"/],
    [["--limit", "-3"], /Invalid --limit value "-3"/],
    [["--active", "0"], /Invalid --active value "0": use a whole number of at least 1 \(for example --active 60\)/],
    [["--active", "1.5"], /Invalid --active value "1.5"/],
    [["--agent", "../x"], /Invalid agent id/],
    [["--agent", "main", "--all-agents"], /either --agent <id> or --all-agents/],
  ])("rejects %j with exit 2 and an example", async (args, message) => {
    const { env } = seeded();
    const r = await runInProcess(["sessions", "list", ...args], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    const json = await runInProcess(["sessions", "list", "--json", ...args], env);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ version: 1, ok: false, error: { message: expect.stringMatching(message) } });
  });
});

describe("sessions show (CLI)", () => {
  it("prints the session, its conversations, transcript stats and last events", async () => {
    const { env } = seeded();
    const r = await runInProcess(["sessions", "show", "main", "--events", "2"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Session agent:main:main (agent main)");
    expect(r.stdout).toMatch(/Kind\s+direct \(scope shared-main, chat direct\)/);
    expect(r.stdout).toMatch(/Tokens\s+1\.2k\/200k \(1%\)/);
    expect(r.stdout).toMatch(/Transcript\n {2}3 event\(s\), .* B, .* \(seq 0–2\)/);
    expect(r.stdout).toContain("Last 2 event(s)");
    expect(r.stdout).toMatch(/#1 +2026-01-01T00:00:01Z {2}message +user: hello/);
    expect(r.stdout).toMatch(/#2 +2026-01-01T00:00:02Z {2}message +assistant: Hi! How can I help\?/);
  });

  it("prints the show JSON envelope", async () => {
    const { env } = seeded();
    const r = await runInProcess(["sessions", "show", "s-main", "--json", "--events", "1"], env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "sessions show", agentId: "main", matchedBy: "session-id", session: { key: "agent:main:main" }, transcript: { eventCount: 3 } });
    expect(doc.events.items).toEqual([expect.objectContaining({ seq: 2, event: expect.objectContaining({ id: "e2" }) })]);
  });

  it("exits 1 with a clear message for an unknown key", async () => {
    const { env } = seeded();
    const r = await runInProcess(["sessions", "show", "agent:main:nope"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: No session "agent:main:nope" in agent main \(.*openclaw-agent\.sqlite\); run `openclaw-state sessions list --agent main` to see the keys\.\n$/);
    const json = await runInProcess(["sessions", "show", "agent:main:nope", "--json"], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "not_found" } });
    const bad = await runInProcess(["sessions", "show", "main", "--events", "lots"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--events 50/);
  });

  it("never creates or modifies anything under the state dir (list, show, inspect, fresh dir)", async () => {
    const state = seeded();
    const before = snapshotTree(state.root);
    for (const args of [
      ["sessions", "list"],
      ["sessions", "list", "--all-agents", "--limit", "all", "--json"],
      ["sessions", "list", "--agent", "ghost"],
      ["sessions", "show", "main", "--events", "5"],
      ["sessions", "show", "nope"],
      ["inspect"],
    ]) {
      await runInProcess(args, state.env);
      expect(snapshotTree(state.root), args.join(" ")).toEqual(before);
    }
    const fresh = makeTempState();
    await runInProcess(["sessions", "list", "--all-agents"], fresh.env);
    await runInProcess(["sessions", "show", "main"], fresh.env);
    expect(fs.existsSync(fresh.stateDir)).toBe(false);
  });
});

describe("sessions (real binary)", () => {
  it("lists as JSON and exports a transcript that matches what sqlite3 reads", async () => {
    const state = seeded();
    const list = await runBin(["sessions", "list", "--json", "--limit", "all"], state.env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(["s-main", "s-ops", "s-cron"]);
    const out = path.join(makeTempDir(), "main.jsonl");
    const show = await runBin(["sessions", "show", "agent:main:main", "--events", "0", "--export", out], state.env);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`Exported 3 event(s)`);
    expect(modeOf(out)).toBe(0o600);
    const viaSqlite = execFileSync("sqlite3", [agentDbPath(state.paths, "main"), "SELECT event_json FROM transcript_events WHERE session_id = 's-main' ORDER BY seq"], { encoding: "utf8" });
    expect(fs.readFileSync(out, "utf8")).toBe(viaSqlite);
    const again = await runBin(["sessions", "show", "main", "--export", out], state.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists; choose another --export path");
  });
});
