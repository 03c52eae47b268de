// `migrate upgrade`: the plan (which database, who wrote it, what happens) and the result (rows per table, kept files).
import type { UpgradeFormatResult, UpgradePlanItem } from "../../migration/upgrade-format.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";

function label(item: { role: string; agentId?: string }): string {
  return item.role === "global" ? "global database" : `agent database "${item.agentId}"`;
}

const ACTION_TEXT: Record<UpgradePlanItem["action"], string> = {
  upgrade: "rewrite in OpenClaw's format",
  current: "already in OpenClaw's current format: left as it is",
  blocked: "blocked",
};

export function renderUpgradePlan(output: Output, plan: UpgradePlanItem[]): void {
  if (plan.length === 0) {
    output.log("No databases in this state.");
    return;
  }
  for (const item of plan) {
    const reason = item.action === "blocked" ? `: ${item.reason}` : "";
    output.log(`${label(item)} ${item.path} — written by ${item.writtenBy ?? "unknown"} → ${ACTION_TEXT[item.action]}${reason}`);
  }
}

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** What did not come across, and the warnings: shown by `migrate upgrade` and by `doctor --fix` after its upgrade step. */
export function renderUpgradeNotes(output: Output, result: UpgradeFormatResult): void {
  for (const db of result.databases) {
    const unmapped = sum(db.unmapped);
    if (unmapped > 0) output.warn(`${label(db)}: ${unmapped} row(s) without a place in OpenClaw's format (${Object.entries(db.unmapped).filter(([, n]) => n > 0).map(([t, n]) => `${t} ${n}`).join(", ")}), kept in ${db.keptAt ?? "the old file"}`);
  }
  for (const w of result.warnings) output.warn(w);
}

export function renderUpgrade(output: Output, result: UpgradeFormatResult): void {
  if (output.json) return output.writeJson(jsonEnvelope("migrate upgrade", result));
  const target = `OpenClaw ${result.targetFormat.release} (global v${result.targetFormat.global}, agent v${result.targetFormat.agent})`;
  if (result.status === "planned") {
    renderUpgradePlan(output, result.plan);
    for (const file of result.alsoCreates) output.log(`would create ${file}`);
    const n = result.plan.filter((p) => p.action === "upgrade").length;
    output.log(n === 0 ? "Dry run: nothing to upgrade; nothing was changed." : `Dry run: ${n} database(s) would be rewritten in the format of ${target}, after a verified backup; nothing was changed.`);
    return;
  }
  if (result.status === "nothing-to-do") {
    renderUpgradePlan(output, result.plan);
    output.log(`Nothing to upgrade: every database is already in the format of ${target}.`);
    return;
  }
  if (result.backupPath) output.log(`Backup written: ${result.backupPath} (verified)`);
  for (const db of result.databases) {
    const unmapped = sum(db.unmapped);
    output.log(`${label(db)}: ${sum(db.read)} row(s) read, ${sum(db.written)} written${unmapped > 0 ? `, ${unmapped} without a place in OpenClaw's format (kept in the old file)` : ""}`);
    for (const note of db.notes) output.warn(`  ${note.message}`);
  }
  for (const file of result.restoredFiles) output.log(`Wrote back ${file} (OpenClaw reads the model catalog from this file)`);
  for (const w of result.warnings) output.warn(w);
  output.log(`The replaced files are kept under ${result.keptDir} (remove them yourself once OpenClaw runs on the new ones).`);
  output.log(`Upgraded ${result.databases.length} database(s) to the format of ${target}.`);
}
