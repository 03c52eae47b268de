// Importer for `agents/<id>/agent/auth.json` (the pi agent's provider-keyed credentials) → auth_profile_stores.
//
// Shape (OpenClaw docs/concepts/oauth.md and src/agents/auth-profiles/legacy-flat-credential.ts):
// {"<provider>":{"type":"api_key","key"} | {"type":"oauth","access","refresh","expires",…}}; each becomes
// the profile "<provider>:default" unless the agent's store already has that id (import-only, as in the runtime).
import type { GlobalDatabase } from "../../state/state-databases.js";
import { inspectJsonSource } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource } from "../types.js";
import { agentDirOf, detectAgentFile, importLegacyCredentials, providerProfiles, verifyProfiles } from "./auth-store.js";

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
  return importLegacyCredentials(db, source, agentDirOf(source.path), null, "auth-json", "");
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
  verify: (db, _source, expected) => verifyProfiles(db, expected),
};
