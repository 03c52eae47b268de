// Session-key canonicalization for legacy sessions.json stores (SPEC §4.1): the key table, duplicates, main seeding.

import { tryNormalizeAgentId } from "../../state/agent-id.js";

export const ORPHAN_KEY_SEGMENT = "orphan";
export const RECOVERED_KEY_SEGMENT = "recovered";

export function mainSessionKey(agentId: string): string {
  return `agent:${agentId}:main`;
}

/**
 * Key given to a transcript no session index references, as OpenClaw 2026.9.6's doctor names the unregistered
 * history it recovers: `agent:<id>:recovered:<sessionid>`. It builds the key from the session id as written, and its
 * session store lower-cases it on write (seen in the doctor differential: `S-Lost` → `recovered:s-lost`).
 */
export function recoveredSessionKey(agentId: string, sessionId: string): string {
  return `agent:${agentId}:${RECOVERED_KEY_SEGMENT}:${sessionId.trim().toLowerCase()}`;
}

/** The key our releases before issue 24 gave such a transcript: `agent:<id>:orphan:<sessionid>` (still read, never written). */
export function orphanSessionKey(agentId: string, sessionId: string): string {
  return `agent:${agentId}:${ORPHAN_KEY_SEGMENT}:${sessionId.trim().toLowerCase()}`;
}

/** A placeholder key for a transcript no index named (`recovered:`, or the older `orphan:`): a real index entry takes it over. */
export function isOrphanSessionKey(key: string): boolean {
  return /^agent:[^:]+:(?:orphan|recovered):/.test(key);
}

/**
 * The canonical key for a raw legacy key of agent `agentId` (trimmed, lower-cased):
 * global/unknown kept; main (and the configured main key) → agent:<id>:main; agent:main:main in another agent's
 * store → agent:<id>:main; other agent:… kept (another agent's key is filed under that agent: keyAgentOf);
 * subagent:x → agent:<id>:subagent:x; group:…/channel:… → agent:<id>:unknown:<raw>; else agent:<id>:<raw>.
 */
export function canonicalizeSessionKey(rawKey: string, agentId: string, mainKey = "main"): string {
  const key = rawKey.trim().toLowerCase();
  if (key === "") return key;
  if (key === "global" || key === "unknown") return key;
  if (key === "main" || key === mainKey.trim().toLowerCase()) return mainSessionKey(agentId);
  // A store's own main session written under the default agent's name, as OpenClaw 2026.9.6's doctor reads it.
  if (key === "agent:main:main") return mainSessionKey(agentId);
  if (key.startsWith("agent:")) return key;
  if (key.startsWith("subagent:")) return `agent:${agentId}:${key}`;
  if (key.startsWith("group:") || key.startsWith("channel:")) return `agent:${agentId}:unknown:${key}`;
  return `agent:${agentId}:${key}`;
}

/**
 * The agent whose database holds a canonical key of agent `storeAgentId`'s store: the agent an `agent:<id>:…` key
 * names (OpenClaw 2026.9.6's doctor files it there, creating that agent's database), when `<id>` is a valid agent
 * id; else the store's own agent (global/unknown, and a key whose agent segment could not be a directory name).
 */
export function keyAgentOf(key: string, storeAgentId: string): string {
  if (!key.startsWith("agent:")) return storeAgentId;
  const end = key.indexOf(":", "agent:".length);
  if (end < 0) return storeAgentId;
  const named = key.slice("agent:".length, end);
  return tryNormalizeAgentId(named) === named ? named : storeAgentId;
}

/** A legacy root key that names a direct chat: not global/unknown, not agent-scoped, not a group/channel/subagent key. */
export function isDirectLegacyRootKey(rawKey: string, chatType: unknown): boolean {
  const key = rawKey.trim().toLowerCase();
  if (key === "" || key === "global" || key === "unknown" || key === "main") return false;
  if (key.startsWith("agent:") || key.startsWith("subagent:")) return false;
  if (key.startsWith("group:") || key.startsWith("channel:")) return false;
  if (key.includes(":group:") || key.includes(":channel:")) return false;
  return chatType !== "group" && chatType !== "channel";
}

export interface KeyedEntry<E> {
  rawKey: string;
  entry: E;
  updatedAt: number;
}

export interface CanonicalEntry<E> extends KeyedEntry<E> {
  key: string;
  /** The raw key was already canonical (exactly). */
  canonical: boolean;
  /** Set when this entry seeds the main key from a legacy direct entry. */
  seededFrom?: string;
}

export interface CanonicalStore<E> {
  /** Canonical key → winning entry, in first-seen order (so imports follow the file's order). */
  entries: Map<string, CanonicalEntry<E>>;
  /** Human notes on duplicate keys: which raw key won and why. */
  duplicates: string[];
  /** The raw key that seeded agent:<id>:main, if any. */
  seededMainFrom: string | null;
}

export interface CanonicalizeOptions {
  agentId: string;
  mainKey?: string;
  /** The main key already exists elsewhere (e.g. in the database): do not seed it. */
  mainKeyExists?: boolean;
  /**
   * The store is the old root `sessions/sessions.json`: only its migration seeds the main key (OpenClaw 2026.9.6's
   * doctor does so when it moves that store under the default agent; an agent's own store never seeds it).
   */
  seedMainKey?: boolean;
  /** Reads an entry's chatType (group/channel entries never seed main); default: `entry.chatType`. */
  chatTypeOf?: (entry: unknown) => unknown;
}

function defaultChatTypeOf(entry: unknown): unknown {
  return typeof entry === "object" && entry !== null ? (entry as { chatType?: unknown }).chatType : undefined;
}

/** The entry (by its position among the store's members) that holds a canonical key. */
export interface KeyWinner {
  /** Position of the winning member in the file (0-based, every member counted). */
  index: number;
  rawKey: string;
  updatedAt: number;
  /** The raw key was already canonical (exactly). */
  canonical: boolean;
  sessionId: string;
  /** Set on agent:<id>:main when a legacy direct entry seeds it. */
  seededFrom?: string;
}

/**
 * Canonical key → winning member, stored column-wise (typed arrays and one Map of small integers): ~180 bytes per
 * key instead of ~400 for a Map of objects, which is what keeps a 150k-session index well inside the memory budget.
 */
export class WinnerTable {
  private readonly slots = new Map<string, number>();
  private index = new Int32Array(1024);
  private updatedAt = new Float64Array(1024);
  private flags = new Uint8Array(1024);
  private sessionIds: string[] = [];
  /** Only when the raw key differs from the canonical one (kept null otherwise). */
  private rawKeys: Array<string | null> = [];
  private seeded = new Map<number, string>();

  get size(): number {
    return this.slots.size;
  }

  has(key: string): boolean {
    return this.slots.has(key);
  }

  get(key: string): KeyWinner | undefined {
    const slot = this.slots.get(key);
    return slot === undefined ? undefined : this.at(key, slot);
  }

  keys(): IterableIterator<string> {
    return this.slots.keys();
  }

  *entries(): IterableIterator<[string, KeyWinner]> {
    for (const [key, slot] of this.slots) yield [key, this.at(key, slot)];
  }

  [Symbol.iterator](): IterableIterator<[string, KeyWinner]> {
    return this.entries();
  }

  set(key: string, w: KeyWinner): void {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.sessionIds.length;
      this.grow(slot + 1);
      this.slots.set(key, slot);
    }
    this.index[slot] = w.index;
    this.updatedAt[slot] = w.updatedAt;
    this.flags[slot] = w.canonical ? 1 : 0;
    this.sessionIds[slot] = w.sessionId;
    this.rawKeys[slot] = w.rawKey === key ? null : w.rawKey;
    if (w.seededFrom !== undefined) this.seeded.set(slot, w.seededFrom);
    else this.seeded.delete(slot);
  }

  private at(key: string, slot: number): KeyWinner {
    const seededFrom = this.seeded.get(slot);
    return {
      index: this.index[slot]!,
      rawKey: this.rawKeys[slot] ?? key,
      updatedAt: this.updatedAt[slot]!,
      canonical: this.flags[slot] === 1,
      sessionId: this.sessionIds[slot]!,
      ...(seededFrom !== undefined ? { seededFrom } : {}),
    };
  }

  private grow(needed: number): void {
    if (needed <= this.index.length) return;
    const size = Math.max(needed, this.index.length * 2);
    const index = new Int32Array(size);
    index.set(this.index);
    this.index = index;
    const updatedAt = new Float64Array(size);
    updatedAt.set(this.updatedAt);
    this.updatedAt = updatedAt;
    const flags = new Uint8Array(size);
    flags.set(this.flags);
    this.flags = flags;
  }
}

/**
 * Canonicalizes a store's keys one entry at a time, keeping only small facts per key (never the entries), so
 * an index of any size is resolved in bounded memory. Duplicates: newest updatedAt wins; a tie goes to the
 * already-canonical raw key, then to the first seen, except an exact repeat of the same raw key, where the
 * later one wins as JSON.parse would have kept it (and the repeat is reported as a warning, not silently).
 * If agent:<id>:main is absent from an old root store (`seedMainKey`), its newest direct legacy entry seeds it.
 */
export class StoreCanonicalizer {
  readonly winners = new WinnerTable();
  /** Informational: distinct raw keys that canonicalize to the same key. */
  readonly duplicates: string[] = [];
  /** The same raw key twice in one file: the file was damaged or hand-edited. */
  readonly repeatedKeys: string[] = [];
  seededMainFrom: string | null = null;
  private best: { index: number; rawKey: string; updatedAt: number; sessionId: string } | null = null;
  private readonly mainKey: string;

  constructor(private readonly options: CanonicalizeOptions) {
    this.mainKey = options.mainKey ?? "main";
  }

  add(index: number, rawKey: string, updatedAt: number, sessionId: string, chatType: unknown): void {
    if (isDirectLegacyRootKey(rawKey, chatType) && (this.best === null || updatedAt > this.best.updatedAt)) this.best = { index, rawKey, updatedAt, sessionId };
    const key = canonicalizeSessionKey(rawKey, this.options.agentId, this.mainKey);
    if (key === "") return;
    const candidate: KeyWinner = { index, rawKey, updatedAt, canonical: rawKey === key, sessionId };
    const existing = this.winners.get(key);
    if (!existing) {
      this.winners.set(key, candidate);
      return;
    }
    const repeated = existing.rawKey === rawKey;
    const wins =
      candidate.updatedAt > existing.updatedAt ||
      (candidate.updatedAt === existing.updatedAt && (repeated || (candidate.canonical && !existing.canonical)));
    const [winner, loser] = wins ? [candidate, existing] : [existing, candidate];
    if (repeated) {
      const why = winner.updatedAt !== loser.updatedAt ? "the one with the newer updatedAt" : "the later one (same updatedAt)";
      this.repeatedKeys.push(`key ${JSON.stringify(rawKey)} appears more than once in the file; kept ${why}`);
    } else {
      const why = winner.updatedAt !== loser.updatedAt ? "newer updatedAt" : winner.canonical && !loser.canonical ? "already canonical" : "first in file";
      this.duplicates.push(`keys ${JSON.stringify(winner.rawKey)} and ${JSON.stringify(loser.rawKey)} both canonicalize to ${key}; kept ${JSON.stringify(winner.rawKey)} (${why})`);
    }
    if (wins) this.winners.set(key, candidate);
  }

  /** After the last entry: seeds agent:<id>:main from the newest direct legacy root entry when it is absent. */
  finish(): void {
    const main = mainSessionKey(this.options.agentId);
    if (this.options.seedMainKey !== true || this.winners.has(main) || this.options.mainKeyExists || this.best === null) return;
    this.seededMainFrom = this.best.rawKey;
    this.winners.set(main, { ...this.best, canonical: false, seededFrom: this.best.rawKey });
  }
}

/** The whole-store form of StoreCanonicalizer, for stores already in memory. */
export function canonicalizeStore<E>(items: readonly KeyedEntry<E>[], options: CanonicalizeOptions): CanonicalStore<E> {
  const canon = new StoreCanonicalizer(options);
  const chatTypeOf = options.chatTypeOf ?? defaultChatTypeOf;
  items.forEach((item, index) => canon.add(index, item.rawKey, item.updatedAt, "", chatTypeOf(item.entry)));
  canon.finish();
  const entries = new Map<string, CanonicalEntry<E>>();
  for (const [key, w] of canon.winners) {
    const item = items[w.index]!;
    entries.set(key, { ...item, key, canonical: w.canonical, ...(w.seededFrom ? { seededFrom: w.seededFrom } : {}) });
  }
  return { entries, duplicates: [...canon.duplicates, ...canon.repeatedKeys], seededMainFrom: canon.seededMainFrom };
}
