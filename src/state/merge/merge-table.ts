// Rule 1 of the merge: one generic table, row by row: insert what is missing, skip what is equal, let the newer copy win and keep the other.
import type Database from "better-sqlite3";
import type { KeptRows } from "./kept-rows.js";
import { comparedColumns, importableRows, keyJson, quoteId, rowJson, rowTime, sameRow, sameValue, type TableShape } from "./table-shape.js";

export interface MergeTableCounts { inserted: number; identical: number; replaced: number; keptNewer: number; conflicts: number }

export interface RowDecision { table: string; key: string; liveUpdatedAt: number | null; stagedUpdatedAt: number | null }

export interface MergeContext {
  live: Database.Database;
  staged: Database.Database;
  kept: KeptRows;
  keptNewer: RowDecision[];
  replaced: RowDecision[];
  /** Staged times at or after this are not the record's own (see MergeOptions.credibleBefore). */
  credibleBefore: number;
}

type Row = Record<string, unknown>;

export function zeroCounts(): MergeTableCounts {
  return { inserted: 0, identical: 0, replaced: 0, keptNewer: 0, conflicts: 0 };
}

/** A UNIQUE or PRIMARY KEY violation: the staged row collides with a live row under another key (kept out, counted). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

function keyWhere(cols: string[]): string {
  return cols.map((c) => `${quoteId(c)} IS ?`).join(" AND ");
}

/** Compiled INSERTs per connection and table: an appended transcript inserts one row per event. */
const inserts = new WeakMap<Database.Database, Map<TableShape, { cols: string[]; statement: Database.Statement }>>();

/** Inserts a staged row into live (its surrogate id left for live to assign). */
export function insertRow(live: Database.Database, shape: TableShape, row: Row): void {
  let byShape = inserts.get(live);
  if (!byShape) inserts.set(live, (byShape = new Map()));
  let insert = byShape.get(shape);
  if (!insert) {
    const cols = shape.columns.filter((c) => c !== shape.surrogate);
    insert = { cols, statement: live.prepare(`INSERT INTO main.${quoteId(shape.name)} (${cols.map(quoteId).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`) };
    byShape.set(shape, insert);
  }
  insert.statement.run(...insert.cols.map((c) => row[c]));
}

/**
 * Puts back the staged values of columns a trigger on the table resets after a write: session_nodes.entry_valid goes to
 * 0 on every insert or entry update, and 9.6's writer marks a row it wrote valid itself (as upgrade-agent-sessions.ts does).
 */
function restoreTriggerReset(live: Database.Database, shape: TableShape, where: string, whereArgs: unknown[], staged: Row): void {
  if (shape.triggerReset.length === 0) return;
  const current = live.prepare(`SELECT ${shape.triggerReset.map(quoteId).join(", ")} FROM main.${quoteId(shape.name)} WHERE ${where}`).get(...whereArgs) as Row | undefined;
  if (!current) return;
  const differing = shape.triggerReset.filter((c) => !sameValue(current[c], staged[c]));
  if (differing.length === 0) return;
  live.prepare(`UPDATE main.${quoteId(shape.name)} SET ${differing.map((c) => `${quoteId(c)} = ?`).join(", ")} WHERE ${where}`).run(...differing.map((c) => staged[c]), ...whereArgs);
}

export function mergeTable(ctx: MergeContext, shape: TableShape): MergeTableCounts {
  const counts = zeroCounts();
  const t = `main.${quoteId(shape.name)}`;
  const colList = shape.columns.map(quoteId).join(", ");
  const compared = comparedColumns(shape);
  const byKey = shape.key.length > 0 ? ctx.live.prepare(`SELECT ${colList} FROM ${t} WHERE ${keyWhere(shape.key)}`) : null;
  const byValues = ctx.live.prepare(`SELECT 1 FROM ${t} WHERE ${compared.length > 0 ? keyWhere(compared) : "1"} LIMIT 1`);
  const updatable = shape.columns.filter((c) => !shape.key.includes(c) && c !== shape.surrogate);
  const update = shape.key.length > 0 && updatable.length > 0
    ? ctx.live.prepare(`UPDATE ${t} SET ${updatable.map((c) => `${quoteId(c)} = coalesce(?, ${quoteId(c)})`).join(", ")} WHERE ${keyWhere(shape.key)}`)
    : null;
  // Read in full first: the staged handle is another connection, and rows are few next to a transcript.
  const rows = ctx.staged.prepare(`SELECT ${colList} FROM main.${quoteId(shape.name)} ${importableRows(shape.name)}`).all() as Row[];
  for (const staged of rows) {
    const keyArgs = shape.key.map((c) => staged[c]);
    // A NULL in a UNIQUE key matches nothing (NULLs are distinct there): such a row is matched on its values.
    const keyed = byKey !== null && keyArgs.every((v) => v !== null && v !== undefined);
    const live = keyed ? (byKey.get(...keyArgs) as Row | undefined) : undefined;
    if (!live) {
      if (!keyed && byValues.get(...compared.map((c) => staged[c]))) {
        counts.identical += 1;
        continue;
      }
      try {
        insertRow(ctx.live, shape, staged);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        counts.conflicts += 1;
        ctx.kept.add("staged-conflict", shape.name, keyJson(shape, staged), rowJson(staged), null, rowTime(shape, staged));
        continue;
      }
      counts.inserted += 1;
      if (keyed) restoreTriggerReset(ctx.live, shape, keyWhere(shape.key), keyArgs, staged);
      continue;
    }
    if (sameRow(shape, live, staged)) {
      counts.identical += 1;
      continue;
    }
    const liveAt = rowTime(shape, live);
    const stampedAt = rowTime(shape, staged);
    const stagedAt = stampedAt !== null && stampedAt < ctx.credibleBefore ? stampedAt : null;
    const decision: RowDecision = { table: shape.name, key: keyJson(shape, staged), liveUpdatedAt: liveAt, stagedUpdatedAt: stampedAt };
    if (liveAt !== null && stagedAt !== null && stagedAt > liveAt && update) {
      // UPDATE in place, never DELETE + INSERT: ON DELETE CASCADE would take the row's children with it.
      try {
        update.run(...updatable.map((c) => staged[c]), ...keyArgs);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        counts.conflicts += 1;
        ctx.kept.add("staged-conflict", shape.name, decision.key, rowJson(staged), liveAt, stagedAt);
        continue;
      }
      ctx.kept.add("live-replaced", shape.name, decision.key, rowJson(live), liveAt, stagedAt);
      restoreTriggerReset(ctx.live, shape, keyWhere(shape.key), keyArgs, staged);
      counts.replaced += 1;
      ctx.replaced.push(decision);
      continue;
    }
    // Live newer or equal, or no time to tell: the runtime is the authority.
    ctx.kept.add("staged-older", shape.name, decision.key, rowJson(staged), liveAt, stagedAt);
    counts.keptNewer += 1;
    ctx.keptNewer.push(decision);
  }
  return counts;
}
