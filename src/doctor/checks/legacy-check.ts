// Legacy check: shows the migration plan as findings (one line per kind); its repair runs the migration.
import { formatBytes, formatCount } from "../../cli/render/format.js";
import { applyMigration } from "../../migration/apply-migration.js";
import { moveLegacyStateDir } from "../../migration/layout.js";
import { planMigration } from "../../migration/plan-migration.js";
import { importerFor } from "../../migration/importers/index.js";
import type { MigrationPlan, PlannedSource, SourceKind } from "../../migration/types.js";
import { pathExists } from "../../state/private-fs.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

function plural(n: number, kind: SourceKind): string {
  const label = importerFor(kind).label;
  return `${formatCount(n)} ${n === 1 ? label.one : label.many}`;
}

function fileLine(s: PlannedSource): string {
  const what = s.action === "skip" ? `skip: ${s.reason ?? ""}` : s.action;
  return `${s.relativePath} (${formatBytes(s.sizeBytes)}, ${s.records ?? "?"} ${importerFor(s.kind).label.records}) → ${what}`;
}

/** One finding per kind with counts; per-file lines with --verbose, problem lines always. */
export function planFindings(plan: MigrationPlan, verbose: boolean): Finding[] {
  const findings: Finding[] = [];
  for (const item of plan.layout) {
    findings.push({
      id: item.kind === "legacy-state-dir" ? "legacy.state-dir" : "legacy.agent-dir",
      severity: "warning",
      title: item.action === "move" ? `Legacy ${item.kind === "legacy-state-dir" ? "state" : "agent"} dir ${item.path} will be moved to ${item.target}` : `Legacy ${item.kind === "legacy-state-dir" ? "state" : "agent"} dir ${item.path}: ${item.reason}`,
      ...(item.action === "move" ? { detail: item.reason, fix: "`doctor --fix` moves it (nothing is overwritten)." } : {}),
      path: item.path,
    });
  }
  for (const kind of Object.keys(plan.summary) as SourceKind[]) {
    const sources = plan.sources.filter((s) => s.kind === kind);
    const summary = plan.summary[kind];
    if (sources.length === 0 || !summary) continue;
    const a = summary.byAction;
    const parts = [
      a.import > 0 ? `${formatCount(a.import)} to import` : "",
      a["changed-since-import"] > 0 ? `${formatCount(a["changed-since-import"])} changed since import (re-imported)` : "",
      a["already-imported"] > 0 ? `${formatCount(a["already-imported"])} already imported (to retire)` : "",
      a.skip > 0 ? `${formatCount(a.skip)} skipped` : "",
    ].filter(Boolean);
    const pending = a.import + a["changed-since-import"] + a["already-imported"];
    const problems = sources.flatMap((s) => [
      ...s.notes.filter((n) => n.startsWith("will fail") || n.startsWith("the previous attempt")).map((n) => `${s.relativePath}: ${n}`),
      ...(s.action === "skip" && s.attention ? [`${s.relativePath}: ${s.reason ?? "skipped"}`] : []),
    ]);
    const detail = verbose ? sources.map((s) => [fileLine(s), ...s.notes.map((n) => `    ${n}`)].join("\n")) : problems;
    findings.push({
      id: `legacy.${kind}`,
      severity: pending > 0 || problems.length > 0 ? "warning" : "info",
      title: `${plural(summary.files, kind)}: ${parts.join(", ")} — ${formatBytes(summary.bytes)}, ${formatCount(summary.records)} ${importerFor(kind).label.records}`,
      ...(detail.length > 0 ? { detail: detail.join("\n") } : {}),
      ...(pending > 0 ? { fix: "`doctor --fix` imports them into SQLite after a verified backup, then moves each file under migrated/<run id>/ (`--remove-sources` deletes instead)." } : {}),
    });
  }
  if (plan.leftovers.length > 0) {
    findings.push({
      id: "legacy.leftovers",
      severity: "info",
      title: `${formatCount(plan.leftovers.length)} archived leftover(s) (*.jsonl.reset.*, *.jsonl.deleted.*, sessions.json.bak.*) left alone`,
      ...(verbose ? { detail: plan.leftovers.map((l) => `${l.relativePath} (${formatBytes(l.sizeBytes)})`).join("\n") } : {}),
    });
  }
  for (const note of plan.notes) findings.push({ id: "legacy.ignored", severity: "warning", title: note });
  if (findings.length === 0 && pathExists(plan.stateDir)) findings.push({ id: "legacy", severity: "info", title: "No legacy state left to migrate" });
  return findings;
}

function describeMigration(plan: MigrationPlan): string {
  const actionable = plan.sources.filter((s) => s.action !== "skip");
  const imports = actionable.filter((s) => s.action !== "already-imported");
  const bytes = imports.reduce((n, s) => n + s.sizeBytes, 0);
  const parts = [
    imports.length > 0 ? `import ${imports.length} legacy source(s) (${formatBytes(bytes)}) into SQLite` : "",
    actionable.length > imports.length ? `retire ${actionable.length - imports.length} already-imported source(s)` : "",
    plan.layout.some((l) => l.kind === "legacy-agent-dir" && l.action === "move") ? "move the legacy agent/ dir into agents/main/agent/" : "",
  ].filter(Boolean);
  return `${parts.join(", ")} (retired files go under migrated/<run id>/)`;
}

export const legacyCheck: DoctorCheck = {
  id: "legacy",
  async run(ctx: CheckContext): Promise<CheckResult> {
    const plan = await planMigration({ paths: ctx.paths, ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}) });
    const repairs: Repair[] = [];
    const stateDirMove = plan.layout.find((l) => l.kind === "legacy-state-dir" && l.action === "move");
    if (stateDirMove) {
      repairs.push({
        id: "legacy.state-dir.move",
        description: `move the legacy state dir ${stateDirMove.path} to ${stateDirMove.target}`,
        order: -10,
        applyBeforeOpen: ({ paths }) => {
          const moved = moveLegacyStateDir(paths);
          return moved.warnings.length > 0 ? { detail: moved.warnings.join("; "), failed: true } : moved.changes.join("; ");
        },
      });
    }
    const work = plan.sources.some((s) => s.action !== "skip") || plan.layout.some((l) => l.kind === "legacy-agent-dir" && l.action === "move");
    if (work) {
      repairs.push({
        id: "legacy.migrate",
        description: describeMigration(plan),
        order: 50,
        async apply(rctx) {
          const run = await applyMigration({
            paths: rctx.paths,
            global: rctx.global,
            plan,
            backup: rctx.migration.backup,
            removeSources: rctx.migration.removeSources,
            ...(rctx.migration.backupDir ? { backupDir: rctx.migration.backupDir } : {}),
            ...(rctx.onProgress ? { onProgress: rctx.onProgress } : {}),
          });
          const t = run.totals;
          const detail = `run ${run.runId} ${run.status}: ${t.imported} imported, ${t.alreadyImported} already imported, ${t.failed} failed, ${t.retired} retired${run.error ? ` — ${run.error}` : ""}`;
          return { detail, failed: run.status === "failed", migration: run };
        },
      });
    }
    return { findings: planFindings(plan, ctx.verbose), repairs, migrationPlan: plan };
  },
};
