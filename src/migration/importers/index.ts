// The importer registry: one module per legacy source kind; a new kind is a new file added here.
import type { SourceImporter, SourceKind } from "../types.js";
import { sessionsIndexImporter } from "./sessions-index.js";
import { transcriptImporter } from "./transcript.js";

/** In import order: an agent's session indexes before its transcripts (transcripts look up their session row). */
export const IMPORTERS: readonly SourceImporter[] = [sessionsIndexImporter, transcriptImporter];

export function importerFor(kind: SourceKind): SourceImporter {
  const importer = IMPORTERS.find((i) => i.kind === kind);
  if (!importer) throw new Error(`no importer for source kind ${kind}`);
  return importer;
}

export const SOURCE_KINDS: readonly SourceKind[] = IMPORTERS.map((i) => i.kind);
