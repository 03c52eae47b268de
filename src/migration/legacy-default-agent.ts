// The agent that owns main-agent-by-default legacy data (root `sessions/`, the old `agent/` dir), read from the config.
//
// As openclaw@2026.9.6's doctor resolves it (detectLegacyStateMigrations → resolveInstallAgentDir.migrationTarget):
// `agents.defaults.systemAgent.agentId`; else, unless `agents.ownership` is "explicit", the one roster entry marked
// `default: true`; else the sole configured agent (no roster at all: "main"). The roster is `agents.entries` (keyed)
// when present, else `agents.list`. The owner must be a configured agent. Upstream defers the migration when no owner
// resolves (several agents, none marked); this tool keeps importing into "main" and says so (docs/migration.md).
import { tryNormalizeAgentId } from "../state/agent-id.js";
import { DEFAULT_AGENT_ID } from "../state/paths.js";

type Obj = Record<string, unknown>;

export interface LegacyDefaultAgent {
  agentId: string;
  /** How it was chosen, for the plan's notes: null when it is plain "main" with nothing configured to say otherwise. */
  reason: string | null;
}

function record(value: unknown): Obj | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/** Roster entries with their raw ids; null when the config has no roster property at all. */
function rosterEntries(agents: Obj | null): Array<{ id: unknown; entry: Obj }> | null {
  if (!agents) return null;
  if (Object.hasOwn(agents, "entries") && agents.entries !== undefined) {
    const entries = record(agents.entries);
    return entries ? Object.entries(entries).flatMap(([id, v]) => (record(v) ? [{ id, entry: record(v)! }] : [])) : [];
  }
  if (Object.hasOwn(agents, "list") && agents.list !== undefined) {
    return Array.isArray(agents.list) ? agents.list.flatMap((v) => (record(v) ? [{ id: record(v)!.id, entry: record(v)! }] : [])) : [];
  }
  return null;
}

/** The legacy data owner of `config` (see the header); "main" with a reason when none resolves. */
export function resolveLegacyDefaultAgent(config: Obj | null): LegacyDefaultAgent {
  const agents = record(config?.agents);
  const roster = rosterEntries(agents);
  const ids = roster === null ? [DEFAULT_AGENT_ID] : roster.map((r) => (typeof r.id === "string" ? tryNormalizeAgentId(r.id) : null));
  const listed = (id: string | null): id is string => id !== null && ids.includes(id);
  const system = text(record(record(agents?.defaults)?.systemAgent)?.agentId);
  if (system) {
    const id = tryNormalizeAgentId(system);
    if (listed(id)) return { agentId: id, reason: `agents.defaults.systemAgent.agentId is "${id}"` };
  }
  if (roster !== null && agents?.ownership !== "explicit") {
    const marked = roster.filter((r) => r.entry.default === true);
    if (marked.length === 1) {
      const id = typeof marked[0]!.id === "string" ? tryNormalizeAgentId(marked[0]!.id) : null;
      if (listed(id)) return { agentId: id, reason: id === DEFAULT_AGENT_ID ? null : `the config marks agent "${id}" default: true` };
    }
  }
  if (roster === null) return { agentId: DEFAULT_AGENT_ID, reason: null };
  if (roster.length === 1 && listed(ids[0] ?? null)) {
    const id = ids[0]!;
    return { agentId: id, reason: id === DEFAULT_AGENT_ID ? null : `"${id}" is the only configured agent` };
  }
  if (roster.length === 0) return { agentId: DEFAULT_AGENT_ID, reason: null };
  return {
    agentId: DEFAULT_AGENT_ID,
    reason: `several agents are configured and none is the default (mark one \`default: true\` or set agents.defaults.systemAgent.agentId, then re-plan): imported into agent "${DEFAULT_AGENT_ID}"`,
  };
}
