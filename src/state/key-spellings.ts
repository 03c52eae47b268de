// Keys (and one value) OpenClaw spells otherwise than an earlier openclaw-state did: the one table of them, and the repair of rows already written so.
import path from "node:path";
import type Database from "better-sqlite3";
import { ACPX_GATEWAY_INSTANCE, classifyAcpxGatewayValue, type AcpxGatewayValue } from "./acpx-gateway-record.js";
import { KeptRows } from "./merge/kept-rows.js";
import { keyJson, quoteId, rowJson, rowTime, sameRow, tableShape, type TableShape } from "./merge/table-shape.js";
import { ensurePrivateDirBelow } from "./private-fs.js";
import type { GlobalDatabase } from "./state-databases.js";

/** One key value this tool once wrote (`from`) where OpenClaw 2026.9.6 reads and writes only `to`. */
export interface KeySpelling {
  table: string;
  column: string;
  from: string;
  to: string;
}

/**
 * The design-v1 singleton rows were keyed `default`; 2026.9.6 reads only its own constants: exec approvals under
 * `current` (EXEC_APPROVALS_CONFIG_KEY), the device identity under `primary` (PRIMARY_DEVICE_IDENTITY_KEY: under
 * `default` its gateway mints a new identity that no paired device knows), the restart sentinel under `current`
 * (RESTART_SENTINEL_KEY: under `default` the restart is never reported). Sandbox registry kinds were named after
 * their legacy files (`containers`, `browsers`); 2026.9.6 reads only `container` and `browser`, so a plural row is
 * invisible to it and it starts a second container for the same session. Releases of this tool up to 2026-12-06
 * wrote some of these spellings into databases already in 2026.9.6's format.
 */
export const OPENCLAW_KEY_SPELLINGS: readonly KeySpelling[] = [
  { table: "exec_approvals_config", column: "config_key", from: "default", to: "current" },
  { table: "device_identities", column: "identity_key", from: "default", to: "primary" },
  { table: "gateway_restart_sentinel", column: "sentinel_key", from: "default", to: "current" },
  { table: "sandbox_registry_entries", column: "registry_kind", from: "containers", to: "container" },
  { table: "sandbox_registry_entries", column: "registry_kind", from: "browsers", to: "browser" },
];

/** The value OpenClaw's format spells `value` as in this table's column (the value itself when it is not re-spelled). */
export function openclawSpelling(table: string, column: string, value: unknown): unknown {
  return OPENCLAW_KEY_SPELLINGS.find((s) => s.table === table && s.column === column && s.from === value)?.to ?? value;
}

type Row = Record<string, unknown>;

/** One row under an old spelling, and the row already under OpenClaw's (null: none). */
export interface MisspelledRow {
  spelling: KeySpelling;
  row: Row;
  /** The row's key as JSON, under the old spelling and under OpenClaw's. */
  fromKey: string;
  toKey: string;
  existing: Row | null;
  /** What a repair does: rename it; replace the older row already there; or drop it for the one there (as new or newer, or the same record). */
  action: "rename" | "replace-older" | "keep-existing";
}

/** The DB holds OpenClaw's current format (the only one in which these spellings are wrong: the upgrade re-spells design-v1's). */
export function isCurrentOpenclaw(db: GlobalDatabase): boolean {
  return db.role === "global" && db.format.id === "openclaw" && db.format.current;
}

function shapeOf(handle: Database.Database, table: string): TableShape {
  return tableShape(handle, handle, table);
}

const where = (cols: readonly string[]): string => cols.map((c) => `${quoteId(c)} IS ?`).join(" AND ");

function decide(shape: TableShape, row: Row, existing: Row | null): MisspelledRow["action"] {
  if (existing === null) return "rename";
  // The runtime writes only under its own spelling: on a tie, or with no time to tell, its row is the authority.
  const at = rowTime(shape, row);
  const existingAt = rowTime(shape, existing);
  if (sameRow(shape, row, existing)) return "keep-existing";
  return at !== null && (existingAt === null || at > existingAt) ? "replace-older" : "keep-existing";
}

/** Every row under an old spelling, with the row under OpenClaw's spelling beside it. Read only. */
export function findMisspelledRows(db: GlobalDatabase): MisspelledRow[] {
  if (!isCurrentOpenclaw(db)) return [];
  const tables = new Set(db.tableNames());
  const found: MisspelledRow[] = [];
  for (const spelling of OPENCLAW_KEY_SPELLINGS) {
    if (!tables.has(spelling.table)) continue;
    const shape = shapeOf(db.handle, spelling.table);
    // The spelled column must be part of the key: otherwise a rename could not collide and nothing here applies.
    if (!shape.key.includes(spelling.column)) continue;
    const rows = db.handle.prepare(`SELECT * FROM ${quoteId(spelling.table)} WHERE ${quoteId(spelling.column)} = ? ORDER BY rowid`).all(spelling.from) as Row[];
    const lookup = db.handle.prepare(`SELECT * FROM ${quoteId(spelling.table)} WHERE ${where(shape.key)}`);
    for (const row of rows) {
      const target = { ...row, [spelling.column]: spelling.to };
      const existing = (lookup.get(...shape.key.map((k) => target[k] ?? null)) as Row | undefined) ?? null;
      found.push({ spelling, row, fromKey: keyJson(shape, row), toKey: keyJson(shape, target), existing, action: decide(shape, row, existing) });
    }
  }
  return found;
}

/** The ACPX gateway instance row when its runtime would not read it: rewritten by the repair (`earlier`) or named and left (`other`). */
export interface AcpxGatewayRow {
  row: Row;
  /** The row's key as JSON. */
  key: string;
  value: Exclude<AcpxGatewayValue, { kind: "runtime" }>;
}

/** The ACPX gateway instance row of a current-format DB, unless it is absent or already what the runtime reads. Read only. */
export function findAcpxGatewayRow(db: GlobalDatabase): AcpxGatewayRow | null {
  if (!isCurrentOpenclaw(db) || !db.tableNames().includes("plugin_state_entries")) return null;
  const { pluginId, namespace, entryKey } = ACPX_GATEWAY_INSTANCE;
  const row = db.handle.prepare("SELECT * FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? AND entry_key = ?").get(pluginId, namespace, entryKey) as Row | undefined;
  if (!row) return null;
  const value = classifyAcpxGatewayValue(row.value_json, row.created_at);
  if (value.kind === "runtime") return null;
  return { row, key: keyJson(shapeOf(db.handle, "plugin_state_entries"), row), value };
}

/** What the scan saw: a repair whose rows changed since the backup was taken changes nothing. */
export function misspelledFingerprint(rows: readonly MisspelledRow[], acpx: AcpxGatewayRow | null = null): string {
  const spelled = rows.map((r) => [r.spelling.table, rowJson(r.row), r.existing === null ? null : rowJson(r.existing), r.action]);
  return JSON.stringify(acpx === null ? spelled : [...spelled, ["acpx", rowJson(acpx.row), acpx.value.kind]]);
}

export interface RespellResult {
  /** Every row re-spelled or dropped, with what happened. */
  rows: MisspelledRow[];
  /** The ACPX gateway instance row the runtime would not read: rewritten when it is `earlier`, left when `other`. */
  acpx: AcpxGatewayRow | null;
  /** The file holding every row dropped (the older or superseded copy); null when none was dropped. */
  keptRowsPath: string | null;
  /** Set when nothing was changed because the rows differ from what the backup was taken over. */
  changedSinceScan: boolean;
}

/**
 * Re-spells every row in one IMMEDIATE transaction (scanned again inside it). A row alone under its key is renamed
 * in place (an UPDATE of the key column). When OpenClaw's spelling already holds a row, the newer one wins and the
 * other is first copied to the kept-rows file (`migrated/key-spellings-<time>/global.sqlite`, committed before the
 * live change) and then deleted. The ACPX gateway instance row an earlier build wrote as {version: 1, id} is
 * rewritten in place, its old row first copied to the same kept-rows file. `expected`: the fingerprint the backup covers.
 */
export function respellKeys(db: GlobalDatabase, stateDir: string, now: number, expected?: string): RespellResult {
  const keptPath = path.join(stateDir, "migrated", `key-spellings-${new Date(now).toISOString().replace(/[:.]/g, "-")}`, "global.sqlite");
  const kept = new KeptRows(keptPath, now);
  try {
    const result = db.immediate((): RespellResult => {
      const rows = findMisspelledRows(db);
      const acpx = findAcpxGatewayRow(db);
      if (expected !== undefined && misspelledFingerprint(rows, acpx) !== expected) return { rows, acpx, keptRowsPath: null, changedSinceScan: true };
      const shapes = new Map<string, TableShape>();
      for (const r of rows) {
        const shape = shapes.get(r.spelling.table) ?? shapeOf(db.handle, r.spelling.table);
        shapes.set(r.spelling.table, shape);
        const table = quoteId(r.spelling.table);
        const keyOf = (row: Row): unknown[] => shape.key.map((k) => row[k] ?? null);
        const dropped = r.action === "rename" ? null : r.action === "replace-older" ? r.existing! : r.row;
        if (dropped) {
          if (!kept.created) ensurePrivateDirBelow(stateDir, path.dirname(keptPath));
          const winner = dropped === r.row ? r.existing! : r.row;
          kept.add("live-replaced", r.spelling.table, keyJson(shape, dropped), rowJson(dropped), rowTime(shape, dropped), rowTime(shape, winner));
          db.handle.prepare(`DELETE FROM ${table} WHERE ${where(shape.key)}`).run(...keyOf(dropped));
        }
        if (r.action !== "keep-existing") {
          db.handle.prepare(`UPDATE ${table} SET ${quoteId(r.spelling.column)} = ? WHERE ${where(shape.key)}`).run(r.spelling.to, ...keyOf(r.row));
        }
      }
      if (acpx?.value.kind === "earlier") {
        if (!kept.created) ensurePrivateDirBelow(stateDir, path.dirname(keptPath));
        // No freshness to compare: the old row is replaced by the same id in the runtime's shape.
        kept.add("live-replaced", "plugin_state_entries", acpx.key, rowJson(acpx.row), null, null);
        const { pluginId, namespace, entryKey } = ACPX_GATEWAY_INSTANCE;
        db.handle.prepare("UPDATE plugin_state_entries SET value_json = ? WHERE plugin_id = ? AND namespace = ? AND entry_key = ?").run(acpx.value.valueJson, pluginId, namespace, entryKey);
      }
      // Before the live COMMIT: whenever the change is durable, so is the copy of every row it dropped.
      kept.commit();
      return { rows, acpx, keptRowsPath: kept.created ? keptPath : null, changedSinceScan: false };
    });
    return result;
  } catch (error) {
    kept.discard();
    throw error;
  }
}
