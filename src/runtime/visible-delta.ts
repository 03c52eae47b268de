// readSessionTranscriptVisibleMessageDelta: bounded active-path message pages behind an opaque, reset-aware cursor.
import { OperationError, UsageError } from "../core/errors.js";
import { decodeCursor, encodeCursor, isInt, isStrOrNull } from "../state/cursor-codec.js";
import type { AgentDatabase } from "../state/state-databases.js";
import { transcriptGeneration } from "../state/transcript-generation.js";
import { readLimit, TRANSCRIPT_DEFAULT_MAX_BYTES, TRANSCRIPT_MAX_BYTES_CAP, TRANSCRIPT_MAX_EVENTS_CAP } from "../state/transcript-reader.js";
import { messageAt, messagesInRange, toMessageEntry, type MessageRow, type SessionTranscriptMessageEntry } from "./message-rows.js";
import { readAgentDb, requireString, sessionMatchesKey, type AgentParams } from "./store.js";
import { retainedTail } from "./reset-window.js";
import { MESSAGE_TYPE, RESET_TYPE, TranscriptTree, type IdentityRow, type Run } from "./transcript-tree.js";

export const DEFAULT_MAX_MESSAGES = 1_000;
export const MAX_MESSAGES_CAP = TRANSCRIPT_MAX_EVENTS_CAP;
/** Runs of the active path a cursor carries; a path split into more is recomputed when they are used up. */
const RUN_CAP = 32;
const CURSOR_PREFIX = "ocv1.";
/** Entries a follower's first read walks back at most to find its initial lines. */
const TAIL_WALK_CAP = 100_000;

export type TranscriptStart = "transcript" | "reset-window";

export interface TranscriptIdentityParams extends AgentParams {
  sessionKey: string;
  sessionId: string;
}

export interface VisibleMessageDeltaParams extends TranscriptIdentityParams {
  /** Opaque cursor from an earlier page or reset; omitted on the first read. */
  cursor?: string | undefined;
  /** Default 1,000, cap 10,000. */
  maxMessages?: number;
  /** Stored bytes per page; default 1,000,000, cap 64 MiB. */
  maxBytes?: number;
  /** Where fresh cursors begin (a read without cursor, and reset results). Pass the same value on every read. */
  start?: TranscriptStart;
}

export type VisibleResetReason = "invalid_cursor" | "scope_mismatch" | "session_reset" | "generation_mismatch" | "anchor_missing" | "anchor_moved";

export interface VisibleMessagePage {
  kind: "page";
  /** Active-path messages after the cursor, oldest first. */
  entries: SessionTranscriptMessageEntry[];
  /** Persist with the ingested entries; pass back unchanged. */
  cursor: string;
  /** Unread messages remain: read again. */
  hasMore: boolean;
  /** Stored bytes of the returned entries. */
  bytes: number;
  /** The page is empty because the next message alone is this many bytes, above maxBytes. */
  requiredBytes?: number;
}

export interface VisibleMessageReset {
  kind: "reset";
  reason: VisibleResetReason;
  /** A fresh cursor that starts a complete drain. */
  cursor: string;
}

export interface TranscriptUnavailable {
  kind: "unavailable";
  reason: "projection_rebuilding";
}

export interface TranscriptMissingResult {
  kind: "missing";
}

export type VisibleMessageDeltaResult = VisibleMessagePage | VisibleMessageReset | TranscriptUnavailable | TranscriptMissingResult;

/**
 * Cursor state. `g` generation; `m` mode (`t` transcript, `w` reset-window) with the window's reset `w`/`ws`
 * and `wo` (path messages before it); `ph` 1 while the preserve-tail is being returned; `e`/`q`/`ao` the last
 * returned message (anchor) and its ordinal; `p`/`o` the main-phase position (seq consumed through, path
 * messages up to it); `r`/`rm` the known path after `p` as runs (null = not computed yet); `vi`/`vs` the
 * leaf when `r` was verified: rows appended after it that chain linearly extend `r` without a path walk.
 */
interface VState {
  v: 1;
  a: string;
  s: string;
  g: string;
  m: "t" | "w";
  w: string | null;
  ws: number;
  wo: number;
  ph: 0 | 1;
  e: string | null;
  q: number;
  ao: number;
  p: number;
  o: number;
  r: Run[] | null;
  rm: 0 | 1;
  vi: string | null;
  vs: number;
}

function isRuns(value: unknown): value is Run[] {
  return Array.isArray(value) && value.length <= RUN_CAP && value.every((r) => Array.isArray(r) && r.length === 2 && isInt(r[0], 0) && isInt(r[1], 0) && r[0] <= r[1]);
}

function decodeState(cursor: string): VState | null {
  const v = decodeCursor(CURSOR_PREFIX, cursor) as Partial<VState> | null;
  if (v === null || typeof v !== "object") return null;
  const ok =
    v.v === 1 &&
    typeof v.a === "string" &&
    typeof v.s === "string" &&
    typeof v.g === "string" &&
    (v.m === "t" || v.m === "w") &&
    isStrOrNull(v.w) &&
    isInt(v.ws, -1) &&
    isInt(v.wo, 0) &&
    (v.ph === 0 || v.ph === 1) &&
    isStrOrNull(v.e) &&
    isInt(v.q, -1) &&
    isInt(v.ao, 0) &&
    isInt(v.p, -1) &&
    isInt(v.o, 0) &&
    (v.r === null || isRuns(v.r)) &&
    (v.rm === 0 || v.rm === 1) &&
    isStrOrNull(v.vi) &&
    isInt(v.vs, -1);
  return ok ? (v as VState) : null;
}

interface ReadContext {
  db: AgentDatabase;
  agentId: string;
  sessionId: string;
  generation: string;
  tree: TranscriptTree;
}

/** What the read knows about the active path after the position. */
interface PathView {
  runs: Run[];
  more: boolean;
  leaf: IdentityRow | undefined;
  /** Fast path only: the first reset row among the appended rows. */
  newReset: IdentityRow | null;
}

export async function readSessionTranscriptVisibleMessageDelta(params: VisibleMessageDeltaParams): Promise<VisibleMessageDeltaResult> {
  const sessionKey = requireString(params.sessionKey, "sessionKey");
  const sessionId = requireString(params.sessionId, "sessionId");
  const options = visibleOptions(params);
  return readAgentDb(params, (db, agentId) => readVisibleDeltaIn(db, agentId, sessionKey, sessionId, options), () => ({ kind: "missing" }));
}

export interface VisibleReadOptions {
  cursor: string | undefined;
  maxMessages: number;
  maxBytes: number;
  start: TranscriptStart;
}

export function visibleOptions(params: { cursor?: string | undefined; maxMessages?: number; maxBytes?: number; start?: TranscriptStart }): VisibleReadOptions {
  const start = params.start ?? "transcript";
  if (start !== "transcript" && start !== "reset-window") throw new UsageError(`start must be "transcript" or "reset-window" (got ${JSON.stringify(start)}).`, "invalid_argument");
  if (params.cursor !== undefined && typeof params.cursor !== "string") throw new UsageError("cursor must be a string from an earlier read.", "invalid_argument");
  return {
    cursor: params.cursor,
    maxMessages: readLimit(params.maxMessages, DEFAULT_MAX_MESSAGES, MAX_MESSAGES_CAP, "maxMessages"),
    maxBytes: readLimit(params.maxBytes, TRANSCRIPT_DEFAULT_MAX_BYTES, TRANSCRIPT_MAX_BYTES_CAP, "maxBytes"),
    start,
  };
}

/** The read on an open database (inside the caller's read snapshot). */
export function readVisibleDeltaIn(db: AgentDatabase, agentId: string, sessionKey: string, sessionId: string, options: VisibleReadOptions): VisibleMessageDeltaResult {
  if (!sessionMatchesKey(db, sessionKey, sessionId)) return { kind: "missing" };
  const generation = transcriptGeneration(db, sessionId);
  if (!generation) return { kind: "missing" };
  const tree = new TranscriptTree(db, sessionId);
  if (projectionBehind(db, sessionId, tree)) return { kind: "unavailable", reason: "projection_rebuilding" };
  const ctx: ReadContext = { db, agentId, sessionId, generation: generation.token, tree };
  const reset = (reason: VisibleResetReason, mode: "t" | "w"): VisibleMessageReset => ({ kind: "reset", reason, cursor: encodeCursor(CURSOR_PREFIX, freshState(ctx, mode)) });
  const startMode = options.start === "reset-window" ? "w" : "t";

  let st: VState;
  if (options.cursor === undefined) {
    st = freshState(ctx, startMode);
  } else {
    const decoded = decodeState(options.cursor);
    // A malformed cursor cannot report its mode: its fresh cursor follows `start`.
    if (!decoded) return reset("invalid_cursor", startMode);
    if (decoded.a !== agentId || decoded.s !== sessionId) return reset("scope_mismatch", decoded.m);
    st = decoded;
  }

  let view = st.g === ctx.generation ? fastView(ctx, st) : null;
  if (st.m === "w") {
    // Resets are compared by entry id, across generations: a newer reset wins over a rewrite before the read.
    const latest = view ? (view.newReset?.id ?? st.w) : (tree.path().latestReset?.id ?? null);
    if (latest !== st.w) return reset("session_reset", "w");
  }
  if (st.g !== ctx.generation) return reset("generation_mismatch", st.m);
  if (!view) {
    const path = tree.path();
    if (st.e !== null) {
      const anchor = tree.byId(st.e);
      if (!anchor || !path.has(anchor.seq)) return reset("anchor_missing", st.m);
      if (anchor.seq !== st.q) return reset("anchor_moved", st.m);
    }
    if (st.m === "w" && st.w !== null && path.latestReset?.seq !== st.ws) return reset("anchor_moved", st.m);
    st = resumePosition(st);
    const { runs, more } = path.runsAfter(st.ph === 1 ? st.ws : st.p, RUN_CAP);
    view = { runs, more, leaf: path.leaf, newReset: null };
  }
  return producePage(ctx, st, view, options);
}

/** The bootstrap position: the first active-path message, or (reset-window) the latest reset's window. */
function freshState(ctx: ReadContext, mode: "t" | "w"): VState {
  const state: VState = { v: 1, a: ctx.agentId, s: ctx.sessionId, g: ctx.generation, m: mode, w: null, ws: -1, wo: 0, ph: 0, e: null, q: -1, ao: 0, p: -1, o: 0, r: null, rm: 0, vi: null, vs: -1 };
  if (mode === "w") {
    const path = ctx.tree.path();
    const latest = path.latestReset;
    if (latest) {
      const before = path.messagesBefore(latest.seq);
      Object.assign(state, { w: latest.id, ws: latest.seq, wo: before, ph: 1, p: latest.seq, o: before });
    }
  }
  return state;
}

/**
 * After a path change that kept the anchor: continue after the anchor (messages after it were never
 * returned), or from the phase start when nothing was returned in the main phase yet.
 */
function resumePosition(st: VState): VState {
  if (st.ph === 1) return st;
  if (st.e !== null && st.q > st.ws) return { ...st, p: st.q, o: st.ao };
  return { ...st, p: st.ws, o: st.wo };
}

/**
 * Steady state: same generation, the leaf the cursor verified still carries its id, and every row appended
 * since chains linearly from it. Then the path is the known path plus those rows: cost ∝ appended rows.
 */
function fastView(ctx: ReadContext, st: VState): PathView | null {
  if (st.r === null) return null;
  const { tree } = ctx;
  if (st.vs >= 0 && tree.at(st.vs)?.id !== st.vi) return null;
  if (st.e !== null && tree.at(st.q)?.id !== st.e) return null;
  let prev = st.vi;
  let first: IdentityRow | undefined;
  let leaf: IdentityRow | undefined = st.vi === null ? undefined : { seq: st.vs, id: st.vi, parent: null, type: null };
  let newReset: IdentityRow | null = null;
  for (const row of tree.rowsAfter(st.vs)) {
    if ((prev !== null || first !== undefined) && row.parent !== prev) return null;
    if (row.type === RESET_TYPE && newReset === null) newReset = row;
    first ??= row;
    prev = row.id;
    leaf = row;
  }
  let runs = st.r;
  if (first && leaf && st.rm === 0) {
    const last = runs[runs.length - 1];
    runs = last && last[1] === st.vs ? [...runs.slice(0, -1), [last[0], leaf.seq]] : [...runs, [first.seq, leaf.seq]];
  }
  return { runs, more: st.rm === 1, leaf, newReset };
}

function producePage(ctx: ReadContext, start: VState, view: PathView, options: VisibleReadOptions): VisibleMessagePage {
  const { db, sessionId } = ctx;
  const { maxMessages, maxBytes } = options;
  const st: VState = { ...start };
  const entries: SessionTranscriptMessageEntry[] = [];
  let bytes = 0;
  let cut = false;
  let requiredBytes: number | undefined;
  /** Adds the row when it fits; false (and the page ends) when it does not. */
  const take = (row: MessageRow, ordinal: number): boolean => {
    if (entries.length === maxMessages || row.json === null || bytes + row.bytes > maxBytes) {
      cut = true;
      if (entries.length === 0) requiredBytes = row.bytes;
      return false;
    }
    entries.push(toMessageEntry(row, row.json, ordinal));
    bytes += row.bytes;
    st.e = row.id;
    st.q = row.seq;
    st.ao = ordinal;
    return true;
  };

  if (st.ph === 1) {
    for (const item of retainedTail(ctx.tree, st.ws, st.wo)) {
      if (st.e !== null && item.seq <= st.q) continue;
      const row = messageAt(db, sessionId, item.seq, maxBytes);
      if (!row) continue;
      if (!take(row, item.ordinal)) break;
    }
    if (!cut) st.ph = 0;
  }

  let runs = view.runs;
  let more = view.more;
  if (!cut && st.ph === 0) {
    outer: for (;;) {
      for (const [from, to] of runs) {
        if (to <= st.p) continue;
        for (const row of messagesInRange(db, sessionId, Math.max(from - 1, st.p), to, maxBytes)) {
          if (!take(row, st.o + 1)) break outer;
          st.o += 1;
          st.p = row.seq;
        }
        st.p = Math.max(st.p, to);
      }
      if (!more) break;
      ({ runs, more } = ctx.tree.path().runsAfter(st.p, RUN_CAP));
      if (runs.length === 0) break;
    }
  }

  st.r = runs.filter(([, to]) => to > st.p).map(([from, to]): Run => [Math.max(from, st.p + 1), to]);
  st.rm = more ? 1 : 0;
  st.vi = view.leaf?.id ?? null;
  st.vs = view.leaf?.seq ?? -1;
  const page: VisibleMessagePage = { kind: "page", entries, cursor: encodeCursor(CURSOR_PREFIX, st), hasMore: cut, bytes };
  if (requiredBytes !== undefined) page.requiredBytes = requiredBytes;
  return page;
}

/**
 * The writer appended an entry (the newest row has an id) but not yet its identity row: the projection
 * this reader walks is behind, so the caller keeps its cursor and retries.
 */
function projectionBehind(db: AgentDatabase, sessionId: string, tree: TranscriptTree): boolean {
  const last = db.first(db.q.selectFrom("transcript_events").select("seq").where("session_id", "=", sessionId).orderBy("seq", "desc").limit(1));
  if (!last || last.seq <= (tree.leaf()?.seq ?? -1)) return false;
  const row = db.handle
    .prepare("SELECT json_type(event_json, '$.id') AS idType, json_extract(event_json, '$.type') AS type FROM transcript_events WHERE session_id = ? AND seq = ?")
    .get(sessionId, last.seq) as { idType: string | null; type: unknown };
  return row.idType === "text" && row.type !== "session";
}

/** Every active-path message (a complete read: the caller holds them all), drained page by page in one snapshot. */
export function readAllVisibleIn(db: AgentDatabase, agentId: string, sessionKey: string, sessionId: string, start: TranscriptStart): SessionTranscriptMessageEntry[] | undefined {
  const all: SessionTranscriptMessageEntry[] = [];
  let cursor: string | undefined;
  let maxBytes = TRANSCRIPT_DEFAULT_MAX_BYTES * 8;
  for (;;) {
    const r = readVisibleDeltaIn(db, agentId, sessionKey, sessionId, { cursor, maxMessages: MAX_MESSAGES_CAP, maxBytes, start });
    if (r.kind === "missing") return undefined;
    if (r.kind === "unavailable") throw new OperationError("projection_rebuilding", `The message projection of session ${sessionId} is being rebuilt (its newest entry has no identity row yet); retry shortly.`);
    if (r.kind === "reset") throw new OperationError("transcript_changed", `The transcript of session ${sessionId} changed during the read (${r.reason}); read it again.`);
    all.push(...r.entries);
    cursor = r.cursor;
    if (r.requiredBytes !== undefined) {
      if (r.requiredBytes > TRANSCRIPT_MAX_BYTES_CAP) {
        throw new OperationError("entry_too_large", `Session ${sessionId} has a message of ${r.requiredBytes} bytes, above the ${TRANSCRIPT_MAX_BYTES_CAP}-byte read cap.`);
      }
      maxBytes = r.requiredBytes;
      continue;
    }
    maxBytes = TRANSCRIPT_DEFAULT_MAX_BYTES * 8;
    if (!r.hasMore) return all;
  }
}

export interface TranscriptTailState {
  /** The newest `lines` active-path messages, oldest first. */
  entries: SessionTranscriptMessageEntry[];
  /** A transcript-mode cursor positioned after the newest entry: the next read returns only later appends. */
  cursor: string;
}

/**
 * For followers (`sessions tail`): the newest messages and a cursor at the end, without draining the whole
 * transcript. Messages larger than `maxBytes` are left out of the initial lines (their size is in `skipped`).
 */
export function tailStateIn(db: AgentDatabase, agentId: string, sessionId: string, lines: number, maxBytes: number): TranscriptTailState & { skipped: number[] } {
  const tree = new TranscriptTree(db, sessionId);
  const ctx: ReadContext = { db, agentId, sessionId, generation: transcriptGeneration(db, sessionId)?.token ?? "", tree };
  const st = freshState(ctx, "t");
  const leaf = tree.leaf();
  const entries: SessionTranscriptMessageEntry[] = [];
  const skipped: number[] = [];
  if (leaf) {
    const path = tree.path();
    const total = path.messagesBefore(leaf.seq + 1);
    let ordinal = total;
    let budget = maxBytes;
    let walked = 0;
    for (const row of tree.ancestors(leaf)) {
      // Bounded: a path of non-message entries must not make the first lines cost the whole transcript.
      if (entries.length + skipped.length >= lines || ++walked > TAIL_WALK_CAP) break;
      if (row.type !== MESSAGE_TYPE) continue;
      const message = messageAt(db, sessionId, row.seq, maxBytes);
      if (message) {
        if (message.json === null || message.bytes > budget) skipped.push(message.bytes);
        else {
          entries.push(toMessageEntry(message, message.json, ordinal));
          budget -= message.bytes;
        }
      }
      ordinal -= 1;
    }
    entries.reverse();
    let lastMessage: IdentityRow | undefined;
    for (const row of tree.ancestors(leaf)) {
      if (row.type === MESSAGE_TYPE) {
        lastMessage = row;
        break;
      }
    }
    Object.assign(st, { p: leaf.seq, o: total, r: [], rm: 0, vi: leaf.id, vs: leaf.seq });
    if (lastMessage) Object.assign(st, { e: lastMessage.id, q: lastMessage.seq, ao: total });
  }
  return { entries, cursor: encodeCursor(CURSOR_PREFIX, st), skipped };
}
