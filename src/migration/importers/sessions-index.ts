// Importer for legacy session indexes (`sessions.json`, SPEC §4.1): typed sessions, entries, routes, conversations.
//
// Bounded memory whatever the index holds: a first streamed pass (session-index-scan.ts) resolves the keys from a
// few facts per entry; the writing pass streams the file again and builds one winning entry at a time. Entries
// whose session row is written later in the file are written by a third pass over just those.
import crypto from "node:crypto";
import type Database from "better-sqlite3";
import fs from "node:fs";
import { describeError, OperationError } from "../../core/errors.js";
import { collectGarbage, releaseMemory } from "../../core/heap.js";
import { compareText } from "../inventory.js";
import { streamObjectMembers, type ObjectMember } from "../json-object-stream.js";
import type { AgentDatabase } from "../../state/state-databases.js";
import type { AgentImportContext, AgentSourceImporter, DetectContext, DetectedSource, ImportCounts, PlanFacts, PlannedSource, SourceInspection, SourceReach } from "../types.js";
import { sessionIndexReach } from "./session-index-reach.js";
import { entryUpdatedAt, keysOfMember, scanIndex, sessionKeys, type IndexScan } from "./session-index-scan.js";
import { canonicalizeSessionKey, isOrphanSessionKey, keyAgentOf, mainSessionKey } from "./session-keys.js";
import { conversationFor, deliveryRouteOf, ENTRY_JSON_OMITTED, entryJsonTail, normalizeLegacyEntry, PROJECTED_FIELDS, sessionRowFor } from "./session-projection.js";

export const SESSIONS_INDEX_FILE = "sessions.json";

type Obj = Record<string, unknown>;

const KEPT = new Set<string>(PROJECTED_FIELDS);
/**
 * entry_json texts at least this big are written without SQLite evaluating `CHECK (json_valid(entry_json))`:
 * they were re-serialized token by token from a strict tokenizer, so they are valid by construction, and
 * json_valid would cost ~3x the text in native memory (a 50 MB entry peaked the import at ~470 MB RSS).
 * quick_check and integrity_check still verify the constraint (doctor re-checks right after --fix).
 * They are also bound before the row is written, and our copy dropped: SQLite's bound copy and its row are
 * then the only two copies at once, not three.
 */
export const TRUSTED_ENTRY_BYTES = 4 * 1024 * 1024;

/** A member's entry_json: the bytes until a large text was handed to SQLite, then the key whose row holds it. */
interface EntryText {
  bytes: Buffer | null;
  storedAs: string | null;
}

const upsertEntrySql = (entries: string): string =>
  `INSERT INTO ${entries} (session_key, session_id, entry_json, updated_at) VALUES (?, ?, CAST(? AS TEXT), ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, entry_json = excluded.entry_json, updated_at = excluded.updated_at`;

/** The key that owns the `sessions` row when several keys share a session id: main, else newest, else smallest. */
function ownerKey(keys: string[], scan: IndexScan, agentId: string): string {
  const main = mainSessionKey(agentId);
  if (keys.includes(main)) return main;
  return [...keys].sort((a, b) => scan.winners.get(b)!.updatedAt - scan.winners.get(a)!.updatedAt || compareText(a, b))[0]!;
}

/** Keys of the index that name another agent, by that agent (sorted), in file order. */
function routedKeys(index: IndexScan, agentId: string): Map<string, string[]> {
  const byAgent = new Map<string, string[]>();
  for (const key of index.winners.keys()) {
    const agent = keyAgentOf(key, agentId);
    if (agent === agentId) continue;
    const list = byAgent.get(agent);
    if (list) list.push(key);
    else byAgent.set(agent, [key]);
  }
  return new Map([...byAgent].sort(([a], [b]) => compareText(a, b)));
}

/** The session ids the store's own keys name, and per other agent those its keys name (a session may be in both). */
function sessionsByAgent(index: IndexScan, agentId: string): { own: string[]; routed: Map<string, Set<string>> } {
  const own: string[] = [];
  const routed = new Map<string, Set<string>>();
  let mine = false;
  const visit = (sessionId: string, key: string): void => {
    const agent = keyAgentOf(key, agentId);
    if (agent === agentId) mine = true;
    else routed.set(agent, (routed.get(agent) ?? new Set()).add(sessionId));
  };
  for (const [sessionId, keys] of index.keysBySession) {
    mine = false;
    // Most sessions have one key, held as a string: no list is built for those.
    if (typeof keys === "string") visit(sessionId, keys);
    else for (const key of keys) visit(sessionId, key);
    if (mine) own.push(sessionId);
  }
  return { own, routed };
}

function fileMtime(file: string): number {
  return Math.trunc(fs.statSync(file).mtimeMs);
}

function detect(ctx: DetectContext): DetectedSource[] {
  const found: DetectedSource[] = [];
  for (const dir of ctx.sessionsDirs) {
    if (!dir.files.includes(SESSIONS_INDEX_FILE)) continue;
    const rel = dir.legacyRoot ? `sessions/${SESSIONS_INDEX_FILE}` : `agents/${dir.agentId}/sessions/${SESSIONS_INDEX_FILE}`;
    found.push({ kind: "sessions-index", agentId: dir.agentId, path: `${dir.dir}/${SESSIONS_INDEX_FILE}`, relativePath: rel, legacyRoot: dir.legacyRoot });
  }
  return found;
}

function reachOf(file: string, index: IndexScan, options: { agentId: string; mainKey: string }): SourceReach {
  try {
    return sessionIndexReach(file, index, options);
  } catch (error) {
    return { tables: {}, unknown: `its second reading failed: ${describeError(error)}` };
  }
}

function inspect(source: DetectedSource, ctx: DetectContext): SourceInspection {
  const st = fs.statSync(source.path);
  if (st.size === 0) {
    const digest = crypto.createHash("sha256").digest("hex");
    return { sha256: digest, sizeBytes: 0, records: 0, notes: [], skipReason: "empty file (nothing to import; left in place)" };
  }
  // Detected from an agent's sessions dir: always has an agent.
  const agentId = source.agentId!;
  try {
    const index = scanIndex(source.path, { agentId, mainKey: ctx.mainKey, fallbackUpdatedAt: Math.trunc(st.mtimeMs), mainKeyExists: false, seedMainKey: source.legacyRoot });
    const notes = [...index.duplicates, ...index.warnings];
    if (index.seededMainFrom) notes.push(`${mainSessionKey(agentId)} is absent: seeded from the newest direct entry ${JSON.stringify(index.seededMainFrom)} unless another index or the database has it`);
    if (index.syntax === "json5") notes.push("JSON5 syntax (single quotes or unquoted keys): read whole, as files of this kind up to 16 MiB may be");
    const { own, routed } = sessionsByAgent(index, agentId);
    for (const [other, keys] of routedKeys(index, agentId)) {
      notes.push(`${keys.length} key(s) name agent "${other}" (${JSON.stringify(keys[0])}${keys.length > 1 ? ", …" : ""}): filed in that agent's database, created if need be, with their transcripts, as OpenClaw 2026.9.6 files them`);
    }
    return {
      sha256: index.sha256,
      sizeBytes: index.sizeBytes,
      records: index.rawCount,
      notes,
      referencedSessionIds: own,
      hasMainKey: index.winners.has(mainSessionKey(agentId)) && index.seededMainFrom === null,
      ...(routed.size > 0 ? { routedSessionIds: Object.fromEntries([...routed].map(([other, ids]) => [other, [...ids]])) } : {}),
      ...(ctx.reach ? { reach: reachOf(source.path, index, { agentId, mainKey: ctx.mainKey }) } : {}),
    };
  } catch (error) {
    // The plan still lists it: the import will fail the same way, be recorded, and leave the file in place.
    const digest = fs.readFileSync(source.path);
    return { sha256: crypto.createHash("sha256").update(digest).digest("hex"), sizeBytes: digest.length, records: 0, notes: [`will fail: ${describeError(error)}`] };
  }
}

/**
 * Raw prepared statements: an index can hold thousands of entries and building each query with Kysely
 * cost ~0.3 ms per entry in bench/migrate.mjs. The conversation lookup mirrors the identity index's ifnull().
 */
function indexStatements(db: AgentDatabase, schema = "main") {
  // Unqualified names would resolve to the source agent's own tables: every name carries the target's schema.
  const t = (table: string): string => `${schema}.${table}`;
  const sessionCols = ["session_id", "session_key", "session_scope", "created_at", "updated_at", "started_at", "ended_at", "status", "chat_type", "channel", "account_id", "primary_conversation_id", "model_provider", "model", "agent_harness_id", "parent_session_key", "spawned_by", "display_name"] as const;
  return {
    sessionCols,
    withoutChecks: <T>(fn: () => T): T => db.withoutCheckConstraints(fn),
    sessionOf: db.prepare(`SELECT updated_at, session_key, primary_conversation_id FROM ${t("sessions")} WHERE session_id = ?`),
    upsertSession: db.prepare(
      `INSERT INTO ${t("sessions")} (${sessionCols.join(", ")}) VALUES (${sessionCols.map(() => "?").join(", ")}) ON CONFLICT (session_id) DO UPDATE SET ${sessionCols.filter((c) => c !== "session_id").map((c) => `${c} = excluded.${c}`).join(", ")}`,
    ),
    insertConversation: db.prepare(
      `INSERT OR IGNORE INTO ${t("conversations")} (conversation_id, channel, account_id, kind, peer_id, parent_conversation_id, thread_id, label, metadata_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    findConversation: db
      .prepare(`SELECT conversation_id FROM ${t("conversations")} WHERE channel = ? AND ifnull(account_id, '') = ? AND kind = ? AND ifnull(peer_id, '') = ? AND ifnull(parent_conversation_id, '') = '' AND ifnull(thread_id, '') = ?`)
      .pluck(),
    dropOtherPrimary: db.prepare(`DELETE FROM ${t("session_conversations")} WHERE session_id = ? AND role = 'primary' AND conversation_id <> ?`),
    upsertLink: db.prepare(
      `INSERT INTO ${t("session_conversations")} (session_id, conversation_id, role, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, conversation_id, role) DO UPDATE SET last_seen_at = max(last_seen_at, excluded.last_seen_at)`,
    ),
    hasSession: db.prepare(`SELECT 1 FROM ${t("sessions")} WHERE session_id = ?`).pluck(),
    entryUpdatedAt: db.prepare(`SELECT updated_at FROM ${t("session_entries")} WHERE session_key = ?`).pluck(),
    entrySession: db.prepare(`SELECT e.session_id, EXISTS (SELECT 1 FROM ${t("sessions")} s WHERE s.session_id = e.session_id) AS has_session FROM ${t("session_entries")} e WHERE e.session_key = ?`),
    // entry_json arrives as UTF-8 bytes re-serialized from the file's tokens: CAST stores them as TEXT.
    upsertEntry: db.prepare(upsertEntrySql(t("session_entries"))),
    /** A statement of its own for one large text: bound once, finalized when dropped (its bound copy with it). */
    largeEntryStatement: () => db.prepareUncached(upsertEntrySql(t("session_entries"))),
    copyEntry: db.prepare(
      `INSERT INTO ${t("session_entries")} (session_key, session_id, entry_json, updated_at) SELECT ?, ?, entry_json, ? FROM ${t("session_entries")} WHERE session_key = ? ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, entry_json = excluded.entry_json, updated_at = excluded.updated_at`,
    ),
    dropPlaceholderEntry: db.prepare(`DELETE FROM ${t("session_entries")} WHERE session_key = ? AND session_id = ?`),
    dropPlaceholderRoute: db.prepare(`DELETE FROM ${t("session_routes")} WHERE session_key = ? AND session_id = ?`),
    routeUpdatedAt: db.prepare(`SELECT updated_at FROM ${t("session_routes")} WHERE session_key = ?`).pluck(),
    upsertRoute: db.prepare(
      `INSERT INTO ${t("session_routes")} (session_key, session_id, updated_at) VALUES (?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at`,
    ),
  };
}

type Statements = ReturnType<typeof indexStatements>;

interface WriteState {
  rows: { sessions: number; session_entries: number; session_routes: number; conversations: number; session_conversations: number };
  keptNewer: number;
  /** Keys whose session row did not exist yet when their entry came by: written by the deferred pass. */
  deferred: Set<string>;
}

/** The conversation of a delivery route (created once by its natural identity) and its id. */
function conversationId(st: Statements, state: WriteState, entry: Obj, route: NonNullable<ReturnType<typeof deliveryRouteOf>>, at: number): { id: string; kind: string } {
  const conv = conversationFor(route, entry);
  state.rows.conversations += st.insertConversation.run(conv.conversation_id, conv.channel, conv.account_id, conv.kind, conv.peer_id, conv.parent_conversation_id, conv.thread_id, conv.label, conv.metadata_json, at, at).changes;
  const id = (st.findConversation.get(conv.channel, conv.account_id ?? "", conv.kind, conv.peer_id, conv.thread_id ?? "") as string | undefined) ?? conv.conversation_id;
  return { id, kind: conv.kind };
}

/** The owner key's `sessions` row and primary link (a newer DB row wins, orphan placeholders always give way). */
function writeSessionRow(st: Statements, state: WriteState, key: string, sessionId: string, entry: Obj, updatedAt: number, agentId: string): void {
  const existing = st.sessionOf.get(sessionId) as { updated_at: number; session_key: string } | undefined;
  if (existing && updatedAt < existing.updated_at && !isOrphanSessionKey(existing.session_key)) {
    state.keptNewer += 1;
    return;
  }
  if (existing && existing.session_key !== key && isOrphanSessionKey(existing.session_key)) {
    // The placeholder a transcript got while no index named it gives way, with its own index row: the session has
    // one key, the index's (as OpenClaw 2026.9.6 never recovers a session an index names).
    st.dropPlaceholderEntry.run(existing.session_key, sessionId);
    st.dropPlaceholderRoute.run(existing.session_key, sessionId);
  }
  const route = deliveryRouteOf(entry);
  const row = sessionRowFor(sessionId, key, agentId, entry, updatedAt, route);
  const primary = route ? conversationId(st, state, entry, route, updatedAt).id : null;
  const values: Record<string, unknown> = { ...row, primary_conversation_id: primary };
  st.upsertSession.run(...st.sessionCols.map((c) => values[c]));
  state.rows.sessions += 1;
  if (primary) {
    st.dropOtherPrimary.run(sessionId, primary);
    st.upsertLink.run(sessionId, primary, "primary", row.created_at, updatedAt);
    state.rows.session_conversations += 1;
  }
}

/** One key's entry_json; a large text goes to SQLite once, a second key of the same member copies that row. */
function writeEntry(st: Statements, key: string, sessionId: string, text: EntryText, updatedAt: number): void {
  if (text.bytes === null) {
    st.withoutChecks(() => st.copyEntry.run(key, sessionId, updatedAt, text.storedAs));
    return;
  }
  if (text.bytes.length < TRUSTED_ENTRY_BYTES) {
    st.upsertEntry.run(key, sessionId, text.bytes, updatedAt);
    return;
  }
  st.withoutChecks(() => {
    const statement = st.largeEntryStatement();
    bindOnce(statement, key, sessionId, text, updatedAt);
    // Our copy is garbage now: freed before SQLite builds the row from its bound copy.
    releaseMemory();
    statement.run();
  });
  // The statement is unreachable: collecting finalizes it, and its bound copy goes too.
  collectGarbage();
}

/**
 * Binds and lets go, in a frame of its own: a stack slot still holding the bytes after the call would keep
 * them alive through the collection that follows.
 */
function bindOnce(statement: Database.Statement, key: string, sessionId: string, text: EntryText, updatedAt: number): void {
  statement.bind(key, sessionId, text.bytes, updatedAt);
  text.bytes = null;
  text.storedAs = key;
}

/** The member's text moved into a holder (the member no longer refers to it). */
function takeText(m: ObjectMember): EntryText {
  const text: EntryText = { bytes: m.text ?? null, storedAs: null };
  m.text = undefined;
  return text;
}

/** A key's entry and route (newest wins), and on a shared-main session its direct peer as a participant. */
function writeKeyRows(st: Statements, state: WriteState, key: string, sessionId: string, entry: Obj, text: EntryText, updatedAt: number, sharedMainPeer: boolean): void {
  const entryAt = st.entryUpdatedAt.get(key) as number | undefined;
  if (entryAt === undefined || updatedAt >= entryAt) {
    writeEntry(st, key, sessionId, text, updatedAt);
    state.rows.session_entries += 1;
  } else {
    state.keptNewer += 1;
  }
  const routeAt = st.routeUpdatedAt.get(key) as number | undefined;
  if (routeAt === undefined || updatedAt >= routeAt) {
    st.upsertRoute.run(key, sessionId, updatedAt);
    state.rows.session_routes += 1;
  }
  if (!sharedMainPeer) return;
  // Several direct peers share the agent's main session: each peer's conversation is linked as a participant.
  const route = deliveryRouteOf(entry);
  if (!route) return;
  const conv = conversationId(st, state, entry, route, updatedAt);
  const session = st.sessionOf.get(sessionId) as { primary_conversation_id: string | null } | undefined;
  if (conv.kind !== "direct" || conv.id === session?.primary_conversation_id) return;
  st.upsertLink.run(sessionId, conv.id, "participant", updatedAt, updatedAt);
  state.rows.session_conversations += 1;
}

/** The statements of each agent the index files keys under: the source's own (main schema), or an attached one. */
function statementsFor(db: AgentDatabase, source: PlannedSource, ctx: AgentImportContext): (agent: string) => Statements {
  const made = new Map<string, Statements>();
  return (agent) => {
    let st = made.get(agent);
    if (st) return st;
    const schema = agent === ctx.agentId ? "main" : ctx.routes?.get(agent);
    if (schema === undefined) {
      throw new OperationError("route_not_attached", `${source.path} files keys under agent "${agent}", whose database was not opened for this import; re-run \`doctor --fix\`.`, { path: source.path });
    }
    made.set(agent, (st = indexStatements(db, schema)));
    return st;
  };
}

/**
 * Whether this import writes and verifies the keys of `agent`: every agent's, unless the other agents are split into
 * passes (AgentImportContext.routedPass) and another pass has this one. An agent the plan did not name is in every
 * pass, so its keys fail as not attached rather than go unwritten.
 */
function inPass(ctx: AgentImportContext, source: PlannedSource, agent: string): boolean {
  const pass = ctx.routedPass;
  if (pass === undefined) return true;
  if (agent === ctx.agentId) return pass.own;
  return ctx.routes?.has(agent) === true || !(source.routedAgents ?? []).includes(agent);
}

function importIndex(db: AgentDatabase, source: PlannedSource, ctx: AgentImportContext): ImportCounts {
  const statementsOf = statementsFor(db, source, ctx);
  const ownSt = statementsOf(ctx.agentId);
  // The main key is seeded only from the old root store, and only when no store of the agent (this one, another
  // index, the DB) has it.
  const mainExists = Boolean(source.mainKeyElsewhere) || ownSt.routeUpdatedAt.get(mainSessionKey(ctx.agentId)) !== undefined;
  const fallback = fileMtime(source.path);
  const scanOptions = { agentId: ctx.agentId, mainKey: ctx.mainKey, fallbackUpdatedAt: fallback, mainKeyExists: mainExists, seedMainKey: source.legacyRoot };
  const index = scanIndex(source.path, scanOptions);
  if (source.sha256 !== null && index.sha256 !== source.sha256) {
    throw new OperationError("source_changed", `${source.path} changed since it was planned; re-run \`doctor --fix\` to import the new content.`, { path: source.path });
  }
  const agentOf = (key: string): string => keyAgentOf(key, ctx.agentId);
  const rows = { sessions: 0, session_entries: 0, session_routes: 0, conversations: 0, session_conversations: 0 };
  let keptNewer = 0;

  // One pass per agent the keys name (almost always just the source's own): each writes that agent's database.
  const writeAgent = (agent: string): void => {
    const st = statementsOf(agent);
    const main = mainSessionKey(agent);
    // Most sessions have one key, which owns the row; the owner of a shared session is decided once per agent.
    const shared = new Map<string, string>();
    const ownerOf = (sessionId: string): string => {
      const keys = index.keysBySession.get(sessionId)!;
      if (typeof keys === "string") return keys;
      let owner = shared.get(sessionId);
      if (owner === undefined) shared.set(sessionId, (owner = ownerKey(sessionKeys(index, sessionId).filter((k) => agentOf(k) === agent), index, agent)));
      return owner;
    };
    const state: WriteState = { rows, keptNewer: 0, deferred: new Set() };

    // Pass 2: the winning members, one at a time. Pass 3 (rare): keys whose session row came later in the file.
    const writePass = (only: Set<string> | null): void => {
      const wanted = (i: number, rawKey: string): string[] => keysOfMember(index, i, rawKey, scanOptions).filter((k) => agentOf(k) === agent && (only === null || only.has(k)));
      const read = streamObjectMembers(
        source.path,
        (m) => {
          if (m.text === undefined) return;
          // The member lets go of its text: a large one must be collectable once SQLite has its own copy.
          const text = takeText(m);
          const keys = wanted(m.index, m.key);
          const sessionId = (m.fields.sessionId as string).trim();
          // The projection reads only a few small fields; the entry itself streams into entry_json as bytes.
          const entry = normalizeLegacyEntry({ ...m.fields, sessionId });
          const updatedAt = entryUpdatedAt(m.fields.updatedAt, fallback);
          for (const key of keys) {
            const owner = ownerOf(sessionId);
            if (key === owner && only === null) writeSessionRow(st, state, key, sessionId, entry, updatedAt, agent);
            if (st.hasSession.get(sessionId) === undefined) {
              // Written when its session row exists (pass 3), or never when a newer DB row kept it out.
              if (only === null && key !== owner) state.deferred.add(key);
              continue;
            }
            writeKeyRows(st, state, key, sessionId, entry, text, updatedAt, owner === main && key !== owner);
          }
        },
        {
          expected: "an object mapping session keys to entries",
          serialize: (i, rawKey) =>
            wanted(i, rawKey).length === 0
              ? null
              : { omit: ENTRY_JSON_OMITTED, keep: KEPT, tail: (fields) => entryJsonTail(fields, String(fields.sessionId).trim(), entryUpdatedAt(fields.updatedAt, fallback)) },
        },
      );
      if (read.sha256 !== index.sha256) throw new OperationError("source_changed", `${source.path} changed while it was imported; re-run \`doctor --fix\` to import the new content.`, { path: source.path });
    };
    writePass(null);
    if (state.deferred.size > 0) {
      const later = state.deferred;
      state.deferred = new Set();
      writePass(later);
    }
    keptNewer += state.keptNewer;
  };
  const own = inPass(ctx, source, ctx.agentId);
  const routed = [...routedKeys(index, ctx.agentId)].filter(([agent]) => inPass(ctx, source, agent));
  if (own) writeAgent(ctx.agentId);
  for (const [agent] of routed) writeAgent(agent);

  const main = mainSessionKey(ctx.agentId);
  // What concerns the whole file (repeats, the seeded main key, the scan's warnings) is said once, by the store's own pass.
  const notes = own ? [...index.duplicates] : [];
  if (own && index.seededMainFrom) notes.push(`seeded ${main} from the newest direct entry ${JSON.stringify(index.seededMainFrom)}`);
  for (const [agent, keys] of routed) notes.push(`filed ${keys.length} key(s) naming agent "${agent}" in that agent's database`);
  if (keptNewer > 0) {
    notes.push(own ? `${keptNewer} row(s) kept as they were: the database holds newer data` : `${keptNewer} row(s) kept as they were in the databases of agents ${routed.map(([a]) => JSON.stringify(a)).join(", ")}: they hold newer data`);
  }
  return {
    records: index.rawCount,
    rows,
    skipped: index.skipped,
    warnings: own ? index.warnings : [],
    notes,
    expect: { keys: index.winners.size, sessions: index.keysBySession.size },
  };
}

/**
 * Re-reads the index (still in place before retirement): every key has an entry and a route, and the session its entry
 * names has a row, in the database of the agent the key names (of this pass's agents, when they are split into passes).
 * Member by member, holding nothing per key: a second winner table of a 150,000-key index took the process from 151 to
 * 255 MB RSS, the peak of `doctor --fix` on that shape; streamed, the verify stays under 170 MB (Node 24). A member
 * that lost to another spelling of its key is checked against the winner's rows, which is what the import wrote for it.
 * The entry's session is checked rather than each winner's own session id: the import writes them together.
 */
function verify(db: AgentDatabase, source: PlannedSource, _expected: ImportCounts, ctx: AgentImportContext): string | null {
  const statementsOf = statementsFor(db, source, ctx);
  let missing = new Set<string>();
  const onMember = (m: ObjectMember): void => {
    const sessionId = m.fields.sessionId;
    // The scan skips these members (scanIndex): nothing was written for them.
    if (m.kind !== "object" || typeof sessionId !== "string" || sessionId.trim() === "" || m.key.trim() === "") return;
    const key = canonicalizeSessionKey(m.key, ctx.agentId, ctx.mainKey);
    if (key === "") return;
    const agent = keyAgentOf(key, ctx.agentId);
    if (!inPass(ctx, source, agent)) return;
    const st = statementsOf(agent);
    const of = agent === ctx.agentId ? "" : ` (agent ${agent})`;
    const entry = st.entrySession.get(key) as { session_id: string; has_session: number } | undefined;
    if (entry === undefined) missing.add(`entry ${key}`);
    else if (entry.has_session !== 1) missing.add(`session ${entry.session_id}${of}`);
    if (st.routeUpdatedAt.get(key) === undefined) missing.add(`route ${key}`);
  };
  // A second reading (the JSON5 retry) starts from scratch.
  streamObjectMembers(source.path, onMember, { expected: "an object mapping session keys to entries", pick: ["sessionId"] }, () => (missing = new Set()));
  if (missing.size === 0) return null;
  const shown = [...missing].slice(0, 5);
  return `${missing.size} row(s) missing after commit: ${shown.join(", ")}${missing.size > 5 ? ", …" : ""}`;
}

/** An agent's main key held by one of its indexes must not be seeded by another (the old root store). */
function finalize(own: PlannedSource[], facts: PlanFacts): void {
  for (const s of own) {
    const holders = facts.indexesWithMainKey.get(s.agentId ?? "");
    if (!holders || ![...holders].some((p) => p !== s.relativePath)) continue;
    s.mainKeyElsewhere = true;
    s.notes = s.notes.filter((n) => !n.includes("is absent: seeded from"));
  }
}

export const sessionsIndexImporter: AgentSourceImporter = {
  kind: "sessions-index",
  target: "agent",
  label: { one: "legacy session index", many: "legacy session indexes", records: "entries" },
  targetTable: "sessions",
  targetTables: ["sessions", "session_entries", "session_routes", "conversations", "session_conversations"],
  // Conversations only for entries naming a delivery target.
  optionalTables: ["conversations", "session_conversations"],
  detect,
  inspect,
  finalize,
  import: importIndex,
  verify,
};
