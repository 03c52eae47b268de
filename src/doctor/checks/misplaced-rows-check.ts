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
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

export interface StaleRow {
  plugin_id: string;
  namespace: string;
  entry_key: string;
  value_json: string;
  created_at: number;
}

/** A stored value; a parse error's message would quote the text (maybe a credential), so it is not passed on. */
function parseStored(r: StaleRow): unknown {
  try {
    return JSON.parse(r.value_json) as unknown;
  } catch {
    throw new Error(`the value stored under ${JSON.stringify(r.entry_key)} is not JSON`);
  }
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
  /** The file's parsed value as the importer would see it, or why these rows cannot be read back as one. */
  value(rows: StaleRow[]): unknown;
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
    value(rows) {
      const v = parseStored(rows[0]!);
      if (typeof v !== "string") throw new Error("its value is not the text of an instance id");
      return v;
    },
  },
  {
    file: "plugins/installs.json",
    spec: pluginInstallsSpec,
    pluginId: "plugins",
    namespace: "installs",
    entryKey: null,
    // The install map the first release read: each key back with its value (its "version" member was dropped then).
    value: (rows) => Object.fromEntries(rows.map((r) => [r.entry_key, parseStored(r)])),
  },
];

/** The column that says when a target row was written (the importer's mtime, or the runtime's own write). */
const WRITTEN_AT: Record<string, string> = { plugin_state_entries: "created_at", installed_plugin_index: "updated_at_ms" };

export interface MisplacedGroup {
  location: FirstReleaseLocation;
  rows: StaleRow[];
  /** The row the importer builds from them (where the runtime reads it), or why it cannot be built. */
  target: RowSpec | { error: string };
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
  let q = db.q.selectFrom("plugin_state_entries").select(["plugin_id", "namespace", "entry_key", "value_json", "created_at"]).where("plugin_id", "=", loc.pluginId).where("namespace", "=", loc.namespace);
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

/** Every first-release row set still in the global DB, with the row the importer would build from it. */
export function findMisplacedRows(db: GlobalDatabase, paths: StatePaths): MisplacedGroup[] {
  const groups: MisplacedGroup[] = [];
  for (const location of FIRST_RELEASE_LOCATIONS) {
    const rows = staleRows(db, location);
    if (rows.length === 0) continue;
    // A loop, not Math.max(...rows): a hostile table may hold more rows than the argument limit.
    const mtimeMs = rows.reduce((m, r) => Math.max(m, r.created_at), -Infinity);
    let target: MisplacedGroup["target"];
    try {
      // The importer's own conversion, fed what it would have read from the file (its mtime is the rows' created_at).
      const built = location.spec.rows(location.value(rows), { path: `${paths.globalDbPath} ${staleLabel(location)}`, relativePath: location.file, agentId: null, mtimeMs }, paths).rows;
      if (built.length !== 1) throw new Error(`the importer built ${built.length} rows from it, not one`);
      target = built[0]!;
    } catch (error) {
      target = { error: describeError(error) };
    }
    groups.push({ location, rows, target, existingAt: "error" in target ? null : existingAt(db, target) });
  }
  return groups;
}

export interface MoveOutcome {
  file: string;
  stale: number;
  target: string;
  action: "moved" | "kept-newer" | "left";
  /** moved over an older row that was already at the target. */
  replaced?: boolean;
  reason?: string;
}

function insertRow(db: GlobalDatabase, row: RowSpec): void {
  const cols = Object.keys(row.values);
  db.prepare(`DELETE FROM "${row.table}" WHERE ${row.key.map((c) => `"${c}" IS ?`).join(" AND ")}`).run(...row.key.map((k) => row.values[k] ?? null));
  db.prepare(`INSERT INTO "${row.table}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...Object.values(row.values));
}

/**
 * Moves every first-release row set in one IMMEDIATE transaction (read again inside it: the check ran before the
 * lease). A row already at the target that is as new or newer wins: then the stale rows are only removed.
 */
export function moveMisplacedRows(db: GlobalDatabase, paths: StatePaths): MoveOutcome[] {
  return db.immediate(() =>
    findMisplacedRows(db, paths).map((g): MoveOutcome => {
      if ("error" in g.target) return { file: g.location.file, stale: g.rows.length, target: staleLabel(g.location), action: "left", reason: g.target.error };
      const keep = existingWins(g, g.target);
      if (!keep) insertRow(db, g.target);
      for (const r of g.rows) db.run(db.q.deleteFrom("plugin_state_entries").where("plugin_id", "=", r.plugin_id).where("namespace", "=", r.namespace).where("entry_key", "=", r.entry_key));
      return { file: g.location.file, stale: g.rows.length, target: targetLabel(g.target), action: keep ? "kept-newer" : "moved", replaced: !keep && g.existingAt !== null };
    }),
  );
}

function describeOutcome(o: MoveOutcome): string {
  const rows = `${formatCount(o.stale)} first-release row(s)`;
  if (o.action === "moved") return `${o.file}: moved ${rows} to ${o.target}${o.replaced ? " (replacing an older row there)" : ""}`;
  if (o.action === "kept-newer") return `${o.file}: kept the row already at ${o.target} (as new or newer), removed the ${rows} left behind`;
  return `${o.file}: left ${rows} in place (${o.reason ?? "cannot be moved"})`;
}

function finding(g: MisplacedGroup, verbose: boolean): Finding {
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
      : "`doctor --fix` moves them there in one transaction (built as the importer builds it); a row already there that is as new or newer is kept and the stale rows are only removed.",
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
    const movable = groups.filter((g) => !("error" in g.target));
    const repairs: Repair[] =
      movable.length === 0
        ? []
        : [
            {
              id: "misplaced-rows.move",
              description: `move ${movable.map((g) => `the ${g.location.file} row(s)`).join(" and ")} an earlier openclaw-state imported under unread keys to where the runtime reads them`,
              // After the legacy migration (50): a legacy file imported again removes these rows itself.
              order: 60,
              apply(rctx) {
                const outcomes = moveMisplacedRows(rctx.global, rctx.paths);
                // Rows that cannot be rebuilt stay reported as a warning; the repair only claims the movable ones.
                return outcomes.length === 0 ? "nothing left to move" : outcomes.map(describeOutcome).join("; ");
              },
            },
          ];
    return { findings: groups.map((g) => finding(g, ctx.verbose)), repairs };
  },
};
