// The merge path: legacy sources beside a state already in OpenClaw's current format are imported into a staging state, upgraded there, and merged record by record into the live databases before any source is retired.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import { agentDbPath, stagingStatePaths, type StatePaths } from "../state/paths.js";
import { ensurePrivateDirBelow } from "../state/private-fs.js";
import { openGlobalDatabase, type GlobalDatabase } from "../state/state-databases.js";
import { writeUpgradedCopies, type UpgradeTarget } from "../state/upgrade/upgrade-state.js";
import { mergeIntoCurrent, type MergeReport } from "../state/merge/merge-into-current.js";
import { adoptLiveSessionKeys, placeNewAgentDatabase, stripStagingBookkeeping, type AdoptedSessionKey } from "../state/merge/staged-files.js";
import { applyMigration } from "./apply-migration.js";
import { takePreMigrationBackup, type PreMigrationBackupFn } from "./backup-step.js";
import { findBrokenAgentDatabases } from "./broken-databases.js";
import { copyRunLedger } from "./ledger.js";
import type { PendingRetirement } from "./retire-queue.js";
import type { MigrationPlan, MigrationProgress, MigrationRunResult } from "./types.js";

export interface MergeLegacyOptions {
  /** The live state (its databases in OpenClaw's current format). */
  paths: StatePaths;
  /** The live global database, opened by the caller, which holds the maintenance lease on it for the whole call. */
  live: GlobalDatabase;
  plan: MigrationPlan;
  backup?: boolean;
  backupDir?: string;
  removeSources?: boolean;
  takeBackup?: PreMigrationBackupFn;
  onProgress?: (event: MigrationProgress) => void;
  now?: () => number;
}

export interface MergeLegacyResult {
  run: MigrationRunResult;
  /** `<stateDir>/migrated/merge-<time>/`: the staging state, its upgraded copies and the rows the merge kept out or replaced (kept). */
  stagingDir: string;
  merges: MergeReport[];
  /** Databases a merge could not write (nothing of them changed): their sources stay in place. */
  failedMerges: Array<{ role: "global" | "agent"; agentId?: string; path: string; error: string }>;
  /** Agent databases this run created (agents the runtime had no database for yet). */
  createdAgentDbs: string[];
}

/** Rows named one by one in the run's report; the rest are counted (all of them are in the kept-rows file). */
const NAMED_ROWS = 50;

function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, "-");
}

/** Agent ids with a staging agent database (written by this run's importers). */
function stagedAgentIds(stagingDir: string): string[] {
  const dir = path.join(stagingDir, "agents");
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((id) => fs.existsSync(path.join(dir, id, "agent", "openclaw-agent.sqlite"))).sort();
}

export async function mergeLegacyIntoCurrent(options: MergeLegacyOptions): Promise<MergeLegacyResult> {
  const { paths } = options;
  const now = options.now ?? Date.now;
  // Every legacy record was written before this run began: a later staged time is the import's own clock.
  const startedAt = now();
  // The live state is what changes: its verified archive first (the staging state is a scratch area inside it).
  let coveredBy: string | undefined;
  const backupWarnings: string[] = [];
  if (options.backup !== false) {
    options.onProgress?.({ phase: "backup", done: 0, total: 1, bytesDone: 0, bytesTotal: 0 });
    // A live agent database that cannot be opened stays out of the archive, named; its sources stay in place.
    const broken = findBrokenAgentDatabases(paths);
    const backup = await (options.takeBackup ?? takePreMigrationBackup)({
      paths,
      ...(options.backupDir ? { output: options.backupDir } : {}),
      ...(broken.length > 0 ? { setAside: broken.map((b) => ({ path: b.path, reason: `agent database "${b.agentId}" cannot be opened (${b.reason}); left in place untouched` })) } : {}),
      onProgress: (p) => options.onProgress?.({ phase: "backup", done: 0, total: 1, bytesDone: p.bytesDone, bytesTotal: p.bytesTotal, step: p.phase }),
    });
    coveredBy = backup.archivePath;
    backupWarnings.push(...backup.warnings);
  }
  const stagingDir = path.join(paths.stateDir, "migrated", `merge-${stamp(now())}`);
  ensurePrivateDirBelow(paths.stateDir, stagingDir);
  const staging = stagingStatePaths(paths, stagingDir);
  const stagingGlobal = openGlobalDatabase(staging, { mode: "write", create: true });
  const merges: MergeReport[] = [];
  const failedMerges: MergeLegacyResult["failedMerges"] = [];
  const createdAgentDbs: string[] = [];
  const adoptedKeys: Array<AdoptedSessionKey & { agentId: string }> = [];
  try {
    const run = await applyMigration({
      paths: staging,
      global: stagingGlobal,
      plan: options.plan,
      planLedger: options.live,
      backup: options.backup !== false,
      ...(coveredBy ? { coveredBy } : {}),
      ...(options.removeSources ? { removeSources: true } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      beforeRetire: async (held) => {
        const outcome = mergeStaged({ paths, staging, stagingDir, now: now(), startedAt }, merges, failedMerges, createdAgentDbs, adoptedKeys);
        const report = { changes: coveredBy ? [`verified pre-migration backup: ${coveredBy}`] : [], warnings: [...backupWarnings] };
        for (const a of adoptedKeys) report.changes.push(`session ${a.sessionId} (agent "${a.agentId}") stays under the runtime's key ${a.to}; the import had filed it as ${a.from}`);
        describeMerges(report, merges, failedMerges, createdAgentDbs, stagingDir);
        return { keep: (pending) => keepReason(pending, outcome), amended: amendAdopted(held, adoptedKeys), ...report };
      },
    });
    // This run's ledger rows, written in the staging ledger as the sources were imported and retired, go to the live one.
    try {
      copyRunLedger(stagingGlobal, options.live, run.runId, paths.stateDir);
    } catch (error) {
      run.warnings.push(`the run's ledger rows could not be copied into ${paths.globalDbPath} (${describeError(error)}); they stay in the staging ledger under ${stagingDir}`);
    }
    return { run, stagingDir, merges, failedMerges, createdAgentDbs };
  } finally {
    stagingGlobal.close();
  }
}

interface MergeOutcome {
  /** `<agentId>\0<sessionId>` → the conflict's description. */
  conflicts: Map<string, string>;
  /** "global" or the agent id whose merge failed → why. */
  failed: Map<string, string>;
}

/**
 * Upgrades the staging databases into copies in OpenClaw's format (under `<stagingDir>/openclaw/`), then merges each
 * agent copy and the global copy into the live files. Each live file is one transaction: a failure leaves it as it
 * was and keeps that database's sources in place; the others still merge.
 */
function mergeStaged(
  ctx: { paths: StatePaths; staging: StatePaths; stagingDir: string; now: number; startedAt: number },
  merges: MergeReport[],
  failedMerges: MergeLegacyResult["failedMerges"],
  createdAgentDbs: string[],
  adoptedKeys: Array<AdoptedSessionKey & { agentId: string }>,
): MergeOutcome {
  const outcome: MergeOutcome = { conflicts: new Map(), failed: new Map() };
  const targets: UpgradeTarget[] = [
    { role: "global", path: ctx.staging.globalDbPath, keepAt: ctx.staging.globalDbPath },
    ...stagedAgentIds(ctx.stagingDir).map((agentId): UpgradeTarget => ({ role: "agent", agentId, path: agentDbPath(ctx.staging, agentId), keepAt: agentDbPath(ctx.staging, agentId) })),
  ];
  const copyOf = (file: string): string => {
    const out = path.join(ctx.stagingDir, "openclaw", path.relative(ctx.stagingDir, file));
    ensurePrivateDirBelow(ctx.paths.stateDir, path.dirname(out));
    return out;
  };
  let copies: ReturnType<typeof writeUpgradedCopies>;
  try {
    copies = writeUpgradedCopies({ paths: ctx.staging, targets, now: ctx.now }, (t) => copyOf(t.path));
  } catch (error) {
    outcome.failed.set("*", `the staging state could not be written in OpenClaw's format (${describeError(error)})`);
    failedMerges.push({ role: "global", path: ctx.paths.globalDbPath, error: describeError(error) });
    return outcome;
  }
  const agents = [
    ...copies.staged.filter((s) => s.target.role === "agent").map((s) => ({ agentId: s.target.agentId!, file: s.tmp })),
    ...copies.created.map((c) => ({ agentId: c.result.agentId!, file: c.tmp })),
  ];
  const keptDir = path.join(ctx.stagingDir, "kept");
  for (const { agentId, file } of agents) {
    const live = agentDbPath(ctx.paths, agentId);
    try {
      if (!fs.existsSync(live)) {
        // The runtime has no database for this agent yet: the upgraded copy becomes it, registered in the live global DB.
        placeNewAgentDatabase({ stateDir: ctx.paths.stateDir, staged: file, live, agentId, globalPath: ctx.paths.globalDbPath, now: ctx.now });
        createdAgentDbs.push(live);
        continue;
      }
      ensurePrivateDirBelow(ctx.paths.stateDir, keptDir);
      for (const a of adoptLiveSessionKeys(file, live)) adoptedKeys.push({ agentId, ...a });
      const report = mergeIntoCurrent({ role: "agent", stagedPath: file, livePath: live, keptRowsPath: path.join(keptDir, `agent-${agentId}.sqlite`), now: ctx.now, credibleBefore: ctx.startedAt });
      merges.push(report);
      for (const c of report.transcriptConflicts) {
        const key = `${agentId}\u0000${c.sessionId}`;
        if (outcome.conflicts.has(key)) continue;
        outcome.conflicts.set(
          key,
          `conflicts with what OpenClaw wrote: session ${c.sessionKey ?? c.sessionId} holds event ${c.liveEventId ?? "(none)"} at seq ${c.seq} in ${live}, this file has ${c.fileEventId ?? "(none)"} there; the database's events were kept and nothing of this file was merged. Review it, then set it aside with \`openclaw-state migrate skip <path> --reason …\``,
        );
      }
    } catch (error) {
      outcome.failed.set(agentId, `the merge into ${live} failed (${describeError(error)}); that database was left as it was`);
      failedMerges.push({ role: "agent", agentId, path: live, error: describeError(error) });
    }
  }
  const globalCopy = copies.staged.find((s) => s.target.role === "global");
  if (globalCopy) {
    try {
      // Bookkeeping of the staging state (its own registry, ledger, leases) is not data: the live state keeps its own.
      stripStagingBookkeeping(globalCopy.tmp);
      ensurePrivateDirBelow(ctx.paths.stateDir, keptDir);
      merges.push(mergeIntoCurrent({ role: "global", stagedPath: globalCopy.tmp, livePath: ctx.paths.globalDbPath, keptRowsPath: path.join(keptDir, "global.sqlite"), now: ctx.now, credibleBefore: ctx.startedAt }));
    } catch (error) {
      outcome.failed.set("global", `the merge into ${ctx.paths.globalDbPath} failed (${describeError(error)}); that database was left as it was`);
      failedMerges.push({ role: "global", path: ctx.paths.globalDbPath, error: describeError(error) });
    }
  }
  return outcome;
}

/** Why one imported source must stay in place after the merge (null: its records are where the runtime reads them). */
function keepReason(pending: PendingRetirement, outcome: MergeOutcome): { reason: string; failed: boolean } | null {
  const s = pending.s;
  const all = outcome.failed.get("*");
  if (all) return { reason: `not retired: ${all}`, failed: true };
  const dbFailure = s.targetDatabase === "agent" && s.agentId !== null ? outcome.failed.get(s.agentId) : outcome.failed.get("global");
  if (dbFailure) return { reason: `not retired: ${dbFailure}`, failed: true };
  if (s.kind === "transcript" && s.agentId !== null && s.sessionId) {
    const conflict = outcome.conflicts.get(`${s.agentId}\u0000${s.sessionId}`);
    if (conflict) return { reason: conflict, failed: true };
  }
  return null;
}

/**
 * A transcript the staging import filed under an orphan key (no index in this run named it) whose session the live
 * database holds is no orphan: its warning goes, a note says where it went.
 */
function amendAdopted(held: readonly PendingRetirement[], adopted: ReadonlyArray<AdoptedSessionKey & { agentId: string }>): PendingRetirement[] {
  const amended: PendingRetirement[] = [];
  for (const p of held) {
    if (p.s.kind !== "transcript" || !p.s.sessionId) continue;
    const a = adopted.find((x) => x.agentId === p.s.agentId && x.sessionId === p.s.sessionId);
    if (!a) continue;
    const warnings = p.outcome.warnings.filter((w) => !w.startsWith("orphan transcript:"));
    if (warnings.length === p.outcome.warnings.length) continue;
    p.outcome.warnings = warnings;
    p.outcome.notes.push(`merged into session ${a.sessionId}, which OpenClaw's database files under ${a.to}`);
    if (warnings.length === 0 && p.outcome.status === "warning") {
      p.outcome.status = "imported";
      p.status = "imported";
    }
    amended.push(p);
  }
  return amended;
}

/** The run's changes and warnings name what the merge did: rows added, kept newer, replaced (with where the old ones are kept). */
function describeMerges(run: { changes: string[]; warnings: string[] }, merges: MergeReport[], failed: MergeLegacyResult["failedMerges"], created: string[], stagingDir: string): void {
  for (const file of created) run.changes.push(`created ${file} from the imported rows (the runtime had no database for this agent)`);
  for (const m of merges) {
    const sum = (k: "inserted" | "identical" | "replaced" | "keptNewer" | "conflicts"): number => Object.values(m.tables).reduce((n, t) => n + t[k], 0);
    const appended = m.appended.reduce((n, a) => n + a.count, 0);
    const parts = [`${sum("inserted")} row(s) added`, `${sum("identical")} already there`];
    if (appended > 0) parts.push(`${appended} transcript event(s) appended to ${m.appended.length} session(s)`);
    if (sum("replaced") > 0) parts.push(`${sum("replaced")} older row(s) replaced`);
    run.changes.push(`merged into ${m.livePath}: ${parts.join(", ")}`);
    // A session an earlier run could only file under its placeholder key now has its index: it takes the index's key.
    for (const c of m.claimed) {
      run.changes.push(`session ${c.sessionId} moved from ${c.from} (an earlier run found no index naming it) to ${c.to}, the key this run's index gives it, in ${m.livePath}; the placeholder rows are kept in ${m.keptRowsPath}`);
    }
    // The freshness rule: a legacy record never overwrites a row the runtime changed after it. Each is named.
    for (const k of m.keptNewer.slice(0, NAMED_ROWS)) {
      run.warnings.push(`kept OpenClaw's newer row ${k.table} ${k.key} in ${m.livePath} (runtime ${k.liveUpdatedAt ?? "no time"}, legacy file ${k.stagedUpdatedAt ?? "no time"}); the legacy record is kept in ${m.keptRowsPath}`);
    }
    if (m.keptNewer.length > NAMED_ROWS) run.warnings.push(`… and ${m.keptNewer.length - NAMED_ROWS} more newer row(s) of OpenClaw kept in ${m.livePath} (every one is in ${m.keptRowsPath})`);
    for (const r of m.replaced.slice(0, NAMED_ROWS)) {
      run.changes.push(`replaced ${r.table} ${r.key} in ${m.livePath} with the newer legacy record (runtime ${r.liveUpdatedAt ?? "no time"}, legacy file ${r.stagedUpdatedAt ?? "no time"}); the replaced row is kept in ${m.keptRowsPath}`);
    }
    if (m.replaced.length > NAMED_ROWS) run.changes.push(`… and ${m.replaced.length - NAMED_ROWS} more row(s) replaced in ${m.livePath} (every replaced row is in ${m.keptRowsPath})`);
  }
  for (const f of failed) run.warnings.push(`nothing was merged into ${f.path}: ${f.error}; its sources stay in place`);
  run.changes.push(`the staging state, its OpenClaw-format copies and every row kept out or replaced are kept under ${stagingDir}`);
}
