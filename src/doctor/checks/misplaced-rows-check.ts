// First-release rows: the first openclaw-state imported two legacy files into plugin_state_entries under keys the
// runtime never reads; this check names them and `--fix` moves them to where the runtime reads them.
import fs from "node:fs";
import { sql } from "kysely";
import { describeError, SchemaFormatError, SchemaVersionError } from "../../core/errors.js";
import { formatCount } from "../../core/format-bytes.js";
import type { JsonRowsSpec, RowSpec } from "../../migration/importers/json-rows.js";
import { gatewayInstanceIdSpec, pluginInstallsSpec } from "../../migration/importers/plugin-state-files.js";
import type { StatePaths } from "../../state/paths.js";
import { openGlobalDatabase, type GlobalDatabase } from "../../state/state-databases.js";
import { backupBeforeRepair } from "../repair-backup.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, LeftRow, MovedRow, Repair, RepairContext, RepairReport } from "../types.js";

export interface StaleRow {
  plugin_id: string;
  namespace: string;
  entry_key: string;
  value_json: string;
  created_at: number;
  expires_at: number | null;
}

/** A stored value; a parse error's message would quote the text (maybe a credential), so it is not passed on. */
function parseStored(r: StaleRow): unknown {
  try {
    return JSON.parse(r.value_json) as unknown;
  } catch {
    throw new Error(`the value stored under ${JSON.stringify(r.entry_key)} is not JSON`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown): boolean => typeof v === "string";
const isNumber = (v: unknown): boolean => typeof v === "number";

/**
 * Why a row cannot be one the first release wrote, whatever its key: that release wrote `expires_at` NULL,
 * `created_at` the file's mtime in whole milliseconds and `value_json` as JSON.stringify output (compact, canonical).
 */
function commonShapeProblem(r: StaleRow): string | null {
  if (r.expires_at !== null) return "it has an expiry (the first release wrote none)";
  if (!Number.isSafeInteger(r.created_at) || r.created_at < 0) return "its created_at is not a file time in whole milliseconds";
  let v: unknown;
  try {
    v = JSON.parse(r.value_json);
  } catch {
    return "its value is not JSON";
  }
  if (JSON.stringify(v) !== r.value_json) return "its value is not compact JSON as the first release wrote it";
  return null;
}

/** Where the first release put one legacy file, and how its rows read back as the value the importer parses. */
export interface FirstReleaseLocation {
  /** The legacy file (relative to the state dir) the rows came from. */
  file: string;
  spec: JsonRowsSpec;
  pluginId: string;
  namespace: string;
  /** null: every key of the namespace (one row per plugin). */
  entryKey: string | null;
  /**
   * Per row (same order), why it does not have a key and value the first release wrote here, or null when it does.
   * Called only on rows that pass the common shape (expiry, created_at, compact JSON).
   */
  shape(rows: StaleRow[]): Array<string | null>;
  /** The file's parsed value as the importer would see it, rebuilt from rows of the first release's shape. */
  value(rows: StaleRow[]): unknown;
}

/**
 * The top-level fields of a whole plugin index (minus "version", which the first release dropped), each with the
 * JSON type the file holds there: a file of this kind was split into one row per field.
 */
const INDEX_FIELDS: Record<string, [string, (v: unknown) => boolean]> = {
  warning: ["text", isText],
  hostContractVersion: ["text", isText],
  compatRegistryVersion: ["text", isText],
  policyHash: ["text", isText],
  refreshReason: ["text", isText],
  migrationVersion: ["number", isNumber],
  generatedAtMs: ["number", isNumber],
  installRecords: ["object", isObject],
  plugins: ["array", Array.isArray],
  diagnostics: ["array", Array.isArray],
};

/**
 * The two shapes the first release gave plugins/installs.json: a whole index became one row per top-level field
 * (recognised by "installRecords" holding an object or "plugins" an array, as the importer recognises the file);
 * an install map ({installs: {…}} or bare) one row per plugin id, the value its install record (an object).
 */
function pluginInstallsShape(rows: StaleRow[]): Array<string | null> {
  const values = rows.map((r) => JSON.parse(r.value_json) as unknown);
  const whole = rows.some((r, i) => (r.entry_key === "installRecords" && isObject(values[i])) || (r.entry_key === "plugins" && Array.isArray(values[i])));
  return rows.map((r, i) => {
    const v = values[i];
    if (whole) {
      const field = Object.hasOwn(INDEX_FIELDS, r.entry_key) ? INDEX_FIELDS[r.entry_key]! : null;
      if (!field) return "not a field of the plugin index the rows beside it were split from";
      return field[1](v) ? null : `its value is not the ${field[0]} the plugin index holds under this field`;
    }
    if (r.entry_key === "version") return "the first release never wrote a \"version\" row for an install map (the importer drops that key)";
    if (r.entry_key === "installs") return "a plugin named \"installs\" would be read by the importer as the whole install map";
    return isObject(v) ? null : "its value is not an install record (a JSON object)";
  });
}

/**
 * What the first release (commit b9e032d) wrote: the id as a JSON string under gateway/instance/id; the install map
 * as one row per top-level key (minus "version") under plugins/installs/<key>, the value being that key's value.
 */
export const FIRST_RELEASE_LOCATIONS: readonly FirstReleaseLocation[] = [
  {
    file: "gateway-instance-id",
    spec: gatewayInstanceIdSpec,
    pluginId: "gateway",
    namespace: "instance",
    entryKey: "id",
    // The first release wrote the file's trimmed single line, never empty.
    shape: (rows) =>
      rows.map((r) => {
        const v = JSON.parse(r.value_json) as unknown;
        return typeof v === "string" && v !== "" && v === v.trim() && !v.includes("\n") ? null : "its value is not the text of an instance id";
      }),
    value: (rows) => parseStored(rows[0]!),
  },
  {
    file: "plugins/installs.json",
    spec: pluginInstallsSpec,
    pluginId: "plugins",
    namespace: "installs",
    entryKey: null,
    shape: pluginInstallsShape,
    // The install map the first release read: each key back with its value (its "version" member was dropped then).
    value: (rows) => Object.fromEntries(rows.map((r) => [r.entry_key, parseStored(r)])),
  },
];

/** The column that says when a target row was written (the importer's mtime, or the runtime's own write). */
const WRITTEN_AT: Record<string, string> = { plugin_state_entries: "created_at", installed_plugin_index: "updated_at_ms" };

export interface MisplacedGroup {
  location: FirstReleaseLocation;
  /** The rows of the first release's shape: the only ones a repair touches. */
  rows: StaleRow[];
  /** Rows at the same location without that shape, each with why: never moved nor deleted. */
  left: Array<{ row: StaleRow; reason: string }>;
  /** The row the importer builds from `rows` (where the runtime reads it), why it cannot be built, or null (no rows). */
  target: RowSpec | { error: string } | null;
  /** When the row already at the target was written (null: none there). */
  existingAt: number | null;
}

/** The row already at the target wins when it is as new as the stale rows or newer (the runtime writes there now). */
function existingWins(g: MisplacedGroup, target: RowSpec): boolean {
  return g.existingAt !== null && g.existingAt >= Number(target.values[WRITTEN_AT[target.table]!]);
}

function label(table: string, keys: readonly string[]): string {
  // JSON-quoted: keys come from the database and may hold anything, terminal escapes included.
  return `${table} (${keys.map((k) => JSON.stringify(k)).join(", ")})`;
}

export function staleLabel(loc: FirstReleaseLocation, entryKey?: string): string {
  const key = entryKey ?? loc.entryKey;
  return key === null ? `${label("plugin_state_entries", [loc.pluginId, loc.namespace]).slice(0, -1)}, every key)` : label("plugin_state_entries", [loc.pluginId, loc.namespace, key]);
}

export function targetLabel(target: RowSpec): string {
  return label(target.table, target.key.map((k) => String(target.values[k])));
}

function staleRows(db: GlobalDatabase, loc: FirstReleaseLocation): StaleRow[] {
  let q = db.q.selectFrom("plugin_state_entries").select(["plugin_id", "namespace", "entry_key", "value_json", "created_at", "expires_at"]).where("plugin_id", "=", loc.pluginId).where("namespace", "=", loc.namespace);
  if (loc.entryKey !== null) q = q.where("entry_key", "=", loc.entryKey);
  // rowid order is the order the first release inserted them, the file's own order (install_records_json keeps it).
  return db.all(q.orderBy(sql`rowid`));
}

/** Raw SQL because the target's table and key columns come from the importer's row spec (code, never input). */
function existingAt(db: GlobalDatabase, target: RowSpec): number | null {
  // A read-only open of an older v1 file may lack the @additive table: then nothing is there yet.
  if (!db.tableNames().includes(target.table)) return null;
  const where = target.key.map((c) => `"${c}" IS ?`).join(" AND ");
  const found = db.prepare(`SELECT "${WRITTEN_AT[target.table]}" AS at FROM "${target.table}" WHERE ${where}`).get(...target.key.map((k) => target.values[k] ?? null)) as { at: number } | undefined;
  return found ? Number(found.at) : null;
}

/** The rows at a location split into the first release's shape and the rest (each with its reason). */
function splitByShape(location: FirstReleaseLocation, all: StaleRow[]): Pick<MisplacedGroup, "rows" | "left"> {
  const left: MisplacedGroup["left"] = [];
  const common: StaleRow[] = [];
  for (const row of all) {
    const reason = commonShapeProblem(row);
    if (reason) left.push({ row, reason });
    else common.push(row);
  }
  const reasons = location.shape(common);
  const rows = common.filter((row, i) => {
    if (reasons[i] === null) return true;
    left.push({ row, reason: reasons[i]! });
    return false;
  });
  return { rows, left };
}

/** Every first-release row set still in the global DB, with the row the importer would build from it. */
export function findMisplacedRows(db: GlobalDatabase, paths: StatePaths): MisplacedGroup[] {
  const groups: MisplacedGroup[] = [];
  for (const location of FIRST_RELEASE_LOCATIONS) {
    const all = staleRows(db, location);
    if (all.length === 0) continue;
    const { rows, left } = splitByShape(location, all);
    if (rows.length === 0) {
      groups.push({ location, rows, left, target: null, existingAt: null });
      continue;
    }
    // A loop, not Math.max(...rows): a hostile table may hold more rows than the argument limit.
    const mtimeMs = rows.reduce((m, r) => Math.max(m, r.created_at), -Infinity);
    let target: RowSpec | { error: string };
    try {
      // The importer's own conversion, fed what it would have read from the file (its mtime is the rows' created_at).
      const built = location.spec.rows(location.value(rows), { path: `${paths.globalDbPath} ${staleLabel(location)}`, relativePath: location.file, agentId: null, mtimeMs }, paths).rows;
      if (built.length !== 1) throw new Error(`the importer built ${built.length} rows from it, not one`);
      target = built[0]!;
    } catch (error) {
      target = { error: describeError(error) };
    }
    groups.push({ location, rows, left, target, existingAt: "error" in target ? null : existingAt(db, target) });
  }
  return groups;
}

const movable = (g: MisplacedGroup): g is MisplacedGroup & { target: RowSpec } => g.target !== null && !("error" in g.target);

/** What a group holds, to see whether it changed between the backup and the move (same rows, same target row). */
function fingerprint(g: MisplacedGroup): string {
  return JSON.stringify([g.rows, g.existingAt]);
}

export interface MoveOutcome {
  file: string;
  stale: number;
  target: string;
  action: "moved" | "kept-newer" | "left";
  /** moved over an older row that was already at the target. */
  replaced?: boolean;
  reason?: string;
  /** Every row moved (or removed, superseded by a newer row at the target). */
  moved: MovedRow[];
  /** Every row left as it is, with why (not the first release's shape, not rebuildable, changed since the backup). */
  left: LeftRow[];
}

function insertRow(db: GlobalDatabase, row: RowSpec): void {
  const cols = Object.keys(row.values);
  db.prepare(`DELETE FROM "${row.table}" WHERE ${row.key.map((c) => `"${c}" IS ?`).join(" AND ")}`).run(...row.key.map((k) => row.values[k] ?? null));
  db.prepare(`INSERT INTO "${row.table}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...Object.values(row.values));
}

const leftOf = (g: MisplacedGroup, rows: StaleRow[], reason: string): LeftRow[] => rows.map((r) => ({ row: staleLabel(g.location, r.entry_key), reason }));
const leftByShape = (g: MisplacedGroup): LeftRow[] => g.left.map((l) => ({ row: staleLabel(g.location, l.row.entry_key), reason: l.reason }));

/**
 * Moves every first-release row set in one IMMEDIATE transaction (read again inside it: the check ran before the
 * lease). Only rows of the first release's shape are touched. A row already at the target that is as new or newer
 * wins: then the stale rows are only removed. `expected` (by file): what the backup was taken over; a group that
 * differs now is left whole, since the archive does not hold it as it is.
 */
export function moveMisplacedRows(db: GlobalDatabase, paths: StatePaths, expected?: ReadonlyMap<string, string>): MoveOutcome[] {
  return db.immediate(() =>
    findMisplacedRows(db, paths).map((g): MoveOutcome => {
      const shapeLeft = leftByShape(g);
      const base = { file: g.location.file, stale: g.rows.length };
      if (g.target === null) return { ...base, target: staleLabel(g.location), action: "left", reason: "no row has the first release's shape", moved: [], left: shapeLeft };
      if ("error" in g.target) return { ...base, target: staleLabel(g.location), action: "left", reason: g.target.error, moved: [], left: [...leftOf(g, g.rows, g.target.error), ...shapeLeft] };
      if (expected && expected.get(g.location.file) !== fingerprint(g)) {
        const reason = "changed since the backup was taken (run `doctor --fix` again)";
        return { ...base, target: targetLabel(g.target), action: "left", reason, moved: [], left: [...leftOf(g, g.rows, reason), ...shapeLeft] };
      }
      const keep = existingWins(g, g.target);
      if (!keep) insertRow(db, g.target);
      // Deleted by their exact key, one at a time: the rows left beside them are never matched.
      for (const r of g.rows) db.run(db.q.deleteFrom("plugin_state_entries").where("plugin_id", "=", r.plugin_id).where("namespace", "=", r.namespace).where("entry_key", "=", r.entry_key));
      const to = targetLabel(g.target);
      const moved = g.rows.map((r): MovedRow => ({ from: staleLabel(g.location, r.entry_key), to, action: keep ? "superseded" : "moved" }));
      return { ...base, target: to, action: keep ? "kept-newer" : "moved", replaced: !keep && g.existingAt !== null, moved, left: shapeLeft };
    }),
  );
}

/** The repair: re-read under the lease, back up, move; every row moved or left is in the report. */
export async function applyMisplacedRowsRepair(rctx: RepairContext): Promise<RepairReport> {
  const before = findMisplacedRows(rctx.global, rctx.paths);
  if (!before.some(movable)) {
    const left = before.flatMap((g) => [...(g.target && "error" in g.target ? leftOf(g, g.rows, g.target.error) : []), ...leftByShape(g)]);
    return { detail: "nothing left to move", rows: { backupPath: null, moved: [], left } };
  }
  const backupPath = await backupBeforeRepair(rctx, "moving the first-release rows");
  const outcomes = moveMisplacedRows(rctx.global, rctx.paths, new Map(before.map((g) => [g.location.file, fingerprint(g)])));
  const covered = backupPath ? `covered by ${backupPath}` : "no backup (--no-backup)";
  return {
    detail: outcomes.length === 0 ? "nothing left to move" : [...outcomes.map(describeOutcome), covered].join("; "),
    rows: { backupPath, moved: outcomes.flatMap((o) => o.moved), left: outcomes.flatMap((o) => o.left) },
  };
}

function describeOutcome(o: MoveOutcome): string {
  const rows = `${formatCount(o.stale)} first-release row(s)`;
  const others = o.left.length - (o.action === "left" ? o.stale : 0);
  if (o.stale === 0) return `${o.file}: left ${formatCount(others)} row(s) there that the first release did not write`;
  return `${describeAction(o, rows)}${others > 0 ? `; left ${formatCount(others)} other row(s) there that the first release did not write` : ""}`;
}

function describeAction(o: MoveOutcome, rows: string): string {
  if (o.action === "moved") return `${o.file}: moved ${rows} to ${o.target}${o.replaced ? " (replacing an older row there)" : ""}`;
  if (o.action === "kept-newer") return `${o.file}: kept the row already at ${o.target} (as new or newer), removed the ${rows} left behind`;
  return `${o.file}: left ${rows} in place (${o.reason ?? "cannot be moved"})`;
}

function finding(g: MisplacedGroup & { target: NonNullable<MisplacedGroup["target"]> }, verbose: boolean): Finding {
  const loc = g.location;
  const where = "error" in g.target ? "where the runtime reads it" : targetLabel(g.target);
  const limit = verbose ? Infinity : 20;
  const lines = g.rows.slice(0, limit).map((r) => staleLabel(loc, r.entry_key));
  if (g.rows.length > limit) lines.push(`… and ${formatCount(g.rows.length - limit)} more (--verbose lists all)`);
  if ("error" in g.target) lines.push(`cannot be rebuilt as the importer would: ${g.target.error}`);
  else if (g.existingAt !== null) lines.push(`${where} already holds a row (written ${new Date(g.existingAt).toISOString()}): ${existingWins(g, g.target) ? "it is as new or newer and is kept" : "it is older and is replaced"}`);
  return {
    id: `misplaced-rows.${loc.spec.kind}`,
    severity: "warning",
    title: `${formatCount(g.rows.length)} row(s) an earlier openclaw-state imported from ${loc.file} under ${staleLabel(loc)}, where the runtime never reads them: they belong in ${where}`,
    detail: lines.join("\n"),
    fix: "error" in g.target
      ? "Left in place by `doctor --fix`: check the row and write the value where the runtime reads it by hand."
      : "`doctor --fix` moves them there in one transaction after a verified backup (built as the importer builds it); a row already there that is as new or newer is kept and the stale rows are only removed.",
  };
}

/** Rows at a first-release location that do not have its shape: named with their reason, never touched. */
function leftFinding(g: MisplacedGroup, verbose: boolean): Finding {
  const limit = verbose ? Infinity : 20;
  const lines = g.left.slice(0, limit).map((l) => `${staleLabel(g.location, l.row.entry_key)}: ${l.reason}`);
  if (g.left.length > limit) lines.push(`… and ${formatCount(g.left.length - limit)} more (--verbose lists all)`);
  return {
    id: `misplaced-rows.${g.location.spec.kind}.left`,
    severity: "info",
    title: `${formatCount(g.left.length)} row(s) under ${staleLabel(g.location)} do not have the shape the first release wrote: \`doctor --fix\` leaves them as they are (--verbose names each with its reason)`,
    detail: lines.join("\n"),
  };
}

export const misplacedRowsCheck: DoctorCheck = {
  id: "misplaced-rows",
  run(ctx: CheckContext): CheckResult {
    if (!fs.existsSync(ctx.paths.globalDbPath)) return { findings: [], repairs: [] };
    let db: GlobalDatabase;
    try {
      db = openGlobalDatabase(ctx.paths, { mode: "read" });
    } catch (error) {
      // Another program's format: the rows this check looks for are ones an earlier openclaw-state wrote.
      if (error instanceof SchemaFormatError || error instanceof SchemaVersionError) {
        const writtenBy = error.writtenBy ?? "another program";
        return { findings: [{ id: "misplaced-rows.skipped", severity: "info", title: `Misplaced-row check skipped: the global database was written by ${writtenBy} (it looks only for rows an earlier openclaw-state imported under unread keys)`, path: ctx.paths.globalDbPath }], repairs: [] };
      }
      // An unopenable database is the storage check's finding; nothing to add here.
      return { findings: [], repairs: [] };
    }
    let groups: MisplacedGroup[];
    try {
      groups = findMisplacedRows(db, ctx.paths);
    } catch (error) {
      const title = `Rows an earlier openclaw-state imported under unread keys could not be looked for: ${describeError(error)}`;
      return { findings: [{ id: "misplaced-rows.unchecked", severity: "warning", title, path: ctx.paths.globalDbPath, fix: "See the database findings above; run `doctor --deep`." }], repairs: [] };
    } finally {
      db.close();
    }
    const toMove = groups.filter(movable);
    const repairs: Repair[] =
      toMove.length === 0
        ? []
        : [
            {
              id: "misplaced-rows.move",
              description: `move ${toMove.map((g) => `the ${g.location.file} row(s)`).join(" and ")} an earlier openclaw-state imported under unread keys to where the runtime reads them, after a verified backup`,
              // After the legacy migration (50): a legacy file imported again removes these rows itself, and its
              // verified archive (taken before any change) covers these rows too.
              order: 60,
              apply: applyMisplacedRowsRepair,
            },
          ];
    const findings = groups.flatMap((g) => [...(g.target !== null ? [finding({ ...g, target: g.target }, ctx.verbose)] : []), ...(g.left.length > 0 ? [leftFinding(g, ctx.verbose)] : [])]);
    return { findings, repairs };
  },
};
