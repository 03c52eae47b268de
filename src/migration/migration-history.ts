// `migrate history`: the runs recorded in migration_runs, each with the per-source outcomes of its report.
import fs from "node:fs";
import type { StatePaths } from "../state/paths.js";
import { openGlobalDatabase } from "../state/state-databases.js";
import { countRuns, listRuns, type RunReport } from "./ledger.js";
import type { RunTotals, SourceOutcome } from "./types.js";

export interface MigrationHistoryOptions {
  paths: StatePaths;
  /** Newest first; default 20. */
  limit?: number;
}

export interface MigrationHistoryRun {
  id: string;
  status: string;
  startedAt: number;
  finishedAt: number | null;
  backupPath: string | null;
  backupSkipped: boolean;
  replanned: boolean;
  totals: RunTotals | null;
  sources: SourceOutcome[];
  changes: string[];
  warnings: string[];
  error?: string;
}

export interface MigrationHistoryResult {
  stateDir: string;
  databasePath: string;
  /** Runs in the ledger (all of them; `runs` holds the newest `limit`). */
  total: number;
  runs: MigrationHistoryRun[];
}

function parseReport(json: string | null): Partial<RunReport> {
  if (!json) return {};
  try {
    return JSON.parse(json) as Partial<RunReport>;
  } catch {
    return {};
  }
}

/** Read-only: a missing global database means no runs yet. */
export function migrationHistory(options: MigrationHistoryOptions): MigrationHistoryResult {
  const { paths } = options;
  const base = { stateDir: paths.stateDir, databasePath: paths.globalDbPath };
  if (!fs.existsSync(paths.globalDbPath)) return { ...base, total: 0, runs: [] };
  const db = openGlobalDatabase(paths, { mode: "read" });
  try {
    const rows = listRuns(db, options.limit ?? 20);
    return {
      ...base,
      total: countRuns(db),
      runs: rows.map((row) => {
        const report = parseReport(row.report_json);
        return {
          id: row.id,
          status: row.status,
          startedAt: row.started_at,
          finishedAt: row.finished_at,
          backupPath: report.backupPath ?? null,
          backupSkipped: report.backupSkipped ?? false,
          replanned: report.replanned ?? false,
          totals: report.totals ?? null,
          sources: report.sources ?? [],
          changes: report.changes ?? [],
          warnings: report.warnings ?? [],
          ...(report.error ? { error: report.error } : {}),
        };
      }),
    };
  } finally {
    db.close();
  }
}
