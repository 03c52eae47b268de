// The importer registry: one module per legacy source kind; a new kind is a new file added here.
import type { SourceImporter, SourceKind } from "../types.js";
import { sessionsIndexImporter } from "./sessions-index.js";
import { transcriptImporter } from "./transcript.js";

/**
 * In import order within each target database: an agent's session indexes before its transcripts
 * (transcripts look up their session row). Agent-database sources run before global-database ones.
 */
export const IMPORTERS: readonly SourceImporter[] = [
  // Agent databases.
  sessionsIndexImporter,
  transcriptImporter,
  // Global database.
];

export function importerFor(kind: SourceKind): SourceImporter {
  const importer = IMPORTERS.find((i) => i.kind === kind);
  if (!importer) throw new Error(`no importer for source kind ${kind}`);
  return importer;
}

export const SOURCE_KINDS: readonly SourceKind[] = IMPORTERS.map((i) => i.kind);
