// Applies the plan (SPEC §5): verified backup → per-source transaction (rows + ledger) → verify → retire → record.
import crypto from "node:crypto";
import path from "node:path";
import { describeError, SchemaFormatError, SQLITE_BUSY_MESSAGE } from "../core/errors.js";
import { isOurFormat } from "../state/db-format.js";
import { collectGarbage, releaseMemory } from "../core/heap.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { agentBatches } from "./agent-routes.js";
import { openAgentDatabase, type AgentDatabase, type GlobalDatabase } from "../state/state-databases.js";
import { takePreMigrationBackup, type PreMigrationBackup, type PreMigrationBackupFn } from "./backup-step.js";
import { brokenFromBackupError, findBrokenAgentDatabases, withoutBrokenAgents, type BrokenDatabase } from "./broken-databases.js";
import { SET_ASIDE_PREFIX, unretiredOutcomes } from "./upgrade-wait.js";
import { TranscriptPrepareAhead, TranscriptPreparer, type TranscriptPrepareMode } from "./importers/transcript-prepare.js";
import { moveLegacyAgentDir } from "./layout.js";
import { applyConfigFix } from "./legacy-config.js";
import { closeInterruptedRuns, finishRun, LEDGER_SCHEMA, startRun, writeSource } from "./ledger.js";
import { adoptPlan, forgetInspections, planMigration, readConfiguredMainKey, yieldToLoop } from "./plan-migration.js";
import { removeDirIfEmpty } from "./retire.js";
import { RetireQueue, type PendingRetirement } from "./retire-queue.js";
import { outcomeOf, processSource, processSourceSkipped, rowInput, type RunState } from "./process-source.js";
import type { MigrationPlan, MigrationProgress, MigrationRunResult, PlannedSource, RunStatus, SourceOutcome } from "./types.js";

/** What the merge path answers before retirement (see ApplyMigrationOptions.beforeRetire). */
export interface MergedBeforeRetire {
  /** Why a source must stay in place (null: retire it). */
  keep: (pending: PendingRetirement) => { reason: string; failed: boolean } | null;
  /** Held sources whose outcome the merge amended (a warning that no longer holds): their ledger rows are rewritten. */
  amended: readonly PendingRetirement[];
  /** What the merge did and what it left, for the run's report (and so its ledger row). */
  changes: readonly string[];
  warnings: readonly string[];
}

export interface ApplyMigrationOptions {
  paths: StatePaths;
  /** Open for writing; the caller holds the maintenance lease for the whole call. */
  global: GlobalDatabase;
  /** The plan the operator saw; the tree is re-planned under the lease, a difference is reported, and this object then holds the plan applied. */
  plan?: MigrationPlan;
  /** false = `--no-backup`: import without the pre-migration archive (reported loudly). */
  backup?: boolean;
  /** `--backup-dir`. */
  backupDir?: string;
  /** `--remove-sources`: delete retired sources instead of moving them under migrated/<runId>/. */
  removeSources?: boolean;
  /** Tests inject a backup step; the default calls createBackup() from src/backup. */
  takeBackup?: PreMigrationBackupFn;
  /** Where small transcripts are parsed ahead of their transaction (tests compare the three). */
  prepareTranscripts?: TranscriptPrepareMode;
  onProgress?: (event: MigrationProgress) => void;
  /**
   * The ledger the plan consults (what was imported, skipped or failed before); default `global`. The merge path
   * imports into a fresh staging ledger but plans against the live one, so `migrate skip` and earlier runs count.
   */
  planLedger?: GlobalDatabase;
  /** A verified archive of the live state this maintenance run already took (the merge path): no second one. */
  coveredBy?: string;
  /**
   * The merge path (merge-legacy.ts): the importers wrote a staging state, so no source is retired until this hook
   * has put the rows where the runtime reads them. It answers, per imported source, why it must stay in place
   * (null: retire it). Throwing keeps every source in place, failed.
   */
  beforeRetire?: (held: readonly PendingRetirement[]) => Promise<MergedBeforeRetire>;
}

/** Imported bytes between full garbage collections (each ~10 ms on the small live heap of a run). */
const COLLECT_EVERY_BYTES = 64 * 1024 * 1024;

/** Sources imported between full garbage collections (~10 KB of garbage each). */
const COLLECT_EVERY_SOURCES = 512;

/** Sources retired per WAL sync: one or two fsyncs per batch instead of per source. */
const RETIRE_BATCH = 128;

export function newRunId(now: number): string {
  return `${new Date(now).toISOString().replace(/[-:.]/g, "")}-${crypto.randomBytes(3).toString("hex")}`;
}

/**
 * A backup is taken only when this run changes something no earlier verified archive holds: a new or changed
 * source, a deletion, a layout move or a config rewrite. Retrying an unchanged source whose earlier attempt
 * failed after a verified backup (still on disk), or retiring already-imported files, takes none.
 */
export function needsBackup(plan: MigrationPlan, removeSources: boolean): boolean {
  return (
    plan.sources.some((s) => ((s.action === "import" || s.action === "changed-since-import") && !s.coveredByBackup) || (removeSources && s.action === "already-imported")) ||
    plan.layout.some((l) => l.kind === "legacy-agent-dir" && l.action === "move") ||
    plan.config.keys.some((k) => k.blocked === null)
  );
}

/** Paths the backup cannot read: refused before it starts (it would fail, or leave a directory out and still verify). */
function unreadableError(plan: MigrationPlan): string | null {
  const list = plan.inventory.unreadable;
  if (list.length === 0) return null;
  const shown = list.slice(0, 10).join(", ") + (list.length > 10 ? `, … (${list.length - 10} more)` : "");
  return `the pre-migration backup cannot read ${list.length} path(s): ${shown}; make them readable by this user (chmod -R u+rX <path>) or move them out of the state dir, then re-run; nothing was imported`;
}

/** An EACCES from the backup names the file; this adds what to do about it. */
function backupFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const fix = code === "EACCES" || code === "EPERM" ? "; make the file readable by this user (chmod u+r <path>) or move it out of the state dir, then re-run" : "";
  return `the pre-migration backup failed (${describeError(error)})${fix}; nothing was imported`;
}

function describePlanChange(before: MigrationPlan, after: MigrationPlan): string {
  const key = (s: PlannedSource): string => `${s.relativePath}\u0000${s.sha256}\u0000${s.action}`;
  const old = new Set(before.sources.map(key));
  const now = new Set(after.sources.map(key));
  const added = after.sources.filter((s) => !old.has(key(s))).length;
  const gone = before.sources.filter((s) => !now.has(key(s))).length;
  return `${added} source(s) new or changed, ${gone} gone or changed; ${after.sources.length} source(s) now`;
}

export function runStatusOf(outcomes: readonly SourceOutcome[], plan: MigrationPlan, error?: string): RunStatus {
  if (error) return "failed";
  // Every source it tried failed: nothing was migrated.
  const tried = outcomes.filter((o) => o.status !== "skipped");
  if (tried.length > 0 && tried.every((o) => o.status === "failed")) return "failed";
  const attention = outcomes.some((o) => o.status === "failed" || o.status === "warning") || plan.sources.some((s) => s.action === "skip" && s.attention);
  return attention ? "warning" : "completed";
}

export async function applyMigration(options: ApplyMigrationOptions): Promise<MigrationRunResult> {
  const { paths, global } = options;
  // The importers and the ledger write this tool's tables: never into a database in another program's format
  // (a caller holding the lease on OpenClaw's own global DB opened it with formats "any").
  if (!isOurFormat(global.format)) {
    throw new SchemaFormatError(`Database ${global.path} was written by ${global.format.writtenBy}; openclaw-state cannot write its format yet — run \`openclaw doctor --fix\` (nothing was changed).`, { path: global.path });
  }
  const startedAt = Date.now();
  const runId = newRunId(startedAt);
  const changes: string[] = [];
  const warnings: string[] = [];
  const interrupted = closeInterruptedRuns(global, startedAt);
  if (interrupted.length > 0) changes.push(`closed ${interrupted.length} interrupted run(s) (${interrupted.join(", ")}) as failed; this run finishes their work`);

  const planLedger = options.planLedger ?? global;
  let plan = await planMigration({ paths, ledger: planLedger, ...(options.plan ? { previous: options.plan } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  const replanned = options.plan !== undefined && options.plan.fingerprint !== plan.fingerprint;
  if (replanned) warnings.push(`the legacy tree changed since the plan was shown: re-planned under the lease (${describePlanChange(options.plan!, plan)})`);
  // The caller's plan becomes the one applied: one plan in memory, and the caller reports what ran.
  if (options.plan) plan = adoptPlan(options.plan, plan);

  let actionable = plan.sources.filter((s) => s.action !== "skip");
  // A corrupt or unreadable agent DB isolates itself: left as it is, out of the backup, its sources left in place.
  const broken: BrokenDatabase[] = findBrokenAgentDatabases(paths);
  /** Agent id → its legacy sources left in place because its database is set aside. */
  const leftWith = new Map<string, number>();
  const state: RunState = {
    options,
    runId,
    mainKey: readConfiguredMainKey(paths, paths.stateDir),
    outcomes: [],
    retire: new RetireQueue(global, paths, (p) => writeSource(global, rowInput(runId, p.s, p.outcome, p.status, p.counts, p.importedAt, false)), Boolean(options.beforeRetire)),
    progress: { phase: "import", done: 0, total: actionable.length, bytesDone: 0, bytesTotal: actionable.reduce((n, s) => n + s.sizeBytes, 0) },
    backupPath: null,
    broken,
  };
  let backupPath: string | null = null;
  let backupSkipped = false;
  let error: string | undefined;
  const preparer = new TranscriptPreparer(options.prepareTranscripts);
  // Started now so its start-up overlaps with the backup and the layout moves.
  if (actionable.some((s) => s.kind === "transcript")) preparer.warm();
  try {
    if (options.coveredBy) {
      backupPath = options.coveredBy;
      state.backupPath = backupPath;
    } else if (needsBackup(withoutBrokenAgents(plan, broken), Boolean(options.removeSources))) {
      if (options.backup === false) {
        backupSkipped = true;
        warnings.push("NO BACKUP: --no-backup skipped the pre-migration backup; there is no archive to roll back to");
        for (const p of plan.inventory.unreadable) warnings.push(`cannot read ${p}: it was not migrated and nothing holds a copy of it`);
      } else {
        const unreadable = unreadableError(plan);
        if (unreadable) throw new Error(unreadable);
        options.onProgress?.({ phase: "backup", done: 0, total: 1, bytesDone: 0, bytesTotal: 0 });
        const take = options.takeBackup ?? takePreMigrationBackup;
        // The plan passes leave their garbage behind: collected so the backup's own working set starts low.
        releaseMemory();
        let backup: PreMigrationBackup | undefined;
        while (!backup) {
          try {
            backup = await take({
              paths,
              ...(options.backupDir ? { output: options.backupDir } : {}),
              ...(broken.length > 0 ? { setAside: broken.map((b) => ({ path: b.path, reason: `agent database "${b.agentId}" cannot be opened (${b.reason}); left in place untouched` })) } : {}),
              onProgress: (p) => options.onProgress?.({ phase: "backup", done: 0, total: 1, bytesDone: p.bytesDone, bytesTotal: p.bytesTotal, step: p.phase }),
            });
          } catch (backupError) {
            // A damaged page the open did not reach fails the snapshot of that one database: set it aside too, retry.
            const more = brokenFromBackupError(paths, backupError, broken);
            if (!more) throw new Error(backupFailure(backupError));
            broken.push(more);
          }
        }
        backupPath = backup.archivePath;
        state.backupPath = backupPath;
        warnings.push(...backup.warnings);
        changes.push(`verified pre-migration backup: ${backupPath}`);
      }
    }
    // From here on the row names the archive: a killed run keeps its way back.
    startRun(global, runId, startedAt, { kind: "legacy-state", stateDir: paths.stateDir, backupPath, backupSkipped, phase: "importing" });

    let replan = false;
    if (plan.config.keys.some((k) => k.blocked === null)) {
      options.onProgress?.({ ...state.progress, phase: "config", current: plan.config.path });
      try {
        const fixed = applyConfigFix(paths, plan.root);
        changes.push(...fixed.changes);
        warnings.push(...fixed.warnings);
        replan = fixed.extracted;
      } catch (configError) {
        warnings.push(`config ${plan.config.path} was not rewritten: ${describeError(configError)}`);
      }
    } else {
      for (const k of plan.config.keys) warnings.push(`config ${plan.config.path}: ${k.key} left as is: ${k.blocked}`);
    }

    let movedLayout = false;
    for (const item of plan.layout) {
      if (item.kind !== "legacy-agent-dir" || item.action !== "move") continue;
      options.onProgress?.({ ...state.progress, phase: "layout", current: item.path });
      const moved = moveLegacyAgentDir(item, paths.stateDir);
      movedLayout ||= moved.changes.length > 0;
      changes.push(...moved.changes);
      warnings.push(...moved.warnings);
    }
    // Files of the old agent/ dir (auth profiles, models.json) are sources at their new place: plan them now,
    // so one `--fix` converges.
    if (movedLayout || replan) {
      plan = await planMigration({ paths, ledger: planLedger, previous: plan });
      actionable = plan.sources.filter((s) => s.action !== "skip");
      state.progress.total = actionable.length;
      state.progress.bytesTotal = actionable.reduce((n, s) => n + s.sizeBytes, 0);
    }

    // No re-plan follows: the inspections kept for one (~250 bytes a source) go before the import.
    forgetInspections(plan);
    let lastYield = Date.now();
    // The plan pass leaves its garbage behind; so does every source: collected in batches (peak RSS < 256 MB).
    releaseMemory();
    let lastCollect = 0;
    let lastCollectCount = 0;
    const runSources = async (db: AgentDatabase | null, sources: PlannedSource[]): Promise<void> => {
      let locked: string | null = null;
      // Small transcripts are read, hashed and parsed on a worker while the previous ones are written.
      const ahead = new TranscriptPrepareAhead(sources, preparer);
      for (const [index, s] of sources.entries()) {
        options.onProgress?.({ ...state.progress, current: s.relativePath });
        // Once the database stayed locked past the busy timeout, the other sources would each wait as long: keep them.
        if (locked !== null && s.action !== "skip") {
          state.outcomes.push(outcomeOf(s, "failed", { reason: locked }));
          continue;
        }
        const prepared = await ahead.take(index);
        const outcome = processSource(state, db, s, prepared);
        preparer.recycle(prepared);
        if (outcome.status === "failed" && outcome.reason === SQLITE_BUSY_MESSAGE) {
          locked = `not attempted: ${path.relative(paths.stateDir, db?.path ?? paths.globalDbPath)} ${outcome.reason}`;
        }
        state.outcomes.push(outcome);
        if (s.action !== "skip") {
          state.progress.done += 1;
          state.progress.bytesDone += s.sizeBytes;
        }
        if (state.retire.size >= RETIRE_BATCH) state.retire.flush(db);
        // By bytes for big sources, by count for many small ones (20k small transcripts never reach 64 MB).
        if (state.progress.bytesDone - lastCollect >= COLLECT_EVERY_BYTES || state.progress.done - lastCollectCount >= COLLECT_EVERY_SOURCES) {
          collectGarbage();
          lastCollect = state.progress.bytesDone;
          lastCollectCount = state.progress.done;
        }
        // Between sources (never inside a transaction), every ~50 ms: lets the spinner and the lease heartbeat run.
        if (Date.now() - lastYield > 50) {
          await yieldToLoop();
          lastYield = Date.now();
        }
      }
    };
    for (const [agentId, sources] of agentBatches(plan.sources)) {
      const unreadable = broken.find((b) => b.agentId === agentId);
      if (unreadable) {
        const reason = `${SET_ASIDE_PREFIX} "${agentId}" (${unreadable.relativePath}) cannot be opened (${unreadable.reason}); it and this file were left as they are`;
        for (const s of sources) state.outcomes.push(s.action === "skip" ? processSourceSkipped(s) : outcomeOf(s, "failed", { reason }));
        leftWith.set(agentId, (leftWith.get(agentId) ?? 0) + sources.filter((s) => s.action !== "skip").length);
        continue;
      }
      if (sources.every((s) => s.action === "skip")) {
        state.outcomes.push(...sources.map((s) => processSourceSkipped(s)));
        continue;
      }
      let db: AgentDatabase;
      try {
        db = openAgentDatabase(paths, agentId, { mode: "write", create: true, global });
      } catch (openError) {
        // One agent's database (too new, not ours, unwritable) must not stop the other agents.
        const reason = `agent database "${agentId}" cannot be opened: ${describeError(openError)}; its sources were left in place`;
        for (const s of sources) state.outcomes.push(s.action === "skip" ? processSourceSkipped(s) : outcomeOf(s, "failed", { reason }));
        continue;
      }
      try {
        db.attach(paths.globalDbPath, LEDGER_SCHEMA);
        await runSources(db, sources);
      } finally {
        // Also after an unexpected error: the waiting sources are committed and verified.
        state.retire.flush(db);
        db.detach(LEDGER_SCHEMA);
        db.close();
      }
    }
    // Control-plane sources: each in its own transaction on the global DB (rows and ledger row together).
    try {
      await runSources(null, plan.sources.filter((s) => s.targetDatabase === "global" || s.agentId === null));
    } finally {
      state.retire.flush(null);
    }
    if (options.beforeRetire) {
      options.onProgress?.({ ...state.progress, phase: "merge" });
      const merged = await options.beforeRetire(state.retire.waiting);
      state.retire.release(merged.keep);
      changes.push(...merged.changes);
      warnings.push(...merged.warnings);
      // A source kept in place had its row rewritten by the queue; a retired one gets its amended outcome here.
      for (const p of merged.amended) if (p.outcome.retired !== null) writeSource(global, rowInput(runId, p.s, p.outcome, p.status, p.counts, p.importedAt, true));
    }
    options.onProgress?.({ ...state.progress, phase: "retire" });
    // Deepest first, then up while empty (delivery-queue/failed/ then delivery-queue/), never the state dir itself.
    const stateDir = path.resolve(paths.stateDir);
    const dirs = [...new Set(state.outcomes.filter((o) => o.retired).map((o) => path.dirname(path.resolve(o.path))))].sort((a, b) => b.length - a.length);
    for (let dir of dirs) {
      while (dir !== stateDir && isPathInside(stateDir, dir) && removeDirIfEmpty(stateDir, dir)) {
        changes.push(`removed the empty legacy directory ${dir}`);
        dir = path.dirname(dir);
      }
    }
  } catch (runError) {
    error = describeError(runError);
  } finally {
    await preparer.close();
    // Imported into the staging state only (the merge did not run or failed): every one stays, and is tried again.
    const why = `imported into the staging state, but not merged into OpenClaw's databases${error ? ` (${error})` : ""}; left in place, the next \`doctor --fix\` tries again`;
    state.retire.release(() => ({ reason: why, failed: true }));
  }

  const outcomes = state.outcomes;
  for (const b of broken) {
    const waiting = leftWith.get(b.agentId) ?? 0;
    warnings.push(`agent database "${b.agentId}" (${b.path}) cannot be opened (${b.reason}): it was left byte-identical and is not in the backup archive${waiting > 0 ? `, and its ${waiting} legacy source(s) stay in place, not imported` : ""}; ${b.remedy}`);
  }
  const unretired = unretiredOutcomes(outcomes);
  if (unretired.length > 0) {
    warnings.push(`${unretired.length} source(s) were imported but not retired (each is named below with why); they stay in place and the next \`doctor --fix\` retires them once the way is clear`);
  }
  const imported = outcomes.filter((o) => (o.status === "imported" || o.status === "warning") && o.action !== "already-imported" && o.rows);
  if (imported.length > 0) changes.push(`imported ${imported.length} source(s)`);
  const finishedAt = Date.now();
  const result: MigrationRunResult = {
    runId,
    status: runStatusOf(outcomes, plan, error),
    stateDir: paths.stateDir,
    startedAt,
    finishedAt,
    backupPath,
    backupSkipped,
    replanned,
    sources: outcomes,
    changes,
    warnings,
    totals: {
      sources: outcomes.length,
      imported: imported.length,
      alreadyImported: outcomes.filter((o) => o.status === "already-imported").length,
      failed: outcomes.filter((o) => o.status === "failed").length,
      skipped: outcomes.filter((o) => o.status === "skipped").length,
      retired: outcomes.filter((o) => o.retired !== null).length,
      records: imported.reduce((n, o) => n + (o.recordsParsed ?? 0), 0),
      bytes: imported.reduce((n, o) => n + o.sizeBytes, 0),
    },
    ...(broken.length > 0 ? { skippedDatabases: broken.map((b) => ({ ...b })) } : {}),
    ...(error ? { error } : {}),
  };
  options.onProgress?.({ ...state.progress, phase: "record" });
  // The run report serializes every outcome: make room first (a run of 20k small sources left ~50 MB of garbage).
  releaseMemory();
  finishRun(global, result, {
    kind: "legacy-state",
    stateDir: paths.stateDir,
    backupPath,
    backupSkipped,
    replanned,
    plan: { fingerprint: plan.fingerprint, summary: plan.summary, layout: plan.layout, leftovers: plan.leftovers.length, notes: plan.notes },
    sources: outcomes,
    changes,
    warnings,
    totals: result.totals,
    ...(error ? { error } : {}),
  });
  return result;
}

