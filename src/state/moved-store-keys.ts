// Cron rows keyed by the default store path of a state dir that has since moved (re-mounted): found and re-keyed.
import fs from "node:fs";
import path from "node:path";
import type { GlobalDatabase } from "./state-databases.js";

/**
 * OpenClaw's cron tables keyed by `store_key` = path.resolve(<cron store path>) (its own runtime computes the key so;
 * keys stay absolute because that is what it reads). Each table's column that says when a row was last written.
 */
export const CRON_KEYED_TABLES = ["cron_jobs", "cron_job_scratch", "cron_run_receipts"] as const;
type CronTable = (typeof CRON_KEYED_TABLES)[number];

/** The key OpenClaw computes for the default store of this state dir. */
export function currentCronStoreKey(stateDir: string): string {
  return path.resolve(stateDir, "cron", "jobs.json"); // legacy-name-ok: OpenClaw's cron_jobs.store_key is this path (a key, never read)
}

/** Why a key that looks like a default store of another path is not re-keyed here (null: it is re-keyed). */
export interface LeftStoreKey {
  key: string;
  jobs: number;
  reason: string;
}

export interface MovedStoreKey {
  /** The old key: the default store path of the state dir where it was mounted before. */
  key: string;
  jobs: number;
  /** Rows per table under the old key (scratch and receipts follow their job). */
  rows: Record<CronTable, number>;
}

export interface MovedStoreKeysScan {
  currentKey: string;
  moved: MovedStoreKey[];
  left: LeftStoreKey[];
}

type AnyDb = GlobalDatabase;

/** The DB holds OpenClaw's current format with its three cron tables (the only format whose keys this reads). */
export function hasCronStoreKeys(db: AnyDb): boolean {
  if (db.role !== "global" || db.format.id !== "openclaw" || !db.format.current) return false;
  const tables = new Set(db.tableNames());
  return CRON_KEYED_TABLES.every((t) => tables.has(t));
}

function countUnder(db: AnyDb, table: CronTable, key: string): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE store_key = ?`).get(key) as { n: number }).n;
}

/** lstat only (never follows a link, never opens a FIFO): does anything exist at this path on this machine? */
function existsHere(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Keys of the three tables that end in `/cron/jobs.json` but are not this state's default key nor a configured store
 * (`configuredKeys`, already resolved). One whose `cron/` directory exists on this machine is left: it may be another
 * state's live store. Read only.
 */
export function findMovedStoreKeys(db: AnyDb, stateDir: string, configuredKeys: readonly string[]): MovedStoreKeysScan {
  const currentKey = currentCronStoreKey(stateDir);
  const scan: MovedStoreKeysScan = { currentKey, moved: [], left: [] };
  if (!hasCronStoreKeys(db)) return scan;
  const tail = `${path.sep}${path.relative(stateDir, currentKey)}`; // the default key's tail under any state dir
  const union = CRON_KEYED_TABLES.map((t) => `SELECT store_key FROM ${t}`).join(" UNION ");
  const keys = (db.prepare(`SELECT store_key FROM (${union}) ORDER BY store_key`).all() as Array<{ store_key: unknown }>).map((r) => r.store_key);
  const configured = new Set(configuredKeys.map((k) => path.resolve(k)));
  for (const key of keys) {
    // Only absolute keys of this platform's form: a relative or non-text key is not one OpenClaw computed.
    if (typeof key !== "string" || !path.isAbsolute(key) || !key.endsWith(tail) || path.resolve(key) !== key) continue;
    if (key === currentKey || configured.has(key)) continue;
    const jobs = countUnder(db, "cron_jobs", key);
    if (existsHere(path.dirname(key))) {
      scan.left.push({ key, jobs, reason: `${path.dirname(key)} exists on this machine: it may be another state's cron store` });
      continue;
    }
    const rows = Object.fromEntries(CRON_KEYED_TABLES.map((t) => [t, countUnder(db, t, key)])) as Record<CronTable, number>;
    scan.moved.push({ key, jobs, rows });
  }
  return scan;
}

/** What became of one job id under an old key. */
export interface RekeyedJob {
  jobId: string;
  from: string;
  to: string;
  /**
   * moved: no row under the current key, its rows now are there; replaced-older: the old key's job was newer, the
   * current key's older row (and its scratch/receipts) was dropped; kept-newer: the current key's job is as new or
   * newer, the old key's rows were dropped. The dropped rows stay in the verified backup.
   */
  action: "moved" | "replaced-older" | "kept-newer";
  /** updated_at of the job row kept and of the one dropped (null: no job row on that side, only scratch/receipts). */
  keptUpdatedAt: number | null;
  droppedUpdatedAt: number | null;
  /** Rows removed from the live DB (jobs, scratch, receipts). */
  dropped: number;
}

export interface RekeyResult {
  currentKey: string;
  jobs: RekeyedJob[];
  /** Old keys not re-keyed, each with why (another state's store, or changed since the scan the backup covers). */
  left: LeftStoreKey[];
}

/** What the scan saw, to tell whether the rows changed between the backup and the re-key. */
export function scanFingerprint(db: AnyDb, scan: MovedStoreKeysScan): string {
  const keys = [...scan.moved.map((m) => m.key), scan.currentKey];
  const rows = keys.map((k) => (db.prepare("SELECT job_id, updated_at FROM cron_jobs WHERE store_key = ? ORDER BY job_id").all(k) as unknown[]));
  return JSON.stringify([scan.moved, rows, keys.map((k) => CRON_KEYED_TABLES.map((t) => countUnder(db, t, k)))]);
}

function jobIdsUnder(db: AnyDb, key: string): string[] {
  const union = CRON_KEYED_TABLES.map((t) => `SELECT job_id FROM ${t} WHERE store_key = ?`).join(" UNION ");
  return (db.prepare(`SELECT job_id FROM (${union}) ORDER BY job_id`).all(key, key, key) as Array<{ job_id: string }>).map((r) => r.job_id);
}

function jobUpdatedAt(db: AnyDb, key: string, jobId: string): number | null {
  const row = db.prepare("SELECT updated_at FROM cron_jobs WHERE store_key = ? AND job_id = ?").get(key, jobId) as { updated_at: number } | undefined;
  return row ? Number(row.updated_at) : null;
}

function rowsOf(db: AnyDb, key: string, jobId: string): number {
  return CRON_KEYED_TABLES.reduce((n, t) => n + (db.prepare(`SELECT count(*) AS n FROM ${t} WHERE store_key = ? AND job_id = ?`).get(key, jobId) as { n: number }).n, 0);
}

function dropJob(db: AnyDb, key: string, jobId: string): void {
  for (const t of CRON_KEYED_TABLES) db.prepare(`DELETE FROM ${t} WHERE store_key = ? AND job_id = ?`).run(key, jobId);
}

/**
 * Re-keys every moved store to the current key in one IMMEDIATE transaction (scanned again inside it). Per job id:
 * when both keys hold the job, the newer `updated_at` wins (a tie keeps the row already under the current key);
 * the loser's job, scratch and receipts are dropped; the winner's rows end under the current key. `expected`: the
 * fingerprint the backup was taken over; when the rows differ now, nothing is re-keyed.
 */
export function rekeyMovedStores(db: AnyDb, stateDir: string, configuredKeys: readonly string[], expected?: string): RekeyResult {
  return db.immediate(() => {
    const scan = findMovedStoreKeys(db, stateDir, configuredKeys);
    const result: RekeyResult = { currentKey: scan.currentKey, jobs: [], left: [...scan.left] };
    if (expected !== undefined && scanFingerprint(db, scan) !== expected) {
      result.left.push(...scan.moved.map((m) => ({ key: m.key, jobs: m.jobs, reason: "changed since the backup was taken (run `doctor --fix` again)" })));
      return result;
    }
    const to = scan.currentKey;
    for (const { key: from } of scan.moved) {
      for (const jobId of jobIdsUnder(db, from)) {
        const oldAt = jobUpdatedAt(db, from, jobId);
        const curAt = jobUpdatedAt(db, to, jobId);
        const curRows = rowsOf(db, to, jobId);
        // Which side's rows survive: the job row decides; rows without a job row lose to any rows already there.
        const oldWins = oldAt !== null && curAt !== null ? oldAt > curAt : oldAt !== null ? true : curAt !== null ? false : curRows === 0;
        if (oldWins) {
          dropJob(db, to, jobId);
          for (const t of CRON_KEYED_TABLES) db.prepare(`UPDATE ${t} SET store_key = ? WHERE store_key = ? AND job_id = ?`).run(to, from, jobId);
          result.jobs.push({ jobId, from, to, action: curRows === 0 ? "moved" : "replaced-older", keptUpdatedAt: oldAt, droppedUpdatedAt: curAt, dropped: curRows });
        } else {
          const dropped = rowsOf(db, from, jobId);
          dropJob(db, from, jobId);
          result.jobs.push({ jobId, from, to, action: "kept-newer", keptUpdatedAt: curAt, droppedUpdatedAt: oldAt, dropped });
        }
      }
    }
    return result;
  });
}
