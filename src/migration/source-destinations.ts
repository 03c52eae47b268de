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

// Read-only and shared: one entry per (kind, agent), not one per source (a state may hold 20k transcripts).
const known = new Map<string, SourceDestinations>();

/** The destinations of a source of `kind` belonging to `agentId` (null: to no agent). */
export function sourceDestinations(kind: SourceKind, agentId: string | null): SourceDestinations {
  const key = `${kind}\u0000${agentId ?? ""}`;
  let found = known.get(key);
  if (found === undefined) {
    const importer = importerFor(kind);
    const placed = placeOpenclawDestinations(importer.targetTables, { agentId, pluginNamespace: STAGED_NAMESPACES[kind], optionalTables: importer.optionalTables });
    known.set(key, (found = { placed, names: placed.map((p) => p.destination) }));
  }
  return found;
}
