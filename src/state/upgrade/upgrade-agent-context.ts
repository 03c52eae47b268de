// Shared state of one agent-DB upgrade: the two handles, typed inserts into OpenClaw's tables, counters and notes.
import type Database from "better-sqlite3";
import type { Insertable } from "kysely";
import { createQueryBuilder } from "../database.js";
import type { OpenclawAgentDB } from "../generated/openclaw-agent-db.js";
import type { TableCounts, UpgradeNote } from "./types.js";
import type { AcpSessionRow } from "./upgrade-agent-acp.js";

export class AgentUpgradeContext {
  readonly q = createQueryBuilder<OpenclawAgentDB>();
  readonly read: TableCounts = {};
  readonly written: TableCounts = {};
  readonly unmapped: TableCounts = {};
  readonly notes: UpgradeNote[] = [];
  /** Entries' ACP metadata bound for the global acp_sessions table (the agent file has no place for it). */
  readonly acpSessions: AcpSessionRow[] = [];
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    readonly source: Database.Database,
    readonly target: Database.Database,
    readonly agentId: string,
    readonly now: number,
  ) {}

  /** Every row of a design-v1 table (counted as read); a table the file lacks reads as empty. */
  rows<T>(table: string, orderBy: string): T[] {
    const exists = this.source.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
    if (!exists) return [];
    const rows = this.source.prepare(`SELECT * FROM "${table}" ORDER BY ${orderBy}`).all() as T[];
    this.read[table] = rows.length;
    return rows;
  }

  /** Kysely builds the INSERT; the compiled statement is cached per SQL text, so a table's rows share one. */
  insert<T extends keyof OpenclawAgentDB & string>(table: T, row: Insertable<OpenclawAgentDB[T]>, conflict: "fail" | "ignore" = "fail"): boolean {
    let builder = this.q.insertInto(table).values(row as never);
    if (conflict === "ignore") builder = builder.onConflict((oc) => oc.doNothing());
    const compiled = builder.compile();
    let statement = this.statements.get(compiled.sql);
    if (!statement) {
      statement = this.target.prepare(compiled.sql);
      this.statements.set(compiled.sql, statement);
    }
    const changed = statement.run(...(compiled.parameters as unknown[])).changes > 0;
    if (changed) this.count(table);
    return changed;
  }

  count(table: string, n = 1): void {
    this.written[table] = (this.written[table] ?? 0) + n;
  }

  skip(table: string, code: string, message: string, n = 1): void {
    this.unmapped[table] = (this.unmapped[table] ?? 0) + n;
    this.note(code, message);
  }

  note(code: string, message: string): void {
    this.notes.push({ code, message });
  }
}
