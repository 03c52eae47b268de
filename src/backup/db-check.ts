// Checks a database snapshot taken out of an archive against its manifest record (integrity, version, row counts).
import type { SqliteJobRunner } from "../state/sqlite-jobs.js";
import type { ManifestDatabase } from "./types.js";

export interface CheckedDatabase {
  archivePath: string;
  role: ManifestDatabase["role"];
  agentId: string | null;
  integrity: "ok" | "failed";
  rowCountsMatch: boolean;
  /** Empty when the snapshot matches its manifest record. */
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

/** Runs integrity_check and the row counts on `file` (on the runner's worker) and compares with the manifest. */
export async function checkDatabaseSnapshot(runner: SqliteJobRunner, file: string, record: ManifestDatabase, check: "integrity_check" | "quick_check" | "none" = "integrity_check"): Promise<CheckedDatabase> {
  const base = { archivePath: record.archivePath, role: record.role, agentId: record.agentId };
  let info;
  try {
    info = await runner.run({ op: "describe", file, check });
  } catch (error) {
    return { ...base, integrity: "failed", rowCountsMatch: false, problems: [`cannot open the snapshot: ${(error as Error).message}`] };
  }
  if (info.problems.length > 0) {
    return { ...base, integrity: "failed", rowCountsMatch: false, problems: info.problems.slice(0, 5).map((p) => `${check}: ${p}`) };
  }
  const problems = compareCounts(record.rowCounts, info.rowCounts);
  const rowCountsMatch = problems.length === 0;
  if (info.userVersion !== record.schemaVersion) problems.push(`schema version is ${info.userVersion}, the manifest says ${record.schemaVersion}`);
  if (info.pageCount !== record.pageCount || info.pageSize !== record.pageSize) {
    problems.push(`page layout is ${info.pageCount}×${info.pageSize}, the manifest says ${record.pageCount}×${record.pageSize}`);
  }
  return { ...base, integrity: "ok", rowCountsMatch, problems };
}

/** One line naming a database's first problem, for ArchiveProblem messages. */
export function describeDatabaseProblem(checked: CheckedDatabase): string {
  return `database ${checked.archivePath} fails its check: ${checked.problems[0] ?? "unknown problem"}`;
}
