// First pass over a legacy session index: every key canonicalized and resolved from a few facts per entry, in
// bounded memory (no entry is kept; the writing pass streams the file again and builds only the winners).
import { OperationError } from "../../core/errors.js";
import { detachString, streamObjectMembers, type ObjectMember } from "../json-object-stream.js";
import { canonicalizeSessionKey, mainSessionKey, StoreCanonicalizer, type WinnerTable } from "./session-keys.js";

/** Entries an index may hold: each costs ~150 bytes of bookkeeping in the passes (the entries themselves are never held). */
export const MAX_INDEX_ENTRIES = 1_000_000;
/** Fields read from every entry without building it. */
const PICKED = ["sessionId", "updatedAt", "chatType"] as const;

export interface IndexScan {
  sha256: string;
  sizeBytes: number;
  /** Members of the file's object, valid or not. */
  rawCount: number;
  /** Canonical key → the member that holds it. */
  winners: WinnerTable;
  /** sessionId → its canonical key, or its keys in file order when several keys share the session. */
  keysBySession: Map<string, string | string[]>;
  /** Informational: distinct raw keys with the same canonical key. */
  duplicates: string[];
  /** Attention: entries skipped, a repeated raw key, missing updatedAt. */
  warnings: string[];
  skipped: number;
  seededMainFrom: string | null;
  syntax: "jsonc" | "json5";
}

export interface ScanOptions {
  agentId: string;
  mainKey: string;
  /** updatedAt for entries without a numeric one: the file's mtime. */
  fallbackUpdatedAt: number;
  /** Another store (or the database) already holds agent:<id>:main: it is not seeded from this one. */
  mainKeyExists: boolean;
  /** The old root store (`sessions/sessions.json`): the only kind that seeds agent:<id>:main (session-keys.ts). */
  seedMainKey: boolean;
}

export function entryUpdatedAt(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : fallback;
}

/** Streams the index once: keys canonicalized, duplicates resolved, the main key seeded, keys grouped by session. */
export function scanIndex(file: string, options: ScanOptions): IndexScan {
  let canon = new StoreCanonicalizer({ agentId: options.agentId, mainKey: options.mainKey, mainKeyExists: options.mainKeyExists, seedMainKey: options.seedMainKey });
  let warnings: string[] = [];
  let skipped = 0;
  let missingUpdatedAt = 0;
  const onMember = (m: ObjectMember): void => {
    if (m.index >= MAX_INDEX_ENTRIES) {
      throw new OperationError("index_too_large", `${file}:${m.lineNo}: more than ${MAX_INDEX_ENTRIES.toLocaleString("en-US")} entries, more than one session index may hold; the file was left in place.`, { path: file });
    }
    const sessionId = m.fields.sessionId;
    if (m.kind !== "object" || typeof sessionId !== "string" || sessionId.trim() === "") {
      skipped += 1;
      warnings.push(`entry ${JSON.stringify(m.key)} has no string sessionId; skipped`);
      return;
    }
    if (m.key.trim() === "") {
      skipped += 1;
      warnings.push("entry with an empty key; skipped");
      return;
    }
    if (typeof m.fields.updatedAt !== "number" || !Number.isFinite(m.fields.updatedAt)) missingUpdatedAt += 1;
    canon.add(m.index, detachString(m.key), entryUpdatedAt(m.fields.updatedAt, options.fallbackUpdatedAt), detachString(sessionId.trim()), m.fields.chatType);
  };
  // A second reading (the JSON5 retry) starts from scratch.
  const reset = (): void => {
    canon = new StoreCanonicalizer({ agentId: options.agentId, mainKey: options.mainKey, mainKeyExists: options.mainKeyExists, seedMainKey: options.seedMainKey });
    warnings = [];
    skipped = 0;
    missingUpdatedAt = 0;
  };
  const read = streamObjectMembers(file, onMember, { expected: "an object mapping session keys to entries", pick: PICKED }, reset);
  canon.finish();
  if (missingUpdatedAt > 0) warnings.push(`${missingUpdatedAt} entr${missingUpdatedAt === 1 ? "y has" : "ies have"} no numeric updatedAt; the file's mtime was used`);
  const keysBySession = new Map<string, string | string[]>();
  for (const [key, w] of canon.winners) {
    const had = keysBySession.get(w.sessionId);
    if (had === undefined) keysBySession.set(w.sessionId, key);
    else if (typeof had === "string") keysBySession.set(w.sessionId, [had, key]);
    else had.push(key);
  }
  return {
    sha256: read.sha256,
    sizeBytes: read.sizeBytes,
    rawCount: read.members,
    winners: canon.winners,
    keysBySession,
    duplicates: canon.duplicates,
    warnings: [...canon.repeatedKeys, ...warnings],
    skipped,
    seededMainFrom: canon.seededMainFrom,
    syntax: read.syntax,
  };
}

/** The keys of a session as a list. */
export function sessionKeys(scan: IndexScan, sessionId: string): string[] {
  const keys = scan.keysBySession.get(sessionId);
  return keys === undefined ? [] : typeof keys === "string" ? [keys] : keys;
}

/** The canonical keys member `index` (raw key `rawKey`) holds in the scanned index: its own, and main when it seeded it. */
export function keysOfMember(scan: IndexScan, index: number, rawKey: string, options: Pick<ScanOptions, "agentId" | "mainKey">): string[] {
  const keys: string[] = [];
  const own = canonicalizeSessionKey(rawKey, options.agentId, options.mainKey);
  if (scan.winners.get(own)?.index === index) keys.push(own);
  const main = mainSessionKey(options.agentId);
  if (own !== main && scan.winners.get(main)?.seededFrom !== undefined && scan.winners.get(main)!.index === index) keys.push(main);
  return keys;
}
