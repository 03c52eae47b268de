// An upgrade's notes with a cap per code: a state of 150,000 sessions must not print (or hold) 150,000 alike lines.
import type { UpgradeNote } from "./types.js";

/** Messages kept per note code; the rest of that code is counted in one closing note. */
export const NOTES_PER_CODE = 50;

export class NoteList {
  private readonly kept: UpgradeNote[] = [];
  private readonly counts = new Map<string, number>();

  add(code: string, message: string): void {
    const n = (this.counts.get(code) ?? 0) + 1;
    this.counts.set(code, n);
    if (n <= NOTES_PER_CODE) this.kept.push({ code, message });
  }

  /** How many notes of a code were added, listed or not. */
  count(code: string): number {
    return this.counts.get(code) ?? 0;
  }

  /** The kept notes in the order they came, then one note per code that had more. */
  list(): UpgradeNote[] {
    const more: UpgradeNote[] = [];
    for (const [code, n] of this.counts) {
      if (n > NOTES_PER_CODE) more.push({ code, message: `${n - NOTES_PER_CODE} more note(s) like the ${NOTES_PER_CODE} above (${code}) are not listed: ${n} in all.` });
    }
    return [...this.kept, ...more];
  }
}
