// Importer for `agents/<id>/agent/auth-state.json` (profile order, last good, usage stats) → auth_profile_state.
//
// Shape (OpenClaw src/agents/auth-profiles/paths.ts: "the auth state sidecar for mutable usage/order
// state"): {"version":1,"order":{"<provider>":["<profile id>",…]},"lastGood":{"<provider>":"<id>"},
// "usageStats":{"<id>":{"lastUsed","errorCount","cooldownUntil",…}}}. No credentials, but read with the
// same care as the other auth files.
import type { GlobalDatabase } from "../../state/state-databases.js";
import { assertUnchanged, inspectJsonSource, objectOf, readSecretJson, scrubbed } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource } from "../types.js";
import { obj } from "./coerce.js";
import { agentDirOf, detectAgentFile, mergeState, mtimeMs } from "./auth-store.js";

function fieldCount(file: string, value: unknown): number {
  const o = objectOf(file, value, 'an auth state object ({"version":1,"order":{…},"usageStats":{…}})');
  return Object.keys(o).filter((k) => k !== "version").length;
}

function detect(ctx: DetectContext): DetectedSource[] {
  return detectAgentFile(ctx, "auth-state", "auth-state.json");
}

function inspect(source: DetectedSource) {
  return inspectJsonSource(source, (value) => ({ records: fieldCount(source.path, value) }));
}

function importState(db: GlobalDatabase, source: PlannedSource): ImportCounts {
  const { value, sha256, scrubber } = readSecretJson(source.path);
  assertUnchanged(source, sha256);
  const fields = fieldCount(source.path, value);
  const storeKey = agentDirOf(source.path);
  // Newer than any inline state of auth-profiles.json (imported first): its fields win.
  mergeState(db, storeKey, obj(value)!, mtimeMs(source.path));
  return scrubbed({ records: fields, rows: { auth_profile_state: 1 }, skipped: 0, warnings: [], notes: [], expect: { storeKey, fields: JSON.stringify(Object.keys(obj(value)!)) } }, scrubber);
}

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const row = db.prepare("SELECT state_json FROM auth_profile_state WHERE store_key = ?").pluck().get(String(expected.expect.storeKey ?? "")) as string | undefined;
  if (row === undefined) return "the auth_profile_state row is missing after commit";
  const state = obj(JSON.parse(row) as unknown) ?? {};
  const missing = (JSON.parse(String(expected.expect.fields ?? "[]")) as string[]).filter((f) => !(f in state));
  return missing.length === 0 ? null : `auth state field(s) missing after commit: ${missing.join(", ")}`;
}

export const authStateImporter: GlobalSourceImporter = {
  kind: "auth-state",
  target: "global",
  label: { one: "legacy auth state file", many: "legacy auth state files", records: "fields" },
  targetTable: "auth_profile_state",
  targetTables: ["auth_profile_state"],
  detect,
  inspect,
  import: importState,
  verify,
};
