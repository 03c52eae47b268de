// Where credentials and sessions live after a migration, for `reset --scope config+creds+sessions`: the
// global tables holding secrets, the legacy credential files the importers know, and the plaintext copies
// retired under migrated/<run>/ (found through the ledger, so no legacy file name is repeated here).
import fs from "node:fs";
import path from "node:path";
import { IMPORTERS } from "../migration/importers/index.js";
import { takeInventory } from "../migration/inventory.js";
import { configuredMainKey, readLegacyConfig } from "../migration/legacy-config.js";
import { MIGRATED_DIR, retiredPath } from "../migration/retire.js";
import type { DetectContext, SourceKind } from "../migration/types.js";
import type { StatePaths } from "../state/paths.js";
import type { GlobalDatabase } from "../state/state-databases.js";

/**
 * Global tables whose rows are credentials or carry one (schema "Auth, identity and pairing" plus the
 * tokens and keys of the node host, push and relay tables). The scope clears them; the database stays.
 */
export const CREDENTIAL_TABLES: Readonly<Record<string, string>> = {
  auth_profile_stores: "auth profiles: API keys and OAuth tokens",
  auth_profile_state: "auth profile state (order, last good profile, usage)",
  device_identities: "device identity keys (private key)",
  device_auth_tokens: "device auth tokens",
  device_pairing_entries: "paired and pending devices (their tokens)",
  node_pairing_entries: "paired nodes (their tokens)",
  channel_pairing_requests: "pending channel pairing codes",
  channel_pairing_allow_entries: "channel pairing allowlists",
  node_host_config: "node host config (gateway token)",
  web_push_subscriptions: "web push subscriptions (auth secrets)",
  web_push_vapid_keys: "web push VAPID keys (private key)",
  apns_registrations: "APNs registrations (tokens, send grants)",
  native_hook_relay_bridges: "native hook relay bridges (tokens)",
  exec_approvals_config: "exec approvals config (socket token)",
};

export interface TableCount {
  table: string;
  rows: number;
  reason: string;
}

/** Legacy source kinds the scope covers: every credential importer (by its target tables) and every session importer. */
export function scopedSourceKinds(): Set<SourceKind> {
  const kinds = new Set<SourceKind>();
  for (const importer of IMPORTERS) {
    if (importer.target === "agent" || importer.targetTables.some((t) => t in CREDENTIAL_TABLES)) kinds.add(importer.kind);
  }
  return kinds;
}

/** Credential kinds only (their live legacy files are removed too; live session files go with the sessions dirs). */
function credentialSourceKinds(): Set<SourceKind> {
  return new Set(IMPORTERS.filter((i) => i.target === "global" && i.targetTables.some((t) => t in CREDENTIAL_TABLES)).map((i) => i.kind));
}

/** Rows per credential table (tables this DB lacks are left out); names come from the constant, never input. */
export function countCredentialRows(global: GlobalDatabase): TableCount[] {
  const present = new Set(global.tableNames());
  const counts: TableCount[] = [];
  for (const [table, reason] of Object.entries(CREDENTIAL_TABLES)) {
    if (!present.has(table)) continue;
    const row = global.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number };
    counts.push({ table, rows: row.n, reason });
  }
  return counts;
}

/**
 * Deletes every row of the given credential tables in one transaction. secure_delete overwrites the freed
 * pages, so the secrets do not linger in the file; the clean close then truncates the WAL.
 */
export function clearCredentialTables(global: GlobalDatabase, tables: readonly string[]): TableCount[] {
  const known = tables.filter((t) => t in CREDENTIAL_TABLES);
  global.handle.pragma("secure_delete = ON");
  return global.immediate(() =>
    known.map((table) => ({ table, rows: global.prepare(`DELETE FROM "${table}"`).run().changes, reason: CREDENTIAL_TABLES[table]! })),
  );
}

export interface LedgerSource {
  kind: SourceKind;
  relativePath: string;
}

/** Ledger rows of the scoped kinds: the names their retired copies have under migrated/<run>/. */
export function scopedLedgerSources(global: GlobalDatabase): LedgerSource[] {
  const kinds = [...scopedSourceKinds()];
  if (kinds.length === 0) return [];
  const rows = global.all(global.q.selectFrom("migration_sources").select(["migration_kind", "source_path"]).where("migration_kind", "in", kinds));
  return rows.map((r) => ({ kind: r.migration_kind as SourceKind, relativePath: r.source_path }));
}

/** Run dirs under `<stateDir>/migrated/` (real directories only; a link there is not followed). */
export function migratedRunDirs(paths: StatePaths): string[] {
  const root = path.join(paths.stateDir, MIGRATED_DIR);
  try {
    return fs
      .readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/** Where a retired copy of `source` may be in run `runId`: moved there, or set aside as skipped. */
export function retiredCopyCandidates(paths: StatePaths, runId: string, source: LedgerSource): string[] {
  return [retiredPath(paths.stateDir, runId, source.relativePath), retiredPath(paths.stateDir, runId, `skipped/${source.relativePath}`)];
}

/** Live legacy credential files not migrated yet (e.g. an agent's auth profiles), as the importers detect them. */
export function detectLegacyCredentialFiles(paths: StatePaths): string[] {
  const kinds = credentialSourceKinds();
  try {
    const inv = takeInventory(paths);
    // Only the state dir itself: a legacy dir that `doctor --fix` would move in is not this reset's to touch.
    if (path.resolve(inv.root) !== path.resolve(paths.stateDir)) return [];
    const config = readLegacyConfig(paths, inv.root);
    const ctx: DetectContext = { paths, root: inv.root, sessionsDirs: inv.sessionsDirs, agentDirs: inv.agentDirs, mainKey: configuredMainKey(config), config };
    return IMPORTERS.filter((i) => kinds.has(i.kind))
      .flatMap((i) => i.detect(ctx))
      .map((s) => path.resolve(s.path))
      .sort();
  } catch {
    return [];
  }
}
