// Shared state of one agent-DB upgrade: the two handles, typed inserts into OpenClaw's tables, counters and notes.
import type Database from "better-sqlite3";
import type { Insertable } from "kysely";
import { createQueryBuilder } from "../database.js";
import type { OpenclawAgentDB } from "../generated/openclaw-agent-db.js";
import { collectGarbage } from "../../core/heap.js";
import { NoteList } from "./note-list.js";
import { preparedStatement } from "./prepared-statement.js";
import { countedRows } from "./read-source.js";
import type { TableCounts, UpgradeNote } from "./types.js";
import type { AcpSessionRow } from "./upgrade-agent-acp.js";

/** Text handled between full collections: an entry or transcript line is garbage once its row is written. */
const COLLECT_EVERY_CHARS = 16 * 1024 * 1024;

export class AgentUpgradeContext {
  readonly q = createQueryBuilder<OpenclawAgentDB>();
  readonly read: TableCounts = {};
  readonly written: TableCounts = {};
  readonly unmapped: TableCounts = {};
  private readonly noteList = new NoteList();
  private charsSinceCollect = 0;
  private readonly tables = new Map<string, boolean>();
  /** Entries' ACP metadata bound for the global acp_sessions table (the agent file has no place for it). */
  readonly acpSessions: AcpSessionRow[] = [];

  constructor(
    readonly source: Database.Database,
    readonly target: Database.Database,
    readonly agentId: string,
    readonly now: number,
  ) {}

  /** Every row of a design-v1 table (counted as read); a table the file lacks reads as empty. `columns` narrows what is held. */
  rows<T>(table: string, orderBy: string, columns = "*"): T[] {
    if (!this.hasTable(table)) return [];
    const rows = this.source.prepare(`SELECT ${columns} FROM "${table}" ORDER BY ${orderBy}`).all() as T[];
    this.read[table] = rows.length;
    return rows;
  }

  /**
   * The rows of a design-v1 table one at a time (counted as read), for tables whose values can be large: holding a
   * whole table of transcript lines or entries at once is what made the upgrade's peak memory grow with the state.
   * The source is a private read-only snapshot, so iterating it while writing the target (another connection) is safe.
   */
  *iterate<T>(table: string, orderBy: string, columns = "*"): Generator<T> {
    if (!this.hasTable(table)) return;
    yield* countedRows<T>(this.source, table, orderBy, columns, this.read);
  }

  /** How many rows a design-v1 table holds (counted as read), for tables the upgrade only counts. */
  countRows(table: string): number {
    if (!this.hasTable(table)) return 0;
    const n = this.source.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number;
    this.read[table] = n;
    return n;
  }

  /** Whether the design-v1 file has this table (asked once per table: the upgrade's lookups ask per row). */
  hasTable(table: string): boolean {
    let has = this.tables.get(table);
    if (has === undefined) {
      has = this.source.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
      this.tables.set(table, has);
    }
    return has;
  }

  /** Kysely builds the INSERT; the compiled statement is cached per SQL text, so a table's rows share one. */
  insert<T extends keyof OpenclawAgentDB & string>(table: T, row: Insertable<OpenclawAgentDB[T]>, conflict: "fail" | "ignore" = "fail"): boolean {
    let builder = this.q.insertInto(table).values(row as never);
    if (conflict === "ignore") builder = builder.onConflict((oc) => oc.doNothing());
    const compiled = builder.compile();
    const statement = this.prepared(compiled.sql);
    const changed = statement.run(...(compiled.parameters as unknown[])).changes > 0;
    if (changed) this.count(table);
    return changed;
  }

  /** A statement on the target, prepared once per SQL text. */
  prepared(sql: string): Database.Statement {
    return preparedStatement(this.target, sql);
  }

  /**
   * Counts text whose row is written (its parsed copies now garbage) and runs a full collection every
   * COLLECT_EVERY_CHARS: a process started with --expose-gc (doctor --fix restarts with it) then peaks near what it
   * holds instead of what it has read. Without the flag this only counts.
   */
  handled(chars: number): void {
    this.charsSinceCollect += chars;
    if (this.charsSinceCollect < COLLECT_EVERY_CHARS) return;
    this.charsSinceCollect = 0;
    collectGarbage();
  }

  count(table: string, n = 1): void {
    this.written[table] = (this.written[table] ?? 0) + n;
  }

  skip(table: string, code: string, message: string, n = 1): void {
    this.unmapped[table] = (this.unmapped[table] ?? 0) + n;
    this.note(code, message);
  }

  note(code: string, message: string): void {
    this.noteList.add(code, message);
  }

  /** The notes so far, at most NOTES_PER_CODE per code (the rest counted in one note). */
  get notes(): UpgradeNote[] {
    return this.noteList.list();
  }
}
