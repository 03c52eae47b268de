// Session-index keys that name another agent: that agent's database attached to the import, and the order agents run in.
import { agentDbPath, type StatePaths } from "../state/paths.js";
import { openAgentDatabase, type AgentDatabase, type GlobalDatabase } from "../state/state-databases.js";
import type { BrokenDatabase } from "./broken-databases.js";
import type { RetireQueue } from "./retire-queue.js";
import type { PlannedSource } from "./types.js";

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

/** The databases of the other agents a source files rows under, attached to its agent's connection. */
export interface AttachedRoutes {
  routes: Map<string, string>;
  detach(): void;
}

/**
 * Attaches (creating and registering it if need be) each other agent's database a session index files keys under,
 * as `route_<n>`: ATTACH needs a fixed identifier, and an agent id from a legacy key is never one. Outside any
 * transaction (SQLite refuses ATTACH inside one); each file's WAL is synced before the source is retired.
 */
export function attachRoutes(state: RouteContext, agentDb: AgentDatabase, agents: readonly string[]): AttachedRoutes {
  const { paths, global } = state;
  if (agents.length > MAX_ROUTED_AGENTS) {
    throw new Error(
      `its keys name ${agents.length} other agents (${agents.slice(0, 3).map((a) => JSON.stringify(a)).join(", ")}, …); one import files keys under at most ${MAX_ROUTED_AGENTS} other agents, as SQLite attaches at most 10 databases to its one transaction; the file was left in place (move the other agents' entries to their own agents/<id>/sessions/sessions.json, then re-run)`,
    );
  }
  const routes = new Map<string, string>();
  const detach = (): void => {
    for (const schema of routes.values()) agentDb.detach(schema);
  };
  try {
    for (const [n, agentId] of agents.entries()) {
      const broken = state.broken.find((b) => b.agentId === agentId);
      if (broken) throw new Error(`its keys name agent "${agentId}", whose database ${broken.relativePath} cannot be opened (${broken.reason}); the file was left in place`);
      openAgentDatabase(paths, agentId, { mode: "write", create: true, global }).close();
      const file = agentDbPath(paths, agentId);
      agentDb.attach(file, `route_${n}`, "agent");
      routes.set(agentId, `route_${n}`);
      state.retire.alsoSync(file);
    }
  } catch (error) {
    detach();
    throw error;
  }
  return { routes, detach };
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

