// The transcript's entry tree from transcript_event_identities: the leaf, appended rows, the active path and its runs.
import type Database from "better-sqlite3";
import type { AgentDatabase } from "../state/state-databases.js";

/** Stored entry types the runtime readers interpret. */
export const MESSAGE_TYPE = "message";
export const RESET_TYPE = "session_reset";

export interface IdentityRow {
  seq: number;
  id: string;
  parent: string | null;
  type: string | null;
}

/** An inclusive seq range of identity rows that are all on the active path, with no other identity row between. */
export type Run = [number, number];

const IDENTITY_COLUMNS = "seq, event_id, parent_id, event_type";

function toRow(raw: [number, string, string | null, string | null] | undefined): IdentityRow | undefined {
  return raw === undefined ? undefined : { seq: raw[0], id: raw[1], parent: raw[2], type: raw[3] };
}

/**
 * The active path is the parent chain from the leaf (the newest identity row) back to a root. Entries are
 * appended, so a parent always has a smaller seq; the walk stops at the first parent that does not, which
 * also makes a cyclic (hostile) chain finite.
 */
export class TranscriptTree {
  private leafRow: IdentityRow | undefined | null = null;
  private pathInfo: ActivePath | null = null;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    readonly db: AgentDatabase,
    readonly sessionId: string,
  ) {}

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.handle.prepare(sql).raw(true);
      this.statements.set(sql, s);
    }
    return s;
  }

  leaf(): IdentityRow | undefined {
    if (this.leafRow === null) {
      this.leafRow = toRow(this.stmt(`SELECT ${IDENTITY_COLUMNS} FROM transcript_event_identities WHERE session_id = ? ORDER BY seq DESC LIMIT 1`).get(this.sessionId) as never);
    }
    return this.leafRow;
  }

  at(seq: number): IdentityRow | undefined {
    return toRow(this.stmt(`SELECT ${IDENTITY_COLUMNS} FROM transcript_event_identities WHERE session_id = ? AND seq = ?`).get(this.sessionId, seq) as never);
  }

  byId(id: string): IdentityRow | undefined {
    return toRow(this.stmt(`SELECT ${IDENTITY_COLUMNS} FROM transcript_event_identities WHERE session_id = ? AND event_id = ?`).get(this.sessionId, id) as never);
  }

  /** Identity rows with seq > afterSeq, oldest first, streamed. */
  *rowsAfter(afterSeq: number): Generator<IdentityRow> {
    const it = this.stmt(`SELECT ${IDENTITY_COLUMNS} FROM transcript_event_identities WHERE session_id = ? AND seq > ? ORDER BY seq`).iterate(this.sessionId, afterSeq) as IterableIterator<
      [number, string, string | null, string | null]
    >;
    for (const raw of it) yield { seq: raw[0], id: raw[1], parent: raw[2], type: raw[3] };
  }

  /** Seqs of identity rows after `afterSeq`, oldest first (the merge input for runs). */
  seqsAfter(afterSeq: number): IterableIterator<[number]> {
    return this.stmt("SELECT seq FROM transcript_event_identities WHERE session_id = ? AND seq > ? ORDER BY seq").iterate(this.sessionId, afterSeq) as IterableIterator<[number]>;
  }

  firstSeqAfter(afterSeq: number): number | undefined {
    const row = this.stmt("SELECT min(seq) FROM transcript_event_identities WHERE session_id = ? AND seq > ?").get(this.sessionId, afterSeq) as [number | null];
    return row[0] ?? undefined;
  }

  /** Number of message identity rows with seq < before (the whole path when it is linear). */
  countMessagesBefore(before: number): number {
    const row = this.stmt("SELECT count(*) FROM transcript_event_identities WHERE session_id = ? AND event_type = ? AND seq < ?").get(this.sessionId, MESSAGE_TYPE, before) as [number];
    return row[0];
  }

  /** The newest reset row (any branch). */
  latestResetRow(): IdentityRow | undefined {
    return toRow(this.stmt(`SELECT ${IDENTITY_COLUMNS} FROM transcript_event_identities WHERE session_id = ? AND event_type = ? ORDER BY seq DESC LIMIT 1`).get(this.sessionId, RESET_TYPE) as never);
  }

  /** Walks parents from `from` while seqs decrease, down to `stopAtSeq` (inclusive); newest first. */
  *ancestors(from: IdentityRow, stopAtSeq = -1): Generator<IdentityRow> {
    let current: IdentityRow | undefined = from;
    while (current && current.seq >= stopAtSeq) {
      yield current;
      if (current.parent === null) return;
      const parent = this.byId(current.parent);
      if (!parent || parent.seq >= current.seq) return;
      current = parent;
    }
  }

  /** The active path (computed once per read). */
  path(): ActivePath {
    if (!this.pathInfo) this.pathInfo = computePath(this);
    return this.pathInfo;
  }
}

export interface ActivePath {
  leaf: IdentityRow | undefined;
  /** Every identity row is on the path (each row's parent is the row before it). */
  linear: boolean;
  latestReset: { id: string; seq: number } | null;
  has(seq: number): boolean;
  /** Path messages with seq < before. */
  messagesBefore(before: number): number;
  /** The path after `pos` as runs, at most `cap` of them (`more` when the path continues past them). */
  runsAfter(pos: number, cap: number): { runs: Run[]; more: boolean };
}

/**
 * One streamed pass decides whether the transcript is linear (the usual case: then the path is every row and
 * needs no memory); otherwise the parent chain from the leaf is materialized as seqs (8 bytes per entry).
 */
function computePath(tree: TranscriptTree): ActivePath {
  const leaf = tree.leaf();
  let linear = true;
  let prev: string | null = null;
  let first = true;
  for (const row of tree.rowsAfter(-1)) {
    if (!first && row.parent !== prev) {
      linear = false;
      break;
    }
    first = false;
    prev = row.id;
  }
  if (linear) {
    const reset = tree.latestResetRow();
    return {
      leaf,
      linear,
      latestReset: reset ? { id: reset.id, seq: reset.seq } : null,
      has: (seq) => tree.at(seq) !== undefined,
      messagesBefore: (before) => tree.countMessagesBefore(before),
      runsAfter: (pos) => {
        const firstSeq = tree.firstSeqAfter(pos);
        return { runs: firstSeq === undefined || !leaf ? [] : [[firstSeq, leaf.seq]], more: false };
      },
    };
  }
  return branchedPath(tree, leaf!);
}

function branchedPath(tree: TranscriptTree, leaf: IdentityRow): ActivePath {
  const seqs: number[] = [];
  const kinds: number[] = [];
  let latestReset: { id: string; seq: number } | null = null;
  for (const row of tree.ancestors(leaf)) {
    seqs.push(row.seq);
    kinds.push(row.type === MESSAGE_TYPE ? 1 : 0);
    if (latestReset === null && row.type === RESET_TYPE) latestReset = { id: row.id, seq: row.seq };
  }
  seqs.reverse();
  kinds.reverse();
  const prefix = new Int32Array(seqs.length + 1);
  for (let i = 0; i < seqs.length; i += 1) prefix[i + 1] = prefix[i]! + kinds[i]!;
  /** Index of the first path seq >= value. */
  const lowerBound = (value: number): number => {
    let lo = 0;
    let hi = seqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (seqs[mid]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return {
    leaf,
    linear: false,
    latestReset,
    has: (seq) => seqs[lowerBound(seq)] === seq,
    messagesBefore: (before) => prefix[lowerBound(before)]!,
    runsAfter: (pos, cap) => {
      let j = lowerBound(pos + 1);
      const runs: Run[] = [];
      if (j === seqs.length) return { runs, more: false };
      let current: Run | null = null;
      // Merge the path with every identity row after pos: a row off the path ends the current run.
      const it = tree.seqsAfter(pos);
      try {
        for (const [seq] of it) {
          if (seq === seqs[j]) {
            if (current) current[1] = seq;
            else current = [seq, seq];
            j += 1;
            if (j === seqs.length) break;
          } else if (current) {
            runs.push(current);
            current = null;
            if (runs.length === cap) return { runs, more: true };
          }
        }
      } finally {
        it.return?.();
      }
      if (current) runs.push(current);
      return { runs, more: j < seqs.length };
    },
  };
}
