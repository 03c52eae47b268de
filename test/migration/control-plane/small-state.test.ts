// Small state files → typed tables (update_check_state, config_health_entries, tui_last_sessions, commitments) or
// plugin_state_entries under the owner's namespace (gateway-instance-id, settings/tts.json, logs/config-audit.jsonl,
// audit/*.jsonl, plugins/installs.json). Shapes: update-check.json's UpdateCheckState fields (ISO timestamps) from
// OpenClaw's src/infra/update-startup.ts; tui/last-session.json, logs/config-audit.jsonl, audit/crestodian.jsonl
// paths from OpenClaw state-dir listings; settings/tts.json under plugin "speech-core" from OpenClaw's changelog.
// The inner shapes of config-health.json, last-session.json, commitments.json and installs.json are not spelled
// out publicly: the fixtures use camelCase fields named after the seed's columns (documented in docs/migration.md).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../../helpers/temp-state.js";
import { migrate, rows } from "../../helpers/migration.js";
import { corrupt, expectLedger, expectReimportIdempotent } from "../../helpers/control-plane.js";

describe("small state importers", () => {
  it("maps every field of each file, records the ledger rows, and re-imports idempotently", async () => {
    const { paths } = makeTempState("migration/small-state");
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.map((s) => [s.kind, s.records])).toEqual([
      ["update-check", 1],
      ["config-health", 1],
      ["tui-last-session", 2],
      ["commitments", 1],
      ["gateway-instance-id", 1],
      ["tts-settings", 1],
      ["config-audit", 2],
      ["audit-log", 2],
      ["plugin-installs", 1],
    ]);
    expect(run.status).toBe("completed");
    const db = paths.globalDbPath;
    expect(rows(db, "SELECT * FROM update_check_state")).toEqual([
      {
        state_key: "default", last_checked_at: Date.parse("2026-01-02T00:00:00.000Z"), last_notified_version: "2026.1.1", last_notified_tag: "latest",
        last_available_version: "2026.1.2", last_available_tag: "latest", auto_install_id: "inst-1", auto_first_seen_version: "2026.1.2",
        auto_first_seen_tag: "latest", auto_first_seen_at: Date.parse("2026-01-02T01:00:00.000Z"), auto_last_attempt_version: "2026.1.2",
        auto_last_attempt_at: Date.parse("2026-01-02T02:00:00.000Z"), auto_last_success_version: "2026.1.1",
        auto_last_success_at: Date.parse("2026-01-01T02:00:00.000Z"), updated_at_ms: expect.any(Number),
      },
    ]);
    expect(rows(db, "SELECT * FROM config_health_entries")).toEqual([
      {
        config_path: "/home/u/.openclaw/openclaw.json",
        last_known_good_json: '{"sha256":"aa11","bytes":812,"observedAt":"2026-01-01T00:00:00.000Z"}',
        last_promoted_good_json: '{"sha256":"aa11","bytes":812}',
        last_observed_suspicious_signature: "bb22:clobbered",
        updated_at_ms: 1767225600000,
      },
    ]);
    expect(rows(db, "SELECT * FROM tui_last_sessions ORDER BY scope_key")).toEqual([
      { scope_key: "ws://127.0.0.1:18789#main", session_key: "agent:main:main", updated_at: 1767300000000 },
      { scope_key: "ws://127.0.0.1:18789#ops", session_key: "agent:ops:main", updated_at: 1767300001000 },
    ]);
    const [c] = rows<Record<string, unknown>>(db, "SELECT * FROM commitments");
    expect(c).toEqual({
      id: "cm-1", agent_id: "main", session_key: "agent:main:main", channel: "telegram", account_id: "bot-a", recipient_id: "u-1", thread_id: "7",
      sender_id: "u-2", kind: "follow-up", sensitivity: "normal", source: "inferred", status: "pending", reason: "promised a reply",
      suggested_text: "Here is the report", dedupe_key: "d-1", confidence: 0.8, due_earliest_ms: 1767400000000, due_latest_ms: 1767403600000,
      due_timezone: "Europe/Lisbon", source_message_id: "m-1", source_run_id: "r-1", created_at_ms: 1767300000000, updated_at_ms: 1767300005000,
      attempts: 1, last_attempt_at_ms: 1767400001000, sent_at_ms: null, dismissed_at_ms: null, snoozed_until_ms: 1767401000000, expired_at_ms: null,
      record_json: expect.stringContaining('"id":"cm-1"'),
    });
    const plugin = rows<{ plugin_id: string; namespace: string; entry_key: string; value_json: string }>(db, "SELECT plugin_id, namespace, entry_key, value_json FROM plugin_state_entries ORDER BY plugin_id, namespace, entry_key");
    expect(plugin.map((p) => [p.plugin_id, p.namespace, p.entry_key.replace(/:[0-9a-f]{16}$/, ":<hash>")])).toEqual([
      // Where the ACPX runtime reads the gateway instance id.
      ["acpx", "gateway-instance", "current"],
      ["core", "config-audit", "00000001:<hash>"],
      ["core", "config-audit", "00000002:<hash>"],
      ["crestodian", "audit", "00000001:<hash>"],
      ["crestodian", "audit", "00000003:<hash>"],
      ["speech-core", "tts-preferences", "default"],
    ]);
    // The record the ACPX runtime accepts ({instanceId, createdAt}: the file's mtime); it mints a new id over any other.
    expect(JSON.parse(plugin.find((p) => p.plugin_id === "acpx")!.value_json)).toEqual({ instanceId: "gw-7f3e2d1c", createdAt: expect.any(Number) });
    // plugins/installs.json is the installed-plugin index singleton row (an older install map: no manifest cache).
    const index = rows<{ index_key: string; version: number; install_records_json: string; plugins_json: string }>(db, "SELECT index_key, version, install_records_json, plugins_json FROM installed_plugin_index");
    expect(index.map((r) => [r.index_key, r.version, Object.keys(JSON.parse(r.install_records_json)), r.plugins_json])).toEqual([["default", 1, ["voice-call"], "[]"]]);
    expect(JSON.parse(plugin.find((p) => p.plugin_id === "speech-core")!.value_json)).toEqual({ provider: "elevenlabs", voice: "Rachel", auto: "inbound", maxLength: 1500 });
    expect(JSON.parse(plugin[1]!.value_json)).toEqual({ ts: 1767000000000, event: "config.write", path: "openclaw.json", sha256: "aa11" });
    expectLedger(paths, run, "update-check", "update_check_state", { "update-check.json": 1 });
    expectLedger(paths, run, "config-health", "config_health_entries", { "logs/config-health.json": 1 });
    expectLedger(paths, run, "tui-last-session", "tui_last_sessions", { "tui/last-session.json": 2 });
    expectLedger(paths, run, "commitments", "commitments", { "commitments.json": 1 });
    expectLedger(paths, run, "gateway-instance-id", "plugin_state_entries", { "gateway-instance-id": 1 });
    expectLedger(paths, run, "tts-settings", "plugin_state_entries", { "settings/tts.json": 1 });
    expectLedger(paths, run, "config-audit", "plugin_state_entries", { "logs/config-audit.jsonl": 2 });
    expectLedger(paths, run, "audit-log", "plugin_state_entries", { "audit/crestodian.jsonl": 2 });
    expectLedger(paths, run, "plugin-installs", "installed_plugin_index", { "plugins/installs.json": 1 });
    await expectReimportIdempotent(paths, run);
  });

  it("a grown audit log re-imports without duplicating lines; the single-pointer TUI shape becomes scope default", async () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(path.join(stateDir, "logs"), { recursive: true });
    fs.mkdirSync(path.join(stateDir, "tui"), { recursive: true });
    const log = path.join(stateDir, "logs/config-audit.jsonl");
    fs.writeFileSync(log, '{"ts":1,"event":"a"}\n');
    fs.writeFileSync(path.join(stateDir, "tui/last-session.json"), JSON.stringify({ sessionKey: "agent:main:main", updatedAt: 9 }));
    const first = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT * FROM tui_last_sessions")).toEqual([{ scope_key: "default", session_key: "agent:main:main", updated_at: 9 }]);
    // The same log, grown by one line and a truncated tail, comes back.
    fs.mkdirSync(path.dirname(log), { recursive: true });
    fs.renameSync(first.run.sources.find((o) => o.kind === "config-audit")!.retiredTo!, log);
    fs.appendFileSync(log, '{"ts":2,"event":"b"}\n{"ts":3,"ev');
    const second = await migrate(paths);
    expect(second.run.sources[0]).toMatchObject({ kind: "config-audit", status: "warning", warnings: [expect.stringMatching(/:3: truncated final line dropped/)] });
    expect(rows(paths.globalDbPath, "SELECT count(*) AS n FROM plugin_state_entries WHERE namespace = 'config-audit'")).toEqual([{ n: 2 }]);
  });

  it("keeps malformed files in place (failed) while the other kinds import", async () => {
    const { paths, stateDir } = makeTempState("migration/small-state");
    corrupt(stateDir, "commitments.json");
    corrupt(stateDir, "logs/config-audit.jsonl", '{"ts":1}\nnot json\n{"ts":2}\n');
    fs.writeFileSync(path.join(stateDir, "gateway-instance-id"), "a\nb\n");
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.filter((o) => o.status === "failed").map((o) => [o.relativePath, o.reason])).toEqual([
      ["commitments.json", expect.stringMatching(/invalid JSON/)],
      ["gateway-instance-id", expect.stringMatching(/expected one line/)],
      ["logs/config-audit.jsonl", expect.stringMatching(/config-audit\.jsonl:2: not a JSON line/)],
    ]);
    expect(run.sources.filter((o) => o.status === "imported")).toHaveLength(6);
    for (const f of ["commitments.json", "gateway-instance-id", "logs/config-audit.jsonl"]) expect(fs.existsSync(path.join(stateDir, f))).toBe(true);
  });
});
