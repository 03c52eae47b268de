// upgradeGlobalDb for device/node pairing, node-host config and VAPID keys: rows where openclaw@2026.9.6's own doctor puts them.
// Expected rows are hand-written from 9.6's `doctor --fix` on the same legacy files (observed runs, 2026-12-04).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { migrateAndUpgradeGlobal, rows, writeJson } from "../../helpers/migration.js";
import type { StatePaths } from "../../../src/state/paths.js";
import { makeTempState } from "../../helpers/temp-state.js";

const NOW = 1_800_000_000_000;

const upgrade = (stateDir: string, paths: StatePaths) => migrateAndUpgradeGlobal(stateDir, paths, NOW);
const write = writeJson;

const machineState = (target: string) => rows(target, "SELECT * FROM config_machine_state WHERE state_key IN ('nodeHost.config', 'webPush.vapidKeys') ORDER BY state_key");

describe("upgradeGlobalDb: devices, nodes, node host and VAPID keys", () => {
  it("writes paired devices with folded node surfaces and the node-host/VAPID rows 9.6 writes; pending and orphans stay unmapped", async () => {
    const { paths, stateDir } = makeTempState();
    write(stateDir, "devices/paired.json", {
      "dev-phone": {
        deviceId: "dev-phone", publicKey: "MCowBQYDK2VwAyEAphone", displayName: "Phone", platform: "ios", roles: ["operator"], scopes: ["operator.read"],
        tokens: { operator: { token: "pairtok-PLANTED-PAIRED-TOKEN-789", role: "operator", scopes: ["operator.read"], createdAtMs: 1767200000000 } },
        createdAtMs: 1767200000000, approvedAtMs: 1767200005000,
      },
      "dev-mac": {
        deviceId: "dev-mac", publicKey: "MCowBQYDK2VwAyEAmac", displayName: "Mac mini", platform: 42, clientId: "openclaw-macos", clientMode: "node",
        role: "node", roles: ["node", "operator"], scopes: [], approvedScopes: ["operator.read"], remoteIp: "10.0.0.7", approvedVia: "owner", extraField: "x",
        tokens: { node: { token: "nodetok-PLANTED-789", role: "node", scopes: [], createdAtMs: 1767500000000 } },
        createdAtMs: 1767500000000, approvedAtMs: 1767500001000, lastSeenAtMs: "yesterday",
      },
      "dev-broken": { deviceId: "dev-broken", publicKey: "MCowBQYDK2VwAyEAbroken", createdAtMs: 1767000000000 },
    });
    write(stateDir, "devices/pending.json", { "req-1": { requestId: "req-1", deviceId: "dev-laptop", publicKey: "MCowBQYDK2VwAyEAlaptop", role: "operator", remoteIp: "10.0.0.5", ts: 1767300000000 } });
    write(stateDir, "devices/bootstrap.json", { "boot-PLANTED-BOOTSTRAP-TOKEN-xyz": { token: "boot-PLANTED-BOOTSTRAP-TOKEN-xyz", role: "node", createdAtMs: 1767400000000 } });
    write(stateDir, "nodes/paired.json", {
      "dev-mac": {
        nodeId: "dev-mac", token: "legacy-node-token", displayName: "Mac mini", platform: "macos", version: "2026.3.1", coreVersion: "2026.3.1", modelIdentifier: "Macmini9,1",
        caps: ["canvas", "camera"], commands: ["system.run", "canvas.present"], permissions: { camera: true }, createdAtMs: 1767500000000, approvedAtMs: 1767500001000, lastConnectedAtMs: 1767550000000,
      },
      "node-orphan": { nodeId: "node-orphan", displayName: "Orphan", createdAtMs: 1767500000000, approvedAtMs: 1767500001000 },
    });
    write(stateDir, "nodes/pending.json", { "req-n2": { requestId: "req-n2", nodeId: "node-pi", displayName: "Pi", ts: 1767600001000 } });
    write(stateDir, "node.json", { version: 1, nodeId: "node-7f3e", token: "nodetok-PLANTED-SECRET-123", displayName: "Kitchen Mac", gateway: { host: "gw.local", port: 18789, tls: true, tlsFingerprint: "AB:CD:EF" } });
    fs.utimesSync(path.join(stateDir, "node.json"), 1767000000.789, 1767000000.789);
    write(stateDir, "push/vapid-keys.json", { publicKey: "BPUBLIC-VAPID-KEY", privateKey: "vapid-PLANTED-PRIVATE-KEY", subject: "mailto:ops@example.com" });
    const { result, target } = await upgrade(stateDir, paths);

    expect(rows(target, "SELECT * FROM device_pairing_paired ORDER BY device_id")).toEqual([
      {
        device_id: "dev-mac", public_key: "MCowBQYDK2VwAyEAmac", display_name: "Mac mini", operator_label: null, platform: null, device_family: null,
        client_id: "openclaw-macos", client_mode: "node", browser_origin: null, role: "node", roles_json: '["node","operator"]', scopes_json: "[]",
        approved_scopes_json: '["operator.read"]', remote_ip: "10.0.0.7",
        tokens_json: '{"node":{"token":"nodetok-PLANTED-789","role":"node","scopes":[],"createdAtMs":1767500000000}}', approved_via: "owner",
        node_surface_json: '{"displayName":"Mac mini","version":"2026.3.1","coreVersion":"2026.3.1","modelIdentifier":"Macmini9,1","caps":["canvas","camera"],"commands":["system.run","canvas.present"],"permissions":{"camera":true},"createdAtMs":1767500000000,"approvedAtMs":1767500001000,"lastConnectedAtMs":1767550000000}',
        pending_node_surface_json: null, created_at_ms: 1767500000000, approved_at_ms: 1767500001000, last_seen_at_ms: null, last_seen_reason: null,
      },
      {
        device_id: "dev-phone", public_key: "MCowBQYDK2VwAyEAphone", display_name: "Phone", operator_label: null, platform: "ios", device_family: null,
        client_id: null, client_mode: null, browser_origin: null, role: null, roles_json: '["operator"]', scopes_json: '["operator.read"]',
        approved_scopes_json: null, remote_ip: null,
        tokens_json: '{"operator":{"token":"pairtok-PLANTED-PAIRED-TOKEN-789","role":"operator","scopes":["operator.read"],"createdAtMs":1767200000000}}', approved_via: null,
        node_surface_json: null, pending_node_surface_json: null, created_at_ms: 1767200000000, approved_at_ms: 1767200005000, last_seen_at_ms: null, last_seen_reason: null,
      },
    ]);
    // 9.6 archives pending.json and bootstrap.json without importing them.
    expect(rows(target, "SELECT * FROM device_pairing_pending")).toEqual([]);
    expect(rows(target, "SELECT * FROM device_bootstrap_tokens")).toEqual([]);
    // node.json: no token, updated_at_ms = the file's mtime (ms, floored); VAPID: stamped with the import time.
    expect(machineState(target)).toEqual([
      { state_key: "nodeHost.config", value_json: '{"version":1,"nodeId":"node-7f3e","displayName":"Kitchen Mac","gateway":{"host":"gw.local","port":18789,"tls":true,"tlsFingerprint":"AB:CD:EF"},"installedAppsSharing":false}', updated_at_ms: 1767000000789 },
      { state_key: "webPush.vapidKeys", value_json: '{"publicKey":"BPUBLIC-VAPID-KEY","privateKey":"vapid-PLANTED-PRIVATE-KEY","subject":"mailto:ops@example.com"}', updated_at_ms: NOW },
    ]);

    expect(result.read).toMatchObject({ device_pairing_entries: 5, node_pairing_entries: 3, node_host_config: 1, web_push_vapid_keys: 1 });
    expect(result.written).toMatchObject({ device_pairing_paired: 2 });
    // pending + bootstrap + the record without approvedAtMs; the orphan node + the pending node request.
    expect(result.unmapped).toMatchObject({ device_pairing_entries: 3, node_pairing_entries: 2 });
    expect(result.unmapped.node_host_config).toBeUndefined();
    expect(result.unmapped.web_push_vapid_keys).toBeUndefined();
    const codes = result.notes.map((n) => n.code);
    for (const code of ["global.devices.transient-not-imported", "global.devices.invalid-paired", "global.nodes.orphan", "global.nodes.pending-not-imported", "global.node-host.token-dropped"]) expect(codes).toContain(code);
    // Secrets never reach a note.
    expect(JSON.stringify(result.notes)).not.toMatch(/PLANTED|legacy-node-token/);
  });

  it("a node granted by `role` alone gets its surface (now fills missing times); minimal node.json and subject-less VAPID keys", async () => {
    const { paths, stateDir } = makeTempState();
    write(stateDir, "devices/paired.json", { "dev-pi": { publicKey: "MCowBQYDK2VwAyEApi", role: "node", createdAtMs: 1767000000000, approvedAtMs: 1767000001000, lastSeenAtMs: 1767000002000, lastSeenReason: "connect" } });
    write(stateDir, "nodes/paired.json", { "dev-pi": { nodeId: "dev-pi", displayName: "Pi", commands: ["system.run"], bins: ["git"] } });
    write(stateDir, "node.json", { version: 1, nodeId: "n1" });
    fs.utimesSync(path.join(stateDir, "node.json"), 1767000000, 1767000000);
    write(stateDir, "push/vapid-keys.json", { publicKey: "BPUB2", privateKey: "PRIV2" });
    const { result, target } = await upgrade(stateDir, paths);

    expect(rows(target, "SELECT device_id, role, roles_json, node_surface_json, last_seen_at_ms, last_seen_reason FROM device_pairing_paired")).toEqual([
      { device_id: "dev-pi", role: "node", roles_json: null, node_surface_json: `{"displayName":"Pi","commands":["system.run"],"bins":["git"],"createdAtMs":${NOW},"approvedAtMs":${NOW}}`, last_seen_at_ms: 1767000002000, last_seen_reason: "connect" },
    ]);
    expect(machineState(target)).toEqual([
      { state_key: "nodeHost.config", value_json: '{"version":1,"nodeId":"n1","installedAppsSharing":false}', updated_at_ms: 1767000000000 },
      { state_key: "webPush.vapidKeys", value_json: '{"publicKey":"BPUB2","privateKey":"PRIV2","subject":"https://openclaw.ai"}', updated_at_ms: NOW },
    ]);
    expect(result.unmapped).toEqual({});
    expect(result.notes.map((n) => n.code)).toContain("global.vapid.default-subject");
  });
});
