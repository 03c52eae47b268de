// Renders migration plans, runs and history (shared by `doctor` and `migrate`), and migration progress text.
import { describeEntry, entriesByClass, type LegacyInventory } from "../../migration/legacy-inventory.js";
import type { LegacyClass } from "../../migration/legacy-paths.js";
import type { MigrationHistoryResult } from "../../migration/migration-history.js";
import { foreignFormatReason, planBlockedBy } from "../../migration/plan-migration.js";
import type { SkipSourceResult } from "../../migration/skip-source.js";
import type { MigrationPlan, MigrationProgress, MigrationRunResult, PlanAction, SourceKind, SourceOutcome } from "../../migration/types.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
import { formatBytes, formatCount, formatTime } from "./format.js";
import { withFileTime, withIsoTimes } from "./json-time.js";
import { DEFAULT_COLUMNS } from "../output.js";
import type { ProgressMeter } from "./progress-stats.js";
import { renderTable, type TableColumn } from "./table.js";

const PHASE_LABEL: Record<MigrationProgress["phase"], string> = {
  plan: "planning",
  backup: "writing the pre-migration backup",
  config: "rewriting retired config keys",
  layout: "moving old layouts",
  import: "importing",
  retire: "retiring sources",
  record: "recording the run",
  upgrade: "writing OpenClaw's database format",
  merge: "merging into OpenClaw's databases",
};

const BACKUP_STEP: Record<string, string> = { plan: "planning", snapshot: "snapshotting databases", archive: "archiving", finalize: "finishing", verify: "verifying" };

/** "X of Y" only while X ≤ Y: a total that was an estimate (a database whose WAL holds most of it) is dropped, never exceeded. */
function bytesOf(done: number, total: number): string {
  return total > 0 && done <= total ? `${formatBytes(done)} of ${formatBytes(total)}` : formatBytes(done);
}

/** Spinner text: phase, sources done/total, bytes; `stats` (percent, rate, ETA: see migrationProgressStats) goes right after the counts. */
export function formatMigrationProgress(e: MigrationProgress, stats = ""): string {
  const label = PHASE_LABEL[e.phase];
  if (e.phase === "backup") {
    const step = e.step ? ` (${BACKUP_STEP[e.step] ?? e.step})` : "";
    return e.bytesDone > 0 ? `${label}${step}… ${bytesOf(e.bytesDone, e.bytesTotal)}${stats}` : `${label}${step}…`;
  }
  if (e.phase === "record" || e.phase === "upgrade" || e.phase === "merge") return `${label}${e.current ? ` (${e.current})` : ""}…`;
  const counts = e.total > 0 ? ` ${formatCount(Math.min(e.done, e.total))}/${formatCount(e.total)} sources (${bytesOf(e.bytesDone, e.bytesTotal)})${stats}` : "";
  return `${label}${counts}${e.current ? ` — ${e.current}` : ""}`;
}

/**
 * Percent, rate and ETA for a migration progress event, timed per phase and backup step: by bytes when the
 * phase knows its byte total (a few huge transcripts dominate the time), else by sources.
 */
export function migrationProgressStats(meter: ProgressMeter, e: MigrationProgress): string {
  const key = `${e.phase}/${e.step ?? ""}`;
  if (e.phase === "backup") return meter(key, e.bytesDone, e.bytesTotal, "bytes");
  if (e.phase === "record" || e.phase === "upgrade" || e.phase === "merge" || e.total <= 0) return "";
  return e.bytesTotal > 0 ? meter(key, e.bytesDone, e.bytesTotal, "bytes") : meter(key, e.done, e.total, { items: "sources" });
}

const CLASS_TITLE: Record<LegacyClass, string> = {
  imported: "imported by this tool",
  core: "core legacy state this tool does not import",
  plugin: "owned by a plugin's own migration",
  discard: "cache, lock or temp file (the design deletes or ignores it)",
  archived: "archived leftover (never imported)",
  current: "current state",
  special: "cannot be migrated as it is",
  unknown: "unknown to OpenClaw's design",
};

export function classTitle(c: LegacyClass): string {
  return CLASS_TITLE[c];
}

/** The not-imported part of the inventory, grouped by class (at most `limit` lines per class). */
export function renderInventoryHuman(output: Output, inventory: LegacyInventory, limit: number): void {
  const s = output.style;
  const groups = entriesByClass(inventory);
  if (groups.length === 0) return;
  output.log(s.bold("Legacy files that will not be imported:"));
  for (const [cls, list] of groups) {
    output.log(`${s.yellow("!")} ${cls} — ${classTitle(cls)}: ${formatCount(inventory.counts[cls])} file(s)`);
    for (const e of list.slice(0, limit)) output.log(s.dim(`    ${describeEntry(e)}`));
    if (list.length > limit) output.log(s.dim(`    … and ${formatCount(list.length - limit)} more (--verbose lists all)`));
  }
  if (inventory.omitted > 0) output.log(s.dim(`  (${formatCount(inventory.omitted)} more entries not listed; --json has the counts)`));
}

const ACTIONS: PlanAction[] = ["import", "changed-since-import", "already-imported", "skip"];

const PLAN_COLUMNS: TableColumn[] = [
  { header: "kind" },
  { header: "action", cut: "none" },
  { header: "files", align: "right", cut: "none" },
  { header: "size", align: "right", cut: "none" },
  { header: "records", align: "right", cut: "none" },
];

export function renderPlanHuman(output: Output, plan: MigrationPlan): void {
  const s = output.style;
  output.log(s.bold(`Legacy migration plan — ${plan.stateDir}${plan.root !== plan.stateDir ? ` (read from ${plan.root})` : ""}`));
  for (const item of plan.layout) output.log(`${item.action === "move" ? s.yellow("move") : s.dim("keep")} ${item.path} → ${item.target}: ${item.reason}`);
  if (plan.sources.length === 0) output.log("No legacy sources found.");
  else {
    const rows: string[][] = [];
    for (const kind of Object.keys(plan.summary) as SourceKind[]) {
      for (const action of ACTIONS) {
        const sources = plan.sources.filter((x) => x.kind === kind && x.action === action);
        if (sources.length === 0) continue;
        const bytes = sources.reduce((n, x) => n + x.sizeBytes, 0);
        const records = sources.reduce((n, x) => n + (x.records ?? 0), 0);
        rows.push([kind, action, formatCount(sources.length), formatBytes(bytes), formatCount(records)]);
      }
    }
    for (const line of renderTable(PLAN_COLUMNS, rows, output.columns ?? DEFAULT_COLUMNS)) output.log(line);
  }
  for (const x of plan.sources) {
    const problem = (x.action === "skip" && x.attention) || x.willFail !== undefined;
    if (!output.verbose && !problem) continue;
    const action = x.action === "skip" ? s.dim(x.action) : x.willFail ? s.red(`${x.action} (will fail)`) : x.action;
    output.log(`  ${action} ${x.relativePath} ${s.dim(`(${formatBytes(x.sizeBytes)}, sha256 ${x.sha256?.slice(0, 12) ?? "-"}, → ${x.openclawTables.join(", ") || "nothing kept"})`)}`);
    if (x.reason) output.log(s.dim(`      ${x.reason}`));
    for (const n of x.notes) output.log(s.dim(`      ${n}`));
  }
  if (plan.leftovers.length > 0) {
    output.log(`${formatCount(plan.leftovers.length)} archived leftover(s) left alone${output.verbose ? ":" : " (--verbose lists them)"}`);
    if (output.verbose) for (const l of plan.leftovers) output.log(s.dim(`  ${l.relativePath} (${formatBytes(l.sizeBytes)})`));
  }
  for (const note of plan.notes) output.notice(s.yellow(`! ${note}`));
  if (plan.config.problem) output.notice(s.yellow(`! config: ${plan.config.problem}`));
  for (const k of plan.config.keys) output.log(`${k.blocked ? s.yellow("keep") : "rewrite"} config ${k.key} → ${k.replacement}${k.blocked ? s.dim(` (${k.blocked})`) : ""}`);
  renderInventoryHuman(output, plan.inventory, output.verbose ? Infinity : 20);
  const willFail = plan.sources.filter((x) => x.willFail).length;
  if (willFail > 0) output.notice(s.red(`${formatCount(willFail)} source(s) will fail as they are: fix them, or set them aside with \`openclaw-state migrate skip <path> --reason …\``));
  const blocked = planBlockedBy(plan);
  const waiting = plan.sources.filter((x) => x.action === "skip" && x.attention && blocked && x.reason === foreignFormatReason(blocked)).length;
  if (blocked && waiting > 0) output.notice(s.yellow(`! ${formatCount(waiting)} legacy source(s) not imported here: ${foreignFormatReason(blocked)}.`));
  output.log(plan.pending ? "Run `openclaw-state doctor --fix` to apply this plan." : blocked && waiting > 0 ? "Nothing openclaw-state can migrate in this format." : "Nothing to migrate.");
}

/** A plan as `--json` prints it (migrate plan, doctor): `plannedAt`, each source's `mtime` and ledger `importedAt` as ISO-8601. */
export function planJson(plan: MigrationPlan): Record<string, unknown> {
  return {
    ...withIsoTimes(plan, ["plannedAt"]),
    sources: plan.sources.map((x) => {
      const source = withFileTime(x);
      return x.previous ? { ...source, previous: withIsoTimes(x.previous, ["importedAt"]) } : source;
    }),
  };
}

/** A run as `--json` prints it (doctor --fix, migrate history): start and finish as ISO-8601, each source's `mtime` too. */
export function runJson<T extends { startedAt: number; finishedAt: number | null; sources: SourceOutcome[] }>(run: T): Record<string, unknown> {
  return { ...withIsoTimes(run, ["startedAt", "finishedAt"]), sources: run.sources.map((o) => withFileTime(o)) };
}

export function renderMigratePlan(output: Output, plan: MigrationPlan): void {
  if (output.json) return output.writeJson(jsonEnvelope("migrate plan", { plan: planJson(plan) }));
  renderPlanHuman(output, plan);
}

function outcomeLine(output: Output, o: SourceOutcome): string {
  const s = output.style;
  const mark = o.status === "failed" ? s.red("✗") : o.status === "warning" ? s.yellow("!") : o.status === "skipped" ? s.dim("-") : s.green("✓");
  const where = o.retired === "moved" ? ` → ${o.retiredTo}` : o.retired === "deleted" ? " (deleted)" : "";
  return `${mark} ${o.status.padEnd(16)} ${o.relativePath}${where}`;
}

/** The run block printed after `doctor --fix` repairs (human output). */
export function renderRunHuman(output: Output, run: MigrationRunResult): void {
  const s = output.style;
  const colour = run.status === "completed" ? s.green : run.status === "warning" ? s.yellow : s.red;
  output.log(s.bold(`Migration run ${run.runId}: ${colour(run.status)}`));
  if (run.backupSkipped) output.notice(s.red("  NO BACKUP (--no-backup): there is no pre-migration archive to roll back to"));
  else if (run.backupPath) output.log(`  backup: ${run.backupPath} (verified)`);
  const t = run.totals;
  output.log(`  ${t.imported} imported (${formatCount(t.records)} records, ${formatBytes(t.bytes)}), ${t.alreadyImported} already imported, ${t.failed} failed, ${t.skipped} skipped; ${t.retired} retired`);
  if (t.retired > 0) output.log(s.dim(`  retired files: ${run.sources.some((o) => o.retired === "moved") ? `${run.stateDir}/migrated/${run.runId}/` : "deleted (--remove-sources)"}`));
  if (run.error) output.notice(s.red(`  ${run.error}`));
  // The NO BACKUP warning is already the red line above.
  for (const w of run.warnings) if (!(run.backupSkipped && w.startsWith("NO BACKUP"))) output.notice(s.yellow(`  ! ${w}`));
  for (const o of run.sources) {
    const problem = o.status === "failed" || o.status === "warning";
    if (!problem && !output.verbose) continue;
    // Failed and warned sources survive --quiet (on stderr); the rest is detail.
    const say = problem ? (line: string) => output.notice(line) : (line: string) => output.log(line);
    say(`  ${outcomeLine(output, o)}`);
    if (o.reason && (problem || output.verbose)) say(s.dim(`      ${o.reason}`));
    for (const w of o.warnings) say(s.dim(`      ${w}`));
    if (output.verbose) for (const n of o.notes) output.log(s.dim(`      ${n}`));
  }
  if (output.verbose) for (const c of run.changes) output.log(s.dim(`  ${c}`));
}

export function renderMigrateHistory(output: Output, result: MigrationHistoryResult): void {
  if (output.json) return output.writeJson(jsonEnvelope("migrate history", { ...result, runs: result.runs.map((r) => runJson(r)) }));
  const s = output.style;
  output.log(s.bold(`Migration runs — ${result.databasePath} (${formatCount(result.total)})`));
  if (result.notRead) output.log(s.dim(`Not read: ${result.notRead.reason}.`));
  else if (result.runs.length === 0) output.log("No migration runs recorded.");
  for (const run of result.runs) {
    const t = run.totals;
    const counts = run.kind === "skip" ? `set aside ${run.sources.map((o) => o.relativePath).join(", ")}` : t ? `${t.imported} imported, ${t.alreadyImported} already imported, ${t.failed} failed, ${t.retired} retired` : run.error ?? "";
    const backup = run.kind === "skip" ? "" : run.backupSkipped ? "NO BACKUP" : run.backupPath ? `backup ${run.backupPath}${run.backupMissing ? " (MISSING)" : ""}` : "no backup needed";
    const status = run.status === "interrupted" ? s.red("interrupted") : run.status;
    output.log(`${formatTime(run.startedAt)}  ${run.id}  ${status.padEnd(11)}  ${counts}  ${run.backupMissing ? s.yellow(backup) : s.dim(backup)}`);
    if (run.status === "interrupted" && run.error) output.log(s.red(`    ${run.error}`));
    if (run.backupMissing) output.log(s.yellow(`    the archive ${run.backupPath} is missing: this run can no longer be rolled back from it`));
    if (run.error && t) output.log(s.red(`    ${run.error}`));
    for (const o of run.sources) {
      if (!output.verbose && o.status !== "failed" && o.status !== "warning") continue;
      output.log(`    ${outcomeLine(output, o)}`);
      if (o.reason && (o.status === "failed" || output.verbose)) output.log(s.dim(`        ${o.reason}`));
    }
  }
  if (result.total > result.runs.length) output.log(s.dim(`(${result.total - result.runs.length} older run(s) not shown; --limit shows more)`));
}

export function renderMigrateSkip(output: Output, result: SkipSourceResult): void {
  if (output.json) return output.writeJson(jsonEnvelope("migrate skip", { skip: result }));
  const what = `${result.relativePath} (${result.kind})`;
  if (result.dryRun) {
    output.log(`Would set aside ${what} → ${result.movedTo} (reason: ${result.reason}); nothing was changed.`);
    return;
  }
  output.log(`Set aside ${what} → ${result.movedTo}`);
  output.log(`Recorded as run ${result.runId} (reason: ${result.reason}); \`migrate history\` lists it. Move the file back to have it planned again.`);
}
