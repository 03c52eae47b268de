// A state dir holding an OpenClaw 2026.9.6 global DB whose cron rows are keyed by where it was mounted before.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { createOpenclawDatabase } from "../../src/state/openclaw-database.js";
import { makeTempState, type TempState } from "../helpers/temp-state.js";

export const OLD_KEY = path.join(path.sep, "old", "mount", "state", "cron", "jobs.json");

export interface JobSeed {
  key: string;
  id: string;
  updatedAt: number;
  name?: string;
  scratch?: string;
  receipt?: string;
}

/** A state dir holding only a 9.6-format global DB (as OpenClaw's doctor leaves it) with the given cron rows. */
export function movedState(jobs: JobSeed[]): TempState {
  const state = makeTempState();
  fs.mkdirSync(state.stateDir, { recursive: true, mode: 0o700 });
  const db = createOpenclawDatabase({ path: state.paths.globalDbPath, role: "global" });
  try {
    for (const j of jobs) insertJob(db, j);
  } finally {
    db.close();
  }
  return state;
}

export function insertJob(db: Database.Database, j: JobSeed): void {
  db.prepare("INSERT INTO cron_jobs (store_key, job_id, name, enabled, payload_kind, job_json, updated_at) VALUES (?, ?, ?, 1, 'systemEvent', '{}', ?)").run(j.key, j.id, j.name ?? j.id, j.updatedAt);
  if (j.scratch !== undefined) db.prepare("INSERT INTO cron_job_scratch (store_key, job_id, content, revision, updated_at_ms) VALUES (?, ?, ?, 1, ?)").run(j.key, j.id, j.scratch, j.updatedAt);
  if (j.receipt !== undefined) {
    db.prepare("INSERT INTO cron_run_receipts (receipt_id, store_key, job_id, config_revision, agent_id, status, owner_pid, started_at_ms, finished_at_ms) VALUES (?, ?, ?, 'r1', 'main', 'ok', 1, ?, ?)").run(j.receipt, j.key, j.id, j.updatedAt, j.updatedAt + 1);
  }
}

type Row = [string, string, string | number | null];

/** Every cron row as (table, store_key, job_id + what tells it apart), sorted. */
export function cronRows(file: string): Row[] {
  const db = new Database(file, { readonly: true });
  try {
    const jobs = db.prepare("SELECT store_key, job_id, name, updated_at FROM cron_jobs").all() as Array<{ store_key: string; job_id: string; name: string; updated_at: number }>;
    const scratch = db.prepare("SELECT store_key, job_id, content FROM cron_job_scratch").all() as Array<{ store_key: string; job_id: string; content: string }>;
    const receipts = db.prepare("SELECT store_key, job_id, receipt_id FROM cron_run_receipts").all() as Array<{ store_key: string; job_id: string; receipt_id: string }>;
    return [
      ...jobs.map((r): Row => ["job", r.store_key, `${r.job_id}:${r.name}:${r.updated_at}`]),
      ...scratch.map((r): Row => ["scratch", r.store_key, `${r.job_id}:${r.content}`]),
      ...receipts.map((r): Row => ["receipt", r.store_key, `${r.job_id}:${r.receipt_id}`]),
    ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  } finally {
    db.close();
  }
}
