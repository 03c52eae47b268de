// bindings/current-conversations.json → current_conversation_bindings.
// Shape ({version:1, bindings:[SessionBindingRecord]}: bindingId, targetSessionKey, targetKind, status, boundAt,
// expiresAt, conversation {channel, accountId, kind, parentConversationId, conversationId}, metadata) from
// OpenClaw's doctor legacy-state importer (openclaw/openclaw, importLegacyCurrentConversationBindingsToSqlite).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../../helpers/temp-state.js";
import { migrate, rows } from "../../helpers/migration.js";
import { corrupt, expectLedger, expectReimportIdempotent } from "../../helpers/control-plane.js";

const SEP = "\u241f";

describe("conversation-bindings importer", () => {
  it("maps every field, skips unusable bindings with a warning, records the ledger row, and re-imports idempotently", async () => {
    const { paths } = makeTempState("migration/conversation-bindings");
    const { plan, run } = await migrate(paths);
    expect(plan!.sources).toEqual([expect.objectContaining({ kind: "conversation-bindings", targetDatabase: "global", agentId: null, records: 3, action: "import" })]);
    expect(run.status).toBe("warning");
    expect(run.sources[0]).toMatchObject({ status: "warning", rows: { current_conversation_bindings: 2 }, warnings: [expect.stringMatching(/1 binding\(s\) without/)] });
    const got = rows(paths.globalDbPath, "SELECT * FROM current_conversation_bindings ORDER BY binding_id");
    expect(got).toEqual([
      {
        binding_key: ["telegram", "bot-a", "group", "chat-9", "topic-3"].join(SEP),
        binding_id: "bind-1",
        target_agent_id: "ops",
        target_session_id: "s-42",
        target_session_key: "agent:main:telegram:direct:42",
        channel: "telegram",
        account_id: "bot-a",
        conversation_kind: "group",
        parent_conversation_id: "chat-9",
        conversation_id: "topic-3",
        target_kind: "subagent",
        status: "active",
        bound_at: 1767312000000,
        expires_at: 1767398400000,
        metadata_json: '{"label":"ops topic","agentId":"ops"}',
        updated_at: 1767312500000,
      },
      expect.objectContaining({ binding_key: ["discord", "default", "direct", "", "c1"].join(SEP), binding_id: "bind-2", target_agent_id: "main", account_id: "default", conversation_kind: "direct", target_kind: "session", status: "active", bound_at: null, metadata_json: null }),
    ]);
    expectLedger(paths, run, "conversation-bindings", "current_conversation_bindings", { "bindings/current-conversations.json": 3 });
    await expectReimportIdempotent(paths, run);
  });

  it("reads the version-less legacy shape (a bare array of bindings)", async () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(path.join(stateDir, "bindings"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "bindings/current-conversations.json"), JSON.stringify([{ targetSessionKey: "agent:main:x", conversation: { channel: "slack", conversationId: "C1" } }]));
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(rows(paths.globalDbPath, "SELECT channel, conversation_id FROM current_conversation_bindings")).toEqual([{ channel: "slack", conversation_id: "C1" }]);
  });

  it("keeps a malformed file in place, fails it, and still imports the other kinds", async () => {
    const { paths, stateDir } = makeTempState("migration/conversation-bindings");
    corrupt(stateDir, "bindings/current-conversations.json");
    fs.cpSync(path.resolve(__dirname, "../../../fixtures/migration/small-state/update-check.json"), path.join(stateDir, "update-check.json"));
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => [o.kind, o.status])).toEqual([["conversation-bindings", "failed"], ["update-check", "imported"]]);
    expect(run.sources[0]!.reason).toMatch(/invalid JSON.*left in place/);
    expect(fs.existsSync(path.join(stateDir, "bindings/current-conversations.json"))).toBe(true);
    expect(rows(paths.globalDbPath, "SELECT count(*) AS n FROM update_check_state")).toEqual([{ n: 1 }]);
  });
});
