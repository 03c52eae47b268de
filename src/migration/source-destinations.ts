// Where a legacy source kind's rows end in OpenClaw 2026.9.6's format for one agent: destinations and their database files.
import { placeOpenclawDestinations, type OpenclawDestination, type PlacedDestination } from "../state/upgrade/openclaw-destinations.js";
import { importerFor } from "./importers/index.js";
import type { SourceKind } from "./types.js";

/** Importers whose plugin_state_entries rows the upgrade files elsewhere by namespace (plugin-state-files.ts). */
const STAGED_NAMESPACES: Partial<Record<SourceKind, string>> = { "config-audit": "config-audit" };

export interface SourceDestinations {
  placed: readonly PlacedDestination[];
  /** The destinations alone (PlannedSource.openclawTables). */
  names: readonly OpenclawDestination[];
}

// Read-only and shared: one entry per (kind, agent, what the file decided), not one per source (a state may hold 20k transcripts).
const known = new Map<string, SourceDestinations>();

/**
 * The destinations of a source of `kind` belonging to `agentId` (null: to no agent); `reaches`: what its file
 * decided about the conditional ones (SourceReach.tables), else each keeps its `(if …)`.
 */
export function sourceDestinations(kind: SourceKind, agentId: string | null, reaches?: Readonly<Record<string, boolean>>): SourceDestinations {
  const decided = reaches === undefined ? "" : JSON.stringify(Object.entries(reaches).sort(([a], [b]) => (a < b ? -1 : 1)));
  const key = `${kind}\u0000${agentId ?? ""}\u0000${decided}`;
  let found = known.get(key);
  if (found === undefined) {
    const importer = importerFor(kind);
    const placed = placeOpenclawDestinations(importer.targetTables, { agentId, pluginNamespace: STAGED_NAMESPACES[kind], optionalTables: importer.optionalTables, reaches });
    known.set(key, (found = { placed, names: placed.map((p) => p.destination) }));
  }
  return found;
}
