// sessions.json import (SPEC §4.1): routing projection, entry_json, JSON5, bad entries, and the newer-row rule.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openAgentDatabase } from "../../src/state/state-databases.js";
import { makeTempState } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

type Row = Record<string, unknown>;

describe("sessions.json routing projection", () => {
  it("projects deliveryContext, then last*, then origin into conversations and primary links", async () => {
    const { paths } = makeTempState("migration/routing");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const db = agentDbFile(paths);
    const convs = rows<Row>(db, "SELECT conversation_id, channel, account_id, kind, peer_id, thread_id, label FROM conversations ORDER BY channel, peer_id");
    expect(convs.map(({ conversation_id: _id, ...rest }) => rest)).toEqual([
      { channel: "discord", account_id: "acct", kind: "group", peer_id: "channel:g1", thread_id: "t-7", label: "#general" },
      { channel: "slack", account_id: "ws1", kind: "direct", peer_id: "u1", thread_id: null, label: "Ursula" },
      // Two sessions with the same natural identity (threadId 42 and "42") share one conversation row.
      { channel: "telegram", account_id: "bot1", kind: "direct", peer_id: "+15550001", thread_id: "42", label: null },
    ]);
    const sessions = rows<Row>(db, "SELECT session_id, primary_conversation_id, channel, account_id, chat_type, status, model, model_provider, spawned_by, parent_session_key, started_at, created_at, display_name FROM sessions ORDER BY session_id");
    const byId = Object.fromEntries(sessions.map((s) => [s.session_id, s]));
    const convId = (channel: string) => (convs.find((c) => c.channel === channel)!.conversation_id as string);
    expect(byId["s-dc"]).toMatchObject({ primary_conversation_id: convId("telegram"), channel: "telegram", account_id: "bot1" });
    expect(byId["s-same-peer"]!.primary_conversation_id).toBe(convId("telegram"));
    expect(byId["s-last"]).toMatchObject({ primary_conversation_id: convId("discord"), chat_type: "group", account_id: "acct" });
    expect(byId["s-origin"]).toMatchObject({ primary_conversation_id: convId("slack"), channel: "slack", display_name: "Ursula" });
    expect(byId["s-none"]).toMatchObject({ primary_conversation_id: null, status: "done", model: "gpt-5", model_provider: "openai", spawned_by: "agent:main:main", parent_session_key: "agent:main:main", started_at: 650, created_at: 650 });
    const links = rows<Row>(db, "SELECT session_id, role FROM session_conversations ORDER BY session_id");
    expect(links).toEqual(["s-dc", "s-last", "s-origin", "s-same-peer"].map((session_id) => ({ session_id, role: "primary" })));
  });

  it("keeps entry_json compatibility-shaped: origin kept for the upgrade, no file-era pointers, aliases renamed", async () => {
    const { paths } = makeTempState("migration/routing");
    await migrate(paths);
    const entries = rows<{ session_key: string; entry_json: string }>(agentDbFile(paths), "SELECT session_key, entry_json FROM session_entries");
    const byKey = Object.fromEntries(entries.map((e) => [e.session_key, JSON.parse(e.entry_json) as Row]));
    expect(byKey["agent:main:main"]).not.toHaveProperty("sessionFile");
    expect(byKey["agent:main:main"]).toMatchObject({ sessionId: "s-dc", updatedAt: 1000, deliveryContext: { channel: "Telegram", threadId: 42 } });
    expect(byKey["agent:main:discord:group:g1"]).toMatchObject({ groupChannel: "#general", lastChannel: "discord" });
    expect(byKey["agent:main:discord:group:g1"]).not.toHaveProperty("room");
    expect(byKey["agent:main:discord:group:g1"]).not.toHaveProperty("lastProvider");
    // The route's origin stays for the format upgrade, which folds it into `delivery` as OpenClaw's doctor does.
    expect(byKey["agent:main:slack:direct:u1"]).toHaveProperty("origin");
  });
});

describe("sessions.json parsing", () => {
  it("reads a JSON5 index (comments, unquoted keys, single quotes, trailing commas)", async () => {
    const { paths } = makeTempState("migration/json5-index");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(rows(agentDbFile(paths), "SELECT session_id, updated_at FROM sessions")).toEqual([{ session_id: "s-json5", updated_at: 500 }]);
    const [entry] = rows<{ entry_json: string }>(agentDbFile(paths), "SELECT entry_json FROM session_entries");
    expect(JSON.parse(entry!.entry_json)).toMatchObject({ label: "edited by hand" });
  });

  it("reports and skips entries without a string sessionId; the rest imports and the source ends as warning", async () => {
    const { paths } = makeTempState("migration/entry-without-session-id");
    const { run } = await migrate(paths);
    const [outcome] = run.sources;
    expect(outcome).toMatchObject({ status: "warning", recordsParsed: 5, retired: "moved" });
    expect(outcome!.warnings).toEqual([
      'entry "agent:main:no-id" has no string sessionId; skipped',
      'entry "agent:main:numeric-id" has no string sessionId; skipped',
      'entry "agent:main:not-an-object" has no string sessionId; skipped',
      "1 entry has no numeric updatedAt; the file's mtime was used",
    ]);
    expect(run.status).toBe("warning");
    expect(rows(agentDbFile(paths), "SELECT session_id FROM sessions ORDER BY session_id")).toEqual([{ session_id: "s-no-ts" }, { session_id: "s-ok" }]);
  });

  it("fails an unparseable index with its line, leaves it in place, and still imports the transcripts", async () => {
    const { paths, stateDir } = makeTempState("migration/orphan-transcript");
    const index = path.join(stateDir, "agents/main/sessions/sessions.json");
    fs.writeFileSync(index, '{\n  "agent:main:main": { "sessionId": "s-known", \n  oops\n}');
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    const failed = run.sources.find((s) => s.kind === "sessions-index")!;
    expect(failed.status).toBe("failed");
    expect(failed.reason).toMatch(/sessions\.json:3: invalid JSON: expected an object key \(read as JSON, JSONC and JSON5\); the file was left in place/);
    expect(fs.existsSync(index)).toBe(true);
    // With the index failed nothing references them: both are imported as orphans, each a warning.
    expect(run.sources.filter((s) => s.kind === "transcript").map((s) => s.status)).toEqual(["warning", "warning"]);
  });
});

describe("merging into an existing database", () => {
  it("never overwrites a newer DB row with an older legacy one, and replaces orphan placeholders", async () => {
    const { paths, stateDir } = makeTempState("migration/routing");
    const db = openAgentDatabase(paths, "main", { mode: "write", create: true });
    db.run(db.q.insertInto("sessions").values({ session_id: "s-dc", session_key: "agent:main:main", session_scope: "shared-main", created_at: 1, updated_at: 5000, model: "newer-model" }));
    db.run(db.q.insertInto("session_entries").values({ session_key: "agent:main:main", session_id: "s-dc", entry_json: '{"sessionId":"s-dc","updatedAt":5000}', updated_at: 5000 }));
    db.run(db.q.insertInto("session_routes").values({ session_key: "agent:main:main", session_id: "s-dc", updated_at: 5000 }));
    db.run(db.q.insertInto("sessions").values({ session_id: "s-none", session_key: "agent:main:orphan:s-none", session_scope: "conversation", created_at: 1, updated_at: 9999 }));
    db.close();
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources[0]!.notes.join("\n")).toMatch(/kept as they were: the database holds newer data/);
    const file = agentDbFile(paths);
    expect(rows(file, "SELECT model, updated_at FROM sessions WHERE session_id = 's-dc'")).toEqual([{ model: "newer-model", updated_at: 5000 }]);
    expect(rows(file, "SELECT entry_json FROM session_entries WHERE session_key = 'agent:main:main'")).toEqual([{ entry_json: '{"sessionId":"s-dc","updatedAt":5000}' }]);
    expect(rows(file, "SELECT session_key, updated_at FROM sessions WHERE session_id = 's-none'")).toEqual([{ session_key: "agent:main:cli", updated_at: 700 }]);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/sessions.json"))).toBe(false);
  });
});

describe("wrong shapes", () => {
  it.each([
    ["an array", "[]", /expected an object mapping session keys to entries, found an array/],
    ["invalid UTF-8", Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]), /not valid UTF-8/],
  ])("fails an index that is %s and keeps it in place", async (_what, content, message) => {
    const { paths, stateDir } = makeTempState("migration/json5-index");
    const file = path.join(stateDir, "agents/main/sessions/sessions.json");
    fs.writeFileSync(file, content);
    const { run } = await migrate(paths);
    expect(run.sources[0]).toMatchObject({ status: "failed", reason: expect.stringMatching(message) });
    expect(fs.existsSync(file)).toBe(true);
  });
});

describe("sessions.json: legacy `provider` (fixture session-provider-channel)", () => {
  it("reads a string provider as the channel when channel is not a string, as OpenClaw's store migration does", async () => {
    const { paths } = makeTempState("migration/session-provider-channel");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const db = agentDbFile(paths);
    const convs = rows<Row>(db, "SELECT conversation_id, channel, account_id, kind, peer_id FROM conversations ORDER BY channel");
    expect(convs.map(({ conversation_id: _id, ...rest }) => rest)).toEqual([
      { channel: "discord", account_id: null, kind: "group", peer_id: "group:g1" },
      { channel: "slack", account_id: "T1", kind: "channel", peer_id: "channel:C42" },
      { channel: "telegram", account_id: null, kind: "direct", peer_id: "99" },
    ]);
    const convId = (channel: string) => convs.find((c) => c.channel === channel)!.conversation_id;
    expect(rows<Row>(db, "SELECT session_id, channel, primary_conversation_id FROM sessions ORDER BY session_id")).toEqual([
      { session_id: "s-both", channel: "telegram", primary_conversation_id: convId("telegram") },
      { session_id: "s-null-channel", channel: "discord", primary_conversation_id: convId("discord") },
      { session_id: "s-slack", channel: "slack", primary_conversation_id: convId("slack") },
    ]);
    const entries = Object.fromEntries(rows<{ session_key: string; entry_json: string }>(db, "SELECT session_key, entry_json FROM session_entries").map((e) => [e.session_key, e.entry_json]));
    // Renamed: no provider left; a string channel keeps provider as it was; a null channel is left for the upgrade
    // to replace, so the text never holds `channel` twice.
    expect(JSON.parse(entries["agent:main:slack:channel:c42"]!)).toEqual({ chatType: "channel", displayName: "#ops", lastTo: "channel:C42", lastAccountId: "T1", sessionId: "s-slack", channel: "slack", updatedAt: 2000 });
    expect(JSON.parse(entries["agent:main:telegram:direct:99"]!)).toEqual({ channel: "telegram", lastTo: "99", sessionId: "s-both", provider: "slack", updatedAt: 1500 });
    expect(entries["agent:main:discord:group:g1"]!.match(/"channel"/g)).toHaveLength(1);
    expect(JSON.parse(entries["agent:main:discord:group:g1"]!)).toEqual({ channel: null, chatType: "group", lastTo: "group:g1", sessionId: "s-null-channel", provider: "discord", updatedAt: 1000 });
  });
});
