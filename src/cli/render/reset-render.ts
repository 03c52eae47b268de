// Reset's human side: the scope chooser, the plan and consent prompts, live removal lines, the summary or JSON envelope.
import type { ResetDecision, ResetEvent, ResetResult } from "../../reset/apply-reset.js";
import { RESET_SCOPE_HINTS, RESET_SCOPES, type ResetNote, type ResetPlan, type ResetScope } from "../../reset/plan-reset.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";

const KIND_WIDTH = "legacy-sessions".length;

/** Padded before colouring, so ANSI codes never shift the columns. */
function line(verb: string, kind: string, p: string, paint: (text: string) => string = (t) => t): string {
  return `${paint(verb.padEnd(14))} ${kind.padEnd(KIND_WIDTH)}  ${p}`;
}

/** Interactive scope choice; undefined when the operator cancels. */
export function chooseResetScope(output: Output): Promise<ResetScope | undefined> {
  return output.choose(
    "Which state should reset remove?",
    RESET_SCOPES.map((scope) => ({ value: scope, label: scope, hint: RESET_SCOPE_HINTS[scope] })),
  );
}

export function renderResetStart(output: Output, scope: ResetScope, stateDir: string, dryRun: boolean): void {
  if (output.json) return;
  output.log(output.style.bold(`openclaw-state reset --scope ${scope}${dryRun ? " (dry run)" : ""} — ${stateDir}`));
}

/** `table auth_profile_stores (3 rows) — API keys…`: credential rows, which live in the global DB, not in a path. */
function tableText(t: { table: string; rows: number; reason: string }): string {
  return `${t.table} (${t.rows} row${t.rows === 1 ? "" : "s"}) — ${t.reason}`;
}

/** A kept path and its reason; a kept folder holding archives also names each archive, so the operator sees what stays. */
function renderKept(output: Output, verb: string, k: ResetNote): void {
  const s = output.style;
  output.log(s.dim(line(verb, "", `${k.path} — ${k.reason}`)));
  if (k.archives && !(k.archives.length === 1 && k.archives[0] === k.path)) {
    for (const a of k.archives) output.log(s.dim(line("", "archive", a)));
  }
}

function renderPlanLines(output: Output, plan: Pick<ResetPlan, "targets" | "kept" | "tables" | "warnings">): void {
  const s = output.style;
  for (const t of plan.tables) output.log(line("would clear", "table", tableText(t)));
  for (const t of plan.targets) output.log(line("would remove", t.kind, `${t.path}${t.link ? s.dim(" (symlink: only the link)") : ""}`));
  for (const k of plan.kept) renderKept(output, "keeps", k);
  for (const w of plan.warnings) output.warn(`${s.yellow("!")} ${w}`);
}

/** Shows the plan, offers a backup (unless --backup already asks for one), then asks for consent. */
export async function confirmReset(output: Output, plan: ResetPlan, options: { backup: boolean }): Promise<ResetDecision> {
  renderPlanLines(output, plan);
  if (plan.targets.length === 0 && plan.tables.length === 0) {
    output.log("Nothing to remove.");
    return { proceed: true, backup: false };
  }
  const backup = options.backup || (await output.confirm("Write a verified backup first (recommended)?"));
  const tables = plan.tables.length > 0 ? ` and clear ${plan.tables.length} credential table(s)` : "";
  const proceed = await output.confirm(`Remove these ${plan.targets.length} path(s)${tables}?${backup ? "" : " This cannot be undone."}`);
  return { proceed, backup };
}

/** Each removal as it happens (human mode only; --json prints one document at the end). */
export function renderResetEvent(output: Output, event: ResetEvent): void {
  if (output.json) return;
  const s = output.style;
  if (event.type === "backup-started") output.log("Writing a verified backup first…");
  else if (event.type === "backup-written") output.log(`${s.green("Backup written:")} ${event.archivePath} (verified)`);
  else if (event.type === "removed") output.log(line("removed", event.kind, event.path, s.red));
  else if (event.type === "cleared") output.log(line("cleared", "table", `${event.table} (${event.rows} row${event.rows === 1 ? "" : "s"} deleted)`, s.red));
  else output.warn(line("failed", event.kind, `${event.path}: ${event.error}`));
}

export function renderReset(output: Output, result: ResetResult): void {
  if (output.json) {
    output.writeJson(jsonEnvelope("reset", result));
    return;
  }
  const s = output.style;
  if (result.dryRun) {
    for (const t of result.tablesCleared) output.log(line("would clear", "table", tableText(t)));
    for (const r of result.removed) output.log(line("would remove", r.kind, r.path));
  }
  for (const k of result.kept) renderKept(output, "kept", k);
  for (const k of result.skipped) output.log(s.dim(line("skipped", "", `${k.path} — ${k.reason}`)));
  for (const w of result.warnings) output.warn(`${s.yellow("!")} ${w}`);
  if (result.registryRowsRemoved.length > 0) output.log(`Dropped agent_databases row(s) for: ${result.registryRowsRemoved.join(", ")}`);
  const rows = result.tablesCleared.reduce((n, t) => n + t.rows, 0);
  if (result.status === "dry-run") {
    const tables = result.tablesCleared.length > 0 ? ` and ${rows} credential row(s) in ${result.tablesCleared.length} table(s) would be deleted` : "";
    output.log(`Dry run: ${result.removed.length} path(s) would be removed${tables}; nothing was removed.`);
  } else if (result.status === "declined") {
    output.notice("Nothing was removed (declined).");
  } else {
    const failed = result.failed.length > 0 ? s.red(`, ${result.failed.length} failed`) : "";
    const backup = result.backupPath ? `; backup: ${result.backupPath}` : "";
    const tables = result.tablesCleared.length > 0 ? `, deleted ${rows} credential row(s)` : "";
    const summary = `Removed ${result.removed.length} path(s)${tables}, kept ${result.kept.length}${failed}${backup}.`;
    // A partial reset needs action: --quiet still prints it.
    if (result.failed.length > 0) output.notice(summary);
    else output.log(summary);
  }
}
