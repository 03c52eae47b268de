// Format check: this tool's design-v1 databases (and the ones the legacy migration is about to write) become OpenClaw's current format.
import { formatCount } from "../../core/format-bytes.js";
import { upgradeWaitReason } from "../../migration/upgrade-wait.js";
import { planBlockedBy } from "../../migration/plan-migration.js";
import { planFormatUpgrade, upgradeFormat, type UpgradeFormatResult } from "../../migration/upgrade-format.js";
import { OPENCLAW_CURRENT } from "../../state/db-format.js";
import { pathExists } from "../../state/private-fs.js";
import { readDatabaseFormat } from "../../state/state-databases.js";
import type { AfterLeaseContext, CheckContext, CheckResult, DoctorCheck, Finding, Repair, RepairReport } from "../types.js";

const TARGET = `OpenClaw ${OPENCLAW_CURRENT.release}`;

/** One line for the repair outcome: what was replaced, where the old files are, what covers the run. */
function describeUpgrade(result: UpgradeFormatResult): string {
  if (result.status === "nothing-to-do") return `nothing to upgrade: every database is already in ${TARGET}'s format`;
  const parts = [
    `${formatCount(result.databases.length)} database(s) written in ${TARGET}'s format (global v${result.targetFormat.global}, agent v${result.targetFormat.agent})`,
    result.keptDir ? `the replaced files are kept under ${result.keptDir}` : "",
    result.restoredFiles.length > 0 ? `${formatCount(result.restoredFiles.length)} file(s) OpenClaw reads as files (model catalogs, media) written back` : "",
    result.backupPath ? `covered by ${result.backupPath}` : "no backup (--no-backup)",
  ].filter(Boolean);
  return parts.join("; ");
}

async function applyUpgrade(ctx: AfterLeaseContext): Promise<RepairReport> {
  const run = ctx.run;
  const waitFor = run ? upgradeWaitReason(run) : null;
  if (waitFor) {
    // A source that failed, was not retired, or whose agent DB is set aside is finished by the next `doctor --fix`,
    // which imports into this tool's format: upgrading now would leave it waiting for another program. The state is
    // upgraded by the run that completes the import.
    return { failed: true, detail: `not run: the legacy import did not complete (${waitFor}); the databases stay in openclaw-state's format until a \`doctor --fix\` imports and retires every source, then it writes ${TARGET}'s` };
  }
  const result = await upgradeFormat({
    paths: ctx.paths,
    backup: ctx.migration.backup,
    ...(ctx.migration.backupDir ? { backupDir: ctx.migration.backupDir } : {}),
    ...(run?.backupPath ? { coveredBy: run.backupPath } : {}),
    command: "doctor --fix",
    force: ctx.force,
    onProgress: (current) => ctx.onProgress?.({ phase: "upgrade", done: 0, total: 0, bytesDone: 0, bytesTotal: 0, current }),
  });
  return { detail: describeUpgrade(result), formatUpgrade: result };
}

/**
 * A global DB with a schema. An empty file (a run killed between creating it and committing its schema) is a new
 * state too: this run's write open gives it the staging schema, so this step must still follow.
 */
function hasGlobalSchema(file: string): boolean {
  if (!pathExists(file)) return false;
  return readDatabaseFormat(file, "global").format?.id !== "new";
}

function upgradeRepair(description: string): Repair {
  // After every other repair: the migration and the repairs that write rows finish in this tool's format first.
  return { id: "format.upgrade", description, order: 100, applyAfterLease: applyUpgrade };
}

export const formatCheck: DoctorCheck = {
  id: "format",
  run(ctx: CheckContext): CheckResult {
    const items = planFormatUpgrade(ctx.paths);
    const ours = items.filter((i) => i.action === "upgrade");
    const blocked = items.filter((i) => i.action === "blocked");
    const findings: Finding[] = [];
    if (ours.length > 0 && blocked.length > 0) {
      // One format for the whole state or none: the other findings say what to do with the blocked files.
      findings.push({
        id: "format.blocked",
        severity: "warning",
        title: `${formatCount(ours.length)} database(s) in openclaw-state's design-v1 format cannot be upgraded to ${TARGET}'s while ${formatCount(blocked.length)} other(s) cannot be read as either`,
        detail: blocked.map((b) => `${b.path}: ${b.reason ?? "blocked"}`).join("\n"),
        fix: "Fix or restore the databases named above, then run `doctor --fix` again.",
      });
      return { findings, repairs: [] };
    }
    if (ours.length > 0) {
      findings.push({
        id: "format.design-v1",
        severity: "warning",
        title: `${formatCount(ours.length)} database(s) in openclaw-state's design-v1 format, which ${TARGET} does not open`,
        detail: ours.map((o) => o.path).join("\n"),
        fix: `\`doctor --fix\` rewrites them in ${TARGET}'s format after a verified backup (the old files are kept under migrated/format-upgrade-<time>/); \`migrate upgrade\` does only that step.`,
      });
      return { findings, repairs: [upgradeRepair(`write the state's ${formatCount(ours.length)} database(s) in ${TARGET}'s format (old files kept under migrated/)`)] };
    }
    // A new state: this run creates the databases (the global DB, the imports' agent DBs) in the staging format, and
    // this step writes them in OpenClaw's. Nothing to import into a foreign format: the legacy check says why.
    const plan = ctx.migrationPlan;
    if (!hasGlobalSchema(ctx.paths.globalDbPath) && !(plan && planBlockedBy(plan))) {
      const imports = plan?.sources.some((s) => s.action !== "skip");
      return { findings, repairs: [upgradeRepair(imports ? `write the imported state in ${TARGET}'s database format` : `write the new state's databases in ${TARGET}'s format`)] };
    }
    return { findings, repairs: [] };
  },
};
