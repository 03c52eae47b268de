// readSessionTranscriptCatalogPage: newest-first user/assistant text of the active path, bounded per item and per page.
import { OperationError, UsageError } from "../core/errors.js";
import { decodeCursor, encodeCursor, isInt } from "../state/cursor-codec.js";
import { fingerprint, transcriptGeneration } from "../state/transcript-generation.js";
import { messageAt } from "./message-rows.js";
import { readAgentDb, requireString, sessionMatchesKey, type AgentParams } from "./store.js";
import { MESSAGE_TYPE, TranscriptTree, type IdentityRow } from "./transcript-tree.js";

export const CATALOG_DEFAULT_LIMIT = 50;
export const CATALOG_MAX_LIMIT = 200;
export const CATALOG_DEFAULT_ITEM_CHARS = 4_000;
/** Source entries scanned per page: a page of only omitted activity can be empty and still continue. */
export const CATALOG_SCAN_ENTRIES = 1_000;
/** Stored bytes read per page; one larger entry is an explicit error. */
export const CATALOG_PAGE_BYTES = 8 * 1024 * 1024;
/** Standalone control lines the chat display drops (silent replies, heartbeat acknowledgements). */
const CONTROL_LINES = new Set(["NO_REPLY", "HEARTBEAT_OK"]);
const CURSOR_PREFIX = "occ1.";

export interface CatalogPageParams extends AgentParams {
  sessionKey: string;
  /** Default: the session the key currently routes to. */
  sessionId?: string;
  /** Items per page: default 50, at most 200. */
  limit?: number;
  /** From an earlier page: continues toward older items. */
  cursor?: string;
  /** Per-item text bound in UTF-16 code units (default 4,000). */
  maxItemChars?: number;
}

export interface CatalogItem {
  entryId: string;
  role: "user" | "assistant";
  /** Display text; credentials are not masked, review before sharing. */
  text: string;
  /** The text was clipped to maxItemChars. */
  truncated: boolean;
  createdAt?: string | number;
}

export interface CatalogPage {
  /** Newest first. */
  items: CatalogItem[];
  /** Continues toward older items; absent at the start of the transcript. */
  nextCursor?: string;
}

interface CatalogCursor {
  v: 1;
  /** Store (agent DB path fingerprint), agent, session id and generation the cursor belongs to. */
  d: string;
  a: string;
  s: string;
  g: string;
  /** Next entry to visit and its seq. */
  n: string;
  ns: number;
}

function reload(message: string): OperationError {
  return new OperationError("catalog_cursor_rejected", `${message}; reload the catalog from its first page (no cursor).`);
}

export async function readSessionTranscriptCatalogPage(params: CatalogPageParams): Promise<CatalogPage> {
  const sessionKey = requireString(params.sessionKey, "sessionKey");
  const limit = params.limit ?? CATALOG_DEFAULT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > CATALOG_MAX_LIMIT) throw new UsageError(`limit must be a whole number from 1 to ${CATALOG_MAX_LIMIT} (got ${String(params.limit)}).`, "invalid_limit");
  const maxChars = params.maxItemChars ?? CATALOG_DEFAULT_ITEM_CHARS;
  if (!Number.isSafeInteger(maxChars) || maxChars < 1) throw new UsageError(`maxItemChars must be a positive whole number (got ${String(params.maxItemChars)}).`, "invalid_limit");
  let state: CatalogCursor | null = null;
  if (params.cursor !== undefined) {
    state = decodeCatalogCursor(params.cursor);
    if (!state) throw reload("The catalog cursor is malformed, altered or from another reader");
  }
  return readAgentDb<CatalogPage>(
    params,
    (db, agentId) => {
      const sessionId = params.sessionId ?? db.first(db.q.selectFrom("session_routes").select("session_id").where("session_key", "=", sessionKey))?.session_id;
      if (sessionId === undefined || !sessionMatchesKey(db, sessionKey, sessionId)) {
        if (state) throw reload(`Session ${sessionKey} no longer exists`);
        return { items: [] };
      }
      const generation = transcriptGeneration(db, sessionId);
      if (!generation) {
        if (state) throw reload(`The transcript of ${sessionKey} no longer exists`);
        return { items: [] };
      }
      const tree = new TranscriptTree(db, sessionId);
      const store = fingerprint(db.path);
      let start: IdentityRow | undefined;
      if (state) {
        if (state.d !== store || state.a !== agentId || state.s !== sessionId) throw reload("The catalog cursor belongs to another store or session");
        if (state.g !== generation.token) throw reload(`The transcript of ${sessionKey} was rewritten since this cursor was issued`);
        start = tree.byId(state.n);
        if (!start || start.seq !== state.ns) throw reload(`The transcript of ${sessionKey} changed since this cursor was issued`);
      } else {
        start = tree.leaf();
      }
      const items: CatalogItem[] = [];
      let scanned = 0;
      let bytes = 0;
      let next: IdentityRow | undefined;
      if (start) {
        for (const row of tree.ancestors(start)) {
          if (scanned === CATALOG_SCAN_ENTRIES || items.length === limit) {
            next = row;
            break;
          }
          if (row.type === MESSAGE_TYPE) {
            const message = messageAt(db, sessionId, row.seq, CATALOG_PAGE_BYTES);
            if (message && message.json === null) {
              throw new OperationError("catalog_entry_too_large", `Entry ${row.id} of ${sessionKey} is ${message.bytes} bytes, above the ${CATALOG_PAGE_BYTES}-byte catalog page bound; read it with readSessionTranscriptRawDelta instead.`);
            }
            if (message && message.json !== null) {
              if (bytes + message.bytes > CATALOG_PAGE_BYTES) {
                next = row;
                break;
              }
              bytes += message.bytes;
              const item = catalogItem(row.id, message.json, maxChars);
              if (item) items.push(item);
            }
          }
          scanned += 1;
        }
      }
      const page: CatalogPage = { items };
      if (next) page.nextCursor = encodeCursor(CURSOR_PREFIX, { v: 1, d: store, a: agentId, s: sessionId, g: generation.token, n: next.id, ns: next.seq } satisfies CatalogCursor);
      return page;
    },
    () => {
      if (state) throw reload(`Session ${sessionKey} no longer exists`);
      return { items: [] };
    },
  );
}

function decodeCatalogCursor(cursor: string): CatalogCursor | null {
  const v = decodeCursor(CURSOR_PREFIX, cursor) as Partial<CatalogCursor> | null;
  if (v === null || typeof v !== "object") return null;
  const ok = v.v === 1 && typeof v.d === "string" && typeof v.a === "string" && typeof v.s === "string" && typeof v.g === "string" && typeof v.n === "string" && isInt(v.ns, 0);
  return ok ? (v as CatalogCursor) : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The chat display's text of a user/assistant message: text blocks only, standalone control lines removed. */
export function displayText(message: unknown): { role: "user" | "assistant"; text: string } | null {
  if (!isRecord(message) || (message.role !== "user" && message.role !== "assistant")) return null;
  const content = message.content;
  let text: string;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) text = content.filter((b) => isRecord(b) && b.type === "text" && typeof b.text === "string").map((b) => (b as { text: string }).text).join("\n");
  else return null;
  text = text
    .split("\n")
    .filter((line) => !CONTROL_LINES.has(line.trim()))
    .join("\n")
    .trim();
  return text === "" ? null : { role: message.role, text };
}

/** Clips to `max` UTF-16 code units without splitting a surrogate pair. */
export function clipText(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}

function catalogItem(entryId: string, json: string, maxChars: number): CatalogItem | null {
  let stored: unknown;
  try {
    stored = JSON.parse(json);
  } catch {
    return null;
  }
  if (!isRecord(stored)) return null;
  const shown = displayText(stored.message);
  if (!shown) return null;
  const clipped = clipText(shown.text, maxChars);
  const item: CatalogItem = { entryId, role: shown.role, text: clipped.text, truncated: clipped.truncated };
  if (typeof stored.timestamp === "string" || typeof stored.timestamp === "number") item.createdAt = stored.timestamp;
  return item;
}
