// One planned source through its transaction: rows and ledger row together, verify, then the deferred retirement.
import { describeError } from "../core/errors.js";
import { releaseMemory } from "../core/heap.js";
import { importInGroups, prepareRoutes, verifyInGroups, type RouteGroups } from "./agent-routes.js";
import type { AgentDatabase, GlobalDatabase } from "../state/state-databases.js";
import type { BrokenDatabase } from "./broken-databases.js";
import { importerFor } from "./importers/index.js";
import type { PreparedTranscript } from "./importers/transcript-parse.js";
import { findSourceByKey, ledgerCounts, writeSource, writeSourceAttached, writeSourceInTransaction, type LedgerStatus, type SourceReport, type SourceRowInput } from "./ledger.js";
import { retirementOf } from "./retire.js";
import type { RetireQueue } from "./retire-queue.js";
import type { ApplyMigrationOptions } from "./apply-migration.js";
import type { ImportContext, ImportCounts, MigrationProgress, PlannedSource, SourceImporter, SourceOutcome } from "./types.js";

export interface RunState {
  options: ApplyMigrationOptions;
  runId: string;
  mainKey: string;
  outcomes: SourceOutcome[];
  progress: MigrationProgress;
  retire: RetireQueue;
  /** The verified pre-migration archive of this run, once written. */
  backupPath: string | null;
  /** Agent databases set aside (corrupt, unreadable): nothing is written to them, not even through a route. */
  broken: readonly BrokenDatabase[];
}

export function outcomeOf(s: PlannedSource, status: SourceOutcome["status"], extra: Partial<SourceOutcome> = {}): SourceOutcome {
  return {
    kind: s.kind,
    agentId: s.agentId,
    path: s.path,
    relativePath: s.relativePath,
    sizeBytes: s.sizeBytes,
    mtimeMs: s.mtimeMs,
    sha256: s.sha256,
    targetTable: s.targetTable,
    action: s.action,
    status,
    warnings: [],
    notes: [],
    retired: null,
    ...extra,
  };
}

export function rowInput(runId: string, s: PlannedSource, outcome: SourceOutcome, status: LedgerStatus, counts: ImportCounts | null, importedAt: number | null, removed: boolean, archive?: string | null): SourceRowInput {
  const report: SourceReport = {
    ...outcome,
    mtime: new Date(s.mtimeMs).toISOString(),
    ...(archive ? { backupPath: archive } : {}),
    ...(counts ? { counts: { records: counts.records, rows: counts.rows, skipped: counts.skipped, expect: counts.expect } } : {}),
  };
  return {
    key: s.sourceKey!,
    kind: s.kind,
    relativePath: s.relativePath,
    targetTable: s.targetTable,
    sha256: s.sha256,
    sizeBytes: s.sizeBytes,
    records: counts?.records ?? s.records,
    runId,
    status,
    importedAt,
    removed,
    report,
  };
}

/** An importer bound to its target database: the transaction holding rows and ledger row, verify. */
interface BoundImporter {
  /**
   * Imports and calls `commitWith` with the counts inside the transaction of the rows, so the ledger row commits with
   * them. A store whose other agents take several groups (RouteGroups) commits the earlier groups first, each in a
   * transaction of its own, and the last with the store's own rows: `commitWith` then sees the counts of them all.
   */
  importWith(commitWith: (counts: ImportCounts) => void): ImportCounts;
  verify(expected: ImportCounts): string | null;
  /** Writes the ledger row inside `importWith` (same commit as the rows). */
  writeLedger(input: SourceRowInput): void;
}

/** Runs `run` in the transaction `tx` and hands its counts to `commitWith` before the commit. */
function importIn(tx: (fn: () => ImportCounts) => ImportCounts, run: () => ImportCounts, commitWith: (counts: ImportCounts) => void): ImportCounts {
  return tx(() => {
    const counts = run();
    commitWith(counts);
    return counts;
  });
}

/**
 * `agentDb` is the source's agent DB (global attached) for agent-target sources, null for global-target ones;
 * `routing` the other agents' databases a session index files keys under.
 */
function bindImporter(importer: SourceImporter, s: PlannedSource, ctx: ImportContext, global: GlobalDatabase, agentDb: AgentDatabase | null, routing: RouteGroups | null): BoundImporter {
  // A verification that throws (the file vanished, the DB is unreadable) is a mismatch, never a run failure.
  const safely = (verify: () => string | null): string | null => {
    try {
      return verify();
    } catch (error) {
      return `verification could not run (${describeError(error)})`;
    }
  };
  if (importer.target === "global") {
    return {
      importWith: (commitWith) => importIn((fn) => global.immediate(fn), () => importer.import(global, s, ctx), commitWith),
      verify: (expected) => safely(() => importer.verify(global, s, expected, ctx)),
      writeLedger: (input) => writeSourceInTransaction(global, input),
    };
  }
  if (agentDb === null || ctx.agentId === null) throw new Error(`source ${s.relativePath} targets an agent database but has no agent`);
  const agentId = ctx.agentId;
  const writeLedger = (input: SourceRowInput): void => writeSourceAttached(agentDb, input);
  if (routing === null) {
    const actx = { ...ctx, agentId };
    return {
      importWith: (commitWith) => importIn((fn) => agentDb.immediate(fn), () => importer.import(agentDb, s, actx), commitWith),
      verify: (expected) => safely(() => importer.verify(agentDb, s, expected, actx)),
      writeLedger,
    };
  }
  const last = routing.groups.length - 1;
  // In several groups, each pass writes (and checks) its group's keys only, and the last one the store's own too.
  const passCtx = (i: number, routes: ReadonlyMap<string, string>) => ({ ...ctx, agentId, routes, ...(last > 0 ? { routedPass: { own: i === last } } : {}) });
  return {
    importWith: (commitWith) => importInGroups(routing, agentDb, (i, routes) => importer.import(agentDb, s, passCtx(i, routes)), commitWith),
    verify: (expected) => verifyInGroups(routing, (i) => safely(() => routing.withGroup(i, (routes) => importer.verify(agentDb, s, expected, passCtx(i, routes))))),
    writeLedger,
  };
}

/** Imports one source in its own transaction (rows + ledger row), verifies, then retires it. */
export function processSource(state: RunState, agentDb: AgentDatabase | null, s: PlannedSource, prepared: PreparedTranscript | null): SourceOutcome {
  if (s.action === "skip" || s.sourceKey === null) return outcomeOf(s, "skipped", { reason: s.reason ?? "skipped" });
  if (!s.routedAgents?.length || agentDb === null) return processSourceWith(state, agentDb, s, prepared, null);
  let routing: RouteGroups;
  try {
    routing = prepareRoutes({ paths: state.options.paths, global: state.options.global, broken: state.broken, retire: state.retire }, agentDb, s.routedAgents);
  } catch (error) {
    return outcomeOf(s, "failed", { reason: describeError(error) });
  }
  try {
    return processSourceWith(state, agentDb, s, prepared, routing);
  } finally {
    routing.close();
  }
}

function processSourceWith(state: RunState, agentDb: AgentDatabase | null, s: PlannedSource, prepared: PreparedTranscript | null, routing: RouteGroups | null): SourceOutcome {
  const { global } = state.options;
  if (s.sourceKey === null) return outcomeOf(s, "skipped", { reason: s.reason ?? "skipped" });
  const ctx: ImportContext = { agentId: s.agentId, mainKey: state.mainKey, runId: state.runId, paths: state.options.paths, prepared };
  let importer: BoundImporter;
  try {
    importer = bindImporter(importerFor(s.kind), s, ctx, global, agentDb, routing);
  } catch (error) {
    return outcomeOf(s, "failed", { reason: describeError(error) });
  }
  const notes: string[] = [];
  // Kinds the design deletes (never-shipped sidecars) go once the verified backup holds them.
  const retirement = retirementOf(s, { stateDir: state.options.paths.stateDir, runId: state.runId, removeSources: Boolean(state.options.removeSources), deleteAfterBackup: importerFor(s.kind).retire === "delete-after-backup", backedUp: state.backupPath !== null });
  const destination = retirement.retired === "moved" ? retirement.retiredTo : null;

  if (s.action === "already-imported") {
    const row = findSourceByKey(global, s.sourceKey);
    const recorded = row ? ledgerCounts(row) : null;
    const mismatch = row && recorded ? importer.verify(recorded) : "the ledger row has no counts";
    if (mismatch === null && row && recorded) {
      const status: LedgerStatus = row.status === "warning" ? "warning" : "imported";
      const outcome = outcomeOf(s, "already-imported", { recordsParsed: recorded.records, reason: "unchanged since its import: nothing to write", ...retirement });
      // Ledger first, then the move: a crash in between leaves an already-imported file the next run retires.
      writeSource(global, rowInput(state.runId, s, outcome, status, recorded, row.imported_at, true));
      return state.retire.defer({ s, outcome, status, counts: recorded, importedAt: row.imported_at, destination });
    }
    notes.push(`the ledger said imported, but ${mismatch}: imported again`);
  }

  let counts: ImportCounts;
  let status: LedgerStatus = "imported";
  const importedAt = Date.now();
  try {
    counts = importer.importWith((c) => {
      status = c.warnings.length > 0 ? "warning" : "imported";
      // The ledger row already records the retirement about to happen: a crash before the move leaves an
      // already-imported source that the next run retires; a failed verification or move rewrites the row.
      const outcome = outcomeOf(s, status, { recordsParsed: c.records, rows: c.rows, warnings: c.warnings, ...retirement });
      importer.writeLedger(rowInput(state.runId, s, outcome, status, c, importedAt, true));
    });
  } catch (error) {
    const reason = describeError(error);
    const outcome = outcomeOf(s, "failed", { reason, notes });
    try {
      // A failed attempt remembers the archive holding these bytes: retries of them need no new backup.
      writeSource(global, rowInput(state.runId, s, outcome, "failed", null, null, false, state.backupPath ?? s.coveredByBackup));
    } catch (ledgerError) {
      outcome.warnings.push(`could not record the failure in the ledger: ${describeError(ledgerError)}`);
    }
    return outcome;
  }

  const outcome = outcomeOf(s, status, { recordsParsed: counts.records, rows: counts.rows, warnings: counts.warnings, notes: [...notes, ...counts.notes], ...retirement });
  // A verify re-reads the source: what the import held to parse a large one (a 150,000-key index: ~90 MB) is
  // garbage now, and need not sit beside the verify's own copy.
  if (s.sizeBytes >= VERIFY_COLLECT_BYTES) releaseMemory();
  const mismatch = importer.verify(counts);
  if (mismatch !== null) {
    // Committed but not what was parsed: never retire; the failed ledger row makes the next run import it again.
    outcome.status = "failed";
    outcome.reason = `verification failed after commit: ${mismatch}; the source was left in place`;
    outcome.retired = null;
    delete outcome.retiredTo;
    writeSource(global, rowInput(state.runId, s, outcome, "failed", counts, importedAt, false, state.backupPath ?? s.coveredByBackup));
    return outcome;
  }
  return state.retire.defer({ s, outcome, status, counts, importedAt, destination });
}

/** Sources at least this large are re-read by their verify after a full collection (nothing without --expose-gc). */
const VERIFY_COLLECT_BYTES = 16 * 1024 * 1024;

export function processSourceSkipped(s: PlannedSource): SourceOutcome {
  return outcomeOf(s, "skipped", { reason: s.reason ?? "skipped" });
}
