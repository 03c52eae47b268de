// Renders an InspectResult: one block per database with its tables, then leases and last runs.
import { CURRENT_FORMAT_NAME, type InspectedDatabase, type InspectResult } from "../../inspect/inspect-state.js";
import type { SessionRef } from "../../sessions/session-stats.js";
import { describeLease } from "../../state/lease.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
import { formatBytes, formatCount, formatTime } from "./format.js";
import { withIsoTimes } from "./json-time.js";
import { renderInventoryHuman } from "./migration-render.js";
import { DEFAULT_COLUMNS } from "../output.js";
import { renderTable, type TableColumn } from "./table.js";

const TABLE_COUNT_COLUMNS: TableColumn[] = [
  { header: "table", min: 34, max: 34 },
  { header: "rows", align: "right", min: 10, max: 10, cut: "none" },
];

/** One line on the format: current, or who wrote it and which `doctor --fix` brings it forward. */
function formatLine(db: InspectedDatabase): string | null {
  if (!db.format) return null;
  const upgrade = db.upgradeWith ? `\`${db.upgradeWith}\` upgrades it to ${CURRENT_FORMAT_NAME}'s format` : "";
  if (db.formatStatus === "current") return `  format ${db.format.writtenBy}: current (the format openclaw-state writes)`;
  if (db.status === "foreign") return `  written by ${db.format.writtenBy}: row counts only${upgrade ? `; ${upgrade}` : ""}`;
  if (db.formatStatus === "upgradable") return `  format ${db.format.writtenBy}: ${upgrade}`;
  return null;
}

/** An intact database in a released OpenClaw's format (`ok` when current, else `foreign`) is readable state, not a failure. */
export function inspectExitCode(result: InspectResult): number {
  return result.databases.some((d) => (d.status !== "ok" && d.status !== "foreign") || d.integrity === "failed") ? 1 : 0;
}

/** `--json`: every time as ISO-8601 (json-time.ts) — sessions' oldest/newest, leases, the last runs. */
function inspectJson(result: InspectResult): Record<string, unknown> {
  const ref = (r: SessionRef | null) => (r ? withIsoTimes(r, ["updatedAt"]) : null);
  return {
    ...result,
    databases: result.databases.map((d) => (d.sessions ? { ...d, sessions: { ...d.sessions, oldest: ref(d.sessions.oldest), newest: ref(d.sessions.newest) } } : d)),
    leases: result.leases.map((l) => withIsoTimes(l, ["startedAt", "expiresAt", "heartbeatAt"])),
    lastMigrationRuns: result.lastMigrationRuns.map((r) => withIsoTimes(r, ["startedAt", "finishedAt"])),
    lastBackupRuns: result.lastBackupRuns.map((r) => withIsoTimes(r, ["createdAt"])),
  };
}

export function renderInspect(output: Output, result: InspectResult): void {
  if (output.json) {
    output.writeJson(jsonEnvelope("inspect", inspectJson(result)));
    return;
  }
  const s = output.style;
  output.log(s.bold(`State directory: ${result.stateDir}${result.stateDirExists ? "" : " (does not exist)"}`));
  if (result.databases.length === 0) output.log("No databases found.");
  for (const db of result.databases) {
    const label = db.role === "global" ? "global" : `agent ${db.agentId}`;
    output.log("");
    output.log(s.bold(`${label}: ${db.path}`));
    // Another program's format: named, counted by table, not interpreted (a newer one is still an error).
    const counted = (db.status === "foreign" || db.status === "too-new") && Object.keys(db.tables).length > 0;
    if (db.status !== "ok" && !counted) {
      output.notice(s.red(`${label}: ${db.path}: ${db.status}: ${db.message ?? ""}`));
      continue;
    }
    if (db.status === "too-new") output.notice(s.red(`${label}: ${db.path}: too-new: ${db.message ?? ""}`));
    else {
      const line = formatLine(db);
      if (line) output.log(line);
    }
    output.log(`  size ${formatBytes(db.sizeBytes)}, WAL ${formatBytes(db.walBytes)}, schema v${db.schemaVersion}, integrity ${db.integrity}`);
    if (db.integrity === "failed" && db.problems) {
      output.notice(s.red(`${label}: ${db.path}: integrity check failed`));
      for (const p of db.problems.slice(0, 5)) output.notice(s.red(`    ${p}`));
    }
    if (db.checkLimit) output.warn(`${s.yellow("!")} ${label}: ${db.path}: ${db.checkLimit}`);
    if (db.sessions) {
      const st = db.sessions;
      output.log(`  sessions ${formatCount(st.sessionCount)}, transcripts ${formatCount(st.transcriptEvents)} event(s) / ${formatBytes(st.transcriptBytes)}`);
      if (st.newest) output.log(`  newest session ${st.newest.key} at ${formatTime(st.newest.updatedAt)}`);
      if (st.oldest && st.sessionCount > 1) output.log(`  oldest session ${st.oldest.key} at ${formatTime(st.oldest.updatedAt)}`);
    }
    const nonEmpty = Object.entries(db.tables).filter(([, n]) => n > 0);
    const shown = output.verbose ? Object.entries(db.tables) : nonEmpty;
    if (shown.length === 0) output.log(s.dim(`  ${Object.keys(db.tables).length} tables, all empty`));
    if (shown.length > 0) {
      const rows = shown.map(([name, n]) => [name, formatCount(n)]);
      // The shared table helper (screen cells), without its header line: the section heading says what these are.
      for (const line of renderTable(TABLE_COUNT_COLUMNS, rows, (output.columns ?? DEFAULT_COLUMNS) - 2).slice(1)) output.log(`  ${line}`);
    }
    if (!output.verbose && nonEmpty.length > 0 && nonEmpty.length < Object.keys(db.tables).length) {
      output.log(s.dim(`  (${Object.keys(db.tables).length - nonEmpty.length} empty tables hidden; --verbose shows them)`));
    }
  }
  output.log("");
  const live = result.leases.filter((l) => l.live);
  output.log(live.length === 0 ? "Leases: none held" : `Leases: ${live.map((l) => `${l.scope} by ${describeLease(l)}`).join(", ")}`);
  const m = result.lastMigrationRuns[0];
  output.log(m ? `Last migration: ${m.id} ${m.status} at ${formatTime(m.startedAt)}` : "Last migration: none");
  const b = result.lastBackupRuns[0];
  output.log(b ? `Last backup: ${b.status} at ${formatTime(b.createdAt)} ${b.archivePath ?? ""}` : "Last backup: none");
  if (result.legacy) {
    const { sources, inventory, waitFor } = result.legacy;
    const left = inventory.entries.length + inventory.omitted;
    const waiting = waitFor ? `not imported here: ${waitFor}` : "waiting for `openclaw-state doctor --fix`";
    output.log(sources > 0 ? `Legacy sources: ${formatCount(sources)} ${waiting}` : "Legacy sources: none");
    if (left > 0) renderInventoryHuman(output, inventory, output.verbose ? Infinity : 20);
  }
}
