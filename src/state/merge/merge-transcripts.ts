// Rule 2 of the merge: transcripts by event identity, session by session; a session whose history disagrees is reported and left alone.
import zlib from "node:zlib";
import type Database from "better-sqlite3";
import { canonicalJson } from "../upgrade/upgrade-global-cron.js";
import { insertRow, isUniqueViolation, zeroCounts, type MergeContext, type MergeTableCounts } from "./merge-table.js";
import { quoteId, rowJson, tableShape, type TableShape } from "./table-shape.js";

export const TRANSCRIPT_TABLES = ["transcript_events", "transcript_event_identities", "transcript_rewrite_watermarks"] as const;

export interface TranscriptConflict { sessionId: string; sessionKey: string | null; seq: number; liveEventId: string | null; fileEventId: string | null }
export interface Appended { sessionId: string; fromSeq: number; count: number }

export interface TranscriptMergeResult {
  tables: Record<string, MergeTableCounts>;
  appended: Appended[];
  conflicts: TranscriptConflict[];
}

type Row = Record<string, unknown>;

/** An event's identity and content; `text` null when the body cannot be decoded (never a match). */
interface Decoded { id: string | null; text: string | null }

type ZstdDecompress = (buf: Buffer) => Buffer;

/** node:zlib has zstd from Node 22.15 / 23.8; on Node 20 a compressed live event cannot be read (so never matches). */
const zstdDecompress = (zlib as unknown as { zstdDecompressSync?: ZstdDecompress }).zstdDecompressSync ?? null;

function decodeEvent(row: Row): Decoded {
  let json: string | null = null;
  if (typeof row.event_json === "string") json = row.event_json;
  else if (Buffer.isBuffer(row.event_zstd) && zstdDecompress) {
    try {
      const body = zstdDecompress(row.event_zstd);
      if (row.event_utf8_bytes === null || row.event_utf8_bytes === undefined || Number(row.event_utf8_bytes) === body.length) json = body.toString("utf8");
    } catch {
      json = null;
    }
  }
  if (json === null) return { id: null, text: null };
  try {
    const value = JSON.parse(json) as unknown;
    const id = value && typeof value === "object" && !Array.isArray(value) && typeof (value as { id?: unknown }).id === "string" ? (value as { id: string }).id : null;
    return { id, text: canonicalJson(value) };
  } catch {
    return { id: null, text: null };
  }
}

function seqOf(row: Row): number {
  return Number(row.seq);
}

export function mergeTranscripts(ctx: MergeContext): TranscriptMergeResult {
  const shapes = Object.fromEntries(TRANSCRIPT_TABLES.map((t) => [t, tableShape(ctx.live, ctx.staged, t)])) as Record<(typeof TRANSCRIPT_TABLES)[number], TableShape>;
  const counts = Object.fromEntries(TRANSCRIPT_TABLES.map((t) => [t, zeroCounts()])) as Record<(typeof TRANSCRIPT_TABLES)[number], MergeTableCounts>;
  const result: TranscriptMergeResult = { tables: counts, appended: [], conflicts: [] };
  const col = (s: TableShape): string => s.columns.map(quoteId).join(", ");
  const sessions = (ctx.staged.prepare("SELECT DISTINCT session_id FROM main.transcript_events ORDER BY session_id").pluck().all() as string[]);
  const stagedEvents = ctx.staged.prepare(`SELECT ${col(shapes.transcript_events)} FROM main.transcript_events WHERE session_id = ? ORDER BY seq`);
  const stagedIdentities = ctx.staged.prepare(`SELECT ${col(shapes.transcript_event_identities)} FROM main.transcript_event_identities WHERE session_id = ? ORDER BY seq, event_id`);
  const stagedWatermark = ctx.staged.prepare(`SELECT ${col(shapes.transcript_rewrite_watermarks)} FROM main.transcript_rewrite_watermarks WHERE session_id = ?`);
  const liveEvents = ctx.live.prepare("SELECT seq, event_json, event_zstd, event_utf8_bytes FROM main.transcript_events WHERE session_id = ? ORDER BY seq");
  const liveIdentityIds = ctx.live.prepare("SELECT event_id FROM main.transcript_event_identities WHERE session_id = ?").pluck();
  const liveWatermark = ctx.live.prepare("SELECT 1 FROM main.transcript_rewrite_watermarks WHERE session_id = ?");
  const sessionKeyOf = (id: string): string | null =>
    ((ctx.live.prepare("SELECT session_key FROM main.session_windows WHERE session_id = ?").pluck().get(id) ??
      ctx.staged.prepare("SELECT session_key FROM main.session_windows WHERE session_id = ?").pluck().get(id)) as string | undefined) ?? null;

  for (const sessionId of sessions) {
    const events = stagedEvents.all(sessionId) as Row[];
    const identities = stagedIdentities.all(sessionId) as Row[];
    const live = liveEvents.all(sessionId) as Row[];
    const decoded = events.map(decodeEvent);
    const liveMax = live.length > 0 ? seqOf(live[live.length - 1]!) : -1; // ordered by seq
    let conflict: Omit<TranscriptConflict, "sessionId" | "sessionKey"> | null = null;
    let identical = 0;
    // Staged events after the live history, in file order (all of them when live has none).
    let tail: number[] = [];
    if (live.length > 0) {
      const liveBySeq = new Map(live.map((r) => [seqOf(r), decodeEvent(r)]));
      for (let i = 0; i < events.length && conflict === null; i += 1) {
        const seq = seqOf(events[i]!);
        if (seq > liveMax) {
          tail.push(i);
          continue;
        }
        const l = liveBySeq.get(seq);
        const s = decoded[i]!;
        if (l && l.text !== null && s.text !== null && l.id === s.id && l.text === s.text) identical += 1;
        else conflict = { seq, liveEventId: l?.id ?? null, fileEventId: s.id };
      }
      if (conflict === null) {
        const liveIds = new Set<string>(liveIdentityIds.all(sessionId) as string[]);
        for (const d of liveBySeq.values()) if (d.id !== null) liveIds.add(d.id);
        const dup = tail.find((i) => decoded[i]!.id !== null && liveIds.has(decoded[i]!.id!));
        if (dup !== undefined) conflict = { seq: seqOf(events[dup]!), liveEventId: decoded[dup]!.id, fileEventId: decoded[dup]!.id };
      }
    } else {
      tail = events.map((_e, i) => i);
    }
    counts.transcript_events.identical += identical;
    // Identity rows of events live already holds: identical when live has the id; one live lacks (9.6's header identity, say) is added.
    const liveIdentity = new Set<string>(live.length > 0 ? (liveIdentityIds.all(sessionId) as string[]) : []);
    const commonIdentities = live.length > 0 ? identities.filter((r) => seqOf(r) <= liveMax) : [];
    const missingIdentities = conflict === null ? commonIdentities.filter((r) => !liveIdentity.has(String(r.event_id))) : [];
    if (conflict === null) counts.transcript_event_identities.identical += commonIdentities.length - missingIdentities.length;
    const mark = stagedWatermark.get(sessionId) as Row | undefined;
    const addWatermark = mark !== undefined && !liveWatermark.get(sessionId);

    const fromSeq = liveMax + 1;
    if (conflict === null && (tail.length > 0 || missingIdentities.length > 0 || addWatermark)) {
      // One savepoint per session: a collision met while writing (an idempotency key the runtime already holds) undoes the session, not the merge.
      ctx.live.exec("SAVEPOINT merge_session");
      try {
        const newSeq = new Map<number, number>();
        tail.forEach((i, n) => {
          const row = events[i]!;
          const seq = live.length > 0 ? fromSeq + n : seqOf(row);
          newSeq.set(seqOf(row), seq);
          insertRow(ctx.live, shapes.transcript_events, { ...row, seq: typeof row.seq === "bigint" ? BigInt(seq) : seq });
        });
        let identityRows = 0;
        for (const identity of identities) {
          const seq = newSeq.get(seqOf(identity));
          if (seq === undefined) continue; // an event live already holds: handled below
          insertRow(ctx.live, shapes.transcript_event_identities, { ...identity, seq: typeof identity.seq === "bigint" ? BigInt(seq) : seq });
          identityRows += 1;
        }
        for (const identity of missingIdentities) {
          insertRow(ctx.live, shapes.transcript_event_identities, identity);
          identityRows += 1;
        }
        if (addWatermark) insertRow(ctx.live, shapes.transcript_rewrite_watermarks, mark);
        ctx.live.exec("RELEASE merge_session");
        counts.transcript_events.inserted += tail.length;
        counts.transcript_event_identities.inserted += identityRows;
        if (addWatermark) counts.transcript_rewrite_watermarks.inserted += 1;
        if (live.length > 0 && tail.length > 0) result.appended.push({ sessionId, fromSeq, count: tail.length });
      } catch (error) {
        ctx.live.exec("ROLLBACK TO merge_session");
        ctx.live.exec("RELEASE merge_session");
        if (!isUniqueViolation(error)) throw error;
        const first = tail.length > 0 ? { seq: seqOf(events[tail[0]!]!), id: decoded[tail[0]!]!.id } : { seq: seqOf(missingIdentities[0] ?? { seq: fromSeq }), id: null };
        conflict = { seq: first.seq, liveEventId: null, fileEventId: first.id };
      }
    }
    if (conflict !== null) {
      result.conflicts.push({ sessionId, sessionKey: sessionKeyOf(sessionId), ...conflict });
      // Every staged event of the session that live does not already hold is kept out, and kept.
      const keptOut = events.filter((_e, i) => !(live.length > 0 && seqOf(events[i]!) <= liveMax && seqOf(events[i]!) < conflict!.seq));
      for (const row of keptOut) {
        ctx.kept.add("staged-conflict", "transcript_events", rowJson({ session_id: sessionId, seq: row.seq }), rowJson(row), null, null);
      }
      counts.transcript_events.conflicts += keptOut.length;
    }
  }
  return result;
}
