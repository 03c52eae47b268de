// Where credentials and sessions live after a migration, for `reset --scope config+creds+sessions`: the
// global rows holding secrets (design-v1 tables, or OpenClaw 2026.9.6's tables and config_machine_state keys), the
// design-v1 global DBs kept by the format upgrade, the legacy credential files the importers know, and the
// plaintext copies retired under migrated/<run>/ (found through the ledger, so no legacy file name is repeated here).
import fs from "node:fs";
import path from "node:path";
import { IMPORTERS } from "../migration/importers/index.js";
import { takeInventory } from "../migration/inventory.js";
import { configuredMainKey, readLegacyConfig } from "../migration/legacy-config.js";
import { MIGRATED_DIR, retiredPath } from "../migration/retire.js";
import type { DetectContext, SourceKind } from "../migration/types.js";
import { countSelectedRows, countSelectedRowsInFile, deleteSelectedRows, deleteSelectedRowsInFile, type RowSelector } from "../state/credential-rows.js";
import { isOurFormat, type DbFormat } from "../state/db-format.js";
import { AGENT_DB_FILENAME, isPathInside, type StatePaths } from "../state/paths.js";
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

/** A set of credential rows: a whole table, or one config_machine_state key. */
export interface CredentialRows {
  table: string;
  /** config_machine_state `state_key` (OpenClaw's format keeps the shared auth store and VAPID keys there). */
  key?: string;
  reason: string;
}

/**
 * Where OpenClaw 2026.9.6's global format keeps what CREDENTIAL_TABLES names (observed from its own doctor and
 * from src/state/upgrade/*), plus its tables of the same kind that have no design-v1 twin (MCP OAuth tokens, the
 * secret store, pairing join codes, gateway-origin device tokens). Per-agent stores (auth_profile_store /
 * auth_profile_state) live in the agent DBs, which the scope removes whole. Deliberately not here:
 * `auth.sharedStore` (a location marker, no secret), `nodeHost.config` (9.6 keeps no token in it),
 * audit_identity_keys / config_revision_keys (integrity keys of OpenClaw's audit and config history, not
 * credentials), worker_environment_credentials (hashes only, tied to live worker environments).
 */
export const OPENCLAW_CREDENTIAL_ROWS: readonly CredentialRows[] = [
  { table: "config_machine_state", key: "authProfiles.store", reason: "shared auth profile store: API keys and OAuth tokens (config_machine_state 'authProfiles.store')" },
  { table: "config_machine_state", key: "authProfiles.state", reason: "shared auth profile state: order, last good profile, usage (config_machine_state 'authProfiles.state')" },
  { table: "config_machine_state", key: "webPush.vapidKeys", reason: "web push VAPID keys, private key (config_machine_state 'webPush.vapidKeys')" },
  { table: "mcp_oauth_stores", reason: "MCP OAuth tokens" },
  { table: "secret_store_entries", reason: "secret store values" },
  { table: "device_identities", reason: "device identity keys (private key)" },
  { table: "device_auth_tokens", reason: "device auth tokens" },
  { table: "gateway_origin_device_tokens", reason: "device tokens per gateway origin" },
  { table: "device_pairing_paired", reason: "paired devices and their node surfaces (their tokens)" },
  { table: "device_pairing_pending", reason: "pending device pairing requests" },
  { table: "device_bootstrap_tokens", reason: "device bootstrap tokens" },
  { table: "device_pairing_join_codes", reason: "device pairing join codes" },
  { table: "channel_pairing_requests", reason: "pending channel pairing codes" },
  { table: "channel_pairing_allow_entries", reason: "channel pairing allowlists" },
  { table: "web_push_subscriptions", reason: "web push subscriptions (auth secrets)" },
  { table: "apns_registrations", reason: "APNs registrations (tokens, send grants)" },
  { table: "native_hook_relay_bridges", reason: "native hook relay bridges (tokens)" },
  { table: "exec_approvals_config", reason: "exec approvals config (socket token)" },
];

/** Prefix of the run dirs under migrated/ where the format upgrade keeps the design-v1 databases it replaced. */
export const FORMAT_UPGRADE_RUN_PREFIX = "format-upgrade-";

export interface TableCount {
  table: string;
  rows: number;
  reason: string;
  /** Only the config_machine_state row with this state_key. */
  key?: string;
  /** A kept design-v1 database under migrated/format-upgrade-<time>/ (absent: the live global database). */
  database?: string;
}

/** The credential rows this tool knows how to find in a global DB of this format; null for any other format. */
export function credentialRowsFor(format: DbFormat): readonly CredentialRows[] | null {
  if (isOurFormat(format)) return Object.entries(CREDENTIAL_TABLES).map(([table, reason]) => ({ table, reason }));
  if (format.id === "openclaw" && format.current) return OPENCLAW_CREDENTIAL_ROWS;
  return null;
}

/** Whether reset can clear the credentials of a global DB in this format (design-v1, or OpenClaw's current one). */
export function canClearCredentials(format: DbFormat): boolean {
  return credentialRowsFor(format) !== null;
}

function selector(rows: CredentialRows): RowSelector {
  return rows.key === undefined ? { table: rows.table } : { table: rows.table, where: { column: "state_key", value: rows.key } };
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

/** Rows per credential table or key of the live global DB (absent tables left out; an unknown format: none). */
export function countCredentialRows(global: GlobalDatabase): TableCount[] {
  const rows = credentialRowsFor(global.format) ?? [];
  const counts = countSelectedRows(global, rows.map(selector));
  return rows.flatMap((r, i) => (counts[i] === null ? [] : [{ table: r.table, rows: counts[i]!, reason: r.reason, ...(r.key !== undefined ? { key: r.key } : {}) }]));
}

/**
 * Deletes the planned credential rows of the live global DB in one transaction, only those this format is known to
 * hold (a planned entry the format does not list is ignored). secure_delete overwrites the freed cells and pages,
 * so the secrets do not linger in the file; the clean close then truncates the WAL.
 */
export function clearCredentialTables(global: GlobalDatabase, planned: readonly TableCount[]): TableCount[] {
  const known = credentialRowsFor(global.format) ?? [];
  const rows = known.filter((r) => planned.some((p) => p.database === undefined && p.table === r.table && p.key === r.key));
  const deleted = deleteSelectedRows(global, rows.map(selector));
  return rows.map((r, i) => ({ table: r.table, rows: deleted[i]!, reason: r.reason, ...(r.key !== undefined ? { key: r.key } : {}) }));
}

/**
 * The design-v1 global DBs the format upgrade kept (migrated/format-upgrade-<time>/state/openclaw.sqlite): they
 * still hold every credential row of the design-v1 tables, the unmapped ones included. Real files only.
 */
export function keptGlobalDatabases(paths: StatePaths): string[] {
  if (!isPathInside(paths.stateDir, paths.globalDbPath)) return [];
  const rel = path.relative(paths.stateDir, paths.globalDbPath);
  return migratedRunDirs(paths)
    .filter((run) => run.startsWith(FORMAT_UPGRADE_RUN_PREFIX))
    .map((run) => path.join(paths.stateDir, MIGRATED_DIR, run, rel))
    .filter((file) => isRegularFile(file));
}

/** The design-v1 agent DBs the format upgrade kept (migrated/format-upgrade-<time>/agents/<dir>/agent/…): sessions. */
export function keptAgentDatabases(paths: StatePaths): string[] {
  const out: string[] = [];
  for (const run of migratedRunDirs(paths).filter((r) => r.startsWith(FORMAT_UPGRADE_RUN_PREFIX))) {
    const agents = path.join(paths.stateDir, MIGRATED_DIR, run, path.relative(paths.stateDir, paths.agentsDir));
    if (!isPathInside(paths.stateDir, agents)) continue;
    let names: string[] = [];
    try {
      names = fs.readdirSync(agents).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const file = path.join(agents, name, "agent", AGENT_DB_FILENAME);
      if (isRegularFile(file)) out.push(file);
    }
  }
  return out;
}

function isRegularFile(file: string): boolean {
  try {
    return fs.lstatSync(file).isFile();
  } catch {
    return false;
  }
}

const KEPT_REASON = (file: string, paths: StatePaths, reason: string): string => `${reason} — in the design-v1 database kept by the format upgrade, ${path.relative(paths.stateDir, file)}`;

/**
 * Credential rows of the kept design-v1 global DBs, read-only. A kept file in another format, or one that cannot
 * be read, is named in `warnings` and left alone.
 */
export function countKeptCredentialRows(paths: StatePaths, warnings: string[]): TableCount[] {
  const rows = Object.entries(CREDENTIAL_TABLES).map(([table, reason]) => ({ table, reason }));
  const out: TableCount[] = [];
  for (const file of keptGlobalDatabases(paths)) {
    try {
      const { format, counts } = countSelectedRowsInFile(file, "global", rows.map(selector));
      if (!isOurFormat(format)) {
        warnings.push(`${file} is ${format.writtenBy}, not a design-v1 database: its rows were not read and stay as they are.`);
        continue;
      }
      rows.forEach((r, i) => {
        if (counts[i] !== null) out.push({ table: r.table, rows: counts[i]!, reason: KEPT_REASON(file, paths, r.reason), database: file });
      });
    } catch (error) {
      warnings.push(`Could not read ${file} (${error instanceof Error ? error.message : String(error)}): its credential rows stay as they are.`);
    }
  }
  return out;
}

/** Deletes the planned credential rows of one kept design-v1 global DB (one transaction, secure_delete). */
export function clearKeptCredentialRows(file: string, planned: readonly TableCount[]): TableCount[] {
  const mine = planned.filter((p) => p.database === file && p.table in CREDENTIAL_TABLES);
  const deleted = deleteSelectedRowsInFile(file, "global", "design-v1", mine.map((p) => ({ table: p.table })));
  return mine.map((p, i) => ({ ...p, rows: deleted[i]! }));
}

export interface LedgerSource {
  kind: SourceKind;
  relativePath: string;
}

/** Ledger rows of the scoped kinds: the names their retired copies have under migrated/<run>/. */
export function scopedLedgerSources(global: GlobalDatabase, paths: StatePaths): LedgerSource[] {
  const kinds = [...scopedSourceKinds()];
  if (kinds.length === 0) return [];
  const rows = global.all(global.q.selectFrom("migration_sources").select(["migration_kind", "source_path"]).where("migration_kind", "in", kinds));
  // OpenClaw's ledger (and ours after the format upgrade) records absolute paths: the retired copy keeps the relative one.
  const relative = (p: string): string => (path.isAbsolute(p) && isPathInside(paths.stateDir, p) ? path.relative(paths.stateDir, p).split(path.sep).join("/") : p);
  return rows.map((r) => ({ kind: r.migration_kind as SourceKind, relativePath: relative(r.source_path) }));
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
