// upgradeGlobalDb for channel pairing, conversation bindings, workspace setup, commitments, TUI, update-check and Voice Wake rows.
// Expected rows are what openclaw@2026.9.6's own `doctor --fix` wrote for the same legacy files (observed runs).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { migrateAndUpgradeGlobal, rows, writeJson } from "../../helpers/migration.js";
import type { StatePaths } from "../../../src/state/paths.js";
import { fixturesDir, makeTempState } from "../../helpers/temp-state.js";

const NOW = 1_800_000_000_000;
const SEP = "\u241f";
const sha256 = (value: string): string => crypto.createHash("sha256").update(value).digest("hex");

function copyFixture(stateDir: string, fixture: string, file: string, to = file): void {
  fs.mkdirSync(path.dirname(path.join(stateDir, to)), { recursive: true });
  fs.copyFileSync(path.join(fixturesDir, "migration", fixture, file), path.join(stateDir, to));
}

const upgrade = (stateDir: string, paths: StatePaths) => migrateAndUpgradeGlobal(stateDir, paths, NOW);
const write = writeJson;

describe("upgradeGlobalDb: channel and small control-plane state", () => {
  it("writes each row where OpenClaw 2026.9.6's doctor puts the same legacy data", async () => {
    const { paths, stateDir } = makeTempState();
    copyFixture(stateDir, "channel-pairing", "credentials/telegram-pairing.json");
    copyFixture(stateDir, "conversation-bindings", "bindings/current-conversations.json");
    copyFixture(stateDir, "workspace-state", "workspace/.openclaw/workspace-state.json");
    copyFixture(stateDir, "workspace-state", "workspace-ops/.openclaw/workspace-state.json");
    copyFixture(stateDir, "small-state", "tui/last-session.json");
    copyFixture(stateDir, "small-state", "update-check.json");
    copyFixture(stateDir, "small-state", "commitments.json");
    copyFixture(stateDir, "voicewake", "settings/voicewake.json");
    copyFixture(stateDir, "voicewake", "settings/voicewake-routing.json");
    const { result, target } = await upgrade(stateDir, paths);

    // Timestamps go back to the ISO strings of the file; meta keeps its string values; the account comes from meta.
    expect(rows(target, "SELECT * FROM channel_pairing_requests ORDER BY request_id")).toEqual([
      { channel_key: "telegram", account_id: "default", request_id: "777000111", code: "PAIRCODE-PLANTED-1", created_at: "2026-05-01T10:00:00.000Z", last_seen_at: "2026-05-01T10:05:00.000Z", meta_json: '{"username":"newuser"}' },
      { channel_key: "telegram", account_id: "work", request_id: "777000222", code: "PAIRCODE-PLANTED-2", created_at: "2026-05-01T11:00:00.000Z", last_seen_at: "2026-05-01T11:00:00.000Z", meta_json: '{"accountId":"Work"}' },
    ]);

    // Keyed by conversation (no kind), binding id "generic:<key>", kind "current", boundAt = import time when absent.
    const bindings = rows<Record<string, unknown>>(target, "SELECT * FROM current_conversation_bindings ORDER BY binding_key");
    const discordKey = ["discord", "default", "", "c1"].join(SEP);
    const telegramKey = ["telegram", "bot-a", "chat-9", "topic-3"].join(SEP);
    expect(bindings.map(({ record_json: _r, ...rest }) => rest)).toEqual([
      { binding_key: discordKey, binding_id: `generic:${discordKey}`, target_session_key: "agent:main:discord:channel:c1", channel: "discord", account_id: "default", conversation_kind: "current", parent_conversation_id: null, conversation_id: "c1", target_kind: "session", status: "active", bound_at: NOW, expires_at: null, metadata_json: null, updated_at: NOW },
      { binding_key: telegramKey, binding_id: `generic:${telegramKey}`, target_session_key: "agent:main:telegram:direct:42", channel: "telegram", account_id: "bot-a", conversation_kind: "current", parent_conversation_id: "chat-9", conversation_id: "topic-3", target_kind: "subagent", status: "active", bound_at: 1767312000000, expires_at: 1767398400000, metadata_json: '{"label":"ops topic","agentId":"ops"}', updated_at: NOW },
    ]);
    expect(JSON.parse(String(bindings[0]!.record_json))).toEqual({ bindingId: `generic:${discordKey}`, targetSessionKey: "agent:main:discord:channel:c1", targetKind: "session", conversation: { channel: "discord", conversationId: "c1", accountId: "default" }, status: "active", boundAt: NOW });
    expect(JSON.parse(String(bindings[1]!.record_json))).toEqual({
      bindingId: `generic:${telegramKey}`, targetSessionKey: "agent:main:telegram:direct:42", targetKind: "subagent",
      conversation: { channel: "telegram", accountId: "bot-a", kind: "group", conversationId: "topic-3", parentConversationId: "chat-9" },
      status: "active", boundAt: 1767312000000, expiresAt: 1767398400000, metadata: { label: "ops topic", agentId: "ops" },
    });

    // Keyed by sha256 of the real workspace path; ISO milestones (onboardingCompletedAt counts as setup completion).
    // (The import retired the emptied workspace dirs, so the real path is the state dir's plus the name.)
    const ws = path.join(fs.realpathSync(stateDir), "workspace");
    const wsOps = path.join(fs.realpathSync(stateDir), "workspace-ops");
    expect(rows(target, "SELECT * FROM workspace_setup_state ORDER BY workspace_path")).toEqual([
      { workspace_key: sha256(ws), workspace_path: ws, version: 1, bootstrap_seeded_at: "2026-01-01T00:00:00.000Z", setup_completed_at: "2026-01-01T00:10:00.000Z", updated_at: NOW, attested_at_ms: null, attestation_updated_at_ms: null },
      { workspace_key: sha256(wsOps), workspace_path: wsOps, version: 1, bootstrap_seeded_at: "2026-02-01T00:00:00.000Z", setup_completed_at: "2026-02-01T00:05:00.000Z", updated_at: NOW, attested_at_ms: null, attestation_updated_at_ms: null },
    ]);
    expect(rows(target, "SELECT * FROM workspace_path_aliases ORDER BY alias_path")).toEqual([
      { alias_key: sha256(ws), alias_path: ws, workspace_key: sha256(ws), workspace_path: ws, updated_at_ms: NOW },
      { alias_key: sha256(wsOps), alias_path: wsOps, workspace_key: sha256(wsOps), workspace_path: wsOps, updated_at_ms: NOW },
    ]);

    expect(rows(target, "SELECT * FROM config_machine_state WHERE state_key LIKE 'tui.%' OR state_key LIKE 'update.%' OR state_key LIKE 'voicewake.%' ORDER BY state_key")).toEqual([
      { state_key: "tui.lastSession.ws://127.0.0.1:18789#main", value_json: '"agent:main:main"', updated_at_ms: 1767300000000 },
      { state_key: "tui.lastSession.ws://127.0.0.1:18789#ops", value_json: '"agent:ops:main"', updated_at_ms: 1767300001000 },
      {
        state_key: "update.checkState",
        value_json: JSON.stringify({
          lastCheckedAt: "2026-01-02T00:00:00.000Z", lastNotifiedVersion: "2026.1.1", lastNotifiedTag: "latest", lastAvailableVersion: "2026.1.2", lastAvailableTag: "latest",
          autoInstallId: "inst-1", autoFirstSeenVersion: "2026.1.2", autoFirstSeenTag: "latest", autoFirstSeenAt: "2026-01-02T01:00:00.000Z",
          autoLastAttemptVersion: "2026.1.2", autoLastAttemptAt: "2026-01-02T02:00:00.000Z", autoLastSuccessVersion: "2026.1.1", autoLastSuccessAt: "2026-01-01T02:00:00.000Z",
        }),
        updated_at_ms: NOW,
      },
      { state_key: "voicewake.routing", value_json: '{"version":1,"defaultTarget":{"mode":"current"},"routes":[{"trigger":"robot wake","target":{"agentId":"main-agent"}},{"trigger":"ops","target":{"sessionKey":"agent:ops:main"}}],"updatedAtMs":1800000000000}', updated_at_ms: NOW },
      { state_key: "voicewake.triggers", value_json: '["clawd","computer"]', updated_at_ms: NOW },
    ]);

    // 9.6 discards the retired commitments store: no home, so the rows stay in the design-v1 file, named.
    expect(result.unmapped).toEqual({ commitments: 1 });
    expect(result.notes.filter((n) => n.code === "global.commitments.retired")).toHaveLength(1);
    for (const table of ["channel_pairing_requests", "current_conversation_bindings", "workspace_setup_state", "tui_last_sessions", "update_check_state", "voicewake_triggers", "voicewake_routing_config", "voicewake_routing_routes"]) {
      expect(result.notes.some((n) => n.code === "global.kept-unmapped" && n.message.startsWith(`${table}:`))).toBe(false);
    }
    expect(result.read).toMatchObject({ channel_pairing_requests: 2, current_conversation_bindings: 2, workspace_setup_state: 2, tui_last_sessions: 2, update_check_state: 1, voicewake_triggers: 2, voicewake_routing_config: 1, voicewake_routing_routes: 2, commitments: 1 });
    expect(result.written).toMatchObject({ channel_pairing_requests: 2, current_conversation_bindings: 2, workspace_setup_state: 2, workspace_path_aliases: 2 });
  });

  it("leaves out (and names) rows 9.6 drops: heartbeat pointers, code-less requests, bindings superseded by the same conversation", async () => {
    const { paths, stateDir } = makeTempState();
    write(stateDir, "tui/last-session.json", { main: { sessionKey: "agent:main:main", updatedAt: 5 }, hb: { sessionKey: "agent:main:heartbeat", updatedAt: 6 } });
    write(stateDir, "credentials/slack-pairing.json", { version: 1, requests: [{ id: "u1", createdAt: "2026-05-01T10:00:00.000Z" }, { id: "u2", code: "C2", createdAt: "2026-05-01T10:00:00.000Z", meta: { accountId: "T1", n: 3, blank: " " } }] });
    write(stateDir, "bindings/current-conversations.json", {
      version: 1,
      bindings: [
        { targetSessionKey: "agent:main:a", conversation: { channel: "slack", accountId: "Team One", conversationId: "C1", kind: "group" } },
        { targetSessionKey: "agent:main:b", conversation: { channel: "slack", accountId: "Team One", conversationId: "C1", kind: "channel" }, status: "ended" },
      ],
    });
    const { result, target } = await upgrade(stateDir, paths);
    expect(rows(target, "SELECT state_key, value_json, updated_at_ms FROM config_machine_state WHERE state_key LIKE 'tui.%'")).toEqual([{ state_key: "tui.lastSession.main", value_json: '"agent:main:main"', updated_at_ms: 5 }]);
    expect(rows(target, "SELECT account_id, request_id, code, meta_json FROM channel_pairing_requests")).toEqual([{ account_id: "t1", request_id: "u2", code: "C2", meta_json: '{"accountId":"T1"}' }]);
    const key = ["slack", "team-one", "", "C1"].join(SEP);
    expect(rows(target, "SELECT binding_key, target_session_key, status, account_id FROM current_conversation_bindings")).toEqual([{ binding_key: key, target_session_key: "agent:main:b", status: "ended", account_id: "team-one" }]);
    expect(JSON.parse(rows<{ record_json: string }>(target, "SELECT record_json FROM current_conversation_bindings")[0]!.record_json)).toEqual({
      bindingId: `generic:${key}`, targetSessionKey: "agent:main:b", targetKind: "session", conversation: { channel: "slack", accountId: "team-one", conversationId: "C1", kind: "channel" }, status: "ended", boundAt: NOW,
    });
    expect(result.unmapped).toEqual({ tui_last_sessions: 1, channel_pairing_requests: 1, current_conversation_bindings: 1 });
    expect(result.notes.map((n) => n.code)).toEqual(expect.arrayContaining(["global.tui.heartbeat-dropped", "global.pairing.incomplete", "global.pairing.meta-trimmed", "global.binding.superseded"]));
    // Codes are secrets: no note repeats one.
    expect(JSON.stringify(result.notes)).not.toContain("C2");
  });
});

describe("upgradeGlobalDb: workspace reached through a symlink", () => {
  it("keys the setup row by the real path and registers both paths as aliases, as 9.6 does", async () => {
    const { paths, stateDir } = makeTempState();
    copyFixture(stateDir, "workspace-state", "workspace/.openclaw/workspace-state.json", "real/.openclaw/workspace-state.json");
    fs.writeFileSync(path.join(stateDir, "real", "AGENTS.md"), "# agent\n");
    fs.symlinkSync("real", path.join(stateDir, "link"));
    write(stateDir, "openclaw.json", { agents: { defaults: { workspace: path.join(stateDir, "link") } } });
    const { target } = await upgrade(stateDir, paths);
    const real = path.join(fs.realpathSync(stateDir), "real");
    const link = path.join(stateDir, "link");
    expect(rows(target, "SELECT workspace_key, workspace_path, setup_completed_at FROM workspace_setup_state")).toEqual([{ workspace_key: sha256(real), workspace_path: real, setup_completed_at: "2026-01-01T00:10:00.000Z" }]);
    expect(rows(target, "SELECT alias_key, alias_path, workspace_key, workspace_path FROM workspace_path_aliases ORDER BY alias_path")).toEqual(
      [
        { alias_key: sha256(link), alias_path: link, workspace_key: sha256(real), workspace_path: real },
        { alias_key: sha256(real), alias_path: real, workspace_key: sha256(real), workspace_path: real },
      ].sort((a, b) => (a.alias_path < b.alias_path ? -1 : 1)),
    );
  });
});

describe("upgradeGlobalDb: kitchen sink", () => {
  it("maps every channel/settings row of the kitchen sink except the retired commitments", async () => {
    const { paths, stateDir } = makeTempState("migration/kitchen-sink");
    const { result, target } = await upgrade(stateDir, paths);
    const mine = ["channel_pairing_requests", "current_conversation_bindings", "workspace_setup_state", "tui_last_sessions", "update_check_state", "voicewake_triggers", "voicewake_routing_config", "voicewake_routing_routes", "commitments"];
    expect(Object.keys(result.unmapped).filter((t) => mine.includes(t))).toEqual(["commitments"]);
    expect(result.written).toMatchObject({ channel_pairing_requests: 1, current_conversation_bindings: 2, workspace_setup_state: 1, workspace_path_aliases: 1 });
    const keys = rows<{ state_key: string }>(target, "SELECT state_key FROM config_machine_state WHERE state_key LIKE 'tui.%' OR state_key LIKE 'update.%' OR state_key LIKE 'voicewake.%' ORDER BY state_key").map((r) => r.state_key.replace(/^(tui\.lastSession)\..*$/, "$1"));
    expect(keys).toEqual(["tui.lastSession", "tui.lastSession", "update.checkState", "voicewake.routing", "voicewake.triggers"]);
  });
});
