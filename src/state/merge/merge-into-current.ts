// Merges a staged database (OpenClaw's current format, imported rows only) into the live one record by record: the newer copy wins, the other is kept.
//
// The rules (docs/migration.md carries the same text):
//  1. Generic tables: every table with rows in the staged file, except sqlite_*, schema bookkeeping (schema_meta, and
//     the seed row every new agent file gets: session_key_contract's default),
//     virtual tables and their shadow tables, and tables only triggers of other tables write (memory_index_state,
//     session_canonical_validation_pending): the live triggers fill those as the runtime's own writes would.
//     The key is the PRIMARY KEY; when that is a lone INTEGER PRIMARY KEY (a rowid surrogate, unless a CHECK pins it
//     to a constant: a singleton) or there is none, the smallest non-partial UNIQUE index is the key; with neither, a
//     staged row is inserted (without its surrogate id) only when no live row has the same values in all other
//     columns. Live row absent: insert (columns both files have). Same values (`*_json` and other JSON text compared
//     parsed, key order ignored; columns a trigger of the table resets, such as session_nodes.entry_valid, not
//     compared): identical, nothing written. Different: freshness, the first present of updated_at, updated_at_ms,
//     last_updated_at, last_seen_at, else an `updatedAtMs` at the top of a `*_json` column. In 9.6 a cron job's
//     updatedAtMs is its row's updated_at (job_json omits it; see upgrade-global-cron.ts). Staged strictly newer: the
//     live row is copied to the kept-rows file, then its non-key columns are UPDATEd in place (never DELETE + INSERT:
//     ON DELETE CASCADE would take its children). Otherwise (live newer or equal, or either side without a time: the
//     runtime is the authority): live kept, the staged row copied to the kept-rows file, counted keptNewer. A staged
//     time at or after `credibleBefore` (the run's start) is the import's own clock or a future date, never the
//     record's: it counts as no time. Time columns (created_at, updated_at, … _at_ms) are left out of "same values":
//     a row equal but for its stamps is the same record. When the staged row wins, a column it leaves NULL keeps the
//     live value (a legacy file that never had a field does not erase what the runtime filled in). A staged
//     row that collides with a different live row under another UNIQUE index is kept out as a conflict.
//  2. Transcripts (agent databases): transcript_events keyed (session_id, seq), an event's identity is its JSON `id`
//     (an `event_zstd` body is decoded with node:zlib's zstd where Node has it; an undecodable event never matches).
//     Per session: no live events: the staged events, identities and watermark are inserted. Live events: position by
//     position over the seqs both have, the same id and the same parsed JSON is identical; anything else is a
//     conflict. With no conflict, the staged events after the live history are appended after the live max seq in
//     file order, their identity rows moved to the new seqs (parent ids unchanged); one whose id live already holds
//     at another seq is a conflict. A conflicted session gets nothing written: it is reported (seq, both ids), its
//     staged events that live lacks go to the kept-rows file, and its legacy file stays in place (the caller's part).
//     A staged rewrite watermark is written only when live has none (append is not a rewrite).
//  3. Parents are written before children (PRAGMA foreign_key_list), foreign_keys ON, PRAGMA foreign_key_check of
//     every written table before COMMIT; any error rolls back: the live file is unchanged and no kept-rows file is left.
//  4. Triggers of the live tables fire as the runtime's own writes would; a column a trigger of the same table resets
//     (session_nodes.entry_valid) is then set to the staged value, as 9.6's writer marks a row it wrote valid.
//  5. The kept-rows file is a new SQLite file (0600; refused when something is there), created only when a row is
//     kept: one table merge_kept (side, table_name, key_json, row_json with BLOBs as {"$base64": …}, live_updated_at,
//     staged_updated_at, kept_at). It is committed before the live transaction, so every change has its kept copy.
//  6. Placeholder keys (agent databases): a session the live file holds under `agent:<id>:recovered:<sessionId>` (or
//     the older `orphan:` key) — filed there because no index named it — and the staged file under another key takes
//     the staged key: before the tables merge, the live window gets the staged row (whose NULL columns the caller
//     filled from the live one), rows keyed by the placeholder move, and the placeholder node, left without windows,
//     goes; both old rows are kept. Its transcript and run events stay on the window (placeholder-keys.ts).
import Database from "better-sqlite3";
import { DatabaseError, OperationError } from "../../core/errors.js";
import { defaultBusyTimeoutMs } from "../busy-timeout.js";
import { OPENCLAW_CURRENT } from "../db-format.js";
import { pathExists } from "../private-fs.js";
import { KeptRows } from "./kept-rows.js";
import { mergeTable, type MergeContext, type MergeTableCounts, type RowDecision } from "./merge-table.js";
import { mergeTranscripts, TRANSCRIPT_TABLES, type Appended, type TranscriptConflict } from "./merge-transcripts.js";
import { claimPlaceholders, type ClaimedPlaceholder } from "./placeholder-keys.js";
import { BOOKKEEPING_TABLES, derivedTables, importableRows, quoteId, tableShape, writeOrder } from "./table-shape.js";

export type { MergeTableCounts } from "./merge-table.js";

export interface MergeOptions {
  role: "global" | "agent";
  /** A database in OpenClaw's current format holding only imported rows; opened read-only. */
  stagedPath: string;
  /** The live database in the same format; written in one BEGIN IMMEDIATE transaction. */
  livePath: string;
  /** A new SQLite file (refused when it exists) for every live row replaced and every staged row kept out. */
  keptRowsPath: string;
  now: number;
  /**
   * A staged time at or after this instant is not the record's own — the import's clock (rows the import had to
   * stamp), or a date in the future — so it never wins over a live row. Default: `now`.
   */
  credibleBefore?: number;
}

export interface MergeReport {
  role: "global" | "agent";
  livePath: string;
  /** null when nothing was kept (no file was created). */
  keptRowsPath: string | null;
  tables: Record<string, MergeTableCounts>;
  /** Live row newer or equal (or no time to tell): the staged row was kept out. */
  keptNewer: RowDecision[];
  /** Staged row strictly newer: the live row was copied to keptRowsPath, then updated. */
  replaced: RowDecision[];
  appended: Appended[];
  transcriptConflicts: TranscriptConflict[];
  /** Session ids with any conflict: the caller keeps their legacy file in place. */
  conflictedSessions: string[];
  /** Live sessions filed under a placeholder key that moved to the key of the staged index (rule 6). */
  claimed: ClaimedPlaceholder[];
}

function openChecked(file: string, role: "global" | "agent", readonly: boolean): Database.Database {
  if (!pathExists(file)) throw new OperationError("merge_missing_database", `${file} does not exist; the merge needs both the staged and the live database. Nothing was merged.`);
  // The staged side is read through query_only, not SQLITE_OPEN_READONLY: a read-only connection to a WAL file
  // cannot remove the -wal/-shm it opens on close, and the merge leaves no sidecar behind.
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${defaultBusyTimeoutMs()}`);
    if (readonly) db.pragma("query_only = ON");
    db.defaultSafeIntegers(true);
    const version = Number(db.pragma("user_version", { simple: true }));
    const expected = role === "global" ? OPENCLAW_CURRENT.global : OPENCLAW_CURRENT.agent;
    if (version !== expected) {
      throw new DatabaseError(`${file} is at ${role} format v${version}, not OpenClaw ${OPENCLAW_CURRENT.release}'s v${expected}; the merge only joins two databases of the current format. Nothing was merged.`, { path: file });
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Tables of the staged file whose rows are merged, in the order they are written. */
function tablesToMerge(live: Database.Database, staged: Database.Database) {
  const skip = new Set([...derivedTables(live), ...derivedTables(staged), ...BOOKKEEPING_TABLES]);
  const names = (staged.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").pluck().all() as string[])
    .filter((n) => !skip.has(n))
    .filter((n) => staged.prepare(`SELECT 1 FROM main.${quoteId(n)} ${importableRows(n)} LIMIT 1`).get() !== undefined);
  const liveTables = new Set(live.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
  const missing = names.filter((n) => !liveTables.has(n));
  if (missing.length > 0) throw new DatabaseError(`The live database has no table ${missing.join(", ")} that the staged file holds rows of; nothing was merged.`);
  return writeOrder(names.map((n) => tableShape(live, staged, n)));
}

export function mergeIntoCurrent(options: MergeOptions): MergeReport {
  if (pathExists(options.keptRowsPath)) {
    throw new OperationError("kept_rows_exists", `${options.keptRowsPath} already exists; the merge writes its kept rows only into a new file. Move it aside and retry; nothing was merged.`);
  }
  const staged = openChecked(options.stagedPath, options.role, true);
  let live: Database.Database;
  try {
    live = openChecked(options.livePath, options.role, false);
  } catch (error) {
    staged.close();
    throw error;
  }
  const kept = new KeptRows(options.keptRowsPath, options.now);
  const report: MergeReport = {
    role: options.role, livePath: options.livePath, keptRowsPath: null, tables: {}, keptNewer: [], replaced: [], appended: [], transcriptConflicts: [], conflictedSessions: [], claimed: [],
  };
  const ctx: MergeContext = { live, staged, kept, keptNewer: report.keptNewer, replaced: report.replaced, credibleBefore: options.credibleBefore ?? options.now };
  try {
    live.pragma("foreign_keys = ON"); // outside the transaction: inside one the pragma is a no-op
    live.exec("BEGIN IMMEDIATE");
    const written: string[] = [];
    if (options.role === "agent") {
      report.claimed = claimPlaceholders(live, staged, kept);
      if (report.claimed.length > 0) written.push("session_nodes", "session_windows");
    }
    const transcripts = options.role === "agent" ? new Set<string>(TRANSCRIPT_TABLES) : new Set<string>();
    let transcriptsDone = false;
    for (const shape of tablesToMerge(live, staged)) {
      if (transcripts.has(shape.name)) {
        // The three transcript tables go together, where the first of them falls in parent-first order.
        if (transcriptsDone) continue;
        transcriptsDone = true;
        const t = mergeTranscripts(ctx);
        for (const [name, counts] of Object.entries(t.tables)) {
          const hasRows = staged.prepare(`SELECT 1 FROM main.${quoteId(name)} LIMIT 1`).get() !== undefined;
          if (hasRows) report.tables[name] = counts;
          written.push(name);
        }
        report.appended.push(...t.appended);
        report.transcriptConflicts.push(...t.conflicts);
        continue;
      }
      report.tables[shape.name] = mergeTable(ctx, shape);
      written.push(shape.name);
    }
    for (const table of written) {
      const violations = live.prepare("SELECT * FROM pragma_foreign_key_check(?)").all(table) as Array<{ table: string; rowid: unknown; parent: string }>;
      if (violations.length > 0) {
        const v = violations[0]!;
        throw new DatabaseError(`The merge would leave ${violations.length} row(s) of ${v.table} in ${options.livePath} without their ${v.parent} row; it was rolled back, the database is unchanged.`, { path: options.livePath });
      }
    }
    report.conflictedSessions = [...new Set(report.transcriptConflicts.map((c) => c.sessionId))].sort();
    kept.commit();
    live.exec("COMMIT");
  } catch (error) {
    if (live.inTransaction) live.exec("ROLLBACK");
    kept.discard();
    throw error;
  } finally {
    live.close();
    staged.close();
  }
  report.keptRowsPath = kept.created ? options.keptRowsPath : null;
  return report;
}
