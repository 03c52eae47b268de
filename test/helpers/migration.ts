// Migration test helpers: run applyMigration on a temp state, read rows, dump every table canonically.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { applyMigration, type ApplyMigrationOptions } from "../../src/migration/apply-migration.js";
import type { PreMigrationBackupFn } from "../../src/migration/backup-step.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import type { MigrationPlan, MigrationRunResult } from "../../src/migration/types.js";
import type { StatePaths } from "../../src/state/paths.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import type { DbUpgradeResult } from "../../src/state/upgrade/types.js";
import { upgradeGlobalDb } from "../../src/state/upgrade/upgrade-global-db.js";

/** A stand-in backup step that records its calls (tests of the real archive live in backup.test.ts). */
export function fakeBackup(dir: string): PreMigrationBackupFn & { calls: number } {
  const take: PreMigrationBackupFn = async () => {
    fn.calls += 1;
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `fake-${fn.calls}.tar.gz`);
    fs.writeFileSync(file, "fake");
    return { archivePath: file, warnings: [] };
  };
  const fn = Object.assign(take, { calls: 0 });
  return fn;
}

export interface MigrateOptions extends Partial<Omit<ApplyMigrationOptions, "paths" | "global">> {
  withPlan?: boolean;
}

/** Plans and applies like `doctor --fix` does (without the lease), backup skipped unless injected. */
export async function migrate(paths: StatePaths, options: MigrateOptions = {}): Promise<{ plan: MigrationPlan | undefined; run: MigrationRunResult }> {
  const plan = options.withPlan === false ? undefined : await planMigration({ paths });
  const global = openGlobalDatabase(paths, { mode: "write", create: true });
  try {
    const run = await applyMigration({ paths, global, backup: false, ...(plan ? { plan } : {}), ...options });
    return { plan, run };
  } finally {
    global.close();
  }
}

export function agentDbFile(paths: StatePaths, agentId = "main"): string {
  return path.join(paths.agentsDir, agentId, "agent", "openclaw-agent.sqlite");
}

/** Rows of one table, read with a plain better-sqlite3 handle (readonly). */
export function rows<T = Record<string, unknown>>(file: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Columns that legitimately differ between two runs over the same data (ids, clocks, absolute paths). */
const IGNORED: Record<string, string[] | "table"> = {
  migration_runs: "table",
  backup_runs: "table",
  state_leases: "table",
  // OpenClaw's format records the source path absolute (the state dir differs per run; the key hashes the relative one).
  migration_sources: ["last_run_id", "imported_at", "report_json", "source_path"],
  // Written by the format upgrade at its own time, with a fresh random generation per session.
  config_machine_state: ["updated_at_ms"],
  transcript_rewrite_watermarks: ["generation", "updated_at"],
  agent_databases: ["path", "last_seen_at", "size_bytes"],
  schema_meta: ["created_at", "updated_at", "app_version"],
};

/** Every table of a DB file as sorted rows (ignored columns dropped): equal dumps = same data. */
export function dumpDatabase(file: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((t) => t.name);
    const out: Record<string, unknown[]> = {};
    for (const table of tables) {
      const ignored = IGNORED[table];
      if (ignored === "table") continue;
      const cols = (db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string }>).map((c) => c.name).filter((c) => !ignored?.includes(c));
      const list = cols.map((c) => `"${c}"`).join(", ");
      out[table] = db.prepare(`SELECT ${list} FROM "${table}" ORDER BY ${list}`).raw().all();
    }
    return out;
  } finally {
    db.close();
  }
}

/** The global DB and every agent DB of a state dir, keyed by path relative to the state dir. */
export function dumpState(paths: StatePaths): Record<string, Record<string, unknown[]>> {
  const out: Record<string, Record<string, unknown[]>> = {};
  if (fs.existsSync(paths.globalDbPath)) out["state/openclaw.sqlite"] = dumpDatabase(paths.globalDbPath);
  if (fs.existsSync(paths.agentsDir)) {
    for (const id of fs.readdirSync(paths.agentsDir).sort()) {
      const file = agentDbFile(paths, id);
      if (fs.existsSync(file)) out[`agents/${id}`] = dumpDatabase(file);
    }
  }
  return out;
}

export interface LedgerRow {
  source_path: string;
  migration_kind: string;
  target_table: string;
  source_sha256: string;
  source_size_bytes: number;
  source_record_count: number;
  status: string;
  removed_source: number;
  report_json: string;
}

/** The ledger rows of one source path, oldest first. */
export function ledgerRows(paths: StatePaths, relativePath: string): LedgerRow[] {
  return rows<LedgerRow>(paths.globalDbPath, "SELECT * FROM migration_sources WHERE source_path = ? ORDER BY imported_at", relativePath);
}

export function sha256Of(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** Asserts-free check data for "the ledger row names the table, the file's sha256 and its record count". */
export function ledgerSummary(paths: StatePaths, relativePath: string): Pick<LedgerRow, "migration_kind" | "target_table" | "source_sha256" | "source_record_count" | "status" | "removed_source"> | undefined {
  const row = ledgerRows(paths, relativePath).at(-1);
  if (!row) return undefined;
  const { migration_kind, target_table, source_sha256, source_record_count, status, removed_source } = row;
  return { migration_kind, target_table, source_sha256, source_record_count, status, removed_source };
}

/**
 * The design-v1 file `doctor --fix` imported into, kept under migrated/format-upgrade-<time>/ when its last step wrote
 * the state in OpenClaw's format (the newest such copy); the live file when no upgrade ran. Tests of what the
 * importers and the design-v1 repairs wrote read it; tests of the upgraded state read the live file.
 */
export function stagedDbFile(paths: StatePaths, agentId?: string): string {
  const live = agentId ? agentDbFile(paths, agentId) : paths.globalDbPath;
  const migrated = path.join(paths.stateDir, "migrated");
  const upgrades = fs.existsSync(migrated) ? fs.readdirSync(migrated).filter((d) => d.startsWith("format-upgrade-")).sort() : [];
  for (const dir of upgrades.reverse()) {
    const kept = path.join(migrated, dir, path.relative(paths.stateDir, live));
    if (fs.existsSync(kept)) return kept;
  }
  return live;
}

/** Writes `value` as JSON at `file` below the state dir (parents created). */
export function writeJson(stateDir: string, file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(path.join(stateDir, file)), { recursive: true });
  fs.writeFileSync(path.join(stateDir, file), JSON.stringify(value));
}

/** The importers' design-v1 state, then the global upgrade of it into a new file beside the state dir. */
export async function migrateAndUpgradeGlobal(stateDir: string, paths: StatePaths, now: number): Promise<{ result: DbUpgradeResult; target: string }> {
  await migrate(paths);
  const target = path.join(path.dirname(stateDir), "upgraded", "openclaw.sqlite");
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const result = upgradeGlobalDb({ source: paths.globalDbPath, target, stateDir, now });
  return { result, target };
}
