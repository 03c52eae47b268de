// A session an earlier run filed under a placeholder key (no index named it) is claimed by the key a later run's index gives it: the merge moves the live window there and drops the placeholder node.
//
// The placeholder keys: `agent:<id>:recovered:<sessionId>` (a lone trajectory's run events, an unindexed transcript:
// OpenClaw 2026.9.6's own key for unregistered history) and `agent:<id>:orphan:<sessionid>` (our releases before
// issue 24). Neither is a key anything routes to: when the index arrives, its key is the session's real one. Without
// this, the merge kept the live placeholder (the runtime's row wins) and dropped the index entry's node.
import type Database from "better-sqlite3";
import type { KeptRows } from "./kept-rows.js";
import { keyJson, quoteId, rowJson, rowTime, tableShape } from "./table-shape.js";

export interface ClaimedPlaceholder {
  sessionId: string;
  /** The live placeholder key. */
  from: string;
  /** The key the staged import (its index) gives the session. */
  to: string;
}

type Row = Record<string, unknown>;

/** True when `key` is the placeholder an import gives session `sessionId` when no index names it. */
export function isPlaceholderKeyFor(key: string, sessionId: string): boolean {
  const m = /^agent:[^:]+:(recovered|orphan):(.+)$/.exec(key);
  if (!m) return false;
  const id = sessionId.trim();
  // Lower-cased as OpenClaw stores it; `recovered:` with the id as written is what our releases before wrote.
  return m[2] === id.toLowerCase() || (m[1] === "recovered" && m[2] === id);
}

/** Sessions the live file holds under their placeholder key and the staged file under a real one. */
export function findPlaceholderClaims(staged: Database.Database, live: Database.Database): ClaimedPlaceholder[] {
  const liveKey = live.prepare("SELECT session_key FROM session_windows WHERE session_id = ?").pluck();
  const claims: ClaimedPlaceholder[] = [];
  for (const w of staged.prepare("SELECT session_id, session_key FROM session_windows ORDER BY session_id").all() as Array<{ session_id: string; session_key: string }>) {
    const from = liveKey.get(w.session_id) as string | undefined;
    if (from === undefined || from === w.session_key) continue;
    if (isPlaceholderKeyFor(from, w.session_id) && !isPlaceholderKeyFor(w.session_key, w.session_id)) claims.push({ sessionId: w.session_id, from, to: w.session_key });
  }
  return claims;
}

/**
 * On the staged scratch copy, before the merge: a claimed window's NULL columns take the live placeholder's values
 * (what the index says wins, what only the placeholder knew stays; foreign keys excepted), so the merge writes one row and finds it identical.
 */
export function fillClaimedWindows(staged: Database.Database, live: Database.Database, claims: readonly ClaimedPlaceholder[]): void {
  if (claims.length === 0) return;
  const shape = tableShape(live, staged, "session_windows");
  // Not the foreign keys (a live conversation id names a row the staged file does not have).
  const references = new Set((staged.prepare("SELECT \"from\" AS col FROM pragma_foreign_key_list('session_windows')").all() as Array<{ col: string }>).map((r) => r.col));
  const cols = shape.columns.filter((c) => !shape.key.includes(c) && !references.has(c));
  const read = live.prepare(`SELECT ${cols.map(quoteId).join(", ")} FROM session_windows WHERE session_id = ?`);
  const fill = staged.prepare(`UPDATE session_windows SET ${cols.map((c) => `${quoteId(c)} = coalesce(${quoteId(c)}, ?)`).join(", ")} WHERE session_id = ?`);
  for (const c of claims) {
    const row = read.get(c.sessionId) as Row | undefined;
    if (row) fill.run(...cols.map((col) => row[col]), c.sessionId);
  }
}

/**
 * Inside the merge's transaction, before any table is merged: each claimed live window takes the staged row (the
 * placeholder's copy goes to the kept rows), rows keyed by the placeholder move to the real key, and the placeholder
 * node, left without windows, goes (kept too). The real node is written by the table merge that follows (parents
 * first), so foreign keys are checked at COMMIT for this transaction.
 */
export function claimPlaceholders(live: Database.Database, staged: Database.Database, kept: KeptRows): ClaimedPlaceholder[] {
  const claims = findPlaceholderClaims(staged, live);
  if (claims.length === 0) return [];
  live.pragma("defer_foreign_keys = ON");
  const windows = tableShape(live, staged, "session_windows");
  const nodes = tableShape(live, staged, "session_nodes");
  const cols = windows.columns.filter((c) => !windows.key.includes(c));
  const readWindow = (db: Database.Database, id: string) => db.prepare(`SELECT ${windows.columns.map(quoteId).join(", ")} FROM session_windows WHERE session_id = ?`).get(id) as Row | undefined;
  const update = live.prepare(`UPDATE session_windows SET ${cols.map((c) => `${quoteId(c)} = ?`).join(", ")} WHERE session_id = ?`);
  // Tables whose rows hang on a node by session_key (ON DELETE CASCADE): moved, never left to the cascade.
  const children = (live.prepare("SELECT m.name AS name, f.\"from\" AS col FROM sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND f.\"table\" = 'session_nodes' AND m.name <> 'session_windows'").all() as Array<{ name: string; col: string }>);
  // Placeholder keys whose node went: what named them is re-pointed at the real key.
  const gone = new Map<string, string>();
  for (const c of claims) {
    const before = readWindow(live, c.sessionId)!;
    const after = readWindow(staged, c.sessionId)!;
    kept.add("live-replaced", "session_windows", keyJson(windows, before), rowJson(before), rowTime(windows, before), rowTime(windows, after));
    update.run(...cols.map((col) => after[col]), c.sessionId);
    const left = live.prepare("SELECT count(*) FROM session_windows WHERE session_key = ?").pluck().get(c.from) as bigint | number;
    if (Number(left) > 0) continue;
    for (const child of children) live.prepare(`UPDATE ${quoteId(child.name)} SET ${quoteId(child.col)} = ? WHERE ${quoteId(child.col)} = ?`).run(c.to, c.from);
    const node = live.prepare(`SELECT ${nodes.columns.map(quoteId).join(", ")} FROM session_nodes WHERE session_key = ?`).get(c.from) as Row | undefined;
    if (!node) continue;
    kept.add("live-replaced", "session_nodes", keyJson(nodes, node), rowJson(node), rowTime(nodes, node), null);
    live.prepare("DELETE FROM session_nodes WHERE session_key = ?").run(c.from);
    gone.set(c.from, c.to);
  }
  repointMentions(live, gone, kept);
  return claims;
}

/** Where a session names another one: a node's columns and the entry fields they are projected from, and a window's copies. */
const NODE_MENTIONS = [
  { col: "parent_session_key", field: ["parentSessionKey"] },
  { col: "spawned_by", field: ["spawnedBy"] },
  { col: "fork_source_session_key", field: ["forkSource", "sessionKey"] },
] as const;
const WINDOW_MENTIONS = ["parent_session_key", "spawned_by"] as const;

/**
 * A session the runtime started from a placeholder (a subagent spawned by, or a fork of, a recovered session) names
 * that key; once the placeholder is gone it names the real key instead — in the node's columns, its entry and its
 * windows — so the parent link survives the claim. Each row as it was goes to the kept rows first.
 */
function repointMentions(live: Database.Database, gone: ReadonlyMap<string, string>, kept: KeptRows): void {
  if (gone.size === 0) return;
  const froms = JSON.stringify([...gone.keys()]);
  const to = (v: unknown): unknown => (typeof v === "string" && gone.has(v) ? gone.get(v) : v);
  const nodes = tableShape(live, live, "session_nodes");
  const anyOf = (cols: readonly string[]): string => cols.map((c) => `${quoteId(c)} IN (SELECT value FROM json_each(?))`).join(" OR ");
  const nodeRows = live.prepare(`SELECT ${nodes.columns.map(quoteId).join(", ")} FROM session_nodes WHERE ${anyOf(NODE_MENTIONS.map((m) => m.col))}`).all(...NODE_MENTIONS.map(() => froms)) as Row[];
  const setNode = live.prepare(`UPDATE session_nodes SET ${NODE_MENTIONS.map((m) => `${quoteId(m.col)} = ?`).join(", ")}, entry_json = ? WHERE session_key = ?`);
  for (const row of nodeRows) {
    kept.add("live-replaced", "session_nodes", keyJson(nodes, row), rowJson(row), rowTime(nodes, row), null);
    setNode.run(...NODE_MENTIONS.map((m) => to(row[m.col])), repointEntry(String(row.entry_json), to), row.session_key);
  }
  const windows = tableShape(live, live, "session_windows");
  const windowRows = live.prepare(`SELECT ${windows.columns.map(quoteId).join(", ")} FROM session_windows WHERE ${anyOf(WINDOW_MENTIONS)}`).all(...WINDOW_MENTIONS.map(() => froms)) as Row[];
  const setWindow = live.prepare(`UPDATE session_windows SET ${WINDOW_MENTIONS.map((c) => `${quoteId(c)} = ?`).join(", ")} WHERE session_id = ?`);
  for (const row of windowRows) {
    kept.add("live-replaced", "session_windows", keyJson(windows, row), rowJson(row), rowTime(windows, row), null);
    setWindow.run(...WINDOW_MENTIONS.map((c) => to(row[c])), row.session_id);
  }
}

/** The entry with its mention fields re-pointed; an entry that is not a JSON object is returned as it was. */
function repointEntry(json: string, to: (v: unknown) => unknown): string {
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    return json;
  }
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return json;
  let changed = false;
  for (const { field } of NODE_MENTIONS) {
    let holder = entry as Row;
    for (const name of field.slice(0, -1)) {
      const next = holder[name];
      if (next === null || typeof next !== "object" || Array.isArray(next)) {
        holder = {};
        break;
      }
      holder = next as Row;
    }
    const last = field[field.length - 1]!;
    const value = to(holder[last]);
    if (value !== holder[last]) {
      holder[last] = value;
      changed = true;
    }
  }
  return changed ? JSON.stringify(entry) : json;
}
