// Session-key canonicalization for legacy sessions.json stores (SPEC §4.1): the key table, duplicates, main seeding.

export const ORPHAN_KEY_SEGMENT = "orphan";

export function mainSessionKey(agentId: string): string {
  return `agent:${agentId}:main`;
}

/** Key given to a transcript no session index references: `agent:<id>:orphan:<sessionId>`. */
export function orphanSessionKey(agentId: string, sessionId: string): string {
  return `agent:${agentId}:${ORPHAN_KEY_SEGMENT}:${sessionId.trim().toLowerCase()}`;
}

export function isOrphanSessionKey(key: string): boolean {
  return /^agent:[^:]+:orphan:/.test(key);
}

/**
 * The canonical key for a raw legacy key of agent `agentId` (trimmed, lower-cased):
 * global/unknown kept; main (and the configured main key) → agent:<id>:main; agent:… kept;
 * subagent:x → agent:<id>:subagent:x; group:…/channel:… → agent:<id>:unknown:<raw>; else agent:<id>:<raw>.
 */
export function canonicalizeSessionKey(rawKey: string, agentId: string, mainKey = "main"): string {
  const key = rawKey.trim().toLowerCase();
  if (key === "") return key;
  if (key === "global" || key === "unknown") return key;
  if (key === "main" || key === mainKey.trim().toLowerCase()) return mainSessionKey(agentId);
  if (key.startsWith("agent:")) return key;
  if (key.startsWith("subagent:")) return `agent:${agentId}:${key}`;
  if (key.startsWith("group:") || key.startsWith("channel:")) return `agent:${agentId}:unknown:${key}`;
  return `agent:${agentId}:${key}`;
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
  /** Reads an entry's chatType (group/channel entries never seed main); default: `entry.chatType`. */
  chatTypeOf?: (entry: unknown) => unknown;
}

function defaultChatTypeOf(entry: unknown): unknown {
  return typeof entry === "object" && entry !== null ? (entry as { chatType?: unknown }).chatType : undefined;
}

/**
 * Canonicalizes every key. Duplicates: newest updatedAt wins, a tie goes to the already-canonical raw key
 * (then to the first seen). If agent:<id>:main is absent, the newest direct legacy root entry seeds it.
 */
export function canonicalizeStore<E>(items: readonly KeyedEntry<E>[], options: CanonicalizeOptions): CanonicalStore<E> {
  const { agentId } = options;
  const mainKey = options.mainKey ?? "main";
  const entries = new Map<string, CanonicalEntry<E>>();
  const duplicates: string[] = [];
  for (const item of items) {
    const key = canonicalizeSessionKey(item.rawKey, agentId, mainKey);
    if (key === "") continue;
    const candidate: CanonicalEntry<E> = { ...item, key, canonical: item.rawKey === key };
    const existing = entries.get(key);
    if (!existing) {
      entries.set(key, candidate);
      continue;
    }
    const wins =
      candidate.updatedAt > existing.updatedAt || (candidate.updatedAt === existing.updatedAt && candidate.canonical && !existing.canonical);
    const [winner, loser] = wins ? [candidate, existing] : [existing, candidate];
    const why = winner.updatedAt !== loser.updatedAt ? "newer updatedAt" : winner.canonical && !loser.canonical ? "already canonical" : "first in file";
    duplicates.push(`keys ${JSON.stringify(winner.rawKey)} and ${JSON.stringify(loser.rawKey)} both canonicalize to ${key}; kept ${JSON.stringify(winner.rawKey)} (${why})`);
    if (wins) entries.set(key, candidate);
  }

  let seededMainFrom: string | null = null;
  const main = mainSessionKey(agentId);
  if (!entries.has(main) && !options.mainKeyExists) {
    let best: KeyedEntry<E> | null = null;
    for (const item of items) {
      if (!isDirectLegacyRootKey(item.rawKey, (options.chatTypeOf ?? defaultChatTypeOf)(item.entry))) continue;
      if (best === null || item.updatedAt > best.updatedAt) best = item;
    }
    if (best) {
      seededMainFrom = best.rawKey;
      entries.set(main, { ...best, key: main, canonical: false, seededFrom: best.rawKey });
    }
  }
  return { entries, duplicates, seededMainFrom };
}
