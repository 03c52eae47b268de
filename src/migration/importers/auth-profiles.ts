// Importer for `agents/<id>/agent/auth-profiles.json` → auth_profile_stores (and inline state → auth_profile_state).
//
// Shape (OpenClaw src/agents/auth-profiles/): {"version":1,"profiles":{"<provider>:<name>":{"type":"api_key",
// "provider","key"} | {"type":"oauth","provider","access","refresh","expires",…} | {"type":"token",…}}};
// older files also hold "order", "lastGood", "usageStats" inline (now auth-state.json), and the oldest are
// flat (`{"<provider>": credential}`, no "profiles").
import type { GlobalDatabase } from "../../state/state-databases.js";
import { assertUnchanged, inspectJsonSource, objectOf, readSecretJson, scrubbed, shapeError } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource } from "../types.js";
import { obj } from "./coerce.js";
import { agentDirOf, detectAgentFile, mergeState, mtimeMs, normalizeCredential, providerProfiles, readStore, STATE_FIELDS, verifyProfiles, writeStore } from "./auth-store.js";

type Obj = Record<string, unknown>;

interface ParsedStore {
  profiles: Obj;
  version: unknown;
  inlineState: Obj;
  skipped: string[];
  flat: boolean;
}

function parseStore(file: string, value: unknown): ParsedStore {
  const o = objectOf(file, value, 'an auth profile store ({"version":1,"profiles":{…}})');
  if (!("profiles" in o)) {
    // Flat legacy layout: credentials keyed by provider.
    const { profiles, skipped } = providerProfiles(file, o, null);
    return { profiles, version: 1, inlineState: {}, skipped, flat: true };
  }
  const raw = obj(o.profiles);
  if (!raw) throw shapeError(file, 'a "profiles" object', o.profiles);
  const profiles: Obj = {};
  const skipped: string[] = [];
  for (const [id, profile] of Object.entries(raw)) {
    const p = obj(profile);
    if (!p || id.trim() === "") skipped.push(id);
    else profiles[id] = normalizeCredential(p, id.includes(":") ? id.slice(0, id.indexOf(":")) : null);
  }
  const inlineState: Obj = {};
  for (const field of STATE_FIELDS) if (o[field] !== undefined) inlineState[field] = o[field];
  return { profiles, version: o.version, inlineState, skipped, flat: false };
}

function notesOf(parsed: ParsedStore): string[] {
  const notes: string[] = [];
  if (parsed.flat) notes.push("flat legacy layout (credentials keyed by provider): read as <provider>:default profiles");
  const inline = Object.keys(parsed.inlineState);
  if (inline.length > 0) notes.push(`inline ${inline.join(", ")} moved to auth_profile_state`);
  return notes;
}

function detect(ctx: DetectContext): DetectedSource[] {
  return detectAgentFile(ctx, "auth-profiles", "auth-profiles.json");
}

function inspect(source: DetectedSource) {
  return inspectJsonSource(source, (value) => {
    const parsed = parseStore(source.path, value);
    const reach = { tables: { auth_profile_state: Object.keys(parsed.inlineState).length > 0 } };
    return { records: Object.keys(parsed.profiles).length + parsed.skipped.length, notes: notesOf(parsed), reach };
  });
}

function importProfiles(db: GlobalDatabase, source: PlannedSource): ImportCounts {
  const { value, sha256, scrubber } = readSecretJson(source.path);
  assertUnchanged(source, sha256);
  const parsed = parseStore(source.path, value);
  const storeKey = agentDirOf(source.path);
  const updatedAt = mtimeMs(source.path);
  // The file wins for its own profile ids; ids only an earlier legacy import added are kept.
  const existing = readStore(db, storeKey);
  const kept = Object.keys(existing?.profiles ?? {}).filter((id) => !(id in parsed.profiles));
  writeStore(db, storeKey, { ...(existing?.profiles ?? {}), ...parsed.profiles }, parsed.version, "auth-profiles", updatedAt);
  const rows: Record<string, number> = { auth_profile_stores: 1, auth_profile_state: 0 };
  if (Object.keys(parsed.inlineState).length > 0) {
    mergeState(db, storeKey, { version: 1, ...parsed.inlineState }, updatedAt);
    rows.auth_profile_state = 1;
  }
  const notes = notesOf(parsed);
  if (kept.length > 0) notes.push(`${kept.length} profile(s) already in the store from legacy files kept: ${kept.join(", ")}`);
  return scrubbed(
    {
      records: Object.keys(parsed.profiles).length + parsed.skipped.length,
      rows,
      skipped: parsed.skipped.length,
      warnings: parsed.skipped.map((id) => `profile ${JSON.stringify(id)} is not an object; skipped (it stays in the retired file)`),
      notes,
      expect: { storeKey, ids: JSON.stringify(Object.keys(parsed.profiles)) },
    },
    scrubber,
  );
}

export const authProfilesImporter: GlobalSourceImporter = {
  kind: "auth-profiles",
  target: "global",
  label: { one: "legacy auth profile store", many: "legacy auth profile stores", records: "profiles" },
  targetTable: "auth_profile_stores",
  targetTables: ["auth_profile_stores", "auth_profile_state"],
  // Usage state (lastGood, usageStats) only where the file carries it.
  optionalTables: ["auth_profile_state"],
  detect,
  inspect,
  import: importProfiles,
  verify: (db, _source, expected) => verifyProfiles(db, expected),
};
