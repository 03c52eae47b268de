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
import { inspectJsonSource } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportContext, ImportCounts, PlannedSource } from "../types.js";
import { importLegacyCredentials, providerProfiles, verifyProfiles } from "./auth-store.js";

export const OAUTH_FILE = "oauth.json";

/** The credentials dir as seen from the root being read (a legacy state dir about to move has its own). */
/** The credentials dir as it is now: under the legacy root (a `~/.clawdbot`-style dir about to move) unless configured elsewhere. */
export function credentialsDir(ctx: DetectContext): string {
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
  const storeKey = path.resolve(ctx.paths.agentsDir, DEFAULT_AGENT_ID, "agent");
  return importLegacyCredentials(db, source, storeKey, "oauth", "oauth-credentials", ` to agent ${DEFAULT_AGENT_ID}`);
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
  verify: (db, _source, expected) => verifyProfiles(db, expected),
};
