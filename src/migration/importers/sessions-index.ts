// Importer for legacy session indexes (`sessions.json`, SPEC §4.1): typed sessions, entries, routes, conversations.
import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import fs from "node:fs";
import { OperationError, describeError } from "../../core/errors.js";
import { parseTolerantJson } from "../../core/tolerant-json.js";
import { compareText } from "../inventory.js";
import type { AgentDatabase } from "../../state/state-databases.js";
import type { AgentImportContext, AgentSourceImporter, DetectContext, DetectedSource,  ImportCounts, PlanFacts, PlannedSource, SourceInspection } from "../types.js";
import { canonicalizeStore, isOrphanSessionKey, mainSessionKey, type CanonicalEntry, type KeyedEntry } from "./session-keys.js";
import { conversationFor, deliveryRouteOf, entryJsonFor, isObject, normalizeLegacyEntry, sessionRowFor } from "./session-projection.js";

export const SESSIONS_INDEX_FILE = "sessions.json";
/** An index is parsed as a whole (it is one JSON object); beyond this it is refused rather than risk memory. */
export const MAX_INDEX_BYTES = 128 * 1024 * 1024;

type Obj = Record<string, unknown>;

export interface LoadedIndex {
  sha256: string;
  sizeBytes: number;
  rawCount: number;
  canonical: Map<string, CanonicalEntry<Obj>>;
  /** sessionId → canonical keys pointing at it, in file order. */
  keysBySession: Map<string, string[]>;
  duplicates: string[];
  seededMainFrom: string | null;
  warnings: string[];
  skipped: number;
}

/** Reads and parses the index: JSON first, then the tolerant reader (comments, trailing commas, single quotes, bare keys). */
export function readIndexObject(file: string): { obj: Obj; sha256: string; sizeBytes: number } {
  const size = fs.statSync(file).size;
  if (size > MAX_INDEX_BYTES) {
    throw new OperationError("index_too_large", `${file} is ${size} bytes, larger than the ${MAX_INDEX_BYTES / 1048576} MiB a session index may be; it was left in place.`, { path: file });
  }
  const bytes = fs.readFileSync(file);
  const sha256 = crypto.createHash("sha256").update(bytes).digest("hex");
  if (!isUtf8(bytes)) throw new OperationError("invalid_utf8", `${file}: not valid UTF-8; the file was left in place.`, { path: file });
  const text = bytes.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    try {
      parsed = parseTolerantJson(text);
    } catch (error) {
      throw new OperationError("invalid_json", `${file}: not valid JSON or JSON5 (${describeError(error)}); the file was left in place.`, { path: file });
    }
  }
  if (!isObject(parsed)) {
    throw new OperationError("invalid_index", `${file}: expected an object mapping session keys to entries, found ${Array.isArray(parsed) ? "an array" : typeof parsed}; the file was left in place.`, { path: file });
  }
  return { obj: parsed, sha256, sizeBytes: bytes.length };
}

/** Parses, drops entries without a string sessionId, canonicalizes keys and groups keys by session. */
export function loadIndex(file: string, agentId: string, mainKey: string, fallbackUpdatedAt: number, mainKeyExists: boolean): LoadedIndex {
  const { obj, sha256, sizeBytes } = readIndexObject(file);
  const warnings: string[] = [];
  const items: KeyedEntry<Obj>[] = [];
  let skipped = 0;
  let missingUpdatedAt = 0;
  for (const [rawKey, value] of Object.entries(obj)) {
    if (!isObject(value) || typeof value.sessionId !== "string" || value.sessionId.trim() === "") {
      skipped += 1;
      warnings.push(`entry ${JSON.stringify(rawKey)} has no string sessionId; skipped`);
      continue;
    }
    if (rawKey.trim() === "") {
      skipped += 1;
      warnings.push("entry with an empty key; skipped");
      continue;
    }
    let updatedAt = value.updatedAt;
    if (typeof updatedAt !== "number" || !Number.isFinite(updatedAt)) {
      missingUpdatedAt += 1;
      updatedAt = fallbackUpdatedAt;
    }
    items.push({ rawKey, entry: normalizeLegacyEntry({ ...value, sessionId: value.sessionId.trim() }), updatedAt: Math.trunc(updatedAt as number) });
  }
  if (missingUpdatedAt > 0) warnings.push(`${missingUpdatedAt} entr${missingUpdatedAt === 1 ? "y has" : "ies have"} no numeric updatedAt; the file's mtime was used`);
  const store = canonicalizeStore(items, { agentId, mainKey, mainKeyExists });
  const keysBySession = new Map<string, string[]>();
  for (const [key, c] of store.entries) {
    const id = c.entry.sessionId as string;
    const list = keysBySession.get(id);
    if (list) list.push(key);
    else keysBySession.set(id, [key]);
  }
  return { sha256, sizeBytes, rawCount: Object.keys(obj).length, canonical: store.entries, keysBySession, duplicates: store.duplicates, seededMainFrom: store.seededMainFrom, warnings, skipped };
}

/** The key that owns the `sessions` row when several keys share a session id: main, else newest, else smallest. */
function ownerKey(keys: string[], canonical: Map<string, CanonicalEntry<Obj>>, agentId: string): string {
  const main = mainSessionKey(agentId);
  if (keys.includes(main)) return main;
  return [...keys].sort((a, b) => canonical.get(b)!.updatedAt - canonical.get(a)!.updatedAt || compareText(a, b))[0]!;
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

function inspect(source: DetectedSource, ctx: DetectContext): SourceInspection {
  const st = fs.statSync(source.path);
  if (st.size === 0) {
    const digest = crypto.createHash("sha256").digest("hex");
    return { sha256: digest, sizeBytes: 0, records: 0, notes: [], skipReason: "empty file (nothing to import; left in place)" };
  }
  // Detected from an agent's sessions dir: always has an agent.
  const agentId = source.agentId!;
  try {
    const index = loadIndex(source.path, agentId, ctx.mainKey, Math.trunc(st.mtimeMs), false);
    const notes = [...index.duplicates, ...index.warnings];
    if (index.seededMainFrom) notes.push(`${mainSessionKey(agentId)} is absent: seeded from the newest direct entry ${JSON.stringify(index.seededMainFrom)} unless another index or the database has it`);
    return {
      sha256: index.sha256,
      sizeBytes: index.sizeBytes,
      records: index.rawCount,
      notes,
      referencedSessionIds: [...index.keysBySession.keys()],
      hasMainKey: index.canonical.has(mainSessionKey(agentId)) && index.seededMainFrom === null,
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
function indexStatements(db: AgentDatabase) {
  const sessionCols = ["session_id", "session_key", "session_scope", "created_at", "updated_at", "started_at", "ended_at", "status", "chat_type", "channel", "account_id", "primary_conversation_id", "model_provider", "model", "agent_harness_id", "parent_session_key", "spawned_by", "display_name"] as const;
  return {
    sessionCols,
    sessionOf: db.prepare("SELECT updated_at, session_key FROM sessions WHERE session_id = ?"),
    upsertSession: db.prepare(
      `INSERT INTO sessions (${sessionCols.join(", ")}) VALUES (${sessionCols.map(() => "?").join(", ")}) ON CONFLICT (session_id) DO UPDATE SET ${sessionCols.filter((c) => c !== "session_id").map((c) => `${c} = excluded.${c}`).join(", ")}`,
    ),
    insertConversation: db.prepare(
      "INSERT OR IGNORE INTO conversations (conversation_id, channel, account_id, kind, peer_id, parent_conversation_id, thread_id, label, metadata_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    findConversation: db
      .prepare("SELECT conversation_id FROM conversations WHERE channel = ? AND ifnull(account_id, '') = ? AND kind = ? AND ifnull(peer_id, '') = ? AND ifnull(parent_conversation_id, '') = '' AND ifnull(thread_id, '') = ?")
      .pluck(),
    dropOtherPrimary: db.prepare("DELETE FROM session_conversations WHERE session_id = ? AND role = 'primary' AND conversation_id <> ?"),
    upsertPrimary: db.prepare(
      "INSERT INTO session_conversations (session_id, conversation_id, role, first_seen_at, last_seen_at) VALUES (?, ?, 'primary', ?, ?) ON CONFLICT (session_id, conversation_id, role) DO UPDATE SET last_seen_at = excluded.last_seen_at",
    ),
    hasSession: db.prepare("SELECT 1 FROM sessions WHERE session_id = ?").pluck(),
    entryUpdatedAt: db.prepare("SELECT updated_at FROM session_entries WHERE session_key = ?").pluck(),
    upsertEntry: db.prepare(
      "INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, entry_json = excluded.entry_json, updated_at = excluded.updated_at",
    ),
    routeUpdatedAt: db.prepare("SELECT updated_at FROM session_routes WHERE session_key = ?").pluck(),
    upsertRoute: db.prepare(
      "INSERT INTO session_routes (session_key, session_id, updated_at) VALUES (?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at",
    ),
  };
}

function importIndex(db: AgentDatabase, source: PlannedSource, ctx: AgentImportContext): ImportCounts {
  const st = indexStatements(db);
  // The main key is seeded only when no store of the agent (this one, another index, the DB) has it.
  const mainExists = Boolean(source.mainKeyElsewhere) || st.routeUpdatedAt.get(mainSessionKey(ctx.agentId)) !== undefined;
  const index = loadIndex(source.path, ctx.agentId, ctx.mainKey, fileMtime(source.path), mainExists);
  if (source.sha256 !== null && index.sha256 !== source.sha256) {
    throw new OperationError("source_changed", `${source.path} changed since it was planned; re-run \`doctor --fix\` to import the new content.`, { path: source.path });
  }
  const rows = { sessions: 0, session_entries: 0, session_routes: 0, conversations: 0, session_conversations: 0 };
  let keptNewer = 0;
  const warnings = [...index.warnings];
  const notes = [...index.duplicates];
  if (index.seededMainFrom) notes.push(`seeded ${mainSessionKey(ctx.agentId)} from the newest direct entry ${JSON.stringify(index.seededMainFrom)}`);

  for (const [sessionId, keys] of index.keysBySession) {
    const owner = index.canonical.get(ownerKey(keys, index.canonical, ctx.agentId))!;
    const existing = st.sessionOf.get(sessionId) as { updated_at: number; session_key: string } | undefined;
    // A newer DB row wins over an older legacy one; orphan placeholders (from transcripts) always give way.
    if (existing && owner.updatedAt < existing.updated_at && !isOrphanSessionKey(existing.session_key)) {
      keptNewer += 1;
      continue;
    }
    const route = deliveryRouteOf(owner.entry);
    const row = sessionRowFor(sessionId, owner.key, ctx.agentId, owner.entry, owner.updatedAt, route);
    let conversationId: string | null = null;
    if (route) {
      const conv = conversationFor(route, owner.entry);
      rows.conversations += st.insertConversation.run(conv.conversation_id, conv.channel, conv.account_id, conv.kind, conv.peer_id, conv.parent_conversation_id, conv.thread_id, conv.label, conv.metadata_json, owner.updatedAt, owner.updatedAt).changes;
      conversationId = (st.findConversation.get(conv.channel, conv.account_id ?? "", conv.kind, conv.peer_id, conv.thread_id ?? "") as string | undefined) ?? conv.conversation_id;
    }
    const values: Record<string, unknown> = { ...row, primary_conversation_id: conversationId };
    st.upsertSession.run(...st.sessionCols.map((c) => values[c]));
    rows.sessions += 1;
    if (conversationId) {
      st.dropOtherPrimary.run(sessionId, conversationId);
      st.upsertPrimary.run(sessionId, conversationId, row.created_at, owner.updatedAt);
      rows.session_conversations += 1;
    }
  }

  for (const [key, c] of index.canonical) {
    const sessionId = c.entry.sessionId as string;
    if (st.hasSession.get(sessionId) === undefined) continue;
    const entryAt = st.entryUpdatedAt.get(key) as number | undefined;
    if (entryAt === undefined || c.updatedAt >= entryAt) {
      st.upsertEntry.run(key, sessionId, entryJsonFor(c.entry, c.updatedAt), c.updatedAt);
      rows.session_entries += 1;
    } else {
      keptNewer += 1;
    }
    const routeAt = st.routeUpdatedAt.get(key) as number | undefined;
    if (routeAt === undefined || c.updatedAt >= routeAt) {
      st.upsertRoute.run(key, sessionId, c.updatedAt);
      rows.session_routes += 1;
    }
  }
  if (keptNewer > 0) notes.push(`${keptNewer} row(s) kept as they were: the database holds newer data`);
  return {
    records: index.rawCount,
    rows,
    skipped: index.skipped,
    warnings,
    notes,
    expect: { keys: index.canonical.size, sessions: index.keysBySession.size },
  };
}

/** Re-reads the index (still in place before retirement): every key has an entry and a route, every session a row. */
function verify(db: AgentDatabase, source: PlannedSource, _expected: ImportCounts, ctx: AgentImportContext): string | null {
  const index = loadIndex(source.path, ctx.agentId, ctx.mainKey, fileMtime(source.path), true);
  const st = indexStatements(db);
  const missing: string[] = [];
  for (const sessionId of index.keysBySession.keys()) {
    if (st.hasSession.get(sessionId) === undefined) missing.push(`session ${sessionId}`);
  }
  for (const key of index.canonical.keys()) {
    if (st.entryUpdatedAt.get(key) === undefined) missing.push(`entry ${key}`);
    if (st.routeUpdatedAt.get(key) === undefined) missing.push(`route ${key}`);
  }
  if (missing.length === 0) return null;
  return `${missing.length} row(s) missing after commit: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", …" : ""}`;
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
  detect,
  inspect,
  finalize,
  import: importIndex,
  verify,
};
