// upgradeAgentDb: a design-v1 agent DB made by our own doctor --fix, upgraded and read back with the sqlite3 CLI.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { upgradeAgentDb } from "../../../src/state/upgrade/upgrade-agent-db.js";
import { agentDbFile, stagedDbFile } from "../../helpers/migration.js";
import { makeTempDir, makeTempState, runInProcess } from "../../helpers/temp-state.js";

type Row = Record<string, string | number | null>;

/** The sqlite3 CLI, an independent reader (not this project's better-sqlite3). */
function cli(file: string, sql: string): Row[] {
  const out = execFileSync("sqlite3", ["-readonly", "-bail", "-json", file, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as Row[]);
}

function sha(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

async function designV1(fixture: string, agentId = "main"): Promise<string> {
  const state = makeTempState(fixture);
  const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
  expect(run.code, run.stderr).toBe(0);
  // doctor --fix ends in OpenClaw's format: the design-v1 file it imported into is kept under migrated/.
  return stagedDbFile(state.paths, agentId);
}

describe("upgradeAgentDb", () => {
  it("copies every session, window and transcript row of fixtures/legacy-state into OpenClaw's agent format", async () => {
    const source = await designV1("legacy-state");
    const before = sha(source);
    const siblings = fs.readdirSync(path.dirname(source)).sort();
    const target = path.join(makeTempDir(), "agent.sqlite");

    const result = upgradeAgentDb({ source, target, agentId: "main", now: 1_800_000_000_000 });

    // Source untouched: same bytes, no -wal/-shm left beside it; target closed clean.
    expect(sha(source)).toBe(before);
    expect(fs.readdirSync(path.dirname(source)).sort()).toEqual(siblings);
    expect(fs.existsSync(`${target}-wal`) || fs.existsSync(`${target}-shm`)).toBe(false);

    expect(cli(target, "PRAGMA user_version")).toEqual([{ user_version: 23 }]);
    expect(cli(target, "SELECT role, schema_version, agent_id, app_version FROM schema_meta")).toEqual([{ role: "agent", schema_version: 23, agent_id: "main", app_version: "2026.9.6" }]);
    expect(cli(target, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    expect(cli(target, "PRAGMA foreign_key_check")).toEqual([]);

    // Every key -> session id, every node valid, entry_json agreeing with its columns (what 9.6's readers check).
    const routes = cli(source, "SELECT session_key, session_id FROM session_routes ORDER BY session_key");
    const nodes = cli(target, "SELECT session_key, current_session_id, entry_json, entry_valid, updated_at FROM session_nodes ORDER BY session_key");
    for (const r of routes) expect(nodes).toContainEqual(expect.objectContaining({ session_key: r.session_key, current_session_id: r.session_id }));
    for (const n of nodes) {
      const entry = JSON.parse(n.entry_json as string) as Record<string, unknown>;
      expect(n.entry_valid).toBe(1);
      expect(entry.sessionId).toBe(n.current_session_id);
      expect(entry.updatedAt).toBe(n.updated_at);
      expect(entry).not.toHaveProperty("sessionFile");
      expect(entry).toHaveProperty("delivery");
    }
    // The transcript no index names is OpenClaw's recovered session: its key and its own (archived) entry.
    const recovered = nodes.find((n) => n.session_key === "agent:main:recovered:s-lost")!;
    expect(recovered.current_session_id).toBe("s-lost");
    expect(JSON.parse(recovered.entry_json as string)).toHaveProperty("archivedAt", recovered.updated_at);

    // Every session id has a window; every event is there with the same event_json and created_at, as a plain row.
    expect(cli(target, "SELECT session_id FROM session_windows ORDER BY session_id")).toEqual(cli(source, "SELECT session_id FROM sessions ORDER BY session_id"));
    const q = "SELECT session_id, seq, event_json, created_at FROM transcript_events ORDER BY session_id, seq";
    expect(cli(target, q)).toEqual(cli(source, q));
    expect(cli(target, "SELECT count(*) AS n FROM transcript_events WHERE event_zstd IS NOT NULL OR navigation_json IS NOT NULL OR event_utf8_bytes != length(CAST(event_json AS BLOB))")).toEqual([{ n: 0 }]);

    // Route -> delivery and conversations the way 9.6's doctor derives them from the same fixture (/work/oc/t1).
    const main = JSON.parse(nodes.find((n) => n.session_key === "agent:main:main")!.entry_json as string) as Record<string, unknown>;
    expect(main.delivery).toEqual({
      kind: "external",
      route: { channel: "telegram", accountId: "default", target: { to: "+15550001" } },
      context: { channel: "telegram", to: "+15550001", accountId: "default" },
      origin: { provider: "telegram", to: "+15550001", accountId: "default" },
    });
    expect(main).not.toHaveProperty("deliveryContext");
    expect(cli(target, "SELECT conversation_id, channel, account_id, kind, peer_id, delivery_target FROM conversations ORDER BY conversation_id")).toEqual([
      { conversation_id: "conv_65d022e5f0eb27171449cd836431e786", channel: "whatsapp", account_id: "default", kind: "direct", peer_id: "+15550002", delivery_target: "+15550002" },
      { conversation_id: "conv_94c114f40ba768e24335242265fedd25", channel: "telegram", account_id: "default", kind: "group", peer_id: "ops", delivery_target: "group:ops" },
      { conversation_id: "conv_fe125c8e93c9ffa98559141b04e43c14", channel: "telegram", account_id: "default", kind: "direct", peer_id: "+15550001", delivery_target: "+15550001" },
    ]);
    expect(cli(target, "SELECT session_id, role FROM session_conversations ORDER BY session_id")).toEqual([
      { session_id: "s-main", role: "participant" },
      { session_id: "s-ops", role: "primary" },
      { session_id: "s-root-dm", role: "primary" },
    ]);
    // Header identities added as 9.6 does (event id = session id), ours copied.
    expect(cli(target, "SELECT count(*) AS n FROM transcript_event_identities")).toEqual([{ n: 8 + 4 }]);

    expect(result.read.sessions).toBe(4);
    expect(result.written.session_nodes).toBe(4);
    expect(result.written.transcript_events).toBe(12);
    expect(result.unmapped).toEqual({});
    // The recovered session brings its own entry: nothing is synthesized for it any more.
    expect(result.notes.map((n) => n.code)).not.toContain("agent.session.synthesized-entry");
  }, 60_000);

  it("applies 9.6's route precedence and keeps what our importer recorded elsewhere (fixtures/migration/routing)", async () => {
    const source = await designV1("migration/routing");
    const target = path.join(makeTempDir(), "agent.sqlite");
    const result = upgradeAgentDb({ source, target, agentId: "main" });
    const entry = (key: string): Record<string, unknown> =>
      JSON.parse(cli(target, `SELECT entry_json FROM session_nodes WHERE session_key = '${key}'`)[0]!.entry_json as string) as Record<string, unknown>;
    // last* beats deliveryContext (as in 9.6's own import of this fixture). The entry keeps deliveryContext inside
    // its delivery, so the conversation our staging importer derived from it is not linked as well: 9.6 links only
    // the one its own fold names.
    expect(entry("agent:main:main").delivery).toMatchObject({ kind: "external", route: { channel: "discord", target: { to: "ignored" } } });
    expect(cli(target, "SELECT conversation_id, role FROM session_conversations WHERE session_id = 's-dc' ORDER BY role")).toEqual([
      { conversation_id: "conv_c5d73507380ede737eae5ac3f546c6d6", role: "primary" },
    ]);
    expect(result.notes.filter((n) => n.code === "agent.conversation.entry-derived").length).toBeGreaterThan(0);
    // A bare `origin` is folded into delivery as 9.6 folds it (the origin kept whole inside it).
    const slack = entry("agent:main:slack:direct:u1");
    expect(slack.delivery).toMatchObject({ kind: "external", route: { channel: "slack", accountId: "ws1", target: { to: "u1" } }, origin: { provider: "slack", surface: "dm", from: "u1" } });
    expect(slack).not.toHaveProperty("origin");
    expect(cli(target, "SELECT channel, account_id FROM session_windows WHERE session_id = 's-dc'")).toEqual([{ channel: "discord", account_id: null }]);
    expect(cli(target, "PRAGMA foreign_key_check")).toEqual([]);

    // An earlier openclaw-state consumed a bare origin into the primary conversation and kept no route field: the
    // delivery is rebuilt from that conversation.
    const older = path.join(makeTempDir(), "older.sqlite");
    fs.copyFileSync(source, older);
    execFileSync("sqlite3", ["-bail", older, "UPDATE session_entries SET entry_json = json_remove(entry_json, '$.origin') WHERE session_id = 's-origin'"]);
    const olderTarget = path.join(makeTempDir(), "agent.sqlite");
    const rebuilt = upgradeAgentDb({ source: older, target: olderTarget, agentId: "main" });
    const olderEntry = JSON.parse(cli(olderTarget, "SELECT entry_json FROM session_nodes WHERE session_key = 'agent:main:slack:direct:u1'")[0]!.entry_json as string) as Record<string, unknown>;
    expect(olderEntry.delivery).toMatchObject({ kind: "external", route: { channel: "slack", accountId: "ws1", target: { to: "u1" } } });
    expect(rebuilt.notes.filter((n) => n.code === "agent.entry.normalized").map((n) => n.message)).toEqual(
      expect.arrayContaining([expect.stringContaining("delivery rebuilt from the session's design-v1 primary conversation")]),
    );
  }, 60_000);

  it("names keys of another agent that the design-v1 file holds, and keeps them", async () => {
    // Since issue 24 an import files such keys under their own agent; an earlier openclaw-state kept them in the
    // store's agent, as this copy does.
    const source = path.join(makeTempDir(), "earlier.sqlite");
    fs.copyFileSync(await designV1("migration/agent-main-keys", "ops"), source);
    execFileSync("sqlite3", ["-bail", source, "UPDATE session_routes SET session_key = 'agent:other:x' WHERE session_id = 's-ops-dm-newer'; UPDATE session_entries SET session_key = 'agent:other:x' WHERE session_id = 's-ops-dm-newer'; UPDATE sessions SET session_key = 'agent:other:x' WHERE session_id = 's-ops-dm-newer';"]);
    const target = path.join(makeTempDir(), "agent.sqlite");
    const result = upgradeAgentDb({ source, target, agentId: "ops" });
    const keys = cli(source, "SELECT session_key FROM session_routes ORDER BY session_key");
    expect(cli(target, "SELECT session_key FROM session_nodes ORDER BY session_key")).toEqual(keys);
    const foreign = keys.filter((k) => !(k.session_key as string).startsWith("agent:ops:"));
    expect(foreign).toEqual([{ session_key: "agent:other:x" }]);
    expect(result.notes.filter((n) => n.code === "agent.session.foreign-agent-key")).toHaveLength(1);
  }, 60_000);

  it("gives each of 120 sessions no index named a node and a window, and lists 50 of their alike notes", async () => {
    const source = path.join(makeTempDir(), "many.sqlite");
    fs.copyFileSync(await designV1("legacy-state"), source);
    execFileSync("sqlite3", ["-bail", source, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120) INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) SELECT 'orphan-' || i, 'agent:main:orphan:' || i, 'conversation', 1000 + i, 2000 + i FROM n"]);
    const target = path.join(makeTempDir(), "agent.sqlite");
    const result = upgradeAgentDb({ source, target, agentId: "main" });
    expect(cli(target, "SELECT count(*) AS n FROM session_nodes WHERE session_key LIKE 'agent:main:orphan:%' AND current_session_id = 'orphan-' || substr(session_key, 19)")).toEqual([{ n: 120 }]);
    expect(cli(target, "SELECT count(*) AS n FROM session_windows WHERE session_id LIKE 'orphan-%'")).toEqual([{ n: 120 }]);
    expect(cli(target, "SELECT session_key, updated_at FROM session_windows WHERE session_id = 'orphan-7'")).toEqual([{ session_key: "agent:main:orphan:7", updated_at: 2007 }]);
    // Each session row is read once, though the upgrade passes over the table twice.
    expect(result.read.sessions).toBe(cli(source, "SELECT count(*) AS n FROM sessions")[0]!.n);
    const synthesized = result.notes.filter((n) => n.code === "agent.session.synthesized-entry");
    expect(synthesized).toHaveLength(51);
    expect(synthesized.at(-1)!.message).toBe("70 more note(s) like the 50 above (agent.session.synthesized-entry) are not listed: 120 in all.");
    expect(cli(target, "PRAGMA foreign_key_check")).toEqual([]);
    // The scratch tables the upgrade used live in its connection's temp schema, never in the file.
    expect(cli(target, "SELECT name FROM sqlite_master WHERE name LIKE 'upgrade_%'")).toEqual([]);
  }, 60_000);

  it("parses a large entry once, and its window and conversation still follow it", async () => {
    const source = path.join(makeTempDir(), "large.sqlite");
    fs.copyFileSync(await designV1("legacy-state"), source);
    const [{ session_key: key }] = cli(source, "SELECT session_key FROM session_entries WHERE entry_json LIKE '%\"delivery%' OR entry_json LIKE '%lastTo%' ORDER BY session_key LIMIT 1") as [{ session_key: string }];
    execFileSync("sqlite3", ["-bail", source, `UPDATE session_entries SET entry_json = json_set(entry_json, '$.padding', replace(hex(zeroblob(1000000)), '0', 'p'), '$.displayName', 'Big one') WHERE session_key = '${key}'`]);
    const target = path.join(makeTempDir(), "agent.sqlite");
    const parse = JSON.parse;
    let largeParses = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
      if (typeof text === "string" && text.length > 1_000_000) largeParses += 1;
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      upgradeAgentDb({ source, target, agentId: "main" });
    } finally {
      JSON.parse = parse;
    }
    expect(largeParses).toBe(1);
    const [node] = cli(target, `SELECT current_session_id, length(entry_json) > 2000000 AS large FROM session_nodes WHERE session_key = '${key}'`);
    expect(node!.large).toBe(1);
    // The window's display name and the conversation's label come from the entry's view, as they came from the entry.
    expect(cli(target, `SELECT display_name FROM session_windows WHERE session_id = '${node!.current_session_id as string}'`)).toEqual([{ display_name: "Big one" }]);
    expect(cli(target, `SELECT c.label FROM session_conversations l JOIN conversations c USING (conversation_id) WHERE l.session_id = '${node!.current_session_id as string}' AND l.role IN ('primary', 'participant')`)).toContainEqual({ label: "Big one" });
  }, 60_000);

  it("refuses a file that is not the design-document v1 agent format and leaves no target", () => {
    const dir = makeTempDir();
    const source = path.join(dir, "other.sqlite");
    execFileSync("sqlite3", [source, "PRAGMA user_version = 23; CREATE TABLE x (a);"]);
    const target = path.join(dir, "out.sqlite");
    expect(() => upgradeAgentDb({ source, target, agentId: "main" })).toThrow(/only the design-document v1 agent format/);
    expect(fs.existsSync(target)).toBe(false);
  });

  it("counts rows without a home in OpenClaw's format instead of dropping them silently", async () => {
    const source = await designV1("legacy-state");
    // A scratch copy: the test adds design-v1 rows OpenClaw has no table for.
    const copy = path.join(makeTempDir(), "copy.sqlite");
    fs.copyFileSync(source, copy);
    execFileSync("sqlite3", [copy, "INSERT INTO vfs_entries (namespace, path, updated_at) VALUES ('ns', '/a', 1); INSERT INTO cache_entries (scope, key, value_json, updated_at) VALUES ('s', 'k', '{}', 2);"]);
    const target = path.join(makeTempDir(), "agent.sqlite");
    const result = upgradeAgentDb({ source: copy, target, agentId: "main" });
    expect(result.unmapped).toEqual({ vfs_entries: 1 });
    expect(result.notes.some((n) => n.code === "agent.kept-unmapped" && n.message.includes("vfs_entries"))).toBe(true);
    expect(cli(target, "SELECT scope, key, value_json, updated_at FROM cache_entries")).toEqual([{ scope: "s", key: "k", value_json: "{}", updated_at: 2 }]);
  }, 60_000);
});
