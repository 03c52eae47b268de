// The streamed session index: repeated keys (newest wins, reported), shared-main peers as participants,
// keys of another agent in an agent's store (filed under that agent), JSONC vs JSON5 by size, entries written after their session row.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { JSON5_MAX_BYTES } from "../../src/migration/json-object-stream.js";
import { MAX_ROUTED_AGENTS } from "../../src/migration/agent-routes.js";
import { openAgentDatabase } from "../../src/state/state-databases.js";
import { makeTempState } from "../helpers/temp-state.js";
import { expectReimportIdempotent } from "../helpers/control-plane.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

type Row = Record<string, unknown>;

describe("a raw key repeated in sessions.json", () => {
  it("keeps the entry with the newer updatedAt (not the later one) and reports the repeat as a warning", async () => {
    const { paths } = makeTempState("migration/duplicate-keys");
    const { plan, run } = await migrate(paths);
    expect(plan!.sources[0]!.records).toBe(3);
    expect(plan!.sources[0]!.notes.join("\n")).toMatch(/key "agent:main:telegram:direct:\+1" appears more than once in the file; kept the one with the newer updatedAt/);
    const outcome = run.sources[0]!;
    expect(outcome.status).toBe("warning");
    expect(outcome.warnings.join("\n")).toMatch(/appears more than once/);
    expect(rows(agentDbFile(paths), "SELECT session_key, session_id, updated_at FROM session_routes ORDER BY session_key")).toEqual([
      { session_key: "agent:main:telegram:direct:+1", session_id: "s-newer", updated_at: 900 },
      { session_key: "agent:main:telegram:direct:+2", session_id: "s-two", updated_at: 10 },
    ]);
    // The losing entry's session is not created from it.
    expect(rows(agentDbFile(paths), "SELECT session_id FROM sessions ORDER BY session_id").map((r) => r.session_id)).toEqual(["s-newer", "s-two"]);
  });

  it("with the same updatedAt keeps the later one, as JSON.parse would have", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "sessions.json"), '{"k": {"sessionId": "first", "updatedAt": 5}, "k": {"sessionId": "second", "updatedAt": 5}}');
    const { run } = await migrate(paths);
    expect(run.sources[0]!.warnings.join()).toMatch(/kept the later one \(same updatedAt\)/);
    expect(rows(agentDbFile(paths), "SELECT session_id FROM session_routes WHERE session_key = 'agent:main:k'")).toEqual([{ session_id: "second" }]);
  });
});

describe("a shared-main direct session with several peers", () => {
  it("links every peer's conversation: the main route as primary, the other direct peers as participants", async () => {
    const { paths } = makeTempState("migration/shared-main-peers");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const db = agentDbFile(paths);
    const links = rows<Row>(db, "SELECT sc.role, c.channel, c.peer_id FROM session_conversations sc JOIN conversations c USING (conversation_id) WHERE sc.session_id = 's-shared' ORDER BY sc.role, c.peer_id");
    expect(links).toEqual([
      { role: "participant", channel: "telegram", peer_id: "+15550002" },
      { role: "participant", channel: "whatsapp", peer_id: "+15550003" },
      // The peer whose conversation is the primary one is not linked twice.
      { role: "primary", channel: "telegram", peer_id: "+15550001" },
    ]);
    expect(rows(db, "SELECT session_scope, session_key FROM sessions WHERE session_id = 's-shared'")).toEqual([{ session_scope: "shared-main", session_key: "agent:main:main" }]);
    // A group session of the same agent keeps its single primary link.
    expect(rows(db, "SELECT role FROM session_conversations WHERE session_id = 's-group'")).toEqual([{ role: "primary" }]);
    // Importing the same file again changes nothing.
    await expectReimportIdempotent(paths, run);
  });

  it("writes a peer whose entry comes before the main entry in the file (the session row is written later)", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, "sessions.json"),
      JSON.stringify({
        "+15550002": { sessionId: "s", updatedAt: 200, lastChannel: "sms", lastTo: "+15550002" },
        main: { sessionId: "s", updatedAt: 100, lastChannel: "sms", lastTo: "+15550001" },
      }),
    );
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT session_key FROM session_entries ORDER BY session_key")).toEqual([{ session_key: "agent:main:+15550002" }, { session_key: "agent:main:main" }]);
    expect(rows(db, "SELECT role FROM session_conversations ORDER BY role")).toEqual([{ role: "participant" }, { role: "primary" }]);
  });
});

describe("keys of another agent in an agent's store", () => {
  it("are filed in the database of the agent they name (created), with their transcripts; agent:main:main is the store's own main", async () => {
    const { paths } = makeTempState("migration/agent-main-keys");
    const { plan, run } = await migrate(paths);
    const index = plan!.sources.find((s) => s.kind === "sessions-index")!;
    expect(index.routedAgents).toEqual(["main", "other"]);
    expect(index.notes.join("\n")).toMatch(/1 key\(s\) name agent "main" \("agent:main:telegram:direct:\+15550009"\): filed in that agent's database/);
    expect(run.status).toBe("completed");
    expect(run.sources.every((o) => o.status === "imported" && o.retired === "moved")).toBe(true);
    // Each transcript went with its session; none became an orphan placeholder.
    expect(Object.fromEntries(run.sources.filter((o) => o.kind === "transcript").map((o) => [path.basename(o.path), o.agentId]))).toEqual({
      "s-ops-dm-newer.jsonl": "ops",
      "s-ops-dm.jsonl": "main",
      "s-ops-main.jsonl": "ops",
      "s-other.jsonl": "other",
    });
    const keysOf = (agent: string): Row[] => rows(agentDbFile(paths, agent), "SELECT r.session_key, r.session_id, (SELECT count(*) FROM transcript_events e WHERE e.session_id = r.session_id) AS events FROM session_routes r ORDER BY r.session_key");
    expect(keysOf("ops")).toEqual([
      { session_key: "agent:ops:main", session_id: "s-ops-main", events: 2 },
      { session_key: "agent:ops:telegram:direct:+15550009", session_id: "s-ops-dm-newer", events: 2 },
    ]);
    expect(keysOf("main")).toEqual([{ session_key: "agent:main:telegram:direct:+15550009", session_id: "s-ops-dm", events: 2 }]);
    expect(keysOf("other")).toEqual([{ session_key: "agent:other:x", session_id: "s-other", events: 2 }]);
    expect(rows(agentDbFile(paths, "ops"), "SELECT session_scope FROM sessions WHERE session_id = 's-ops-main'")).toEqual([{ session_scope: "shared-main" }]);
    for (const agent of ["main", "other"]) expect(rows(agentDbFile(paths, agent), "SELECT count(*) AS n FROM sessions")).toEqual([{ n: 1 }]);
    // The agents it created are registered like any other.
    expect(rows(paths.globalDbPath, "SELECT agent_id FROM agent_databases ORDER BY agent_id").map((r) => r.agent_id)).toEqual(["main", "ops", "other"]);
  });

  it("re-imported, keeps what the other agent's database holds newer, and a second run finds nothing to do", async () => {
    const { paths } = makeTempState("migration/agent-main-keys");
    await migrate(paths);
    // The runtime moved main's session on after the import; the file comes back, edited but older than that.
    const main = openAgentDatabase(paths, "main", { mode: "write" });
    main.prepare("UPDATE session_routes SET updated_at = 9000 WHERE session_key = 'agent:main:telegram:direct:+15550009'").run();
    main.prepare("UPDATE session_entries SET updated_at = 9000, entry_json = json_set(entry_json, '$.label', 'runtime') WHERE session_key = 'agent:main:telegram:direct:+15550009'").run();
    main.close();
    const again = makeTempState("migration/agent-main-keys");
    fs.mkdirSync(path.join(paths.stateDir, "agents/ops/sessions"), { recursive: true });
    const store = JSON.parse(fs.readFileSync(path.join(again.stateDir, "agents/ops/sessions/sessions.json"), "utf8")) as Record<string, Row>;
    store["agent:main:telegram:direct:+15550009"]!.label = "edited";
    store["agent:main:telegram:direct:+15550009"]!.updatedAt = 600;
    fs.writeFileSync(path.join(paths.stateDir, "agents/ops/sessions/sessions.json"), JSON.stringify(store));
    const { run } = await migrate(paths);
    expect(run.sources.map((o) => [o.action, o.status])).toEqual([["changed-since-import", "imported"]]);
    expect(rows(agentDbFile(paths, "main"), "SELECT json_extract(entry_json, '$.label') AS label, updated_at FROM session_entries")).toEqual([{ label: "runtime", updated_at: 9000 }]);
    const third = await migrate(paths);
    expect(third.run.sources).toEqual([]);
    // The same file back once more: already imported, checked in every agent's database its keys name, retired.
    fs.mkdirSync(path.join(paths.stateDir, "agents/ops/sessions"), { recursive: true });
    fs.writeFileSync(path.join(paths.stateDir, "agents/ops/sessions/sessions.json"), JSON.stringify(store));
    const fourth = await migrate(paths);
    expect(fourth.run.sources.map((o) => [o.status, o.retired, o.notes.join(" ")])).toEqual([["already-imported", "moved", ""]]);
  });

  // More than that: a group per transaction (sessions-index-routed-groups.test.ts).
  it("files keys under as many other agents as one transaction can attach", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/ops/sessions");
    fs.mkdirSync(dir, { recursive: true });
    const store = Object.fromEntries(Array.from({ length: MAX_ROUTED_AGENTS }, (_, i) => [`agent:a${i}:x`, { sessionId: `s${i}`, updatedAt: i + 1 }]));
    fs.writeFileSync(path.join(dir, "sessions.json"), JSON.stringify(store));
    const { run } = await migrate(paths);
    expect(run.sources.map((o) => o.status)).toEqual(["imported"]);
    for (let i = 0; i < MAX_ROUTED_AGENTS; i += 1) expect(rows(agentDbFile(paths, `a${i}`), "SELECT session_key FROM session_routes")).toEqual([{ session_key: `agent:a${i}:x` }]);
  });

  it("fails the index, left in place, when the agent its keys name has a database that cannot be opened", async () => {
    const { paths } = makeTempState("migration/agent-main-keys");
    fs.mkdirSync(path.join(paths.agentsDir, "other/agent"), { recursive: true });
    fs.writeFileSync(agentDbFile(paths, "other"), "not a database, but someone's file".repeat(200));
    const { run } = await migrate(paths);
    const index = run.sources.find((o) => o.kind === "sessions-index")!;
    expect(index.status).toBe("failed");
    expect(index.reason).toMatch(/agent "other", whose database agents\/other\/agent\/openclaw-agent\.sqlite cannot be opened/);
    expect(fs.existsSync(path.join(paths.stateDir, "agents/ops/sessions/sessions.json"))).toBe(true);
    expect(fs.readFileSync(agentDbFile(paths, "other"), "utf8")).toMatch(/^not a database/);
  });
});

describe("sessions.json syntax by size", () => {
  // ~8 KB per entry: the file passes 16 MiB with ~2,000 entries.
  const line = (i: number) => `  "k${i}": { "sessionId": "s${i}", "updatedAt": ${i}, "label": "${"x".repeat(8000)}" }, // entry ${i}\n`;

  it("refuses JSON5-only syntax in an index over 16 MiB, naming the line and the rule", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    fs.mkdirSync(dir, { recursive: true });
    const count = Math.ceil((JSON5_MAX_BYTES + 64 * 1024) / line(0).length);
    const body = Array.from({ length: count }, (_, i) => line(i)).join("");
    fs.writeFileSync(path.join(dir, "sessions.json"), `{\n${body}  'quoted': { "sessionId": "q", "updatedAt": 1 }\n}\n`);
    const { run } = await migrate(paths);
    const failed = run.sources.find((s) => s.kind === "sessions-index")!;
    expect(failed.status).toBe("failed");
    expect(failed.reason).toMatch(new RegExp(`sessions\\.json:${count + 2}: invalid JSON: .*files over 16 MiB must be JSON; comments and trailing commas are accepted`));
  });

  it("fails a deeply nested entry with file:line", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "sessions.json"), `{\n  "a": { "sessionId": "a", "updatedAt": 1 },\n  "b": { "sessionId": "b", "x":\n ${"[".repeat(3000)}${"]".repeat(3000)} }\n}\n`);
    const { run } = await migrate(paths);
    expect(run.sources[0]!.status).toBe("failed");
    expect(run.sources[0]!.reason).toMatch(/sessions\.json:4: JSON nested deeper than 1000 levels; the file was left in place/);
  });
});

describe("a very large entry", () => {
  it("is stored whole as valid JSON text (written without SQLite's json_valid pass), and quick_check verifies it", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    fs.mkdirSync(dir, { recursive: true });
    const skills = Array.from({ length: 30_000 }, (_, i) => ({ name: `skill-${i}`, description: `does ${i} things — "quoted" \\ é 😀`, enabled: i % 3 !== 0 }));
    const huge = { sessionId: "huge", updatedAt: 7, chatType: "direct", skillsSnapshot: { prompt: "p".repeat(3 * 1024 * 1024), skills } };
    fs.writeFileSync(path.join(dir, "sessions.json"), JSON.stringify({ "agent:main:main": huge, "agent:main:other": { sessionId: "small", updatedAt: 1 } }));
    const { run } = await migrate(paths);
    expect(run.sources[0]!.status).toBe("imported");
    const [row] = rows<{ entry_json: string; type: string }>(agentDbFile(paths), "SELECT entry_json, typeof(entry_json) AS type FROM session_entries WHERE session_key = 'agent:main:main'");
    expect(row!.type).toBe("text");
    expect(Buffer.byteLength(row!.entry_json)).toBeGreaterThan(4 * 1024 * 1024);
    expect(JSON.parse(row!.entry_json)).toEqual({ chatType: "direct", skillsSnapshot: huge.skillsSnapshot, sessionId: "huge", updatedAt: 7 });
    // An independent reader: the CHECK holds and quick_check (which evaluates it) passes.
    const cli = spawnSync("sqlite3", [agentDbFile(paths), "SELECT json_valid(entry_json) FROM session_entries ORDER BY session_key; PRAGMA quick_check;"], { encoding: "utf8" });
    expect(cli.stdout.trim().split("\n")).toEqual(["1", "1", "ok"]);
  });

  it("seeds the main key from a large direct entry: the second key's row is copied in SQL, the same text", async () => {
    const { paths, stateDir } = makeTempState();
    // The old root store: the one store OpenClaw 2026.9.6 seeds the main key from (issue 24).
    const dir = path.join(stateDir, "sessions");
    fs.mkdirSync(dir, { recursive: true });
    const big = { sessionId: "big", updatedAt: 9, chatType: "direct", lastChannel: "telegram", lastTo: "+1", note: "n".repeat(5 * 1024 * 1024) };
    fs.writeFileSync(path.join(dir, "sessions.json"), JSON.stringify({ "telegram:+1": big }));
    const { run } = await migrate(paths);
    expect(run.sources[0]!.status).toBe("imported");
    const found = rows<{ session_key: string; entry_json: string }>(agentDbFile(paths), "SELECT session_key, entry_json FROM session_entries ORDER BY session_key");
    expect(found).toHaveLength(2);
    expect(found[0]!.session_key).toBe("agent:main:main");
    expect(found[0]!.entry_json).toBe(found[1]!.entry_json);
    expect(JSON.parse(found[0]!.entry_json)).toMatchObject({ sessionId: "big", updatedAt: 9, note: big.note });
  });

  it("skips CHECK constraints only inside withoutCheckConstraints", () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { recursive: true });
    const db = openAgentDatabase(paths, "main", { mode: "write", create: true });
    try {
      db.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES ('s', 'k', 'conversation', 1, 1)").run();
      const insert = (key: string) => db.prepare("INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES (?, 's', 'not json', 1)").run(key);
      expect(() => insert("a")).toThrow(/CHECK constraint failed/);
      db.withoutCheckConstraints(() => insert("b"));
      expect(() => insert("c")).toThrow(/CHECK constraint failed/);
      // quick_check reports the row the constraint would have refused.
      expect(db.quickCheck().join("\n")).toMatch(/CHECK constraint failed in session_entries/);
    } finally {
      db.close();
    }
  });
});
