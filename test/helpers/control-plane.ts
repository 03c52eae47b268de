// Helpers for the control-plane importer tests: ledger rows per kind, re-import by upsert, malformed sources.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { expect } from "vitest";
import type { MigrationRunResult, SourceKind } from "../../src/migration/types.js";
import type { StatePaths } from "../../src/state/paths.js";
import { dumpState, migrate, rows } from "./migration.js";

export interface LedgerRow {
  source_path: string;
  migration_kind: string;
  target_table: string;
  status: string;
  source_sha256: string;
  source_size_bytes: number;
  source_record_count: number;
  removed_source: number;
  report_json: string;
}

export function ledgerOf(paths: StatePaths, kind: SourceKind): LedgerRow[] {
  return rows<LedgerRow>(paths.globalDbPath, "SELECT * FROM migration_sources WHERE migration_kind = ? ORDER BY source_path", kind);
}

/** Each imported source of `kind` has its ledger row: target table, the file's sha256 and size, the record count, retired. */
export function expectLedger(paths: StatePaths, run: MigrationRunResult, kind: SourceKind, targetTable: string, records: Record<string, number>): void {
  const ledger = ledgerOf(paths, kind);
  expect(Object.fromEntries(ledger.map((r) => [r.source_path, r.source_record_count]))).toEqual(records);
  for (const r of ledger) {
    const outcome = run.sources.find((o) => o.relativePath === r.source_path)!;
    expect(r).toMatchObject({ target_table: targetTable, status: expect.stringMatching(/^(imported|warning)$/), source_sha256: outcome.sha256, source_size_bytes: outcome.sizeBytes, removed_source: 1 });
    expect(r.source_sha256).toMatch(/^[0-9a-f]{64}$/);
  }
}

/** Puts a run's retired files back (same bytes and mtimes) and makes the ledger forget every source. */
export function restoreRetired(paths: StatePaths, run: MigrationRunResult): void {
  for (const o of run.sources) {
    if (!o.retiredTo) continue;
    fs.mkdirSync(path.dirname(o.path), { recursive: true });
    fs.renameSync(o.retiredTo, o.path);
  }
  const db = new Database(paths.globalDbPath);
  db.prepare("DELETE FROM migration_sources").run();
  db.close();
}

/**
 * Re-import by upsert: the retired files go back (renamed: same bytes and mtimes), the ledger forgets them,
 * and a second run must leave every table exactly as the first did.
 */
export async function expectReimportIdempotent(paths: StatePaths, run: MigrationRunResult): Promise<void> {
  const before = dumpState(paths);
  restoreRetired(paths, run);
  const again = await migrate(paths);
  expect(again.run.sources.filter((o) => o.status === "imported" || o.status === "warning")).toHaveLength(run.sources.filter((o) => o.retiredTo).length);
  const after = dumpState(paths);
  expect(after).toEqual(before);
  // And a plain re-run on the retired tree is a no-op.
  const third = await migrate(paths);
  expect(third.run.sources).toEqual([]);
}

/** Overwrites a file of the state dir with text that does not parse. */
export function corrupt(stateDir: string, rel: string, text = '{"broken": '): void {
  fs.writeFileSync(path.join(stateDir, rel), text);
}
