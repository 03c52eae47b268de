// Importer for `agents/<id>/agent/auth.json` (the pi agent's provider-keyed credentials) → auth_profile_stores.
//
// Shape (OpenClaw docs/concepts/oauth.md and src/agents/auth-profiles/legacy-flat-credential.ts):
// {"<provider>":{"type":"api_key","key"} | {"type":"oauth","access","refresh","expires",…}}; each becomes
// the profile "<provider>:default" unless the agent's store already has that id (import-only, as in the runtime).
import type { GlobalDatabase } from "../../state/state-databases.js";
import { assertUnchanged, inspectJsonSource, readSecretJson, scrubbed } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource } from "../types.js";
import { agentDirOf, detectAgentFile, mergeLegacyProfiles, mtimeMs, providerProfiles, storedProfileIds } from "./auth-store.js";

function detect(ctx: DetectContext): DetectedSource[] {
  return detectAgentFile(ctx, "auth-json", "auth.json");
}

function inspect(source: DetectedSource) {
  return inspectJsonSource(source, (value) => {
    const { profiles, skipped } = providerProfiles(source.path, value, null);
    return { records: Object.keys(profiles).length + skipped.length, notes: ["merged into the agent's auth profile store as <provider>:default (profiles already there are kept)"] };
  });
}

function importAuthJson(db: GlobalDatabase, source: PlannedSource): ImportCounts {
  const { value, sha256, scrubber } = readSecretJson(source.path);
  assertUnchanged(source, sha256);
  const { profiles, skipped } = providerProfiles(source.path, value, null);
  const storeKey = agentDirOf(source.path);
  const { added, kept } = mergeLegacyProfiles(db, storeKey, profiles, "auth-json", mtimeMs(source.path));
  const notes = [`${added.length} profile(s) added${added.length > 0 ? `: ${added.join(", ")}` : ""}`];
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

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const stored = storedProfileIds(db, String(expected.expect.storeKey ?? ""));
  const missing = (JSON.parse(String(expected.expect.ids ?? "[]")) as string[]).filter((id) => !stored.has(id));
  return missing.length === 0 ? null : `${missing.length} auth profile(s) missing after commit: ${missing.slice(0, 5).join(", ")}`;
}

export const authJsonImporter: GlobalSourceImporter = {
  kind: "auth-json",
  target: "global",
  label: { one: "legacy auth.json", many: "legacy auth.json files", records: "credentials" },
  targetTable: "auth_profile_stores",
  targetTables: ["auth_profile_stores"],
  detect,
  inspect,
  import: importAuthJson,
  verify,
};
