// Session-index keys that name another agent: that agent's database attached to the import (a group at a time), and the order agents run in.
import { describeError, isSqliteBusy } from "../core/errors.js";
import { agentDbPath, type StatePaths } from "../state/paths.js";
import { openAgentDatabase, type AgentDatabase, type GlobalDatabase } from "../state/state-databases.js";
import type { BrokenDatabase } from "./broken-databases.js";
import type { RetireQueue } from "./retire-queue.js";
import type { ImportCounts, PlannedSource } from "./types.js";

/** What attaching needs of the run. */
export interface RouteContext {
  paths: StatePaths;
  global: GlobalDatabase;
  /** Agent databases set aside this run: nothing is written to them, not even through a route. */
  broken: readonly BrokenDatabase[];
  /** Syncs each attached file's WAL before the source is retired. */
  retire: Pick<RetireQueue, "alsoSync">;
}

/** SQLite attaches at most 10 databases to a connection (better-sqlite3's build); the ledger's global DB takes one. */
export const MAX_ROUTED_AGENTS = 9;

/**
 * The other agents' databases of one source, checked and opened before anything is written, attached a group of at
 * most MAX_ROUTED_AGENTS at a time. Each group is its own transaction: under WAL a transaction across attached
 * databases is atomic per database anyway, not across them. The last group goes with the store's own rows and its
 * ledger row, so the ledger says imported only once every group committed.
 */
export interface RouteGroups {
  /** The agents of each group, in order (one group for at most MAX_ROUTED_AGENTS). */
  readonly groups: ReadonlyArray<readonly string[]>;
  /** Runs `fn` with group `i` attached (agent id → schema); outside any transaction, as SQLite refuses ATTACH inside one. */
  withGroup<T>(i: number, fn: (routes: ReadonlyMap<string, string>) => T): T;
  /** Detaches whatever is still attached. */
  close(): void;
}

/**
 * Checks every other agent's database a session index files keys under (one set aside fails the source before any
 * row is written), creates and registers it if need be, and has each file's WAL synced before the source is retired.
 * A group is attached as `route_<n>`: ATTACH needs a fixed identifier, and an agent id from a legacy key is never one;
 * the names are reused by the next group, so the cached statements stay as few as one group's.
 */
export function prepareRoutes(state: RouteContext, agentDb: AgentDatabase, agents: readonly string[]): RouteGroups {
  const { paths, global } = state;
  for (const agentId of agents) {
    const broken = state.broken.find((b) => b.agentId === agentId);
    if (broken) throw new Error(`its keys name agent "${agentId}", whose database ${broken.relativePath} cannot be opened (${broken.reason}); the file was left in place`);
  }
  for (const agentId of agents) {
    openAgentDatabase(paths, agentId, { mode: "write", create: true, global }).close();
    state.retire.alsoSync(agentDbPath(paths, agentId));
  }
  const groups: string[][] = [];
  for (let i = 0; i < agents.length; i += MAX_ROUTED_AGENTS) groups.push(agents.slice(i, i + MAX_ROUTED_AGENTS));
  const attached = new Map<string, string>();
  const detach = (): void => {
    for (const schema of attached.values()) agentDb.detach(schema);
    attached.clear();
  };
  const attach = (group: readonly string[]): void => {
    try {
      for (const [n, agentId] of group.entries()) {
        agentDb.attach(agentDbPath(paths, agentId), `route_${n}`, "agent");
        attached.set(agentId, `route_${n}`);
      }
    } catch (error) {
      detach();
      throw error;
    }
  };
  // One group (the usual case) stays attached for the whole source: its import and its verification.
  if (groups.length === 1) attach(groups[0]!);
  return {
    groups,
    withGroup(i, fn) {
      if (groups.length === 1) return fn(attached);
      attach(groups[i]!);
      try {
        return fn(attached);
      } finally {
        detach();
      }
    },
    close: detach,
  };
}

/**
 * Imports a source through its groups: each group before the last in a transaction of its own, then the last one, with
 * the store's own rows, in the transaction `commitWith` runs in (the ledger row), given the counts of every pass.
 * A failure leaves the groups before it committed and the ledger not saying imported: the source stays in place, and
 * its next import writes them again by the usual rule (a newer row in the database wins).
 */
export function importInGroups(routing: RouteGroups, agentDb: AgentDatabase, importPass: (i: number, routes: ReadonlyMap<string, string>) => ImportCounts, commitWith: (counts: ImportCounts) => void): ImportCounts {
  const last = routing.groups.length - 1;
  const earlier: ImportCounts[] = [];
  try {
    for (let i = 0; i < last; i += 1) earlier.push(routing.withGroup(i, (routes) => agentDb.immediate(() => importPass(i, routes))));
    return routing.withGroup(last, (routes) =>
      agentDb.immediate(() => {
        const counts = mergePassCounts(earlier, importPass(last, routes));
        commitWith(counts);
        return counts;
      }),
    );
  } catch (error) {
    // A lock keeps its own words (the run holds back the agent's other sources on them).
    if (earlier.length === 0 || isSqliteBusy(error)) throw error;
    const filed = routing.groups.slice(0, earlier.length).flat();
    throw new Error(`${describeError(error)} (the keys naming agents ${filed.map((a) => JSON.stringify(a)).join(", ")} were filed before it; the next import of this file files the rest)`);
  }
}

/** The first mismatch of any group's verification (`verifyPass` attaches group `i` itself), or null. */
export function verifyInGroups(routing: RouteGroups, verifyPass: (i: number) => string | null): string | null {
  for (const i of routing.groups.keys()) {
    const mismatch = verifyPass(i);
    if (mismatch !== null) return mismatch;
  }
  return null;
}

/**
 * The counts of a source imported in several passes (RouteGroups): the last pass (the store's own keys) has the
 * records, the scan's warnings and the expectations; the rows of every pass add up, and each pass's notes are kept.
 */
function mergePassCounts(earlier: readonly ImportCounts[], last: ImportCounts): ImportCounts {
  if (earlier.length === 0) return last;
  const rows: Record<string, number> = { ...last.rows };
  for (const c of earlier) for (const [table, n] of Object.entries(c.rows)) rows[table] = (rows[table] ?? 0) + n;
  const warnings = [...new Set([...last.warnings, ...earlier.flatMap((c) => c.warnings)])];
  return { ...last, rows, warnings, notes: [...earlier.flatMap((c) => c.notes), ...last.notes] };
}

/**
 * Agent-target sources grouped by the database they write, in plan order. When a session index files keys under
 * another agent, every agent's session indexes run first: a transcript that followed its session to that agent
 * then finds the session row there (instead of being taken for an orphan and given a placeholder).
 */
export function agentBatches(sources: readonly PlannedSource[]): Array<[string, PlannedSource[]]> {
  const group = (list: readonly PlannedSource[]): Array<[string, PlannedSource[]]> => {
    const byAgent = new Map<string, PlannedSource[]>();
    for (const s of list) {
      if (s.targetDatabase !== "agent" || s.agentId === null) continue;
      const had = byAgent.get(s.agentId);
      if (had) had.push(s);
      else byAgent.set(s.agentId, [s]);
    }
    return [...byAgent];
  };
  if (!sources.some((s) => s.routedAgents?.length && s.action !== "skip")) return group(sources);
  return [...group(sources.filter((s) => s.kind === "sessions-index")), ...group(sources.filter((s) => s.kind !== "sessions-index"))];
}

