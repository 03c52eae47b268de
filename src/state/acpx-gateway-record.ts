// The ACPX gateway instance row (acpx/gateway-instance/current): the value its runtime reads, and the one an earlier openclaw-state wrote.

/** Where the ACPX runtime keeps its gateway instance id in plugin_state_entries. */
export const ACPX_GATEWAY_INSTANCE = { pluginId: "acpx", namespace: "gateway-instance", entryKey: "current" } as const;

export type AcpxGatewayValue =
  /** A non-blank `instanceId`: the runtime reads it as it is. */
  | { kind: "runtime" }
  /** Exactly the {version: 1, id} an earlier openclaw-state wrote; `valueJson` is the same id as the runtime reads it. */
  | { kind: "earlier"; valueJson: string }
  /** Anything else: the runtime mints a new id over it, and nothing here knows which id it meant, so it is left alone. */
  | { kind: "other"; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * What a value at the ACPX gateway instance key is. The runtime reads {instanceId, createdAt} and mints a new id over
 * any value without a non-blank `instanceId`, which orphans every process lease of the old id. Only the exact shape
 * earlier builds of this tool wrote is rewritten (createdAt: the row's `created_at`, the legacy file's mtime).
 */
export function classifyAcpxGatewayValue(valueJson: unknown, createdAt: unknown): AcpxGatewayValue {
  if (typeof valueJson !== "string") return { kind: "other", reason: "value_json is not text" };
  let v: unknown;
  try {
    v = JSON.parse(valueJson);
  } catch {
    return { kind: "other", reason: "value_json is not valid JSON" };
  }
  if (isObject(v) && typeof v.instanceId === "string" && v.instanceId.trim() !== "") return { kind: "runtime" };
  const id = isObject(v) && Object.keys(v).sort().join(",") === "id,version" && v.version === 1 && typeof v.id === "string" ? v.id.trim() : "";
  if (id === "") return { kind: "other", reason: "neither the {instanceId, createdAt} the ACPX runtime reads nor the {version: 1, id} an earlier openclaw-state wrote" };
  if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt)) return { kind: "other", reason: "the {version: 1, id} an earlier openclaw-state wrote, but its created_at is not a time in milliseconds" };
  return { kind: "earlier", valueJson: JSON.stringify({ instanceId: id, createdAt }) };
}
