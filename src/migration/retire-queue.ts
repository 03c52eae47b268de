// Retirement after durability: imported sources wait until their rows are synced to disk, then move or go.
import { describeError } from "../core/errors.js";
import { syncWalOf } from "../state/database.js";
import { UnsafeOwnedPathError, type OwnedPath } from "../state/owned-path.js";
import type { StatePaths } from "../state/paths.js";
import type { AgentDatabase, GlobalDatabase } from "../state/state-databases.js";
import type { LedgerStatus } from "./ledger.js";
import { checkRetirableSource, RetireBatch, retireFile } from "./retire.js";
import type { ImportCounts, PlannedSource, SourceOutcome } from "./types.js";

export interface PendingRetirement {
  s: PlannedSource;
  /** Already in the run's outcome list: updated in place when the source stays after all. */
  outcome: SourceOutcome;
  status: LedgerStatus;
  counts: ImportCounts;
  importedAt: number | null;
  /** Under migrated/<runId>/, or null to delete. */
  destination: string | null;
}

/**
 * Holds imported sources until `flush`, which syncs the WAL of the databases written (rows and ledger rows)
 * and only then retires them and syncs their directories: with synchronous=NORMAL a commit is not yet on
 * disk, and a power cut may lose a move but never rows whose source is already gone.
 */
export class RetireQueue {
  private readonly pending: PendingRetirement[] = [];
  /** Synced but not retired: with `hold`, sources wait for `release` (their rows are not yet where the runtime reads). */
  private readonly held: PendingRetirement[] = [];
  private readonly batch: RetireBatch;
  /** Other databases the waiting sources' transactions wrote through an attached schema: synced with `db`. */
  private readonly alsoWritten = new Set<string>();

  /**
   * `paths`: the boundaries sources and destinations are checked against; `recordKept` rewrites the source's
   * ledger row to say it stayed (removed = false).
   */
  constructor(
    private readonly global: GlobalDatabase,
    private readonly paths: Pick<StatePaths, "stateDir" | "credentialsDir">,
    private readonly recordKept: (pending: PendingRetirement) => void,
    private readonly hold = false,
  ) {
    this.batch = new RetireBatch(paths.stateDir);
  }

  get size(): number {
    return this.pending.length;
  }

  /** The sources held for `release`. */
  get waiting(): readonly PendingRetirement[] {
    return this.held;
  }

  /**
   * Retires the held sources, except those `keepReason` names a reason for: they stay in place and their outcome and
   * ledger row say why. Never throws.
   */
  release(keepReason: (pending: PendingRetirement) => { reason: string; failed: boolean } | null): void {
    for (const p of this.held.splice(0)) {
      const kept = keepReason(p);
      if (kept === null) this.retire(p);
      else this.keep(p, kept.reason, kept.failed);
    }
    this.batch.sync();
  }

  /** A database (file path) the next flush syncs too: one an import wrote as an attached schema. */
  alsoSync(dbPath: string): void {
    this.alsoWritten.add(dbPath);
  }

  defer(pending: PendingRetirement): SourceOutcome {
    this.pending.push(pending);
    return pending.outcome;
  }

  /** `db`: the agent database the waiting sources were written to (null for global-target sources). Never throws. */
  flush(db: AgentDatabase | null): void {
    if (this.pending.length === 0) return;
    let unsynced: string | null = null;
    try {
      db?.syncWal();
      for (const file of this.alsoWritten) syncWalOf(file);
      this.alsoWritten.clear();
      this.global.syncWal();
    } catch (error) {
      unsynced = `imported, but not retired: the new rows could not be synced to disk (${describeError(error)}); the next \`doctor --fix\` retires it`;
    }
    for (const p of this.pending.splice(0)) {
      if (unsynced !== null) this.keep(p, unsynced);
      else if (this.hold) this.held.push(p);
      else this.retire(p);
    }
    this.batch.sync();
  }

  /**
   * Moves or deletes the source (its ledger row already says so); on failure the row is rewritten to say it
   * stayed. The source is checked against the boundary here, not at plan time: a parent swapped for a link
   * since then leaves it in place (the import stays committed) and the warning names why.
   */
  private retire(pending: PendingRetirement): void {
    const { s, destination } = pending;
    let owned: OwnedPath;
    try {
      owned = checkRetirableSource(this.paths, s.path);
    } catch (error) {
      if (error instanceof UnsafeOwnedPathError) return this.keep(pending, `imported, but not retired: ${error.message}`);
      return this.keep(pending, `could not retire: ${describeError(error)}`);
    }
    if (owned.stat === null) return this.keep(pending, `could not retire: ${s.path} is no longer there`);
    const st = owned.stat;
    if (st.size !== s.sizeBytes || Math.trunc(st.mtimeMs) !== s.mtimeMs) {
      return this.keep(pending, "the file changed after it was read: left in place; the next `doctor --fix` imports the new content");
    }
    try {
      retireFile(s.path, destination, this.batch);
    } catch (error) {
      if (error instanceof UnsafeOwnedPathError) return this.keep(pending, `imported, but not retired: ${error.message}`);
      this.keep(pending, `imported, but could not be retired: ${describeError(error)}`);
    }
  }

  /** The source stays in place after all: the outcome and the ledger row say so. */
  private keep(pending: PendingRetirement, warning: string, failed = false): void {
    const { outcome } = pending;
    outcome.retired = null;
    delete outcome.retiredTo;
    if (failed) {
      // Its rows did not all reach the runtime's tables: the ledger says failed, so the next run tries again.
      outcome.status = "failed";
      outcome.reason = warning;
      pending.status = "failed";
    } else {
      if (outcome.status !== "failed") outcome.status = "warning";
      outcome.warnings.push(warning);
    }
    try {
      this.recordKept(pending);
    } catch (error) {
      outcome.warnings.push(`could not update the ledger: ${describeError(error)}`);
    }
  }
}
