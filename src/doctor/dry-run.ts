// `doctor --fix --dry-run`: exactly what --fix would touch — its repairs, the backup, each legacy file and where it goes — with nothing written.
import path from "node:path";
import { needsBackup } from "../migration/apply-migration.js";
import { importerFor } from "../migration/importers/index.js";
import { planMergesInto } from "../migration/plan-migration.js";
import { retirementOf } from "../migration/retire.js";
import { sourceDestinations } from "../migration/source-destinations.js";
import type { MigrationPlan, PlannedSource, PlanAction, SourceKind } from "../migration/types.js";
import { agentDbPath, type StatePaths } from "../state/paths.js";
import { destinationDatabases } from "../state/upgrade/openclaw-destinations.js";
import type { MigrationFixOptions, Repair } from "./types.js";

/** The run id is only known when --fix starts: the dry run names the directory with this placeholder. */
export const DRY_RUN_ID = "<run id>";

export interface DryRunSource {
  relativePath: string;
  kind: SourceKind;
  action: PlanAction;
  /** Where its rows end up in OpenClaw 2026.9.6's format: tables, `config_machine_state (<key>)` rows, file patterns. */
  tables: readonly string[];
  /**
   * The database files they are in, relative to the state dir (a session index naming other agents writes theirs
   * too); a trailing `(if …)` marks a file only conditional destinations reach. None for rows written back as files.
   */
  databases: string[];
  /** Why it is skipped, or why the read-only pass knows its import will fail. */
  reason?: string;
  /** After its import commits: moved (to `retiredTo`), deleted, or left where it is (skipped, or its import will fail). */
  then: "moved" | "deleted" | "left";
  retiredTo?: string;
}

export interface DoctorDryRun {
  /** The repairs --fix would apply, in the order it applies them. */
  repairs: Array<{ id: string; description: string }>;
  /** The verified pre-migration backup --fix takes first: into `dir`; null when the migration needs none. */
  backup: { dir: string } | null;
  /** --no-backup: a backup would be needed and is not taken. */
  backupSkipped: boolean;
  /** Legacy directories --fix moves (whole), and config keys it rewrites. */
  moves: Array<{ path: string; target: string }>;
  configKeys: Array<{ key: string; replacement: string }>;
  /** Every legacy source of the plan, skipped ones included (they are named with their reason). */
  sources: DryRunSource[];
}

/** The dry run of `repairs` (planned by the checks) with the --fix flags; reads nothing beyond the plan. */
export function doctorDryRun(paths: StatePaths, repairs: readonly Repair[], plan: MigrationPlan | undefined, fix: MigrationFixOptions): DoctorDryRun {
  const migrates = plan !== undefined && repairs.some((r) => r.id === "legacy.migrate");
  // Beside databases in OpenClaw's format the sources merge through a staging state, and the live state is always backed up first.
  const migrationBackup = migrates && (planMergesInto(plan) !== null || needsBackup(plan, fix.removeSources));
  // The format upgrade replaces the database files: behind the migration's archive, else one of its own.
  const backupNeeded = migrationBackup || repairs.some((r) => r.id === "format.upgrade");
  // What the deletion rule asks: is the migration's import covered by a verified archive.
  const backedUp = migrationBackup && fix.backup;
  return {
    repairs: repairs.map((r) => ({ id: r.id, description: r.description })),
    backup: backupNeeded && fix.backup ? { dir: path.resolve(fix.backupDir ?? paths.backupDir) } : null,
    backupSkipped: backupNeeded && !fix.backup,
    moves: migrates ? plan.layout.filter((l) => l.action === "move").map((l) => ({ path: l.path, target: l.target })) : [],
    configKeys: migrates ? plan.config.keys.filter((k) => k.blocked === null).map((k) => ({ key: k.key, replacement: k.replacement })) : [],
    sources: migrates
      ? plan.sources.map((s) => {
          const base = { relativePath: s.relativePath, kind: s.kind, action: s.action, tables: s.openclawTables, databases: databasesOf(paths, s) };
          if (s.action === "skip") return { ...base, reason: s.reason ?? "skipped", then: "left" as const };
          if (s.willFail !== undefined) return { ...base, reason: `will fail: ${s.willFail}`, then: "left" as const };
          const r = retirementOf(s, { stateDir: paths.stateDir, runId: DRY_RUN_ID, removeSources: fix.removeSources, deleteAfterBackup: importerFor(s.kind).retire === "delete-after-backup", backedUp });
          return r.retired === "moved" ? { ...base, then: "moved" as const, retiredTo: r.retiredTo } : { ...base, then: "deleted" as const };
        })
      : [],
  };
}

/**
 * The database files a source's rows go into, relative to the state dir: where its destinations are
 * (openclaw-destinations.ts), as far as its file decided them. A condition its file could not decide keeps its
 * `(if …)`, with why (`; undecided: …`).
 */
function databasesOf(paths: StatePaths, s: PlannedSource): string[] {
  const rel = (file: string): string => path.relative(paths.stateDir, file);
  const undecided = s.reach === undefined ? "the file could not be read, see its reason" : s.reach.unknown;
  return destinationDatabases(sourceDestinations(s.kind, s.agentId, s.reach?.tables).placed).flatMap(({ database, condition }) => {
    const files = database === "global" ? [rel(paths.globalDbPath)] : s.agentId === null ? [] : [s.agentId, ...(s.routedAgents ?? [])].map((id) => rel(agentDbPath(paths, id)));
    const shown = condition === null ? null : undecided === undefined ? condition : `${condition.slice(0, -1)}; undecided: ${undecided})`;
    return shown === null ? files : files.map((f) => `${f} ${shown}`);
  });
}
