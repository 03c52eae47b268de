// Per-key reads the session upgrade makes instead of holding whole design-v1 tables, and scratch tables for what it derives.
import type Database from "better-sqlite3";
import type { Selectable } from "kysely";
import type { SessionsTable } from "../generated/agent-db.js";
import type { Route } from "./agent-entry-shape.js";
import { preparedStatement } from "./prepared-statement.js";
import type { AgentUpgradeContext } from "./upgrade-agent-context.js";

export type V1Session = Selectable<SessionsTable>;
/** A written node's key columns and the view of its entry the later passes read (never its whole entry_json). */
export interface WrittenNode { session_key: string; current_session_id: string; updated_at: number; view_json: string }

/** A session's link to a conversation, before it is written to session_conversations. */
export interface Link { conversationId: string; role: string; firstSeen: number; lastSeen: number }

/** The design-v1 route sources (session-projection's `routeSource`) an entry held, as bits of one integer. */
export const ROUTE_SOURCE_BITS: ReadonlyMap<string, number> = new Map([["deliveryContext", 1], ["last", 2], ["origin", 4]]);

/**
 * A state with 150,000 sessions held as rows (sessions, routes, entries, conversations, links) and planned nodes
 * took ~900 MB of heap. The upgrade now asks SQLite instead: the source snapshot by key through its primary keys and
 * indexes, the new file for the nodes it already wrote, and TEMP tables of the new file's connection for what it
 * derived and carries between passes (route fields, conversation ids, entry views, session links; gone when it closes).
 * The source is read-only and nothing iterates the target while it is written, so every statement here is a read
 * that better-sqlite3 allows beside an open iterator.
 */
const SCRATCH_TABLES = ["upgrade_route_fields", "upgrade_conversation_ids", "upgrade_entry_views", "upgrade_link_sessions", "upgrade_links"];

export class SessionLookups {
  private readonly source: Database.Database;
  private readonly target: Database.Database;
  private readonly sourceStatements = new Map<string, Database.Statement | null>();
  private linkedSessionCount = 0;

  constructor(private readonly ctx: AgentUpgradeContext) {
    this.source = ctx.source;
    this.target = ctx.target;
    this.target.exec(`
      CREATE TEMP TABLE upgrade_route_fields (session_id TEXT PRIMARY KEY, mask INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TEMP TABLE upgrade_conversation_ids (v1_id TEXT PRIMARY KEY, new_id TEXT) WITHOUT ROWID;
      CREATE TEMP TABLE upgrade_entry_views (session_key TEXT PRIMARY KEY, view_json TEXT NOT NULL) WITHOUT ROWID;
      CREATE TEMP TABLE upgrade_link_sessions (session_id TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TEMP TABLE upgrade_links (
        seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL, conversation_id TEXT NOT NULL, role TEXT NOT NULL,
        first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, UNIQUE (session_id, conversation_id)
      );
    `);
  }

  /** Drops the scratch tables (the new file never holds them; they live in the connection's temp schema). */
  close(): void {
    for (const table of SCRATCH_TABLES) this.target.exec(`DROP TABLE IF EXISTS temp.${table}`);
  }

  session(sessionId: string): V1Session | undefined {
    return this.sourceGet<V1Session>("sessions", "SELECT * FROM sessions WHERE session_id = ?", sessionId);
  }

  /** The entry of a key; a file without the primary key's uniqueness gives the newest row. */
  entry(key: string): { session_id: string; updated_at: number; entry_json: string } | undefined {
    return this.sourceGet("session_entries", "SELECT session_id, updated_at, entry_json FROM session_entries WHERE session_key = ? ORDER BY updated_at DESC LIMIT 1", key);
  }

  /** The session's design-v1 primary conversation as a route (its peer_id is the raw delivery target our importer saw); the last by conversation id when several. */
  primaryRoute(sessionId: string): Route | undefined {
    if (!this.ctx.hasTable("conversations")) return undefined;
    const c = this.sourceGet<{ channel: string; peer_id: string; account_id: string | null; thread_id: string | null }>(
      "session_conversations",
      "SELECT c.channel, c.peer_id, c.account_id, c.thread_id FROM session_conversations l JOIN conversations c ON c.conversation_id = l.conversation_id WHERE l.session_id = ? AND l.role = 'primary' AND c.peer_id IS NOT NULL AND c.peer_id <> '' ORDER BY l.conversation_id DESC LIMIT 1",
      sessionId,
    );
    if (!c) return undefined;
    return { channel: c.channel.toLowerCase(), to: c.peer_id, ...(c.account_id ? { accountId: c.account_id } : {}), ...(c.thread_id ? { threadId: c.thread_id } : {}) };
  }

  /** The sessions a design-v1 conversation is linked to. */
  linkedSessions(conversationId: string): string[] {
    const statement = this.sourceStatement("session_conversations", "SELECT session_id FROM session_conversations WHERE conversation_id = ?");
    return statement ? (statement.pluck().all(conversationId) as string[]) : [];
  }

  /** created_at of the session's last transcript row (9.6's window times follow the transcript). */
  lastEventAt(sessionId: string): number | null {
    const row = this.sourceGet<{ created_at: number }>("transcript_events", "SELECT created_at FROM transcript_events WHERE session_id = ? ORDER BY seq DESC LIMIT 1", sessionId);
    return row?.created_at ?? null;
  }

  /** A node already written to the new file, with the entry view recorded when it was written. */
  node(key: string): WrittenNode | undefined {
    return this.targetGet<WrittenNode>(
      "SELECT n.session_key, n.current_session_id, n.updated_at, coalesce(v.view_json, '{}') AS view_json FROM session_nodes n LEFT JOIN temp.upgrade_entry_views v ON v.session_key = n.session_key WHERE n.session_key = ?",
      key,
    );
  }

  /** Records the fields of a node's entry the conversation and window passes read (a large entry is not read again). */
  setEntryView(key: string, viewJson: string): void {
    this.targetStatement("INSERT OR REPLACE INTO temp.upgrade_entry_views (session_key, view_json) VALUES (?, ?)").run(key, viewJson);
  }

  hasNode(key: string): boolean {
    return this.targetGet("SELECT 1 AS one FROM session_nodes WHERE session_key = ?", key) !== undefined;
  }

  /** The newest node whose current session this is (the later-written one on a tie), as the window's key. */
  windowOwner(sessionId: string): string | undefined {
    return this.targetGet<{ session_key: string }>("SELECT session_key FROM session_nodes WHERE current_session_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1", sessionId)?.session_key;
  }

  /** How many keys name this session as their current one. */
  keysOf(sessionId: string): number {
    return this.targetGet<{ n: number }>("SELECT count(*) AS n FROM session_nodes WHERE current_session_id = ?", sessionId)!.n;
  }

  addRouteFields(sessionId: string, mask: number): void {
    this.targetStatement("INSERT INTO temp.upgrade_route_fields (session_id, mask) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET mask = mask | excluded.mask").run(sessionId, mask);
  }

  routeFields(sessionId: string): number {
    return this.targetGet<{ mask: number }>("SELECT mask FROM temp.upgrade_route_fields WHERE session_id = ?", sessionId)?.mask ?? 0;
  }

  /** Records what became of a design-v1 conversation: its new id, or null when the entries' own route stands for it. */
  mapConversation(v1Id: string, newId: string | null): void {
    this.targetStatement("INSERT OR REPLACE INTO temp.upgrade_conversation_ids (v1_id, new_id) VALUES (?, ?)").run(v1Id, newId);
  }

  /** undefined: not written; { newId: null }: derived from the entries; else its new id. */
  mappedConversation(v1Id: string): { newId: string | null } | undefined {
    const row = this.targetGet<{ new_id: string | null }>("SELECT new_id FROM temp.upgrade_conversation_ids WHERE v1_id = ?", v1Id);
    return row ? { newId: row.new_id } : undefined;
  }

  /**
   * Links a session to a conversation unless that pair is linked already (the first link of a pair stays). Links keep
   * their order: sessions in the order of their first link, each session's links in the order they were added.
   */
  addLink(sessionId: string, link: Link): void {
    if (this.targetStatement("INSERT OR IGNORE INTO temp.upgrade_link_sessions (session_id, seq) VALUES (?, ?)").run(sessionId, this.linkedSessionCount).changes > 0) this.linkedSessionCount += 1;
    this.targetStatement("INSERT OR IGNORE INTO temp.upgrade_links (session_id, conversation_id, role, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)").run(sessionId, link.conversationId, link.role, link.firstSeen, link.lastSeen);
  }

  /** A session's links, in the order they were added. */
  links(sessionId: string): Link[] {
    return this.targetStatement("SELECT conversation_id AS conversationId, role, first_seen AS firstSeen, last_seen AS lastSeen FROM temp.upgrade_links WHERE session_id = ? ORDER BY seq").all(sessionId) as Link[];
  }

  /** Every primary link followed by a later primary link of the same session, in link order (one primary per session). */
  supersededPrimaries(): { session_id: string; conversation_id: string }[] {
    return this.targetStatement(`
      SELECT l.session_id, l.conversation_id FROM temp.upgrade_links l JOIN temp.upgrade_link_sessions s ON s.session_id = l.session_id
      WHERE l.role = 'primary' AND EXISTS (SELECT 1 FROM temp.upgrade_links later WHERE later.session_id = l.session_id AND later.role = 'primary' AND later.seq > l.seq)
      ORDER BY s.seq, l.seq`).all() as { session_id: string; conversation_id: string }[];
  }

  setLinkRole(sessionId: string, conversationId: string, role: string): void {
    this.targetStatement("UPDATE temp.upgrade_links SET role = ? WHERE session_id = ? AND conversation_id = ?").run(role, sessionId, conversationId);
  }

  /** Writes the links of every session that has a window to session_conversations, in link order; returns how many. */
  writeLinks(): number {
    return this.target.prepare(`
      INSERT INTO session_conversations (session_id, conversation_id, role, route_context_json, first_seen_at, last_seen_at)
      SELECT l.session_id, l.conversation_id, l.role, NULL, l.first_seen, l.last_seen
      FROM temp.upgrade_links l JOIN temp.upgrade_link_sessions s ON s.session_id = l.session_id
      WHERE EXISTS (SELECT 1 FROM session_windows w WHERE w.session_id = l.session_id)
      ORDER BY s.seq, l.seq`).run().changes;
  }

  /** A statement on the source, or null when the file lacks the table (it then reads as empty). */
  private sourceStatement(table: string, sql: string): Database.Statement | null {
    if (!this.sourceStatements.has(sql)) this.sourceStatements.set(sql, this.ctx.hasTable(table) ? this.source.prepare(sql) : null);
    return this.sourceStatements.get(sql)!;
  }

  private sourceGet<T>(table: string, sql: string, ...params: unknown[]): T | undefined {
    return this.sourceStatement(table, sql)?.get(...params) as T | undefined;
  }

  private targetStatement(sql: string): Database.Statement {
    return preparedStatement(this.target, sql);
  }

  private targetGet<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.targetStatement(sql).get(...params) as T | undefined;
  }
}
