// `sessions list` core: newest-first session rows from one or every agent DB, streamed, read-only, never transcripts.
import fs from "node:fs";
import { describeError, OperationError, UsageError } from "../core/errors.js";
import { normalizeAgentId } from "../state/agent-id.js";
import { agentDbPath, DEFAULT_AGENT_ID, type StatePaths } from "../state/paths.js";
import { openGlobalForSessionReads, openSessionStore } from "../state/openclaw-session-reader.js";
import { knownAgentIds, type AgentDatabase, type GlobalDatabase } from "../state/state-databases.js";
import { loadCronSessionIds, sessionRowQuery, toSessionSummary, type SessionSummary } from "./session-row.js";

export const DEFAULT_SESSION_LIST_LIMIT = 100;

export interface ListSessionsOptions {
  paths: StatePaths;
  /** Defaults to `main`; normalized (an unsafe id is a usage error). */
  agentId?: string | undefined;
  /** Every agent known from the registry and the agents/ folder. */
  allAgents?: boolean;
  /** Only sessions updated within this many minutes. */
  activeMinutes?: number | null;
  /** Page size, or "all" (default 100). */
  limit?: number | "all";
  now?: number;
}

export interface SessionStoreInfo {
  agentId: string;
  path: string;
  exists: boolean;
  /** Sessions in this store that match the filters (before the limit). */
  totalCount: number;
  /** Set when the store could not be read (only with --all-agents; a single store throws instead). */
  error?: string;
}

export interface SessionListHeader {
  stores: SessionStoreInfo[];
  /** Rows the listing yields: min(limit, totalCount). */
  count: number;
  totalCount: number;
  limit: number | "all";
  hasMore: boolean;
  activeMinutes: number | null;
  /** The clock the filter used; renderers compute ages from it. */
  now: number;
  warnings: string[];
}

/** A listing whose rows stream from open read snapshots: iterate `rows()` once, then `close()`. */
export interface SessionList extends SessionListHeader {
  rows(): Generator<SessionSummary>;
  close(): void;
}

export interface ListSessionsResult extends SessionListHeader {
  sessions: SessionSummary[];
}

interface OpenStore {
  info: SessionStoreInfo;
  db: AgentDatabase;
  snapshot: { end(): void };
}

/** Opens every selected store read-only, counts, and returns a streaming listing. Never creates a file. */
export function openSessionList(options: ListSessionsOptions): SessionList {
  const now = options.now ?? Date.now();
  const limit = options.limit ?? DEFAULT_SESSION_LIST_LIMIT;
  const activeMinutes = options.activeMinutes ?? null;
  if (limit !== "all" && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new UsageError(`Invalid limit ${String(limit)}: use a positive whole number or "all".`, "invalid_limit");
  }
  if (activeMinutes !== null && (!Number.isFinite(activeMinutes) || activeMinutes <= 0)) {
    throw new UsageError(`Invalid active window ${String(activeMinutes)}: use a positive number of minutes.`, "invalid_active");
  }
  if (options.allAgents && options.agentId !== undefined) {
    throw new UsageError("Use either --agent <id> or --all-agents, not both (for example `sessions list --all-agents`).");
  }
  const warnings: string[] = [];
  const global = openGlobalIfPresent(options.paths, warnings);
  let agentIds: string[];
  let cronSessionIds: Set<string>;
  try {
    agentIds = options.allAgents ? knownAgentIds(options.paths, global) : [normalizeAgentId(options.agentId ?? DEFAULT_AGENT_ID)];
    cronSessionIds = loadCronSessionIds(global);
  } finally {
    global?.close();
  }

  const since = activeMinutes === null ? null : now - activeMinutes * 60_000;
  const stores: SessionStoreInfo[] = [];
  const open: OpenStore[] = [];
  // With --all-agents an unreadable store is a warning; when no store could be read at all, its error is the answer.
  let refused: unknown;
  const active: Array<Generator<SessionSummary>> = [];
  const closeAll = (): void => {
    for (const gen of active.splice(0)) gen.return(undefined);
    for (const s of open.splice(0)) {
      try {
        s.snapshot.end();
      } finally {
        s.db.close();
      }
    }
  };
  try {
    for (const agentId of agentIds) {
      const info: SessionStoreInfo = { agentId, path: agentDbPath(options.paths, agentId), exists: false, totalCount: 0 };
      stores.push(info);
      if (!fs.existsSync(info.path)) continue;
      info.exists = true;
      let db: AgentDatabase;
      try {
        db = openSessionStore(options.paths, agentId);
      } catch (error) {
        if (!options.allAgents) throw error;
        info.error = describeError(error);
        warnings.push(`Skipped agent ${agentId}: ${info.error}`);
        refused ??= error;
        continue;
      }
      // The count and the rows come from one snapshot, so "X of Y" matches what is printed.
      const store: OpenStore = { info, db, snapshot: db.readSnapshot() };
      open.push(store);
      let countQuery = db.q.selectFrom("sessions").select((eb) => eb.fn.countAll<number>().as("n"));
      if (since !== null) countQuery = countQuery.where("updated_at", ">=", since);
      info.totalCount = db.first(countQuery)?.n ?? 0;
    }
    if (open.length === 0 && refused !== undefined) throw refused;
  } catch (error) {
    closeAll();
    throw error;
  }

  const totalCount = stores.reduce((sum, s) => sum + s.totalCount, 0);
  const count = limit === "all" ? totalCount : Math.min(limit, totalCount);
  let consumed = false;
  return {
    stores,
    count,
    totalCount,
    limit,
    hasMore: totalCount > count,
    activeMinutes,
    now,
    warnings,
    rows() {
      if (consumed) throw new OperationError("already_consumed", "SessionList.rows() can only be iterated once; open a new listing.");
      consumed = true;
      const sources = open.map((s) => {
        const gen = storeRows(s, since, limit, cronSessionIds);
        active.push(gen);
        return gen;
      });
      const merged = take(mergeNewestFirst(sources), limit);
      active.push(merged);
      return merged;
    },
    close: closeAll,
  };
}

/** Materialized listing for library callers; the CLI streams through openSessionList instead. */
export function listSessions(options: ListSessionsOptions): ListSessionsResult {
  const list = openSessionList(options);
  try {
    const sessions = [...list.rows()];
    const { rows: _rows, close: _close, ...header } = list;
    return { ...header, sessions };
  } finally {
    list.close();
  }
}

function openGlobalIfPresent(paths: StatePaths, warnings: string[]): GlobalDatabase | undefined {
  if (!fs.existsSync(paths.globalDbPath)) return undefined;
  try {
    return openGlobalForSessionReads(paths);
  } catch (error) {
    warnings.push(`Global database unreadable, cron kinds and registered agents not shown: ${describeError(error)}`);
    return undefined;
  }
}

function* storeRows(store: OpenStore, since: number | null, limit: number | "all", cronSessionIds: ReadonlySet<string>): Generator<SessionSummary> {
  const { db, info } = store;
  let query = sessionRowQuery(db).orderBy("s.updated_at", "desc").orderBy("s.session_key", "asc").orderBy("s.session_id", "asc");
  if (since !== null) query = query.where("s.updated_at", ">=", since);
  if (limit !== "all") query = query.limit(limit);
  for (const raw of db.iterate(query)) yield toSessionSummary(info.agentId, raw, cronSessionIds);
}

/** Newest first; ties broken by agent, key, session id so the order is stable across runs. */
export function compareNewestFirst(a: SessionSummary, b: SessionSummary): number {
  if (a.updatedAt !== b.updatedAt) return b.updatedAt - a.updatedAt;
  if (a.agentId !== b.agentId) return a.agentId < b.agentId ? -1 : 1;
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
}

/** k-way merge of per-store sorted streams (k = agents, small): one pending row per store in memory. */
function* mergeNewestFirst(sources: Array<Iterator<SessionSummary>>): Generator<SessionSummary> {
  const heads = sources.map((it) => {
    const next = it.next();
    return next.done ? undefined : next.value;
  });
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h !== undefined && (best === -1 || compareNewestFirst(h, heads[best]!) < 0)) best = i;
    }
    if (best === -1) return;
    const row = heads[best]!;
    const next = sources[best]!.next();
    heads[best] = next.done ? undefined : next.value;
    yield row;
  }
}

function* take<T>(source: Iterable<T>, limit: number | "all"): Generator<T> {
  if (limit === "all") {
    yield* source;
    return;
  }
  let n = 0;
  for (const item of source) {
    yield item;
    if (++n >= limit) return;
  }
}
