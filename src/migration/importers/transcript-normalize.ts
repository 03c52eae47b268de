// Transcript v1→v2→v3 normalization, one line at a time, with deterministic ids (SPEC §4.2).
import crypto from "node:crypto";

export const CURRENT_TRANSCRIPT_VERSION = 3;
const ID_HEX = 8;

type Obj = Record<string, unknown>;

export interface NormalizedEvent {
  /** The line to store: the original text when nothing changed, else the re-serialized entry. */
  json: string;
  id: string | null;
  parentId: string | null;
  type: string | null;
  idempotencyKey: string | null;
  /** Epoch ms from the entry's timestamp, null when absent or unparseable. */
  timestamp: number | null;
}

export interface NormalizedHeader {
  json: string;
  /** The header `id` when it is a non-empty string. */
  sessionId: string | null;
  version: number;
  timestamp: number | null;
}

export function isSessionHeader(value: Obj): boolean {
  return value.type === "session";
}

/** Epoch ms from an ISO string or a number; null otherwise. */
export function parseTimestamp(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? Math.trunc(value) : null;
  if (typeof value !== "string") return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Version of a header: missing = 1; null for anything this tool does not know (newer or malformed). */
export function headerVersion(header: Obj): number | null {
  const v = header.version;
  if (v === undefined || v === null) return 1;
  return v === 1 || v === 2 || v === 3 ? v : null;
}

export function normalizeHeader(header: Obj, version: number): NormalizedHeader {
  const sessionId = typeof header.id === "string" && header.id.trim() !== "" ? header.id.trim() : null;
  // The stored header carries the current version; the file on disk is never rewritten.
  return { json: JSON.stringify({ ...header, version: CURRENT_TRANSCRIPT_VERSION }), sessionId, version, timestamp: parseTimestamp(header.timestamp) };
}

/** Deterministic id for entry `index` (header = 0): 8 hex chars of sha256(index, line), longer on collision. */
export function deterministicEntryId(index: number, line: string, taken: (id: string) => boolean): string {
  const digest = crypto.createHash("sha256").update(`${index}\n${line}`).digest("hex");
  for (let len = ID_HEX; len <= digest.length; len += 4) {
    const id = digest.slice(0, len);
    if (!taken(id)) return id;
  }
  return `${digest}-${index}`;
}

/**
 * Stateful per file: feed the header, then every entry in order. v1 entries get ids and parentIds
 * (previous entry) and firstKeptEntryIndex → firstKeptEntryId; v1/v2 `hookMessage` roles become `custom`
 * with `customType: "hook"`.
 */
export class TranscriptNormalizer {
  readonly version: number;
  private index = 0;
  private prevId: string | null = null;
  /** v1 only: ids by entry index (index 0 is the header), needed for firstKeptEntryIndex and collisions. */
  private readonly v1Ids: Array<string | null> = [null];
  private readonly v1Taken = new Set<string>();
  readonly warnings: string[] = [];
  /**
   * A header-less file (read as v1): its `firstKeptEntryIndex` counts the file's lines from 0 with no header line,
   * as OpenClaw's codec counts them, while our entry index keeps 0 for the (synthesized) header.
   */
  private readonly indexBase: number;

  constructor(version: number, options: { headerless?: boolean } = {}) {
    this.version = version;
    this.indexBase = options.headerless ? 1 : 0;
  }

  /** `lineNo` only labels warnings. */
  entry(entry: Obj, line: string, lineNo: number): NormalizedEvent {
    this.index += 1;
    let out = entry;
    let changed = false;
    if (this.version < 2) {
      const id = deterministicEntryId(this.index, line, (candidate) => this.v1Taken.has(candidate));
      this.v1Taken.add(id);
      this.v1Ids.push(id);
      const { type, id: _oldId, parentId: _oldParent, ...rest } = entry;
      out = { type, id, parentId: this.prevId, ...rest };
      this.prevId = id;
      if (out.type === "compaction" && "firstKeptEntryIndex" in out) {
        const target = out.firstKeptEntryIndex;
        delete out.firstKeptEntryIndex;
        const at = typeof target === "number" && Number.isInteger(target) ? target + this.indexBase : -1;
        const targetId = at > 0 && at < this.index ? this.v1Ids[at] : undefined;
        if (targetId) out.firstKeptEntryId = targetId;
        else this.warnings.push(`line ${lineNo}: firstKeptEntryIndex does not name an earlier entry; dropped`);
      }
      changed = true;
    }
    if (this.version < 3 && out.type === "message" && isObj(out.message) && out.message.role === "hookMessage") {
      // As OpenClaw's session codec: `customType ||= "hook"` (an existing non-empty customType is kept, in place).
      const message = out.message;
      out = { ...out, message: { ...message, role: "custom", ...(message.customType ? {} : { customType: "hook" }) } };
      changed = true;
    }
    const message = isObj(out.message) ? out.message : null;
    const key = out.type === "message" ? (strOrNull(message?.idempotencyKey) ?? strOrNull(out.idempotencyKey)) : null;
    return {
      json: changed ? JSON.stringify(out) : line,
      id: strOrNull(out.id),
      parentId: strOrNull(out.parentId),
      type: typeof out.type === "string" ? out.type : null,
      idempotencyKey: key,
      timestamp: parseTimestamp(out.timestamp),
    };
  }
}

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function strOrNull(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
