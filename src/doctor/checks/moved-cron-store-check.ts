// Cron jobs keyed by where the state dir was mounted before (Docker host vs container): named, and re-keyed by --fix.
import fs from "node:fs";
import { formatCount } from "../../core/format-bytes.js";
import { cronStores } from "../../migration/importers/cron-jobs.js";
import { readLegacyConfig } from "../../migration/legacy-config.js";
import { findMovedStoreKeys, hasCronStoreKeys, rekeyMovedStores, scanFingerprint, type RekeyedJob, type MovedStoreKeysScan } from "../../state/moved-store-keys.js";
import type { StatePaths } from "../../state/paths.js";
import { openLeaseDatabase } from "../../state/open-lease-database.js";
import { backupBeforeRepair } from "../repair-backup.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, LeftRow, MovedRow, RepairContext, RepairReport } from "../types.js";

/** The configured cron store (`cron.store`), resolved as the importer resolves it: its key is never re-keyed. */
function configuredKeys(paths: StatePaths): string[] {
  try {
    return cronStores(paths.stateDir, paths, readLegacyConfig(paths, paths.stateDir)).filter((s) => s.configured).map((s) => s.storeKey);
  } catch {
    return [];
  }
}

// Keys come from the database and may hold anything (terminal escapes included): JSON-quoted in every message.
const q = (s: string): string => JSON.stringify(s);
const jobLabel = (key: string, jobId: string): string => `cron_jobs (${q(key)}, ${q(jobId)})`;
const at = (ms: number | null): string => (ms === null ? "no job row" : `updated_at ${new Date(ms).toISOString()}`);

function describeJob(j: RekeyedJob): string {
  if (j.action === "moved") return `job ${q(j.jobId)}: moved from ${q(j.from)}`;
  if (j.action === "replaced-older") return `job ${q(j.jobId)}: kept the newer row from ${q(j.from)} (${at(j.keptUpdatedAt)}), dropped the older one under the current key (${at(j.droppedUpdatedAt)}; ${formatCount(j.dropped)} row(s))`;
  return `job ${q(j.jobId)}: kept the row under the current key (${at(j.keptUpdatedAt)}, as new or newer), dropped the older one from ${q(j.from)} (${at(j.droppedUpdatedAt)}; ${formatCount(j.dropped)} row(s))`;
}

/** The repair: scan again under the lease, back up, re-key in one transaction; every job is named in the report. */
export async function applyMovedCronStoreRepair(rctx: RepairContext): Promise<RepairReport> {
  const keys = configuredKeys(rctx.paths);
  const before = findMovedStoreKeys(rctx.global, rctx.paths.stateDir, keys);
  const leftOf = (l: MovedStoreKeysScan["left"]): LeftRow[] => l.map((x) => ({ row: `cron store ${q(x.key)} (${formatCount(x.jobs)} job(s))`, reason: x.reason }));
  if (before.moved.length === 0) return { detail: "nothing left to re-key", rows: { backupPath: null, moved: [], left: leftOf(before.left) } };
  const expected = scanFingerprint(rctx.global, before);
  const backupPath = await backupBeforeRepair(rctx, "re-keying the moved cron store");
  const result = rekeyMovedStores(rctx.global, rctx.paths.stateDir, keys, expected);
  const moved: MovedRow[] = result.jobs.map((j) => ({ from: jobLabel(j.from, j.jobId), to: jobLabel(j.to, j.jobId), action: j.action === "kept-newer" ? "superseded" : "moved" }));
  const covered = backupPath ? `covered by ${backupPath}` : "no backup (--no-backup)";
  const lines = result.jobs.length === 0 ? ["nothing re-keyed"] : [`re-keyed to ${q(result.currentKey)}`, ...result.jobs.map(describeJob)];
  for (const l of result.left) lines.push(`left ${q(l.key)}: ${l.reason}`);
  return { detail: [...lines, covered].join("; "), rows: { backupPath, moved, left: leftOf(result.left) } };
}

export const movedCronStoreCheck: DoctorCheck = {
  id: "moved-cron-store",
  run(ctx: CheckContext): CheckResult {
    if (!fs.existsSync(ctx.paths.globalDbPath)) return { findings: [], repairs: [] };
    let scan: MovedStoreKeysScan;
    try {
      const db = openLeaseDatabase(ctx.paths, "read");
      try {
        if (!hasCronStoreKeys(db)) return { findings: [], repairs: [] };
        scan = findMovedStoreKeys(db, ctx.paths.stateDir, configuredKeys(ctx.paths));
      } finally {
        db.close();
      }
    } catch {
      // An unopenable database is the storage check's finding.
      return { findings: [], repairs: [] };
    }
    const findings: Finding[] = scan.moved.map((m) => ({
      id: "storage.moved-cron-store",
      severity: "warning",
      title: `${formatCount(m.jobs)} cron job(s) are keyed by ${q(m.key)}, the default store of where this state dir was mounted before; OpenClaw reads them under ${q(scan.currentKey)}`,
      detail: `rows under the old key: ${formatCount(m.rows.cron_jobs)} job(s), ${formatCount(m.rows.cron_job_scratch)} scratch, ${formatCount(m.rows.cron_run_receipts)} run receipt(s)`,
      fix: "`doctor --fix` re-keys them in one transaction after a verified backup; a job under both keys keeps the row with the newer updated_at and drops the other (the backup keeps it).",
      path: ctx.paths.globalDbPath,
    }));
    for (const l of scan.left) {
      findings.push({ id: "storage.moved-cron-store.left", severity: "info", title: `Cron store key ${q(l.key)} (${formatCount(l.jobs)} job(s)) is not re-keyed: ${l.reason}`, path: ctx.paths.globalDbPath });
    }
    if (scan.moved.length === 0) return { findings, repairs: [] };
    return {
      findings,
      repairs: [
        {
          id: "storage.moved-cron-store.rekey",
          description: `re-key the cron jobs of ${scan.moved.map((m) => q(m.key)).join(", ")} to ${q(scan.currentKey)}, after a verified backup`,
          // After the legacy migration (50) and the misplaced rows (60): the run's archive, if any, covers this too.
          order: 70,
          apply: applyMovedCronStoreRepair,
        },
      ],
    };
  },
};
