// Importer for legacy cron stores (`cron/jobs.json` or the config's `cron.store`, SPEC §4.3) → cron_jobs.
// A store's `<store>.bak` (OpenClaw 2026.3.28 copies the store there on every write) is imported in its place
// when the store itself does not parse, and otherwise retired with it (nothing read from it).
import fs from "node:fs";
import path from "node:path";
import type { StatePaths } from "../../state/paths.js";
import { expandUserPath } from "../../state/paths.js";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { isOpenclawStateError, OperationError } from "../../core/errors.js";
import { assertUnchanged, hashFile, inspectJsonSource, readJsonSource, shapeError, verifyKeys } from "../json-source.js";
import { readLegacyConfig } from "../legacy-config.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportContext, ImportCounts, PlannedSource } from "../types.js";
import { obj, str } from "./coerce.js";
import { cronJobRow, normalizeCronJob, STATE_COLUMNS, type NormalizedJob } from "./cron-normalize.js";

/** One cron store: the jobs file, its `-state.json` sidecar and its `runs/` dir (beside the jobs file). */
export interface CronStore {
  storePath: string;
  /** cron_jobs/cron_run_logs.store_key: the store file's absolute path, as the runtime keys its partitions. */
  storeKey: string;
  statePath: string;
  runsDir: string;
  configured: boolean;
}

function storeFor(storePath: string, configured: boolean): CronStore {
  const resolved = path.resolve(storePath);
  return {
    storePath: resolved,
    storeKey: resolved,
    statePath: resolved.endsWith(".json") ? resolved.replace(/\.json$/, "-state.json") : `${resolved}-state.json`,
    runsDir: path.join(path.dirname(resolved), "runs"),
    configured,
  };
}

/**
 * The stores to migrate: the config's `cron.store` (`~` expanded, relative paths against the state dir)
 * first, then the default `<root>/cron/jobs.json` when it is another file (its data is kept under its own key).
 */
export function cronStores(root: string, paths: StatePaths, config: Record<string, unknown> | null): CronStore[] {
  const stores: CronStore[] = [];
  const configured = str(obj(config?.cron)?.store);
  if (configured) stores.push(storeFor(configured.startsWith("~") ? expandUserPath(configured, paths.homeDir) : path.resolve(root, configured), true));
  const fallback = storeFor(path.join(root, "cron", "jobs.json"), false);
  if (!stores.some((s) => s.storePath === fallback.storePath)) stores.push(fallback);
  return stores;
}

/** The store a source belongs to at import time (after any layout move the tree is under the state dir). */
export function storeAtImport(ctx: ImportContext, match: (store: CronStore) => boolean, file: string): CronStore {
  const stores = cronStores(ctx.paths.stateDir, ctx.paths, readLegacyConfig(ctx.paths, ctx.paths.stateDir));
  const store = stores.find(match);
  if (!store) throw new Error(`${file} no longer belongs to a cron store (the config's cron.store changed since the plan); re-run \`doctor --fix\`.`);
  return store;
}

/** The config's legacy `cron.webhook` (for `notify: true` jobs). */
function legacyWebhook(config: Record<string, unknown> | null): string | null {
  return str(obj(config?.cron)?.webhook);
}

export function rawJobs(file: string, value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  const o = obj(value);
  if (o && Array.isArray(o.jobs)) return o.jobs;
  throw shapeError(file, 'a cron store ({"version":1,"jobs":[…]} or an array of jobs)', value);
}

interface LoadedStore {
  sha256: string;
  jobs: NormalizedJob[];
  rawCount: number;
  skipped: number;
  warnings: string[];
  notes: string[];
}

function loadStore(file: string, webhook: string | null): LoadedStore {
  const { value, sha256 } = readJsonSource(file);
  const raw = rawJobs(file, value);
  const byId = new Map<string, NormalizedJob>();
  const warnings: string[] = [];
  const legacy = new Set<string>();
  let skipped = 0;
  let duplicates = 0;
  raw.forEach((r, i) => {
    const n = normalizeCronJob(r, i, webhook);
    if ("skip" in n) {
      skipped += 1;
      warnings.push(`${n.skip}; skipped (it stays in the retired file)`);
      return;
    }
    if (byId.has(n.id)) duplicates += 1;
    byId.delete(n.id);
    byId.set(n.id, n);
    warnings.push(...n.warnings);
    for (const l of n.legacy) legacy.add(l);
  });
  const notes: string[] = [];
  if (legacy.size > 0) notes.push(`legacy job shapes normalized: ${[...legacy].sort().join(", ")}`);
  if (duplicates > 0) notes.push(`${duplicates} duplicate job id(s): the last one in the file wins`);
  return { sha256, jobs: [...byId.values()], rawCount: raw.length, skipped, warnings, notes };
}

/** The backup copy OpenClaw keeps beside a cron store. */
export const CRON_BACKUP_SUFFIX = ".bak";

/** Plan notes carrying finalize's decision to the import (the import never re-decides from what is on disk). */
const FALLBACK_PRIMARY = "store does not parse: its backup is imported instead";
const FALLBACK_BACKUP = "imported in place of the store, which does not parse";
const BACKUP_RETIRED = "backup copy of the store: nothing is read from it; retired with the store";

/** Why a store cannot be read as JSON at all (the case where OpenClaw falls back to the backup), else null. */
function unparsable(file: string): string | null {
  try {
    readJsonSource(file);
    return null;
  } catch (error) {
    if (isOpenclawStateError(error) && (error.code === "invalid_json" || error.code === "invalid_utf8")) return error.message;
    return null;
  }
}

function detect(ctx: DetectContext): DetectedSource[] {
  const out: DetectedSource[] = [];
  for (const s of cronStores(ctx.root, ctx.paths, ctx.config)) {
    for (const file of [s.storePath, `${s.storePath}${CRON_BACKUP_SUFFIX}`]) {
      if (isRegularFile(file)) out.push({ kind: "cron-jobs", agentId: null, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false });
    }
  }
  return out;
}

function inspect(source: DetectedSource, ctx: DetectContext) {
  return inspectJsonSource(source, () => {
    const store = loadStore(source.path, legacyWebhook(ctx.config));
    return { records: store.rawCount, notes: [...store.notes, ...store.warnings] };
  });
}

const willFail = (s: PlannedSource): boolean => s.notes.some((n) => n.startsWith("will fail"));

/**
 * Pairs each `<store>.bak` with its store. The store parses: the backup is retired with it, nothing read. The store
 * does not parse (invalid JSON or UTF-8) and the backup does: the backup's jobs are imported under the store's key
 * and the store is retired (kept under migrated/<run>/), both named in a warning. Anything else: the backup is
 * left in place, and the store fails or is skipped as it would alone.
 */
function finalize(own: PlannedSource[]): void {
  const byPath = new Map(own.map((s) => [path.resolve(s.path), s]));
  for (const bak of own) {
    if (!bak.path.endsWith(CRON_BACKUP_SUFFIX) || bak.action === "skip") continue;
    const store = byPath.get(path.resolve(bak.path.slice(0, -CRON_BACKUP_SUFFIX.length)));
    const leave = (reason: string, attention = false): void => {
      bak.action = "skip";
      bak.reason = reason;
      if (attention) bak.attention = true;
      bak.notes = bak.notes.filter((n) => !n.startsWith("will fail"));
    };
    if (!store) {
      leave("backup of a cron store that is not there: not imported, left in place");
      continue;
    }
    const problem = store.action === "skip" ? null : unparsable(store.path);
    if (problem === null) {
      if (store.action === "skip" || willFail(store)) {
        leave(`backup of ${store.relativePath}, which is not imported (${store.reason ?? "see its own entry"}): left in place beside it`, willFail(store));
        continue;
      }
      bak.records = 0;
      bak.notes = [BACKUP_RETIRED];
      continue;
    }
    if (willFail(bak)) {
      leave(`neither ${store.relativePath} nor this backup of it parses: both are left in place for a human`, true);
      continue;
    }
    store.records = 0;
    store.notes = [`${FALLBACK_PRIMARY} (${bak.relativePath}); ${problem}`];
    bak.notes = [FALLBACK_BACKUP, ...bak.notes];
  }
}

/** The store's name for warnings: relative to the state dir when inside it. */
function shown(ctx: ImportContext, file: string): string {
  const rel = path.relative(ctx.paths.stateDir, file);
  return rel.startsWith("..") || path.isAbsolute(rel) ? file : rel.split(path.sep).join("/");
}

const CONFLICT_UPDATE_EXCLUDED = new Set(["store_key", "job_id", ...STATE_COLUMNS, "state_json", "runtime_updated_at_ms"]);

/** Raw statements: the column list is long and fixed; one insert per job. */
function statements(db: GlobalDatabase, columns: string[]) {
  const definition = columns.filter((c) => !CONFLICT_UPDATE_EXCLUDED.has(c));
  const stateCols = [...STATE_COLUMNS, "state_json", "runtime_updated_at_ms"];
  return {
    // A re-imported definition keeps the runtime state merged from jobs-state.json unless the file has its own.
    upsert: db.prepare(
      `INSERT INTO cron_jobs (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) ON CONFLICT (store_key, job_id) DO UPDATE SET ${definition.map((c) => `${c} = excluded.${c}`).join(", ")}`,
    ),
    setState: db.prepare(`UPDATE cron_jobs SET ${stateCols.map((c) => `${c} = ?`).join(", ")} WHERE store_key = ? AND job_id = ?`),
    stateCols,
  };
}

/** A file imported for nothing (a store replaced by its backup, or a backup beside a good store): retired as planned. */
function importNothing(source: PlannedSource, warnings: string[], notes: string[]): ImportCounts {
  assertUnchanged(source, hashFile(source.path).sha256);
  return { records: 0, rows: { cron_jobs: 0 }, skipped: 0, warnings, notes, expect: { storeKey: "", jobs: 0, ids: "[]" } };
}

function importJobs(db: GlobalDatabase, source: PlannedSource, ctx: ImportContext): ImportCounts {
  const isBackup = source.path.endsWith(CRON_BACKUP_SUFFIX);
  const storeFile = path.resolve(isBackup ? source.path.slice(0, -CRON_BACKUP_SUFFIX.length) : source.path);
  if (isBackup && source.notes.includes(BACKUP_RETIRED)) return importNothing(source, [], [BACKUP_RETIRED]);
  if (!isBackup && source.notes.some((n) => n.startsWith(FALLBACK_PRIMARY))) {
    return importNothing(source, [`${shown(ctx, source.path)} does not parse; its backup ${shown(ctx, `${storeFile}${CRON_BACKUP_SUFFIX}`)} is imported in its place, and this file is kept with the retired sources`], []);
  }
  if (isBackup && !source.notes.includes(FALLBACK_BACKUP)) {
    throw new OperationError("unplanned_backup", `${source.path} was not planned as a cron store's replacement; re-run \`doctor --fix\`.`, { path: source.path });
  }
  const config = readLegacyConfig(ctx.paths, ctx.paths.stateDir);
  const store = storeAtImport(ctx, (s) => s.storePath === storeFile, source.path);
  const loaded = loadStore(source.path, legacyWebhook(config));
  assertUnchanged(source, loaded.sha256);
  if (isBackup) {
    loaded.warnings.unshift(`${shown(ctx, storeFile)} does not parse; imported ${loaded.jobs.length} job(s) from its backup ${shown(ctx, source.path)} instead (OpenClaw falls back to it the same way)`);
  }
  const mtime = Math.trunc(fs.statSync(source.path).mtimeMs);
  let rows = 0;
  let st: ReturnType<typeof statements> | null = null;
  loaded.jobs.forEach((job, i) => {
    const row = cronJobRow(store.storeKey, job, i, mtime);
    const columns = Object.keys(row);
    st ??= statements(db, columns);
    st.upsert.run(...columns.map((c) => row[c]));
    if (row.state_json !== null) st.setState.run(...st.stateCols.map((c) => row[c]), store.storeKey, job.id);
    rows += 1;
  });
  return {
    records: loaded.rawCount,
    rows: { cron_jobs: rows },
    skipped: loaded.skipped,
    warnings: loaded.warnings,
    notes: [...loaded.notes, `store_key ${store.storeKey}`],
    expect: { storeKey: store.storeKey, jobs: rows, ids: JSON.stringify(loaded.jobs.map((j) => j.id)) },
  };
}

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  if (expected.expect.jobs === 0) return null;
  const storeKey = String(expected.expect.storeKey ?? "");
  const has = db.prepare("SELECT 1 FROM cron_jobs WHERE store_key = ? AND job_id = ?").pluck();
  return verifyKeys(expected, "ids", (id) => has.get(storeKey, id) !== undefined, "cron job(s)");
}

export const cronJobsImporter: GlobalSourceImporter = {
  kind: "cron-jobs",
  target: "global",
  label: { one: "legacy cron store", many: "legacy cron stores", records: "jobs" },
  targetTable: "cron_jobs",
  targetTables: ["cron_jobs"],
  detect,
  inspect,
  finalize,
  import: importJobs,
  verify,
};
