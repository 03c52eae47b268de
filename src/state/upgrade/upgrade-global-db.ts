// Forward upgrade of a design-v1 GLOBAL database into a new file in the current OpenClaw global format (user_version 18).
import fs from "node:fs";
import { DatabaseError } from "../../core/errors.js";
import { detectFormat, OPENCLAW_CURRENT } from "../db-format.js";
import { createOpenclawDatabase } from "../openclaw-database.js";
import { openUpgradeSource } from "./read-source.js";
import type { DbUpgradeResult } from "./types.js";
import { upgradeMainAuth } from "./upgrade-global-auth.js";
import { CHANNEL_TABLES, upgradeChannelState } from "./upgrade-global-channels.js";
import { upgradeConfigAudit } from "./upgrade-global-config-audit.js";
import { NoteList } from "./note-list.js";
import { type GlobalUpgradeContext, bump, note } from "./upgrade-global-context.js";
import { copySameMeaningTable, SAME_MEANING_TABLES } from "./upgrade-global-copy.js";
import { upgradeCronJobs, upgradeCronRunLogs } from "./upgrade-global-cron.js";
import { DEVICE_TABLES, upgradeDevicePairing } from "./upgrade-global-devices.js";
import { skipStateLeases, upgradeAgentDatabases, upgradeBackupRuns, upgradeMigrationLedger } from "./upgrade-global-ledger.js";
import { PLUGIN_TABLES, upgradePluginState } from "./upgrade-global-plugins.js";
import { limitUpgradeCache } from "./connection-cache.js";

export { agentAuthRows, authAgentIds, type AgentAuthRows } from "./upgrade-global-auth.js";

export interface UpgradeGlobalDbOptions {
  /** The design-v1 global DB (opened read-only, never modified). */
  source: string;
  /** Where the new OpenClaw-format file is created; must not exist. */
  target: string;
  /** The state dir the upgraded file will serve: relative agent DB paths and the cron store key are resolved here. */
  stateDir: string;
  now?: number;
}

/** Design-v1 tables whose rows are handled by a step above (schema_meta: the target has its own row). */
const HANDLED = new Set<string>([
  "schema_meta", "cron_jobs", "cron_run_logs", "auth_profile_stores", "auth_profile_state", "agent_databases",
  "migration_runs", "migration_sources", "backup_runs", "state_leases", ...SAME_MEANING_TABLES, ...CHANNEL_TABLES, ...PLUGIN_TABLES, ...DEVICE_TABLES,
]);

/**
 * Reads `source` (design-v1 only; anything else is refused before a row is read), writes every row it can map into
 * a new `target` in ONE transaction, checks the result (integrity_check, foreign_key_check) and closes it cleanly
 * (WAL checkpointed and truncated). Rows with no home in OpenClaw's format are counted in `unmapped` with a note;
 * they stay in the source file, which the caller keeps. On any failure the partial target is removed.
 */
export function upgradeGlobalDb(options: UpgradeGlobalDbOptions): DbUpgradeResult {
  const now = options.now ?? Date.now();
  if (!fs.existsSync(options.source)) throw new DatabaseError(`${options.source} does not exist; nothing to upgrade.`, { path: options.source });
  const { handle: src, cleanup } = openUpgradeSource(options.source, "global");
  try {
    const format = detectFormat(src, "global");
    if (format.id !== "design-v1") {
      throw new DatabaseError(`${options.source} is ${format.writtenBy}, not the design-document v1 global format this upgrade reads; nothing was written.`, { path: options.source });
    }
    const dst = createOpenclawDatabase({ path: options.target, role: "global", now });
    const result: DbUpgradeResult = { role: "global", source: options.source, target: options.target, read: {}, written: {}, unmapped: {}, notes: [] };
    try {
      limitUpgradeCache(src);
      limitUpgradeCache(dst);
      const sourceTables = new Set((src.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>).map((r) => r.name));
      const ctx: GlobalUpgradeContext = { src, dst, stateDir: options.stateDir, now, sourceTables, read: result.read, written: result.written, unmapped: result.unmapped, notes: new NoteList() };
      dst.transaction(() => {
        const stores = upgradeCronJobs(ctx);
        upgradeCronRunLogs(ctx, stores);
        upgradeMainAuth(ctx);
        upgradeAgentDatabases(ctx);
        upgradeMigrationLedger(ctx);
        upgradeBackupRuns(ctx);
        skipStateLeases(ctx);
        for (const table of SAME_MEANING_TABLES) copySameMeaningTable(ctx, table);
        upgradeConfigAudit(ctx);
        upgradeChannelState(ctx);
        upgradeDevicePairing(ctx);
        upgradePluginState(ctx);
        keepUnmapped(ctx);
      }).immediate();
      result.notes.push(...ctx.notes.list());
      // The schema_meta row read from the source is replaced by the target's own (written by createOpenclawDatabase).
      if (sourceTables.has("schema_meta")) result.read.schema_meta = (src.prepare("SELECT count(*) AS n FROM schema_meta").get() as { n: number }).n;
      const problems = [
        ...(dst.pragma("integrity_check") as Array<Record<string, unknown>>).map((r) => String(Object.values(r)[0])).filter((m) => m !== "ok"),
        ...(dst.pragma("foreign_key_check") as Array<Record<string, unknown>>).map((r) => `foreign key: ${JSON.stringify(r)}`),
      ];
      if (problems.length > 0) throw new DatabaseError(`The upgraded ${options.target} failed its checks: ${problems.slice(0, 5).join("; ")}.`, { path: options.target });
      if (dst.pragma("user_version", { simple: true }) !== OPENCLAW_CURRENT.global) throw new DatabaseError(`The upgraded ${options.target} does not carry user_version ${OPENCLAW_CURRENT.global}.`, { path: options.target });
      dst.pragma("wal_checkpoint(TRUNCATE)");
      dst.close();
      return result;
    } catch (error) {
      if (dst.open) dst.close();
      for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(`${options.target}${suffix}`, { force: true });
      throw error;
    }
  } finally {
    src.close();
    cleanup?.();
  }
}

/** Every other design-v1 table: its rows are counted and named, never guessed into a near-miss OpenClaw table. */
function keepUnmapped(ctx: GlobalUpgradeContext): void {
  for (const table of [...ctx.sourceTables].sort()) {
    if (HANDLED.has(table)) continue;
    const n = (ctx.src.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    if (n === 0) continue;
    ctx.read[table] = n;
    bump(ctx.unmapped, table, n);
    const sameName = ctx.dst.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    const why = sameName ? "OpenClaw's table of that name has other columns and meanings (no column mapping yet)" : "OpenClaw's global format has no table for them yet";
    note(ctx, "global.kept-unmapped", `${table}: ${n} row(s) not copied: ${why}; they stay in the design-v1 file.`);
  }
}

/** The design-v1 agent_model_catalogs rows (catalog key and JSON text): OpenClaw keeps these as files, put back by the caller. */
export function readModelCatalogRows(source: string): Array<{ catalogKey: string; rawJson: string }> {
  const { handle, cleanup } = openUpgradeSource(source, "global");
  try {
    if (detectFormat(handle, "global").id !== "design-v1") return [];
    const rows = handle.prepare("SELECT catalog_key, raw_json FROM agent_model_catalogs WHERE raw_json IS NOT NULL ORDER BY catalog_key").all() as Array<{ catalog_key: string; raw_json: string }>;
    return rows.map((r) => ({ catalogKey: r.catalog_key, rawJson: r.raw_json }));
  } finally {
    cleanup();
  }
}

/** Names of the design-v1 media_blobs rows (no bytes read): what a write-back would create. */
export function listMediaBlobs(source: string): Array<{ subdir: string; id: string }> {
  const { handle, cleanup } = openUpgradeSource(source, "global");
  try {
    if (detectFormat(handle, "global").id !== "design-v1") return [];
    return handle.prepare("SELECT subdir, id FROM media_blobs ORDER BY subdir, id").all() as Array<{ subdir: string; id: string }>;
  } finally {
    cleanup();
  }
}

/** Each design-v1 media blob in turn (one BLOB in memory at a time; a media file is at most 64 MiB by import). */
export function forEachMediaBlob(source: string, visit: (row: { subdir: string; id: string; blob: Buffer }) => void): void {
  const { handle, cleanup } = openUpgradeSource(source, "global");
  try {
    if (detectFormat(handle, "global").id !== "design-v1") return;
    for (const row of handle.prepare("SELECT subdir, id, blob FROM media_blobs ORDER BY subdir, id").iterate() as Iterable<{ subdir: string; id: string; blob: Buffer }>) visit(row);
  } finally {
    cleanup();
  }
}
