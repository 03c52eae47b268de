// ACPX process leases (acpx/process-leases.json) → plugin_state_entries acpx/process-leases, as the ACPX runtime reads them.
import path from "node:path";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { isObject, shapeError } from "../json-source.js";
import { acpxGatewayInstanceRow, ACPX_PLUGIN_ID, readGatewayInstanceId } from "./plugin-state-files.js";
import { fileSource, jsonRowsImporter, row, type RowSpec, type RowsResult, type SourceFacts } from "./json-rows.js";

/** The runtime's lease states; only "open" and "closing" leases are ever read back (to reap their processes). */
const LIVE_STATES = new Set(["open", "closing"]);
const ALL_STATES = new Set([...LIVE_STATES, "closed", "lost"]);
/** The plugin-state store's key limit (UTF-8 bytes of the trimmed key). */
const MAX_KEY_BYTES = 512;

export interface AcpxProcessLease {
  leaseId: string;
  gatewayInstanceId: string;
  sessionKey: string;
  wrapperRoot: string;
  wrapperPath: string;
  rootPid: number;
  processGroupId?: number;
  commandHash: string;
  startedAt: number;
  state: string;
}

/**
 * A lease as the ACPX runtime normalizes it (every field of its type, a known state; only those fields, in its
 * order), or null where the runtime's reader drops it: a row it drops is never read, so its processes are never reaped.
 */
export function normalizeAcpxProcessLease(v: unknown): AcpxProcessLease | null {
  if (!isObject(v)) return null;
  const text = ["leaseId", "gatewayInstanceId", "sessionKey", "wrapperRoot", "wrapperPath", "commandHash"] as const;
  if (text.some((f) => typeof v[f] !== "string") || typeof v.rootPid !== "number" || typeof v.startedAt !== "number" || !ALL_STATES.has(String(v.state))) return null;
  const s = (f: (typeof text)[number]) => v[f] as string;
  return {
    leaseId: s("leaseId"),
    gatewayInstanceId: s("gatewayInstanceId"),
    sessionKey: s("sessionKey"),
    wrapperRoot: s("wrapperRoot"),
    wrapperPath: s("wrapperPath"),
    rootPid: v.rootPid,
    ...(typeof v.processGroupId === "number" ? { processGroupId: v.processGroupId } : {}),
    commandHash: s("commandHash"),
    startedAt: v.startedAt,
    state: String(v.state),
  };
}

const quoted = (ids: string[]): string => ids.slice(0, 5).map((id) => JSON.stringify(id)).join(", ") + (ids.length > 5 ? ", …" : "");

/**
 * The gateway instance the leases must belong to: the runtime reaps only the open leases of its own instance id
 * (`gateway-instance/current`). That id is the legacy `gateway-instance-id` file beside the leases when there is one
 * (its importer writes it), else the row already imported; with neither, the one gateway id all live leases share.
 */
function gatewayInstanceFor(root: string, db: GlobalDatabase | undefined, live: AcpxProcessLease[]): string | null {
  const fromFile = readGatewayInstanceId(path.join(root, "gateway-instance-id"));
  if (fromFile) return fromFile;
  if (db) {
    const stored = db.prepare("SELECT value_json FROM plugin_state_entries WHERE plugin_id = ? AND namespace = 'gateway-instance' AND entry_key = 'current'").get(ACPX_PLUGIN_ID) as { value_json: string } | undefined;
    let v: unknown = null;
    try {
      v = stored ? JSON.parse(stored.value_json) : null;
    } catch {
      v = null;
    }
    // {instanceId} is the runtime's shape; {version: 1, id} the one earlier builds of this tool wrote (fixed on upgrade).
    const id = isObject(v) ? (typeof v.instanceId === "string" ? v.instanceId : typeof v.id === "string" ? v.id : "") : "";
    if (id.trim()) return id.trim();
  }
  // The runtime trims the id it reads and compares leases to it exactly: a padded id could never match its leases.
  const ids = [...new Set(live.map((l) => l.gatewayInstanceId))];
  return ids.length === 1 && ids[0]!.trim() === ids[0] && ids[0] !== "" ? ids[0]! : null;
}

function leaseRows(v: unknown, source: SourceFacts, root: string, db?: GlobalDatabase): RowsResult {
  const list = isObject(v) && Array.isArray(v.leases) ? v.leases : null;
  if (!list) throw shapeError(source.path, 'an object with a "leases" array', v);
  const warnings: string[] = [];
  const notes: string[] = [];
  // A lease id the store cannot key (blank, or over its limit once trimmed) is as unreadable as a missing field.
  const keyable = (l: AcpxProcessLease | null): l is AcpxProcessLease => l !== null && l.leaseId.trim() !== "" && Buffer.byteLength(l.leaseId.trim()) <= MAX_KEY_BYTES;
  const readable = list.map(normalizeAcpxProcessLease).filter(keyable);
  const unreadable = list.length - readable.length;
  if (unreadable) warnings.push(`${unreadable} lease(s) the ACPX runtime cannot read (a missing or mistyped field, an unknown state, or no usable lease id) were skipped; the retired file keeps them`);
  const live = readable.filter((l) => LIVE_STATES.has(l.state));
  const finished = readable.length - live.length;
  if (finished) notes.push(`${finished} finished lease(s) (closed or lost) not imported: the ACPX runtime deletes a lease when it finishes and never reads one back`);
  const gateway = gatewayInstanceFor(root, db, live);
  const own = gateway === null ? [] : live.filter((l) => l.gatewayInstanceId === gateway);
  const foreign = live.filter((l) => !own.includes(l));
  if (foreign.length) {
    const whose = gateway === null ? "to several gateway instances and no gateway-instance-id says which is this state's" : `to another gateway instance than this state's (${JSON.stringify(gateway)})`;
    warnings.push(`${foreign.length} open lease(s) (${quoted(foreign.map((l) => l.leaseId))}) belong ${whose}: not imported, as the ACPX runtime reaps only its own gateway's leases; the retired file keeps them, and their ACPX wrapper processes may still be running`);
  }
  const rows: RowSpec[] = own.map((l) =>
    row("plugin_state_entries", ["plugin_id", "namespace", "entry_key"], {
      plugin_id: ACPX_PLUGIN_ID,
      namespace: "process-leases",
      // The store trims keys; the value keeps the lease id as written (the runtime keys its writes by it, trimmed).
      entry_key: l.leaseId.trim(),
      value_json: JSON.stringify(l),
      // Its real age (the store evicts the oldest first); the file's mtime when startedAt is no usable time.
      created_at: Number.isSafeInteger(Math.trunc(l.startedAt)) && l.startedAt >= 0 ? Math.trunc(l.startedAt) : source.mtimeMs,
      expires_at: null,
    }),
  );
  // The leases are reaped only when `gateway-instance/current` names their gateway: write it unless a row is there.
  if (gateway !== null && rows.length) rows.push(acpxGatewayInstanceRow(gateway, source.mtimeMs, "keep"));
  return { records: list.length, rows, skipped: list.length - own.length, warnings, notes };
}

/**
 * `acpx/process-leases.json` ({version: 1, leases: [{leaseId, gatewayInstanceId, sessionKey, wrapperRoot, wrapperPath,
 * rootPid, processGroupId?, commandHash, startedAt, state}]}) → plugin "acpx", namespace "process-leases", one row per
 * open or closing lease keyed by its id, the value the lease as the runtime normalizes it: what the ACPX plugin's own
 * doctor migration keeps. The file is retired whole (its skipped leases with it).
 */
export const acpxProcessLeasesImporter = jsonRowsImporter({
  kind: "acpx-process-leases",
  label: { one: "legacy ACPX process lease file", many: "legacy ACPX process lease files", records: "leases" },
  targetTable: "plugin_state_entries",
  targetTables: ["plugin_state_entries"],
  detect: (ctx) => fileSource("acpx-process-leases", ctx.root, "acpx/process-leases.json"),
  rows: (v, source, _paths, db) => leaseRows(v, source, path.dirname(path.dirname(source.path)), db),
});

