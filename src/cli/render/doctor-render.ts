// Renders a DoctorResult as ✓ / ! / ✗ lines with a summary, or as the JSON envelope; both end in the run's one verdict.
import type { DoctorVerdict } from "../../doctor/doctor-verdict.js";
import type { DoctorDryRun } from "../../doctor/dry-run.js";
import type { DoctorResult } from "../../doctor/run-doctor.js";
import type { Finding } from "../../doctor/types.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
import { planJson, renderRunHuman, runJson } from "./migration-render.js";
import { renderUpgradeNotes } from "./upgrade-render.js";

function mark(output: Output, finding: Finding): string {
  const s = output.style;
  if (finding.severity === "error") return s.red("✗");
  if (finding.severity === "warning") return s.yellow("!");
  return s.green("✓");
}

/** `verdict` (doctorVerdict) is the run's one answer: JSON `status`/`ok`/`exitCode` and the last line come from it. */
export function renderDoctor(output: Output, result: DoctorResult, verdict: DoctorVerdict): void {
  if (output.json) {
    // Times as ISO-8601 (json-time.ts): only the migration plan and run carry any.
    const migration = result.migration ? { ...result.migration, plan: planJson(result.migration.plan), ...(result.migration.run ? { run: runJson(result.migration.run) } : {}) } : undefined;
    const doc = { ...result, ...(migration ? { migration } : {}) };
    output.writeJson({ ...jsonEnvelope("doctor", doc), status: verdict.status, ok: verdict.ok, exitCode: verdict.exitCode });
    return;
  }
  const s = output.style;
  output.log(s.bold(`openclaw-state doctor — ${result.stateDir}`));
  if (result.repairs.length > 0) {
    for (const r of result.repairs) {
      const text = `${r.status === "applied" ? s.green("fixed") : s.red("failed")} ${r.description}${r.detail ? ` (${r.detail})` : ""}`;
      if (r.status === "applied") output.log(text);
      else output.notice(text);
      // Row repairs name every row they moved and every row they left, with why (labels are JSON-quoted keys).
      for (const m of r.rows?.moved ?? []) output.log(s.dim(`    ${m.from} → ${m.action === "moved" ? m.to : `removed (${m.to} holds a row as new or newer)`}`));
      for (const l of r.rows?.left ?? []) output.log(s.dim(`    left ${l.row}: ${l.reason}`));
    }
  }
  if (result.dryRun) renderDryRun(output, result.dryRun);
  if (result.migration?.run) renderRunHuman(output, result.migration.run);
  if (result.formatUpgrade) renderUpgradeNotes(output, result.formatUpgrade);
  for (const f of result.findings) {
    if (f.severity === "info" && !output.verbose && f.id.startsWith("lease.")) continue;
    // Errors and warnings need action: --quiet keeps them (on stderr), it only drops the ✓ lines.
    const say = f.severity === "info" ? (line: string) => output.log(line) : (line: string) => output.notice(line);
    say(`${mark(output, f)} ${f.title}${f.path && output.verbose ? s.dim(` — ${f.path}`) : ""}`);
    if (f.detail && (f.severity !== "info" || output.verbose)) {
      for (const line of f.detail.split("\n")) say(s.dim(`    ${line}`));
    }
    if (f.fix && f.severity !== "info") say(s.dim(`    fix: ${f.fix}`));
  }
  if (result.declined) output.notice("Nothing was changed (declined).");
  // The last line: a notice (kept by --quiet, on stderr there) whenever there is something to act on; --quiet drops it only when all is ok.
  if (verdict.status === "ok") output.log(verdict.line);
  else output.notice(verdict.status === "errors" ? s.red(verdict.line) : verdict.line);
}

/** `doctor --fix --dry-run`: every repair, the backup, each legacy file and what happens to it, in the order --fix goes. */
function renderDryRun(output: Output, dry: DoctorDryRun): void {
  const s = output.style;
  if (dry.repairs.length === 0) {
    output.log("Dry run: doctor --fix would change nothing.");
    return;
  }
  output.log(s.bold("Dry run: doctor --fix would (nothing was changed):"));
  if (dry.backup) output.log(`  first take a verified backup of the whole state into ${dry.backup.dir}`);
  if (dry.backupSkipped) output.notice(s.yellow("  ! take NO pre-migration backup (--no-backup)"));
  for (const r of dry.repairs) output.log(`  - ${r.description}`);
  for (const m of dry.moves) output.log(`  move ${m.path} → ${m.target}`);
  for (const k of dry.configKeys) output.log(`  rewrite config ${k.key} → ${k.replacement}`);
  for (const x of dry.sources) {
    const then = x.then === "moved" ? `then move it to ${x.retiredTo}` : x.then === "deleted" ? "then DELETE it" : "leave it in place";
    const what = x.action === "skip" ? "skip" : x.action === "already-imported" ? "check (already imported)" : x.action === "changed-since-import" ? "re-import" : "import";
    output.log(`  ${what} ${x.relativePath} ${s.dim(`(${x.kind} → ${x.tables.join(", ") || "nothing kept"}${x.tables.length > 0 && x.databases.length > 0 ? ` in ${x.databases.join(", ")}` : ""})`)}, ${then}${x.reason ? s.dim(` — ${x.reason}`) : ""}`);
  }
}
