// The core kinds of issue 13 item 2, one fixture each: channel pairing and allowFrom, node.json, push, Voice Wake,
// plugin binding approvals, the restart sentinel, ACPX state, the ACP ledger, the plugin index, media files and the
// never-shipped sidecar databases. Each: typed rows, a ledger row, an idempotent re-import, no secret shown.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { channelAndAccount } from "../../../src/migration/importers/channel-pairing.js";
import { endpointHash } from "../../../src/migration/importers/node-and-push.js";
import { makeTempState, runInProcess } from "../../helpers/temp-state.js";
import { fakeBackup, migrate, rows } from "../../helpers/migration.js";
import { expectLedger, expectReimportIdempotent, restoreRetired } from "../../helpers/control-plane.js";

type Row = Record<string, unknown>;

describe("channel pairing", () => {
  it("imports allowFrom lists per channel and account (order kept, duplicates and '*' dropped) and pending requests", async () => {
    const { paths } = makeTempState("migration/channel-pairing");
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning"); // the "*" entry and the non-string item are reported
    const allow = rows<Row>(paths.globalDbPath, "SELECT channel_key, account_id, entry, sort_order FROM channel_pairing_allow_entries ORDER BY channel_key, account_id, sort_order");
    expect(allow).toEqual([
      { channel_key: "nextcloud-talk", account_id: "default", entry: "alice", sort_order: 0 },
      { channel_key: "telegram", account_id: "default", entry: "123456789", sort_order: 0 },
      { channel_key: "telegram", account_id: "default", entry: "987654321", sort_order: 1 },
      { channel_key: "telegram", account_id: "default", entry: "42", sort_order: 2 },
      { channel_key: "telegram", account_id: "work", entry: "555000111", sort_order: 0 },
    ]);
    const telegram = run.sources.find((s) => s.relativePath === "credentials/telegram-allowFrom.json")!;
    expect(telegram.warnings.join("\n")).toMatch(/a "\*" entry was not imported: open access is set with channels\.telegram\.dmPolicy/);
    const requests = rows<Row>(paths.globalDbPath, "SELECT channel_key, account_id, request_id, code, created_at, last_seen_at, meta_json FROM channel_pairing_requests ORDER BY request_id");
    expect(requests).toEqual([
      { channel_key: "telegram", account_id: "default", request_id: "777000111", code: "PAIRCODE-PLANTED-1", created_at: Date.parse("2026-05-01T10:00:00.000Z"), last_seen_at: Date.parse("2026-05-01T10:05:00.000Z"), meta_json: '{"username":"newuser"}' },
      { channel_key: "telegram", account_id: "work", request_id: "777000222", code: "PAIRCODE-PLANTED-2", created_at: Date.parse("2026-05-01T11:00:00.000Z"), last_seen_at: Date.parse("2026-05-01T11:00:00.000Z"), meta_json: '{"accountId":"Work"}' },
    ]);
    expectLedger(paths, run, "channel-allow-from", "channel_pairing_allow_entries", { "credentials/nextcloud-talk-allowFrom.json": 1, "credentials/telegram-allowFrom.json": 5, "credentials/telegram-work-allowFrom.json": 1 });
    expectLedger(paths, run, "channel-pairing", "channel_pairing_requests", { "credentials/telegram-pairing.json": 3 });
    await expectReimportIdempotent(paths, run);
  });

  it("splits file names into channel and account", () => {
    expect(channelAndAccount("telegram")).toEqual({ channel: "telegram", account: "default" });
    expect(channelAndAccount("Telegram-Work")).toEqual({ channel: "telegram", account: "work" });
    expect(channelAndAccount("nextcloud-talk-ops")).toEqual({ channel: "nextcloud-talk", account: "ops" });
    expect(channelAndAccount("synology-chat")).toEqual({ channel: "synology-chat", account: "default" });
  });
});

describe("node host config and push", () => {
  it("imports node.json into the node_host_config singleton", async () => {
    const { paths } = makeTempState("migration/node-host");
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT config_key, version, node_id, token, display_name, gateway_host, gateway_port, gateway_tls, gateway_tls_fingerprint FROM node_host_config")).toEqual([
      { config_key: "default", version: 1, node_id: "node-7f3e", token: "nodetok-PLANTED-SECRET-123", display_name: "Kitchen Mac", gateway_host: "gw.local", gateway_port: 18789, gateway_tls: 1, gateway_tls_fingerprint: "AB:CD:EF" },
    ]);
    expectLedger(paths, run, "node-host-config", "node_host_config", { "node.json": 1 });
    await expectReimportIdempotent(paths, run);
  });

  it("imports web push subscriptions (keyed by the endpoint's hash), the VAPID key pair and APNs registrations", async () => {
    const { paths } = makeTempState("migration/push");
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT * FROM web_push_subscriptions")).toEqual([
      { endpoint_hash: endpointHash("https://push.example.com/send/abc"), subscription_id: "sub-1", endpoint: "https://push.example.com/send/abc", p256dh: "BPLANTED-P256DH", auth: "auth-PLANTED-SECRET", created_at_ms: 1767000000000, updated_at_ms: 1767000001000 },
    ]);
    expect(endpointHash("https://push.example.com/send/abc")).toMatch(/^[0-9a-f]{32}$/);
    expect(rows(paths.globalDbPath, "SELECT key_id, public_key, private_key, subject FROM web_push_vapid_keys")).toEqual([{ key_id: "default", public_key: "BPUBLIC-VAPID-KEY", private_key: "vapid-PLANTED-PRIVATE-KEY", subject: "mailto:ops@example.com" }]);
    expect(rows(paths.globalDbPath, "SELECT node_id, transport, token, relay_handle, send_grant, installation_id, topic, environment, distribution, token_debug_suffix, updated_at_ms FROM apns_registrations ORDER BY node_id")).toEqual([
      { node_id: "ios-1", transport: "direct", token: "abcdef0123456789abcdef0123456789deadbeef0badc0de", relay_handle: null, send_grant: null, installation_id: null, topic: "ai.openclaw.ios", environment: "sandbox", distribution: null, token_debug_suffix: null, updated_at_ms: 1767000002000 },
      { node_id: "ios-2", transport: "relay", token: null, relay_handle: "relay-h", send_grant: "grant-PLANTED-SECRET", installation_id: "inst-1", topic: "ai.openclaw.ios", environment: "production", distribution: "official", token_debug_suffix: "abcd1234", updated_at_ms: 1767000003000 },
    ]);
    expectLedger(paths, run, "web-push-subscriptions", "web_push_subscriptions", { "push/web-push-subscriptions.json": 2 });
    expectLedger(paths, run, "web-push-vapid-keys", "web_push_vapid_keys", { "push/vapid-keys.json": 1 });
    expectLedger(paths, run, "apns-registrations", "apns_registrations", { "push/apns-registrations.json": 2 });
    await expectReimportIdempotent(paths, run);
  });

  it("imports only APNs registrations OpenClaw 2026.9.6's store can read, in its canonical form; the others are named and kept in the file", async () => {
    // Its runtime loads every row through one schema and throws on the first it rejects: one such row would stop
    // every device's push (push-apns-store: loadApnsRegistrations).
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(path.join(stateDir, "push"), { recursive: true });
    const token = "A".repeat(64);
    fs.writeFileSync(
      path.join(stateDir, "push/apns-registrations.json"),
      JSON.stringify({
        registrationsByNodeId: {
          "ios-ok": { nodeId: "ios-ok", token: `<${token.slice(0, 32)} ${token.slice(32)}>`, topic: " ai.openclaw.ios ", updatedAtMs: 0 },
          "ios-not-hex": { nodeId: "ios-not-hex", transport: "direct", token: "not-a-hex-token-SECRET-0123456789abcdef", topic: "ai.openclaw.ios", environment: "sandbox", updatedAtMs: 5 },
          "ios-no-topic": { nodeId: "ios-no-topic", token, environment: "production", updatedAtMs: 6 },
          "relay-ok": { transport: "relay", relayHandle: "h", sendGrant: "g", installationId: "i", topic: "t", environment: "Production", distribution: "Official", tokenDebugSuffix: " ab-CD-1234567890 ", updatedAtMs: 7 },
          "relay-beta": { transport: "relay", relayHandle: "h", sendGrant: "g", installationId: "i", topic: "t", environment: "production", distribution: "beta", updatedAtMs: 8 },
          "relay-bad-env": { transport: "relay", relayHandle: "h", sendGrant: "g", installationId: "i", topic: "t", distribution: "official", updatedAtMs: 9 },
        },
      }),
    );
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT node_id, transport, token, topic, environment, distribution, token_debug_suffix, updated_at_ms FROM apns_registrations ORDER BY node_id")).toEqual([
      { node_id: "ios-ok", transport: "direct", token: "a".repeat(64), topic: "ai.openclaw.ios", environment: "sandbox", distribution: null, token_debug_suffix: null, updated_at_ms: 0 },
      { node_id: "relay-ok", transport: "relay", token: null, topic: "t", environment: "production", distribution: "official", token_debug_suffix: "34567890", updated_at_ms: 7 },
    ]);
    const source = run.sources.find((o) => o.kind === "apns-registrations")!;
    expect(source.status).toBe("warning");
    expect(source.warnings.join("\n")).not.toMatch(/SECRET/);
    expect(source.warnings.map((w) => /node "([^"]+)"/.exec(w)?.[1])).toEqual(["ios-not-hex", "ios-no-topic", "relay-beta", "relay-bad-env"]);
  });
});

describe("gateway settings", () => {
  it("imports Voice Wake triggers and routing normalized as the runtime does; a shorter list replaces the old one", async () => {
    const { paths, stateDir } = makeTempState("migration/voicewake");
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT config_key, position, trigger, updated_at_ms FROM voicewake_triggers ORDER BY position")).toEqual([
      { config_key: "default", position: 0, trigger: "clawd", updated_at_ms: 1767000004000 },
      { config_key: "default", position: 1, trigger: "computer", updated_at_ms: 1767000004000 },
    ]);
    expect(rows(paths.globalDbPath, "SELECT config_key, version, default_target_mode, default_target_agent_id, default_target_session_key FROM voicewake_routing_config")).toEqual([
      { config_key: "default", version: 1, default_target_mode: "current", default_target_agent_id: null, default_target_session_key: null },
    ]);
    expect(rows(paths.globalDbPath, "SELECT position, trigger, target_mode, target_agent_id, target_session_key FROM voicewake_routing_routes ORDER BY position")).toEqual([
      { position: 0, trigger: "robot wake", target_mode: "agent", target_agent_id: "main-agent", target_session_key: null },
      { position: 1, trigger: "ops", target_mode: "session", target_agent_id: null, target_session_key: "agent:ops:main" },
    ]);
    expectLedger(paths, run, "voicewake-triggers", "voicewake_triggers", { "settings/voicewake.json": 3 });
    expectLedger(paths, run, "voicewake-routing", "voicewake_routing_config", { "settings/voicewake-routing.json": 3 });
    await expectReimportIdempotent(paths, run);
    // An edited, shorter list: the old tail goes.
    fs.mkdirSync(path.join(stateDir, "settings"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "settings/voicewake.json"), JSON.stringify({ triggers: ["hey"] }));
    await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT position, trigger FROM voicewake_triggers")).toEqual([{ position: 0, trigger: "hey" }]);
  });

  it("imports plugin binding approvals and the restart sentinel", async () => {
    const { paths, stateDir } = makeTempState("migration/plugin-binding-approvals");
    fs.cpSync(path.join(process.cwd(), "fixtures/migration/restart-sentinel"), stateDir, { recursive: true });
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT * FROM plugin_binding_approvals ORDER BY channel")).toEqual([
      { plugin_root: "/plugins/codex-a", channel: "discord", account_id: "default", plugin_id: "codex", plugin_name: "Codex App Server", approved_at: 1234 },
      { plugin_root: "/plugins/codex-b", channel: "slack", account_id: "Work", plugin_id: "codex", plugin_name: " Codex B ", approved_at: 3456 },
      { plugin_root: "/plugins/codex-a", channel: "telegram", account_id: "default", plugin_id: "codex", plugin_name: null, approved_at: 2345 },
    ]);
    const [sentinel] = rows<Row>(paths.globalDbPath, "SELECT * FROM gateway_restart_sentinel");
    expect(sentinel).toMatchObject({ sentinel_key: "default", version: 1, kind: "config-apply", status: "ok", ts: 1767000006000, session_key: "agent:main:whatsapp:dm:+15555550123", thread_id: "42", delivery_channel: "whatsapp", delivery_to: "+15555550123", delivery_account_id: "default", message: "config applied", stats_json: '{"mode":"config.patch"}' });
    expect(JSON.parse(sentinel!.payload_json as string)).toMatchObject({ kind: "config-apply" });
    expectLedger(paths, run, "plugin-binding-approvals", "plugin_binding_approvals", { "plugin-binding-approvals.json": 3 });
    expectLedger(paths, run, "restart-sentinel", "gateway_restart_sentinel", { "restart-sentinel.json": 1 });
    await expectReimportIdempotent(paths, run);
  });

  it("keeps a plugin binding approval's account id as written (trimmed), as 2026.9.6's runtime matches it", async () => {
    const { paths, stateDir } = makeTempState("migration/plugin-binding-approvals");
    const approvals = [{ pluginRoot: "/plugins/codex-a", pluginId: "codex", pluginName: " Codex ", channel: " Discord ", accountId: "  Work ", approvedAt: 1234 }];
    fs.writeFileSync(path.join(stateDir, "plugin-binding-approvals.json"), JSON.stringify({ version: 1, approvals }));
    await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT * FROM plugin_binding_approvals")).toEqual([
      { plugin_root: "/plugins/codex-a", channel: "discord", account_id: "Work", plugin_id: "codex", plugin_name: " Codex ", approved_at: 1234 },
    ]);
  });
});

describe("ACP and ACPX state, the plugin index", () => {
  it("imports the ACP replay ledger: valid sessions and events only, in seq order", async () => {
    const { paths } = makeTempState("migration/acp-ledger");
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT * FROM acp_replay_sessions")).toEqual([{ session_id: "acp-1", session_key: "agent:main:work", cwd: "/work", complete: 1, created_at: 1000, updated_at: 3000, next_seq: 3 }]);
    const events = rows<Row>(paths.globalDbPath, "SELECT session_id, seq, at, session_key, run_id, update_json FROM acp_replay_events ORDER BY seq");
    expect(events.map((e) => [e.seq, e.run_id, JSON.parse(e.update_json as string).sessionUpdate])).toEqual([[1, "run-1", "user_message_chunk"], [2, null, "agent_message_chunk"]]);
    expect(run.sources[0]!.warnings.join("\n")).toMatch(/1 session\(s\) with missing or mistyped fields were skipped[\s\S]*1 event\(s\)/);
    expectLedger(paths, run, "acp-event-ledger", "acp_replay_sessions", { "acp/event-ledger.json": 2 });
    await expectReimportIdempotent(paths, run);
  });

  it("puts the gateway instance id and the process leases where the ACPX runtime reads them", async () => {
    const { paths } = makeTempState("migration/acpx");
    // A row an earlier version of this tool wrote under a key nothing reads: moved by the re-import.
    const seeded = await migrate(paths, { withPlan: true });
    const db = new Database(paths.globalDbPath);
    db.prepare("INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at) VALUES ('gateway', 'instance', 'id', '\"gw-old\"', 1)").run();
    db.close();
    const entries = () => rows<Row>(paths.globalDbPath, "SELECT plugin_id, namespace, entry_key, value_json, created_at FROM plugin_state_entries ORDER BY plugin_id, namespace, entry_key");
    expect(entries().map((e) => [e.plugin_id, e.namespace, e.entry_key])).toContainEqual(["gateway", "instance", "id"]);
    restoreRetired(paths, seeded.run);
    await migrate(paths);
    const after = entries();
    expect(after.map((e) => [e.plugin_id, e.namespace, e.entry_key])).toEqual([["acpx", "gateway-instance", "current"], ["acpx", "process-leases", "lease-1"]]);
    expect(JSON.parse(after[0]!.value_json as string)).toEqual({ instanceId: "gw-instance-42", createdAt: after[0]!.created_at });
    expect(JSON.parse(after[1]!.value_json as string)).toMatchObject({ leaseId: "lease-1", rootPid: 4242, state: "open" });
    expect(after[1]!.created_at).toBe(1767000007000);
  });

  it("imports the whole installed-plugin index into its singleton row", async () => {
    const { paths } = makeTempState("migration/plugin-index");
    const { run } = await migrate(paths);
    const [index] = rows<Row>(paths.globalDbPath, "SELECT * FROM installed_plugin_index");
    expect(index).toMatchObject({ index_key: "default", version: 1, host_contract_version: "2026.4.25", compat_registry_version: "compat-v1", migration_version: 1, policy_hash: "policy-v1", generated_at_ms: 1777118400000, warning: "Managed by OpenClaw: do not edit.", diagnostics_json: "[]" });
    expect(Object.keys(JSON.parse(index!.install_records_json as string))).toEqual(["voice-call"]);
    expect(JSON.parse(index!.plugins_json as string)).toHaveLength(1);
    expectLedger(paths, run, "plugin-installs", "installed_plugin_index", { "plugins/installs.json": 1 });
    await expectReimportIdempotent(paths, run);
  });
});

describe("media files", () => {
  it("imports each file into media_blobs by (subdir, id) with its bytes and content type; partial downloads are not media", async () => {
    const { paths, stateDir } = makeTempState("migration/media");
    const png = fs.readFileSync(path.join(stateDir, "media/inbound/photo---1b4e28ba-2fa1-11d2-883f-0016d3cca427.png"));
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.map((s) => s.relativePath)).toEqual(["media/inbound/photo---1b4e28ba-2fa1-11d2-883f-0016d3cca427.png", "media/note.txt", "media/outbound/report.pdf"]);
    const blobs = rows<{ subdir: string; id: string; content_type: string | null; size_bytes: number; blob: Buffer }>(paths.globalDbPath, "SELECT subdir, id, content_type, size_bytes, blob FROM media_blobs ORDER BY subdir, id");
    expect(blobs.map((b) => [b.subdir, b.id, b.content_type, b.size_bytes])).toEqual([
      ["", "note.txt", "text/plain", 5],
      ["inbound", "photo---1b4e28ba-2fa1-11d2-883f-0016d3cca427.png", "image/png", png.length],
      ["outbound", "report.pdf", "application/pdf", 13],
    ]);
    expect(Buffer.compare(blobs[1]!.blob, png)).toBe(0);
    expect(fs.existsSync(path.join(stateDir, "media/inbound/download.tmp"))).toBe(true);
    expectLedger(paths, run, "media", "media_blobs", { "media/inbound/photo---1b4e28ba-2fa1-11d2-883f-0016d3cca427.png": 1, "media/note.txt": 1, "media/outbound/report.pdf": 1 });
    await expectReimportIdempotent(paths, run);
  });
});

describe("never-shipped sidecar databases", () => {
  function seedSidecars(stateDir: string): void {
    for (const rel of ["plugin-state/state.sqlite", "tasks/runs.sqlite"]) {
      fs.mkdirSync(path.dirname(path.join(stateDir, rel)), { recursive: true });
      const db = new Database(path.join(stateDir, rel));
      db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)");
      db.close();
    }
    fs.mkdirSync(path.join(stateDir, "flows"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "flows/registry.sqlite"), "not a database");
  }

  it("are deleted after the verified backup, reported and recorded; a non-SQLite file of that name is left alone", async () => {
    const { paths, stateDir, root } = makeTempState();
    seedSidecars(stateDir);
    const backup = fakeBackup(path.join(root, "backups"));
    const { plan, run } = await migrate(paths, { backup: true, takeBackup: backup });
    expect(backup.calls).toBe(1);
    expect(plan!.sources.map((s) => [s.relativePath, s.action])).toEqual([
      ["flows/registry.sqlite", "skip"],
      ["plugin-state/state.sqlite", "import"],
      ["tasks/runs.sqlite", "import"],
    ]);
    expect(run.sources.filter((s) => s.kind === "sqlite-sidecar" && s.status !== "skipped").map((s) => [s.relativePath, s.retired])).toEqual([
      ["plugin-state/state.sqlite", "deleted"],
      ["tasks/runs.sqlite", "deleted"],
    ]);
    expect(fs.existsSync(path.join(stateDir, "plugin-state/state.sqlite"))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "migrated", run.runId, "plugin-state/state.sqlite"))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "flows/registry.sqlite"))).toBe(true);
    expect(rows(paths.globalDbPath, "SELECT source_path, target_table, status, removed_source FROM migration_sources ORDER BY source_path")).toEqual([
      { source_path: "plugin-state/state.sqlite", target_table: "(deleted)", status: "imported", removed_source: 1 },
      { source_path: "tasks/runs.sqlite", target_table: "(deleted)", status: "imported", removed_source: 1 },
    ]);
  });

  it("are moved, not deleted, when the run takes no backup", async () => {
    const { paths, stateDir } = makeTempState();
    seedSidecars(stateDir);
    const { run } = await migrate(paths);
    const moved = run.sources.find((s) => s.relativePath === "tasks/runs.sqlite")!;
    expect(moved.retired).toBe("moved");
    expect(fs.existsSync(path.join(stateDir, "migrated", run.runId, "tasks/runs.sqlite"))).toBe(true);
  });
});

describe("secrets in the new kinds", () => {
  const PLANTED = ["PAIRCODE-PLANTED", "nodetok-PLANTED", "auth-PLANTED", "vapid-PLANTED", "grant-PLANTED", "deadbeef0badc0de", "DEADBEEF 0BADC0DE"];

  it("never reach stdout, stderr, --json, the run report or the ledger, also when a file fails", async () => {
    const { env, paths, stateDir } = makeTempState("migration/push");
    fs.cpSync(path.join(process.cwd(), "fixtures/migration/node-host"), stateDir, { recursive: true });
    fs.cpSync(path.join(process.cwd(), "fixtures/migration/channel-pairing"), stateDir, { recursive: true });
    // A malformed copy holding a secret: its failure must not quote it.
    fs.writeFileSync(path.join(stateDir, "credentials/slack-pairing.json"), '{"requests": [{"id": "1", "code": "PAIRCODE-PLANTED-3", ');
    const outputs = [
      await runInProcess(["migrate", "plan", "--verbose"], env),
      await runInProcess(["doctor", "--json"], env),
      await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json", "--verbose"], env),
      await runInProcess(["migrate", "history", "--json"], env),
    ];
    const text = outputs.map((o) => o.stdout + o.stderr).join("\n");
    const reports = rows<{ report_json: string }>(paths.globalDbPath, "SELECT report_json FROM migration_sources UNION ALL SELECT report_json FROM migration_runs").map((r) => r.report_json).join("\n");
    expect(text).toMatch(/slack-pairing\.json/);
    for (const secret of PLANTED) {
      expect(text.includes(secret), `${secret} in output`).toBe(false);
      expect(reports.includes(secret), `${secret} in the ledger`).toBe(false);
    }
  });
});
