// Archive ids for `backup list` and archive references: the run id's hex digits, shown as the shortest unique prefix.
import crypto from "node:crypto";

/** Shown ids are never shorter than this (8 hex digits: a collision among a few hundred archives is ~1e-5). */
export const SHORT_ID_MIN = 8;

/**
 * The id of an archive from its run id (a UUID this tool writes into the manifest and backup_runs): its hex digits,
 * lowercased. A run id of another shape (a hostile or foreign manifest) gets the sha256 of its text instead, so the
 * id is always plain hex and never carries the foreign text into a terminal or a shell.
 */
export function archiveIdOf(runId: string | null | undefined): string | null {
  if (typeof runId !== "string" || runId === "") return null;
  const hex = runId.toLowerCase().replace(/-/g, "");
  if (/^[0-9a-f]{8,64}$/.test(hex)) return hex;
  return crypto.createHash("sha256").update(runId).digest("hex");
}

/**
 * Sets each item's `shortId`: the shortest prefix (≥ SHORT_ID_MIN) of its id that no other item's different id
 * starts with. Two items with the same id (a copied archive) keep the SHORT_ID_MIN prefix: no prefix can tell them
 * apart, and naming either is refused as ambiguous.
 */
export function assignShortIds(items: Array<{ id: string | null; shortId: string | null }>): void {
  const ids = [...new Set(items.map((i) => i.id).filter((id): id is string => id !== null))];
  for (const item of items) {
    if (item.id === null) {
      item.shortId = null;
      continue;
    }
    const id = item.id;
    let length = Math.min(SHORT_ID_MIN, id.length);
    while (length < id.length && ids.some((other) => other !== id && other.startsWith(id.slice(0, length)))) length += 1;
    item.shortId = id.slice(0, length);
  }
}
