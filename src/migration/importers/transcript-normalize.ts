// Transcript v1→v2→v3 normalization, one line at a time, with v1 ids as OpenClaw's codec derives them (SPEC §4.2).
import { V1IdCodec, type V1IdScope } from "./transcript-v1-ids.js";

export const CURRENT_TRANSCRIPT_VERSION = 3;

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

/**
 * Stateful per file: feed the header, then every entry in order. v1 entries get the ids and parentIds OpenClaw
 * 2026.9.6's codec gives them, and firstKeptEntryIndex → firstKeptEntryId (transcript-v1-ids.ts); v1/v2 `hookMessage`
 * roles become `custom` with `customType: "hook"`.
 */
export class TranscriptNormalizer {
  readonly version: number;
  /** The next record's position in the file (non-blank lines, the header included), as 9.6 counts it. */
  private originalIndex: number;
  private readonly v1: V1IdCodec | null;
  readonly warnings: string[] = [];

  /**
   * `ids`: the source path and session id v1 ids derive from (required below version 2). `headerless`: the file has
   * no header line, so its first entry is record 0 (else the header is 0 and the first entry 1).
   */
  constructor(version: number, options: { headerless?: boolean; ids?: V1IdScope } = {}) {
    this.version = version;
    this.originalIndex = options.headerless ? 0 : 1;
    if (version < 2 && !options.ids) throw new Error("a version 1 transcript needs the source path and session id its ids derive from");
    this.v1 = version < 2 ? new V1IdCodec(options.ids!, options.headerless ? null : 0) : null;
  }

  /** `lineNo` only labels warnings. */
  entry(entry: Obj, line: string, lineNo: number): NormalizedEvent {
    const index = this.originalIndex;
    this.originalIndex += 1;
    let out = loadedContentShape(entry);
    let changed = out !== entry;
    let recognized = true;
    if (this.v1 !== null) {
      const assigned = this.v1.assign(out, index);
      if (assigned.warning !== null) this.warnings.push(`line ${lineNo}: ${assigned.warning}`);
      if (!assigned.recognized) this.warnings.push(`line ${lineNo}: not an entry OpenClaw's session codec reads; stored as written, without an id or parent (as OpenClaw 2026.9.6 stores it)`);
      recognized = assigned.recognized;
      changed ||= assigned.entry !== out;
      out = assigned.entry;
    }
    // 9.6 migrates hook messages only in entries it recognizes; a v1 record it does not is stored untouched.
    const migrates = recognized;
    if (migrates && this.version < 3 && out.type === "message" && isObj(out.message) && out.message.role === "hookMessage") {
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

const COMPACTION_REPLAY_TYPES = new Set(["anthropic-compaction", "openai-responses-compaction", "openai-responses-retained-compaction"]);

/**
 * The content shape OpenClaw 2026.9.6's codec gives every message line as it reads it, whatever the file's version
 * (and its doctor stores the line so): an assistant or toolResult `content` string becomes one text part (a compaction
 * replay checkpoint in `providerReplay` no longer matches it, so it goes), a toolResult's lone object a one-part
 * array. Returns the entry itself when nothing changes.
 */
export function loadedContentShape(entry: Obj): Obj {
  if (entry.type !== "message" || !isObj(entry.message)) return entry;
  const message = entry.message;
  if ((message.role === "assistant" || message.role === "toolResult") && typeof message.content === "string") {
    // Key order kept, as 9.6 rewrites the message in place.
    const next: Obj = {};
    for (const [key, value] of Object.entries(message)) {
      if (key === "content") next.content = [{ type: "text", text: value }];
      else if (key !== "providerReplay" || !(isObj(value) && COMPACTION_REPLAY_TYPES.has(value.type as string))) next[key] = value;
    }
    return { ...entry, message: next };
  }
  if (message.role === "toolResult" && isObj(message.content)) return { ...entry, message: { ...message, content: [message.content] } };
  return entry;
}

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function strOrNull(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
