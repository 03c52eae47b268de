// Importers for the node host config (`node.json`) and push state (`push/web-push-subscriptions.json`,
// `push/vapid-keys.json`, `push/apns-registrations.json`) → node_host_config, web_push_subscriptions,
// web_push_vapid_keys, apns_registrations. Tokens, keys and grants go into the database only.
//
// Shapes (OpenClaw src/node-host/config.ts, src/infra/push-web.ts, src/infra/push-apns.ts): node.json
// {version:1, nodeId, token, displayName, gateway:{host, port, tls, tlsFingerprint}}; subscriptions
// {subscriptionsByEndpointHash:{<hash>:{subscriptionId, endpoint, keys:{p256dh, auth}, createdAtMs, updatedAtMs}}};
// VAPID keys {publicKey, privateKey, subject}; APNs {registrationsByNodeId:{<nodeId>:{nodeId, transport, token,
// relayHandle, sendGrant, installationId, topic, environment, distribution, tokenDebugSuffix, updatedAtMs}}}.
import { isObject, sha256Of, shapeError } from "../json-source.js";
import { bool, fileSource, jsonRowsImporter, ms, num, row, str, type RowSpec } from "./json-rows.js";

/** The singleton rows' key, as the runtime's stores use. */
const SINGLETON = "default";

export const nodeHostConfigImporter = jsonRowsImporter({
  kind: "node-host-config",
  label: { one: "legacy node host config", many: "legacy node host configs", records: "configs" },
  targetTable: "node_host_config",
  targetTables: ["node_host_config"],
  detect: (ctx) => fileSource("node-host-config", ctx.root, "node.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    const gateway = isObject(v.gateway) ? v.gateway : {};
    const nodeId = str(v.nodeId);
    const warnings = nodeId === null ? ["no nodeId: the node host creates a new one (it must be paired again)"] : [];
    return {
      records: 1,
      warnings,
      rows: [
        row("node_host_config", ["config_key"], {
          config_key: SINGLETON,
          version: num(v.version) ?? 1,
          node_id: nodeId,
          token: typeof v.token === "string" && v.token !== "" ? v.token : null,
          display_name: str(v.displayName),
          gateway_host: str(gateway.host),
          gateway_port: num(gateway.port),
          gateway_tls: bool(gateway.tls),
          gateway_tls_fingerprint: str(gateway.tlsFingerprint),
          updated_at_ms: source.mtimeMs,
        }),
      ],
    };
  },
});

/** The runtime's key for a subscription: 32 hex chars of sha256(endpoint). */
export function endpointHash(endpoint: string): string {
  return sha256Of(endpoint).slice(0, 32);
}

export const webPushSubscriptionsImporter = jsonRowsImporter({
  kind: "web-push-subscriptions",
  label: { one: "legacy web push subscription file", many: "legacy web push subscription files", records: "subscriptions" },
  targetTable: "web_push_subscriptions",
  targetTables: ["web_push_subscriptions"],
  detect: (ctx) => fileSource("web-push-subscriptions", ctx.root, "push/web-push-subscriptions.json"),
  rows(v, source) {
    const map = isObject(v) && isObject(v.subscriptionsByEndpointHash) ? v.subscriptionsByEndpointHash : null;
    if (!map) throw shapeError(source.path, 'an object with a "subscriptionsByEndpointHash" map', v);
    const rows: RowSpec[] = [];
    let skipped = 0;
    for (const sub of Object.values(map)) {
      const endpoint = isObject(sub) ? str(sub.endpoint) : null;
      if (!isObject(sub) || endpoint === null) {
        skipped += 1;
        continue;
      }
      const keys = isObject(sub.keys) ? sub.keys : {};
      rows.push(
        row("web_push_subscriptions", ["endpoint_hash"], {
          endpoint_hash: endpointHash(endpoint),
          subscription_id: str(sub.subscriptionId),
          endpoint,
          p256dh: str(keys.p256dh),
          auth: str(keys.auth),
          created_at_ms: ms(sub.createdAtMs),
          updated_at_ms: ms(sub.updatedAtMs) ?? ms(sub.createdAtMs) ?? source.mtimeMs,
        }),
      );
    }
    return { records: Object.keys(map).length, rows, skipped, ...(skipped ? { warnings: [`${skipped} subscription(s) without an endpoint were skipped`] } : {}) };
  },
});

export const webPushVapidKeysImporter = jsonRowsImporter({
  kind: "web-push-vapid-keys",
  label: { one: "legacy VAPID key file", many: "legacy VAPID key files", records: "key pairs" },
  targetTable: "web_push_vapid_keys",
  targetTables: ["web_push_vapid_keys"],
  detect: (ctx) => fileSource("web-push-vapid-keys", ctx.root, "push/vapid-keys.json"),
  rows(v, source) {
    const publicKey = isObject(v) ? str(v.publicKey) : null;
    const privateKey = isObject(v) ? str(v.privateKey) : null;
    if (!isObject(v) || publicKey === null || privateKey === null) throw shapeError(source.path, 'an object with "publicKey" and "privateKey" strings', v);
    return { records: 1, rows: [row("web_push_vapid_keys", ["key_id"], { key_id: SINGLETON, public_key: publicKey, private_key: privateKey, subject: str(v.subject), updated_at_ms: source.mtimeMs })] };
  },
});

/**
 * One legacy APNs registration as the row OpenClaw 2026.9.6's runtime accepts, or why it cannot be one. Its store
 * reads every row through one schema (push-apns-store: loadApnsRegistrations) and throws on the first it rejects,
 * so one unusable row would cost every device its push: a direct token must be 32–512 hex digits once `<>` and
 * spaces are gone, a relay registration needs its handle, grant and installation id (printable ASCII) and the
 * `official` distribution, both a topic (≤ 255) and a sandbox/production environment (a direct one defaults to
 * sandbox, as 2026.9.6's import does). The node id is the map's key.
 */
function apnsRow(nodeId: string, r: Record<string, unknown>, mtimeMs: number): { values: Record<string, unknown> } | { reason: string } {
  const transport = (str(r.transport) ?? "direct").toLowerCase();
  if (transport !== "direct" && transport !== "relay") return { reason: `transport "${transport}" is neither direct nor relay` };
  if (nodeId.length > 256) return { reason: "node id longer than 256 characters" };
  const topic = str(r.topic);
  if (topic === null || topic.length > 255) return { reason: "no topic (or one longer than 255 characters)" };
  const env = str(r.environment)?.toLowerCase() ?? (transport === "direct" ? "sandbox" : null);
  if (env !== "sandbox" && env !== "production") return { reason: "environment is neither sandbox nor production" };
  const updatedAt = ms(r.updatedAtMs);
  const base = { node_id: nodeId, transport, topic, environment: env, updated_at_ms: updatedAt !== null && Number.isSafeInteger(updatedAt) && updatedAt >= 0 ? updatedAt : mtimeMs };
  if (transport === "direct") {
    const token = typeof r.token === "string" ? r.token.replace(/[<>\s]/g, "").toLowerCase() : "";
    if (!/^[0-9a-f]{32,512}$/.test(token)) return { reason: "its device token is not 32 to 512 hex digits" };
    return { values: { ...base, token, relay_handle: null, send_grant: null, installation_id: null, distribution: null, token_debug_suffix: null } };
  }
  const ascii = (v: unknown, max: number): string | null => {
    const t = typeof v === "string" ? v.trim() : "";
    return t.length > 0 && t.length <= max && !/[^\x21-\x7e]/.test(t) ? t : null;
  };
  const relayHandle = ascii(r.relayHandle, 256);
  const sendGrant = ascii(r.sendGrant, 1024);
  const installationId = ascii(r.installationId, 256);
  if (relayHandle === null || sendGrant === null || installationId === null) return { reason: "a relay registration without a usable relayHandle, sendGrant and installationId" };
  if (str(r.distribution)?.toLowerCase() !== "official") return { reason: 'a relay registration whose distribution is not "official"' };
  const suffix = typeof r.tokenDebugSuffix === "string" ? r.tokenDebugSuffix.trim().toLowerCase().replace(/[^0-9a-z]/g, "").slice(-8) : "";
  return { values: { ...base, token: null, relay_handle: relayHandle, send_grant: sendGrant, installation_id: installationId, distribution: "official", token_debug_suffix: suffix || null } };
}

export const apnsRegistrationsImporter = jsonRowsImporter({
  kind: "apns-registrations",
  label: { one: "legacy APNs registration file", many: "legacy APNs registration files", records: "registrations" },
  targetTable: "apns_registrations",
  targetTables: ["apns_registrations"],
  detect: (ctx) => fileSource("apns-registrations", ctx.root, "push/apns-registrations.json"),
  rows(v, source) {
    const map = isObject(v) && isObject(v.registrationsByNodeId) ? v.registrationsByNodeId : null;
    if (!map) throw shapeError(source.path, 'an object with a "registrationsByNodeId" map', v);
    const rows: RowSpec[] = [];
    const warnings: string[] = [];
    let notObjects = 0;
    for (const [key, r] of Object.entries(map)) {
      const nodeId = str(key) ?? (isObject(r) ? str(r.nodeId) : null);
      if (!isObject(r) || nodeId === null) {
        notObjects += 1;
        continue;
      }
      const built = apnsRow(nodeId, r, source.mtimeMs);
      // Named by its node id only: the token and grant are secrets. The retired file keeps the registration.
      if ("reason" in built) warnings.push(`APNs registration of node ${JSON.stringify(nodeId)} skipped: ${built.reason} (OpenClaw cannot push to it; the retired file keeps it)`);
      else rows.push(row("apns_registrations", ["node_id"], built.values));
    }
    if (notObjects) warnings.unshift(`${notObjects} registration(s) that are not objects were skipped`);
    const skipped = Object.keys(map).length - rows.length;
    return { records: Object.keys(map).length, rows, skipped, ...(warnings.length ? { warnings } : {}) };
  },
});
