// Design-v1 device/node pairing, node-host config and VAPID keys → where OpenClaw 2026.9.6's own doctor puts the same legacy data.
//
// Observed from 9.6's `doctor --fix` on the legacy files (devices/*.json, nodes/*.json, node.json, push/vapid-keys.json):
//   devices/paired.json   → device_pairing_paired, one row per valid record (publicKey, createdAtMs, approvedAtMs required;
//                            a non-integer lastSeenAtMs and non-string text fields are dropped; unknown fields are dropped)
//   nodes/paired.json     → folded into the paired device of the same id as node_surface_json, only when that device's
//                            approved roles include "node"; other rows are dropped ("orphans")
//   devices/pending.json, devices/bootstrap.json, nodes/pending.json → archived (*.migrated) without any import
//   node.json             → config_machine_state 'nodeHost.config' (no token), updated_at_ms = the file's mtime
//   push/vapid-keys.json  → config_machine_state 'webPush.vapidKeys' {publicKey, privateKey, subject}, updated_at_ms = import time
// What 9.6 drops stays unmapped here (kept in the design-v1 file), each with a note.
import { type GlobalUpgradeContext, type Row, bump, insertRow, note, parseJsonObject, readAll } from "./upgrade-global-context.js";

export const DEVICE_TABLES = ["device_pairing_entries", "node_pairing_entries", "node_host_config", "web_push_vapid_keys"] as const;

const NODE_HOST_KEY = "nodeHost.config";
const VAPID_KEY = "webPush.vapidKeys";
/** 9.6's subject when the legacy file has none (it also reads OPENCLAW_VAPID_SUBJECT at doctor time). */
const DEFAULT_VAPID_SUBJECT = "https://openclaw.ai";
const MAX_WEB_PUSH_KEY = 512;

/** Paired-device fields 9.6 stores in TEXT columns: a value of another type is dropped, as 9.6 does. */
const TEXT_FIELDS = ["displayName", "operatorLabel", "platform", "deviceFamily", "clientId", "clientMode", "browserOrigin", "role", "remoteIp", "approvedVia", "lastSeenReason"];

const isSafeInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);
const jsonOrNull = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const textOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function upgradeDevicePairing(ctx: GlobalUpgradeContext): void {
  const devices = pairedDevices(ctx);
  foldNodeSurfaces(ctx, devices);
  for (const device of devices.values()) insertRow(ctx, "device_pairing_paired", pairedRow(device));
  upgradeNodeHostConfig(ctx);
  upgradeVapidKeys(ctx);
}

/**
 * A `paired` row as 9.6's device record, or null when 9.6 drops it (no publicKey, createdAtMs or approvedAtMs).
 * The plan reads the same test to say whether devices/paired.json reaches device_pairing_paired.
 */
export function pairedDeviceRecord(deviceIdValue: unknown, entryJson: unknown): Record<string, unknown> | null {
  const record = parseJsonObject(entryJson);
  const deviceId = typeof deviceIdValue === "string" ? deviceIdValue.trim() : "";
  if (!record || !deviceId || typeof record.publicKey !== "string" || record.publicKey.trim() === "" || !isSafeInt(record.createdAtMs) || !isSafeInt(record.approvedAtMs)) return null;
  const device: Record<string, unknown> = { ...record };
  if (device.lastSeenAtMs !== undefined && !isSafeInt(device.lastSeenAtMs)) delete device.lastSeenAtMs;
  for (const field of TEXT_FIELDS) if (device[field] !== undefined && typeof device[field] !== "string") delete device[field];
  return { ...device, deviceId };
}

/** Valid `paired` rows as 9.6's device records (id from the row); pending and bootstrap rows are counted unmapped. */
function pairedDevices(ctx: GlobalUpgradeContext): Map<string, Record<string, unknown>> {
  const devices = new Map<string, Record<string, unknown>>();
  const dropped = { pending: 0, bootstrap: 0, invalid: 0 };
  for (const row of readAll(ctx, "device_pairing_entries", "list_kind, device_id")) {
    if (row.list_kind !== "paired") {
      if (row.list_kind === "bootstrap") dropped.bootstrap += 1;
      else dropped.pending += 1;
      continue;
    }
    const device = pairedDeviceRecord(row.device_id, row.entry_json);
    if (!device) {
      dropped.invalid += 1;
      continue;
    }
    devices.set(device.deviceId as string, device);
  }
  const unmapped = dropped.pending + dropped.bootstrap + dropped.invalid;
  bump(ctx.unmapped, "device_pairing_entries", unmapped);
  if (dropped.pending + dropped.bootstrap > 0) {
    note(ctx, "global.devices.transient-not-imported", `device_pairing_entries: ${dropped.pending} pending request(s) and ${dropped.bootstrap} bootstrap token(s) not copied: OpenClaw's doctor archives devices/pending.json and devices/bootstrap.json without importing them; they stay in the design-v1 file.`); // legacy-name-ok: names the legacy file in a note to the operator (never opened)
  }
  if (dropped.invalid > 0) {
    note(ctx, "global.devices.invalid-paired", `device_pairing_entries: ${dropped.invalid} paired record(s) not copied: OpenClaw requires publicKey, createdAtMs and approvedAtMs (its doctor skips such records); they stay in the design-v1 file.`);
  }
  return devices;
}

/** A role list as 9.6 merges it: `roles` (string or list) then `role`, trimmed, first-seen order. */
function approvedRoles(device: Record<string, unknown>): string[] {
  const roles = new Set<string>();
  for (const item of [device.roles, device.role]) {
    for (const value of Array.isArray(item) ? item : [item]) if (typeof value === "string" && value.trim() !== "") roles.add(value.trim());
  }
  return [...roles];
}

/** nodes/paired.json rows become the node surface of the paired device with the same id (9.6 drops the rest). */
function foldNodeSurfaces(ctx: GlobalUpgradeContext, devices: Map<string, Record<string, unknown>>): void {
  const dropped = { pending: 0, orphan: 0, hasSurface: 0 };
  let desktopStream = 0;
  for (const row of readAll(ctx, "node_pairing_entries", "node_id")) {
    const entry = parseJsonObject(row.entry_json) ?? {};
    // design-v1 keeps nodes/pending.json rows in the same table; a pending request is the record with a requestId.
    if (typeof entry.requestId === "string") {
      dropped.pending += 1;
      continue;
    }
    const device = devices.get(String(row.node_id).trim());
    if (!device || !approvedRoles(device).includes("node")) {
      dropped.orphan += 1;
      continue;
    }
    if (device.nodeSurface !== undefined) {
      dropped.hasSurface += 1;
      continue;
    }
    const commands = Array.isArray(entry.commands) ? entry.commands : undefined;
    if (commands?.some((c) => typeof c === "string" && c.trim() === "desktop.stream")) desktopStream += 1;
    device.nodeSurface = {
      displayName: entry.displayName,
      version: entry.version,
      coreVersion: entry.coreVersion,
      uiVersion: entry.uiVersion,
      modelIdentifier: entry.modelIdentifier,
      caps: Array.isArray(entry.caps) ? entry.caps : undefined,
      commands,
      permissions: entry.permissions,
      bins: Array.isArray(entry.bins) ? entry.bins : undefined,
      createdAtMs: typeof entry.createdAtMs === "number" ? entry.createdAtMs : ctx.now,
      approvedAtMs: typeof entry.approvedAtMs === "number" ? entry.approvedAtMs : ctx.now,
      lastConnectedAtMs: typeof entry.lastConnectedAtMs === "number" ? entry.lastConnectedAtMs : undefined,
    };
  }
  bump(ctx.unmapped, "node_pairing_entries", dropped.pending + dropped.orphan + dropped.hasSurface);
  if (dropped.pending > 0) note(ctx, "global.nodes.pending-not-imported", `node_pairing_entries: ${dropped.pending} pending node request(s) not copied: OpenClaw's doctor archives nodes/pending.json without importing it; they stay in the design-v1 file.`); // legacy-name-ok: names the legacy file in a note to the operator (never opened)
  if (dropped.orphan > 0) note(ctx, "global.nodes.orphan", `node_pairing_entries: ${dropped.orphan} paired node(s) not copied: OpenClaw keeps a node only as the surface of a paired device with the "node" role, and none matches (its doctor drops these rows); they stay in the design-v1 file.`);
  if (dropped.hasSurface > 0) note(ctx, "global.nodes.surface-kept", `node_pairing_entries: ${dropped.hasSurface} paired node(s) not copied: their device already carries a node surface, which OpenClaw keeps; they stay in the design-v1 file.`);
  if (desktopStream > 0) note(ctx, "global.nodes.desktop-stream", `${desktopStream} node surface(s) approve desktop.stream: OpenClaw's gateway retires that approval at startup unless gateway.nodes.commands names it (its one-time desktop-stream migration has not run on this file).`);
}

/** One device_pairing_paired row, columns as 9.6 writes them (absent fields NULL, lists and maps as JSON). */
function pairedRow(device: Record<string, unknown>): Row {
  return {
    device_id: device.deviceId,
    public_key: device.publicKey,
    display_name: textOrNull(device.displayName),
    operator_label: textOrNull(device.operatorLabel),
    platform: textOrNull(device.platform),
    device_family: textOrNull(device.deviceFamily),
    client_id: textOrNull(device.clientId),
    client_mode: textOrNull(device.clientMode),
    browser_origin: textOrNull(device.browserOrigin),
    role: textOrNull(device.role),
    roles_json: jsonOrNull(device.roles),
    scopes_json: jsonOrNull(device.scopes),
    approved_scopes_json: jsonOrNull(device.approvedScopes),
    remote_ip: textOrNull(device.remoteIp),
    tokens_json: jsonOrNull(device.tokens),
    approved_via: textOrNull(device.approvedVia),
    node_surface_json: jsonOrNull(device.nodeSurface),
    pending_node_surface_json: jsonOrNull(device.pendingNodeSurface),
    created_at_ms: device.createdAtMs,
    approved_at_ms: device.approvedAtMs,
    last_seen_at_ms: isSafeInt(device.lastSeenAtMs) ? device.lastSeenAtMs : null,
    last_seen_reason: textOrNull(device.lastSeenReason),
  };
}

/** node.json → 'nodeHost.config'. 9.6 keeps no token there (the node host authenticates with its device identity). */
function upgradeNodeHostConfig(ctx: GlobalUpgradeContext): void {
  const rows = readAll(ctx, "node_host_config", "config_key");
  let written = false;
  for (const row of rows) {
    const nodeId = typeof row.node_id === "string" ? row.node_id.trim() : "";
    const port = row.gateway_port;
    const validPort = port === null || (isSafeInt(port) && port > 0 && port <= 65535);
    if (written || nodeId === "" || (row.version !== null && row.version !== 1) || !validPort) {
      bump(ctx.unmapped, "node_host_config");
      const why = written ? "OpenClaw keeps one node-host config" : nodeId === "" ? "OpenClaw requires a nodeId" : !validPort ? `gateway port ${String(port)} is not valid` : `version ${String(row.version)} is not 1`;
      note(ctx, "global.node-host.not-copied", `node_host_config: row ${String(row.config_key)} not copied: ${why} (its doctor refuses such a node.json); it stays in the design-v1 file.`); // legacy-name-ok: names the legacy file in a note to the operator (never opened)
      continue;
    }
    const gateway = {
      host: textOrNull(row.gateway_host) ?? undefined,
      port: isSafeInt(port) ? port : undefined,
      tls: row.gateway_tls === null || row.gateway_tls === undefined ? undefined : row.gateway_tls === 1,
      tlsFingerprint: textOrNull(row.gateway_tls_fingerprint) ?? undefined,
    };
    const value = {
      version: 1,
      nodeId,
      displayName: textOrNull(row.display_name) ?? undefined,
      gateway: Object.values(gateway).some((v) => v !== undefined) ? gateway : undefined,
      installedAppsSharing: false,
    };
    insertRow(ctx, "config_machine_state", { state_key: NODE_HOST_KEY, value_json: JSON.stringify(value), updated_at_ms: Math.max(0, Math.floor(Number(row.updated_at_ms))) });
    written = true;
    if (typeof row.token === "string" && row.token !== "") {
      note(ctx, "global.node-host.token-dropped", "node_host_config: the legacy node token is not carried: OpenClaw's node-host config has no token (its doctor drops it too); it stays in the design-v1 file.");
    }
  }
}

/** push/vapid-keys.json → 'webPush.vapidKeys' (9.6 stamps the import time, not the file's). */
function upgradeVapidKeys(ctx: GlobalUpgradeContext): void {
  const rows = readAll(ctx, "web_push_vapid_keys", "key_id");
  let written = false;
  for (const row of rows) {
    const subject = (typeof row.subject === "string" && row.subject.trim() !== "" ? row.subject.trim() : undefined) ?? DEFAULT_VAPID_SUBJECT;
    const validKey = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= MAX_WEB_PUSH_KEY;
    if (written || !validKey(row.public_key) || !validKey(row.private_key) || subject.length > 512) {
      bump(ctx.unmapped, "web_push_vapid_keys");
      const why = written ? "OpenClaw keeps one VAPID identity" : "OpenClaw refuses keys or a subject of that length";
      note(ctx, "global.vapid.not-copied", `web_push_vapid_keys: row ${String(row.key_id)} not copied: ${why}; it stays in the design-v1 file.`);
      continue;
    }
    insertRow(ctx, "config_machine_state", { state_key: VAPID_KEY, value_json: JSON.stringify({ publicKey: row.public_key, privateKey: row.private_key, subject }), updated_at_ms: ctx.now });
    written = true;
    if (subject === DEFAULT_VAPID_SUBJECT && row.subject !== DEFAULT_VAPID_SUBJECT) {
      note(ctx, "global.vapid.default-subject", `web_push_vapid_keys: no subject in the legacy keys; written with OpenClaw's default ${DEFAULT_VAPID_SUBJECT} (its doctor would use OPENCLAW_VAPID_SUBJECT when set).`);
    }
  }
}
