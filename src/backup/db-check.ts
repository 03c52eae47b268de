// The checks every database taken out of an archive passes, in verify and in restore alike: full integrity and
// the manifest's record (row counts, version, page layout) when there is one — never which schema it holds.
import type { SqliteJobRunner } from "../state/sqlite-jobs.js";
import type { ArchivedDatabase } from "./read-archive.js";
import type { ManifestDatabase } from "./types.js";

export interface CheckedDatabase {
  archivePath: string;
  role: ManifestDatabase["role"];
  agentId: string | null;
  integrity: "ok" | "failed";
  rowCountsMatch: boolean;
  /** Listed in the manifest's `databases`; false for a SQLite file found only by its header. */
  listed: boolean;
  /** Empty when the snapshot passed every check. */
  problems: string[];
}

function compareCounts(expected: Record<string, number>, actual: Record<string, number>): string[] {
  const problems: string[] = [];
  for (const [table, n] of Object.entries(expected)) {
    if (!(table in actual)) problems.push(`table ${table} is missing`);
    else if (actual[table] !== n) problems.push(`table ${table} has ${actual[table]} rows, the manifest says ${n}`);
  }
  for (const table of Object.keys(actual)) if (!(table in expected)) problems.push(`table ${table} is not in the manifest`);
  return problems;
}

/**
 * Runs the full `integrity_check` and the row counts on `file` (on the runner's worker). Schema-agnostic on
 * purpose: a backup copies whatever SQLite a real install holds (OpenClaw's own formats, a version newer than
 * any this tool reads), and createBackup's verify pass skips this check for snapshots it already checked — a
 * check here that create does not make would be "verified" then unrestorable. Whether a restored database can
 * be read is for the commands that interpret rows (inspect, doctor) to say.
 */
export async function checkDatabaseSnapshot(runner: SqliteJobRunner, file: string, database: ArchivedDatabase): Promise<CheckedDatabase> {
  const { record } = database;
  const base = { archivePath: database.archivePath, role: database.role, agentId: database.agentId, listed: record !== undefined };
  let info;
  try {
    info = await runner.run({ op: "describe", file, check: "integrity_check" });
  } catch (error) {
    return { ...base, integrity: "failed", rowCountsMatch: false, problems: [`cannot open the snapshot: ${(error as Error).message}`] };
  }
  if (info.problems.length > 0) {
    return { ...base, integrity: "failed", rowCountsMatch: false, problems: info.problems.slice(0, 5).map((p) => `integrity_check: ${p}`) };
  }
  const problems: string[] = [];
  if (!record) return { ...base, integrity: "ok", rowCountsMatch: true, problems };
  const countProblems = compareCounts(record.rowCounts, info.rowCounts);
  problems.push(...countProblems);
  if (info.userVersion !== record.schemaVersion) problems.push(`schema version is ${info.userVersion}, the manifest says ${record.schemaVersion}`);
  if (info.pageCount !== record.pageCount || info.pageSize !== record.pageSize) {
    problems.push(`page layout is ${info.pageCount}×${info.pageSize}, the manifest says ${record.pageCount}×${record.pageSize}`);
  }
  return { ...base, integrity: "ok", rowCountsMatch: countProblems.length === 0, problems };
}

/** One line naming a database's first problem, for ArchiveProblem messages. */
export function describeDatabaseProblem(checked: CheckedDatabase): string {
  const what = checked.listed ? "database" : "SQLite file";
  return `${what} ${checked.archivePath} fails its check: ${checked.problems[0] ?? "unknown problem"}`;
}
