// Which archives in a backup dir are ours (prune may count and delete them), by identity: manifest + ledger or a verify pass.
//
// An archive is ours when (1) its manifest, read size-bounded from the first entry, is our format, names this state
// dir, has a readable createdAt and an archiveRoot equal to the root its file name gives (create derives the root
// from the name it writes, so a renamed copy shows itself), and (2) a completed backup_runs row has its run id AND
// this path, or, without such a row, the whole archive verifies. Everything else is "not ours, kept" with the
// reason: an operator's renamed copy, a manifest-only stub, another state dir's archive, a foreign file.
//
// The pre-migration role is the manifest's `options.purpose` ("pre-migration", written by takePreMigrationBackup).
// Manifests written before that field existed are read by their content instead: a verified archive of the state
// with workspaces left out and no config-only/dry-run option (a `backup create --no-include-workspace` archive of
// that era looks the same and is kept too: the safe direction). Either way, with the migration_runs references when
// the ledger reads, it is protected with no ledger at all; `--include-migration-backups` lets the rules decide.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import { SqliteJobRunner } from "../state/sqlite-jobs.js";
import { archiveRootName } from "./archive-output.js";
import type { BackupRunRow } from "./backup-runs.js";
import type { FoundArchive } from "./list-backups.js";
import { verifyBackup } from "./verify-archive.js";

export interface LedgerView {
  /** Completed runs by id; null when the ledger could not be read (no global DB, or a corrupt one). */
  runs: Map<string, BackupRunRow[]> | null;
  /** Archive path (canonical) → migration runs naming it as their backup; empty when unreadable. */
  migrationRefs: Map<string, string[]>;
  warnings: string[];
}

export interface OurArchive {
  found: FoundArchive;
  /** The manifest's createdAt, epoch ms. */
  createdAt: number;
  runId: string;
  /** "backup_runs" when a completed row names this run at this path; "verified" when a verify pass proved it. */
  identity: "backup_runs" | "verified";
  /** Why it is a pre-migration archive (by its manifest, by migration runs), empty when it is not one. */
  preMigration: string[];
  migrationRuns: string[];
}

export interface NotOurs {
  path: string;
  reason: string;
}

export function canonical(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** backup_runs and migration_runs, each degrading to "unreadable" with a warning instead of failing prune. */
export async function readLedgerView(paths: StatePaths): Promise<LedgerView> {
  const view: LedgerView = { runs: null, migrationRefs: new Map(), warnings: [] };
  if (!fs.existsSync(paths.globalDbPath)) return view;
  const { readBackupRuns, readMigrationBackupPaths } = await import("./backup-runs.js");
  const { runs, warning } = readBackupRuns(paths);
  if (runs) {
    view.runs = new Map();
    for (const r of runs) if (r.status === "completed") view.runs.set(r.id, [...(view.runs.get(r.id) ?? []), r]);
  } else {
    view.warnings.push(`${warning ?? `Cannot read backup_runs from ${paths.globalDbPath}.`} Prune identifies archives by their manifest and a verify pass instead; run \`openclaw-state doctor\` about the global database.`);
  }
  try {
    for (const row of readMigrationBackupPaths(paths)) {
      const key = canonical(row.backupPath);
      view.migrationRefs.set(key, [...(view.migrationRefs.get(key) ?? []), row.runId]);
    }
  } catch (error) {
    view.warnings.push(`Cannot read migration_runs from ${paths.globalDbPath} (${describeError(error)}); pre-migration archives are recognised by their manifest only.`);
  }
  return view;
}

/** The manifest fingerprint of the archive `takePreMigrationBackup` writes (see the header). */
function preMigrationByManifest(a: FoundArchive): boolean {
  const o = a.options;
  if (o === null) return false;
  // Written since the manifest records why: exact. Before: the fingerprint of takePreMigrationBackup's archive.
  if (o.purpose !== undefined) return o.purpose === "pre-migration";
  return o.verify && !o.includeWorkspace && !o.onlyConfig && !o.dryRun && a.hasStateAsset === true;
}

function manifestProblem(a: FoundArchive, stateDir: string): string | null {
  if (!a.manifestOk) {
    if (a.problemCode === "zstd_unsupported") return "a zstd archive this Node cannot read (needs Node.js 22.15 or newer, or the zstd command); left alone";
    return `not an openclaw-state archive (${a.problem ?? "no manifest"})`;
  }
  if (a.stateDir !== null && canonical(a.stateDir) !== stateDir) return `an archive of another state dir (${a.stateDir})`;
  if (a.createdAt === null) return "its manifest's createdAt is not a time";
  if (a.archiveRoot !== archiveRootName(a.archivePath)) {
    return `renamed or copied by hand: its manifest was written for ${a.archiveRoot} (an operator's copy is never pruned)`;
  }
  return null;
}

/**
 * Splits the scanned files into ours and not ours. Archives without a matching backup_runs row are read whole
 * once (verify); a shared SQLite worker is started only when one is needed.
 */
export async function identifyArchives(found: readonly FoundArchive[], paths: StatePaths, ledger: LedgerView): Promise<{ ours: OurArchive[]; notOurs: NotOurs[] }> {
  const stateDir = canonical(paths.stateDir);
  const ours: OurArchive[] = [];
  const notOurs: NotOurs[] = [];
  let runner: SqliteJobRunner | null = null;
  try {
    for (const a of found) {
      const problem = manifestProblem(a, stateDir);
      if (problem) {
        notOurs.push({ path: a.archivePath, reason: problem });
        continue;
      }
      const runId = a.runId!;
      const here = canonical(a.archivePath);
      const rows = ledger.runs?.get(runId) ?? [];
      let identity: OurArchive["identity"] | null = null;
      if (rows.some((r) => r.archivePath !== null && canonical(r.archivePath) === here)) {
        identity = "backup_runs";
      } else if (rows.length > 0) {
        notOurs.push({ path: a.archivePath, reason: `a copy of run ${runId}, which backup_runs records at ${rows.map((r) => r.archivePath ?? "no path").join(", ")}` });
        continue;
      } else {
        runner ??= new SqliteJobRunner({ workers: 1 });
        const verified = await verifyBackup(a.archivePath, { runner });
        if (!verified.ok) {
          notOurs.push({ path: a.archivePath, reason: `no backup_runs row and it does not verify (${verified.problem ?? "unknown problem"}); a stub or damaged copy is never pruned` });
          continue;
        }
        if (verified.manifest?.runId !== runId) {
          notOurs.push({ path: a.archivePath, reason: "it changed while it was being read" });
          continue;
        }
        identity = "verified";
      }
      const migrationRuns = ledger.migrationRefs.get(here) ?? [];
      const preMigration = [...(preMigrationByManifest(a) ? ["pre-migration backup (by its manifest)"] : []), ...migrationRuns.map((id) => `migration run ${id}`)];
      ours.push({ found: a, createdAt: a.createdAt!, runId, identity, preMigration, migrationRuns });
    }
  } finally {
    await runner?.close();
  }
  // Two files claiming one run: the one backup_runs names stays ours; otherwise none is, so neither is deleted.
  const byRun = new Map<string, OurArchive[]>();
  for (const o of ours) byRun.set(o.runId, [...(byRun.get(o.runId) ?? []), o]);
  const kept: OurArchive[] = [];
  for (const group of byRun.values()) {
    if (group.length === 1) {
      kept.push(group[0]!);
      continue;
    }
    const recorded = group.filter((o) => o.identity === "backup_runs");
    const winner = recorded.length === 1 ? recorded[0]! : null;
    for (const o of group) {
      if (o === winner) kept.push(o);
      else notOurs.push({ path: o.found.archivePath, reason: `one of ${group.length} files holding run ${o.runId}; a copy is never pruned` });
    }
  }
  return { ours: kept, notOurs };
}
