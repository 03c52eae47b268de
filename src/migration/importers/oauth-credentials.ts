// Importer for `credentials/oauth.json` (the oldest OAuth store) → agent main's auth_profile_stores row.
//
// Shape (OpenClaw docs/concepts/oauth.md: "legacy import-only file … imported into auth-profiles.json on
// first use"): {"<provider>":{"access","refresh","expires","email"?,…}}; each becomes the OAuth profile
// "<provider>:default" of the default agent unless that store already has the id. The credentials dir is
// $OPENCLAW_OAUTH_DIR, else <stateDir>/credentials.
import path from "node:path";
import { DEFAULT_AGENT_ID } from "../../state/paths.js";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { assertUnchanged, inspectJsonSource, readSecretJson, scrubbed } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportContext, ImportCounts, PlannedSource } from "../types.js";
import { mergeLegacyProfiles, mtimeMs, providerProfiles, storedProfileIds } from "./auth-store.js";

export const OAUTH_FILE = "oauth.json";

/** The credentials dir as seen from the root being read (a legacy state dir about to move has its own). */
function credentialsDir(ctx: DetectContext): string {
  const fallback = path.join(ctx.paths.stateDir, "credentials");
  return path.resolve(ctx.paths.credentialsDir) === path.resolve(fallback) ? path.join(ctx.root, "credentials") : ctx.paths.credentialsDir;
}

function detect(ctx: DetectContext): DetectedSource[] {
  const file = path.join(credentialsDir(ctx), OAUTH_FILE);
  if (!isRegularFile(file)) return [];
  return [{ kind: "oauth-credentials", agentId: DEFAULT_AGENT_ID, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false }];
}

function inspect(source: DetectedSource) {
  return inspectJsonSource(source, (value) => {
    const { profiles, skipped } = providerProfiles(source.path, value, "oauth");
    return { records: Object.keys(profiles).length + skipped.length, notes: [`merged into agent ${DEFAULT_AGENT_ID}'s auth profile store as <provider>:default OAuth profiles (profiles already there are kept)`] };
  });
}

function importOAuth(db: GlobalDatabase, source: PlannedSource, ctx: ImportContext): ImportCounts {
  const { value, sha256, scrubber } = readSecretJson(source.path);
  assertUnchanged(source, sha256);
  const { profiles, skipped } = providerProfiles(source.path, value, "oauth");
  const storeKey = path.resolve(ctx.paths.agentsDir, DEFAULT_AGENT_ID, "agent");
  const { added, kept } = mergeLegacyProfiles(db, storeKey, profiles, "oauth-credentials", mtimeMs(source.path));
  const notes = [`${added.length} OAuth profile(s) added to agent ${DEFAULT_AGENT_ID}${added.length > 0 ? `: ${added.join(", ")}` : ""}`];
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
  return missing.length === 0 ? null : `${missing.length} OAuth profile(s) missing after commit: ${missing.slice(0, 5).join(", ")}`;
}

export const oauthCredentialsImporter: GlobalSourceImporter = {
  kind: "oauth-credentials",
  target: "global",
  label: { one: "legacy OAuth credentials file", many: "legacy OAuth credentials files", records: "credentials" },
  targetTable: "auth_profile_stores",
  targetTables: ["auth_profile_stores"],
  detect,
  inspect,
  import: importOAuth,
  verify,
};
