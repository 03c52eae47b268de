// Shared by the auth importers: the per-agent-dir rows of auth_profile_stores / auth_profile_state, merged by profile id.
//
// Keys: store_key = agent_dir = the agent dir's absolute path (`<stateDir>/agents/<id>/agent`), as the
// runtime keys persisted auth stores. Credentials are stored as read; nothing here ever puts a value
// into a note, warning or error (only profile ids, provider names and counts).
import fs from "node:fs";
import path from "node:path";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { assertUnchanged, objectOf, readSecretJson, scrubbed, verifyKeys } from "../json-source.js";
import type { DetectContext, DetectedSource, ImportCounts, PlannedSource, SourceKind } from "../types.js";
import { obj } from "./coerce.js";

type Obj = Record<string, unknown>;

/** The auth state fields that live in auth-state.json (older auth-profiles.json files carry them inline). */
export const STATE_FIELDS = ["order", "lastGood", "usageStats"] as const;

export interface StoreRow {
  profiles: Obj;
  version: unknown;
  sourceKind: string | null;
}

/** The files of one kind in every agent dir (`agents/<id>/agent/<name>`). */
export function detectAgentFile(ctx: DetectContext, kind: SourceKind, name: string): DetectedSource[] {
  return ctx.agentDirs
    .map((a) => ({ agentId: a.agentId, file: path.join(a.agentDir, name) }))
    .filter((a) => isRegularFile(a.file))
    .map((a) => ({ kind, agentId: a.agentId, path: a.file, relativePath: sourceRelativePath(ctx.root, a.file), legacyRoot: false }));
}

export function readStore(db: GlobalDatabase, storeKey: string): StoreRow | null {
  const row = db.prepare("SELECT profiles_json, source_kind FROM auth_profile_stores WHERE store_key = ?").get(storeKey) as { profiles_json: string | null; source_kind: string | null } | undefined;
  if (!row) return null;
  const parsed = obj(row.profiles_json ? (JSON.parse(row.profiles_json) as unknown) : null) ?? {};
  return { profiles: obj(parsed.profiles) ?? {}, version: parsed.version, sourceKind: row.source_kind };
}

/** Upserts the store row of an agent dir with the given profiles (the caller merged them). */
export function writeStore(db: GlobalDatabase, storeKey: string, profiles: Obj, version: unknown, sourceKind: string, updatedAt: number): void {
  const json = JSON.stringify({ version: typeof version === "number" ? version : 1, profiles });
  db.prepare(
    "INSERT INTO auth_profile_stores (store_key, agent_dir, source_kind, profiles_json, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (store_key) DO UPDATE SET agent_dir = excluded.agent_dir, source_kind = excluded.source_kind, profiles_json = excluded.profiles_json, updated_at = max(updated_at, excluded.updated_at)",
  ).run(storeKey, storeKey, sourceKind, json, updatedAt);
}

/**
 * Merges legacy credentials (auth.json, credentials/oauth.json) into an agent's store: a profile id the
 * store already has wins (those files are import-only in the runtime too); new ids are added.
 */
export function mergeLegacyProfiles(db: GlobalDatabase, storeKey: string, incoming: Obj, sourceKind: string, updatedAt: number): { added: string[]; kept: string[] } {
  const existing = readStore(db, storeKey);
  const profiles: Obj = { ...(existing?.profiles ?? {}) };
  const added: string[] = [];
  const kept: string[] = [];
  for (const [id, profile] of Object.entries(incoming)) {
    if (id in profiles) kept.push(id);
    else {
      profiles[id] = profile;
      added.push(id);
    }
  }
  if (added.length > 0 || !existing) writeStore(db, storeKey, profiles, existing?.version, existing?.sourceKind ?? sourceKind, updatedAt);
  return { added, kept };
}

/** Merges state fields (order, lastGood, usageStats, …) over the agent dir's auth_profile_state row. */
export function mergeState(db: GlobalDatabase, storeKey: string, fields: Obj, updatedAt: number): void {
  const row = db.prepare("SELECT state_json FROM auth_profile_state WHERE store_key = ?").pluck().get(storeKey) as string | null | undefined;
  const current = obj(row ? (JSON.parse(row) as unknown) : null) ?? {};
  const merged = { ...current, ...fields };
  db.prepare(
    "INSERT INTO auth_profile_state (store_key, agent_dir, state_json, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (store_key) DO UPDATE SET agent_dir = excluded.agent_dir, state_json = excluded.state_json, updated_at = max(updated_at, excluded.updated_at)",
  ).run(storeKey, storeKey, JSON.stringify(merged), updatedAt);
}

/** The profile ids of an agent dir's committed store. */
export function storedProfileIds(db: GlobalDatabase, storeKey: string): Set<string> {
  return new Set(Object.keys(readStore(db, storeKey)?.profiles ?? {}));
}

export function mtimeMs(file: string): number {
  return Math.trunc(fs.statSync(file).mtimeMs);
}

/** The store key of a file in an agent dir: that dir, absolute. */
export function agentDirOf(file: string): string {
  return path.resolve(path.dirname(file));
}

/**
 * One credential in the current shape (OpenClaw src/agents/auth-profiles/legacy-flat-credential.ts):
 * `mode` → `type`, `apiKey` type → `api_key`, an `apiKey`/`api_key` field → `key`; a missing type is
 * inferred from the fields present. Values are moved, never inspected beyond presence.
 */
export function normalizeCredential(raw: Obj, provider: string | null): Obj {
  const entry: Obj = { ...raw };
  if (!("type" in entry) && typeof entry.mode === "string" && ["apiKey", "api_key", "token", "oauth"].includes(entry.mode)) {
    entry.type = entry.mode;
    delete entry.mode;
  }
  if (entry.type === "apiKey") entry.type = "api_key";
  if (typeof entry.type !== "string") {
    const type = entry.key !== undefined || entry.apiKey !== undefined || entry.api_key !== undefined ? "api_key" : entry.token !== undefined ? "token" : entry.access !== undefined || entry.refresh !== undefined ? "oauth" : null;
    if (type) entry.type = type;
  }
  if (entry.type === "api_key" && entry.key === undefined) {
    for (const field of ["apiKey", "api_key"]) {
      if (entry[field] !== undefined) {
        entry.key = entry[field];
        delete entry[field];
        break;
      }
    }
  }
  if (provider && typeof entry.provider !== "string") entry.provider = provider;
  return entry;
}

/** Legacy provider-keyed credentials (`{provider: credential}`) → `provider:default` profiles. */
export function providerProfiles(file: string, value: unknown, defaultType: string | null): { profiles: Obj; skipped: string[] } {
  const o = objectOf(file, value, "an object of credentials keyed by provider");
  const profiles: Obj = {};
  const skipped: string[] = [];
  for (const [key, raw] of Object.entries(o)) {
    const cred = obj(raw);
    const provider = key.trim();
    if (!cred || provider === "") {
      skipped.push(key);
      continue;
    }
    profiles[`${provider}:default`] = normalizeCredential(defaultType && cred.type === undefined ? { ...cred, type: defaultType } : cred, provider);
  }
  return { profiles, skipped };
}

/** After commit: every profile id the import listed is in the agent dir's store. */
export function verifyProfiles(db: GlobalDatabase, expected: ImportCounts): string | null {
  const stored = storedProfileIds(db, String(expected.expect.storeKey ?? ""));
  return verifyKeys(expected, "ids", (id) => stored.has(id), "auth profile(s)");
}

/**
 * auth.json and credentials/oauth.json: provider-keyed credentials merged into `storeKey`'s store as
 * `<provider>:default`, existing ids kept. `whose` names the store in the notes ("" or " to agent main").
 */
export function importLegacyCredentials(db: GlobalDatabase, source: PlannedSource, storeKey: string, defaultType: string | null, sourceKind: string, whose: string): ImportCounts {
  const { value, sha256, scrubber } = readSecretJson(source.path);
  assertUnchanged(source, sha256);
  const { profiles, skipped } = providerProfiles(source.path, value, defaultType);
  const { added, kept } = mergeLegacyProfiles(db, storeKey, profiles, sourceKind, mtimeMs(source.path));
  const notes = [`${added.length} profile(s) added${whose}${added.length > 0 ? `: ${added.join(", ")}` : ""}`];
  if (kept.length > 0) notes.push(`${kept.length} already in the store (kept as they are): ${kept.join(", ")}`);
  return scrubbed(
    {
      records: Object.keys(profiles).length + skipped.length,
      rows: { auth_profile_stores: added.length > 0 ? 1 : 0 },
      skipped: skipped.length,
      warnings: skipped.map((p) => `provider ${JSON.stringify(p)} has no credential object; skipped (it stays in the retired file)`),
      notes,
      expect: { storeKey, ids: JSON.stringify(Object.keys(profiles)) },
    },
    scrubber,
  );
}
