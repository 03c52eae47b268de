// Bookkeeping: agent_databases (relative paths), migration_runs/_sources (our ledger history), backup_runs, state_leases.
import fs from "node:fs";
import path from "node:path";
import { OPENCLAW_CURRENT } from "../db-format.js";
import { preparedStatement } from "./prepared-statement.js";
import { type GlobalUpgradeContext, bump, eachRow, insertRow, note, readAll } from "./upgrade-global-context.js";

/** A path relative to the state dir as OpenClaw stores it; undefined when it is not below the state dir. */
function relativeToState(ctx: GlobalUpgradeContext, file: string): string | undefined {
  const rel = path.relative(path.resolve(ctx.stateDir), path.resolve(ctx.stateDir, file));
  return rel === "" || rel.startsWith("..") || path.isAbsolute(rel) ? undefined : rel.split(path.sep).join("/");
}

export function upgradeAgentDatabases(ctx: GlobalUpgradeContext): void {
  for (const row of readAll(ctx, "agent_databases", "agent_id")) {
    const agentId = String(row.agent_id);
    const standard = `agents/${agentId}/agent/openclaw-agent.sqlite`;
    let rel = relativeToState(ctx, String(row.path));
    if (rel === undefined) {
      rel = standard;
      note(ctx, "global.agent-db.rerooted", `agent_databases ${agentId}: ${String(row.path)} is outside ${ctx.stateDir}; registered at ${standard}, where OpenClaw keeps it.`);
    }
    const file = path.join(ctx.stateDir, rel);
    const size = fs.existsSync(file) ? fs.statSync(file).size : typeof row.size_bytes === "number" ? row.size_bytes : null;
    insertRow(ctx, "agent_databases", {
      agent_id: agentId,
      path: rel,
      schema_version: OPENCLAW_CURRENT.agent,
      last_seen_at: typeof row.last_seen_at === "number" ? row.last_seen_at : ctx.now,
      size_bytes: size,
    });
  }
  if ((ctx.written.agent_databases ?? 0) > 0) {
    note(ctx, "global.agent-db.version", `agent_databases rows registered at schema_version ${OPENCLAW_CURRENT.agent}: the agent DBs must be upgraded with this global DB (upgrade-agent-db) before OpenClaw opens them.`);
  }
}

const REPORT_OF = "SELECT CAST(report_json AS BLOB) FROM migration_runs WHERE id = ?";
const INSERT_RUN = "INSERT INTO migration_runs (id, started_at, finished_at, status, report_json) VALUES (?, ?, ?, ?, CAST(? AS TEXT))";

/**
 * Our ledger keeps its history. OpenClaw looks receipts up by its own source keys (`<prefix>:<sha256>`), its own
 * migration kinds and run-id prefixes, none of which ours use (bare hex keys, kinds such as `sessions-index`, run
 * ids `<ISO>-<hex>`), so these rows are history to it, never pending work. Paths become absolute as OpenClaw's are.
 */
export function upgradeMigrationLedger(ctx: GlobalUpgradeContext): void {
  const runIds = new Set<string>();
  // A run's report (a 20,000-source run's is ~15 MB) is read by id after the runs are sorted, never through the sort
  // (SQLite's sorter held a copy of each row it sorted), and passes through as bytes, not as a V8 string and its UTF-8
  // copy: that run's copy took RSS from 241 to 350 MB on Node 24; now the global upgrade stays under 250 MB.
  // Prepared inside the loop (once, by the cache): a design-v1 file without migration_runs has no rows to read.
  for (const row of eachRow(ctx, "migration_runs", "started_at, id", "id, started_at, finished_at, status")) {
    const report = preparedStatement(ctx.src, REPORT_OF).pluck().get(row.id) as Buffer | null;
    if (row.status === "running") note(ctx, "global.ledger.running", `migration run ${String(row.id)} was still 'running' in the design-v1 ledger (an interrupted run); copied as is.`);
    if (report === null) note(ctx, "global.ledger.empty-report", `migration run ${String(row.id)} had no report; written as {} (OpenClaw requires one).`);
    preparedStatement(ctx.dst, INSERT_RUN).run(row.id, row.started_at, row.finished_at ?? null, row.status, report ?? Buffer.from("{}"));
    bump(ctx.written, "migration_runs");
    runIds.add(String(row.id));
  }
  let absolutised = 0;
  for (const row of eachRow(ctx, "migration_sources", "source_key")) {
    if (!runIds.has(String(row.last_run_id))) {
      bump(ctx.unmapped, "migration_sources");
      note(ctx, "global.ledger.orphan-source", `migration source ${String(row.source_key)} names run ${String(row.last_run_id)}, which the ledger does not hold; kept in the design-v1 file only.`);
      continue;
    }
    const sourcePath = String(row.source_path);
    if (!path.isAbsolute(sourcePath)) absolutised += 1;
    insertRow(ctx, "migration_sources", {
      source_key: row.source_key,
      migration_kind: row.migration_kind,
      source_path: path.resolve(ctx.stateDir, sourcePath),
      target_table: row.target_table ?? "",
      source_sha256: row.source_sha256 ?? null,
      source_size_bytes: row.source_size_bytes ?? null,
      source_record_count: row.source_record_count ?? null,
      last_run_id: row.last_run_id,
      status: row.status,
      imported_at: row.imported_at ?? ctx.now,
      removed_source: row.removed_source ?? 0,
      report_json: row.report_json ?? "{}",
    });
    if (row.target_table === null || row.imported_at === null) note(ctx, "global.ledger.source-filled", `migration source ${String(row.source_key)}: missing target_table/imported_at filled ('' / upgrade time), OpenClaw requires them.`);
  }
  if (absolutised > 0) note(ctx, "global.ledger.absolute-paths", `${absolutised} migration source path(s) made absolute under ${ctx.stateDir}, as OpenClaw records them.`);
}

const BACKUP_STATUS: Record<string, string> = { completed: "ok" };

export function upgradeBackupRuns(ctx: GlobalUpgradeContext): void {
  for (const row of readAll(ctx, "backup_runs", "created_at, id")) {
    if (typeof row.archive_path !== "string") {
      bump(ctx.unmapped, "backup_runs");
      note(ctx, "global.backup.no-archive", `backup run ${String(row.id)} names no archive (OpenClaw requires one); kept in the design-v1 file only.`);
      continue;
    }
    const status = BACKUP_STATUS[String(row.status)] ?? String(row.status);
    if (status !== row.status) note(ctx, "global.backup.status", `backup run ${String(row.id)}: status '${String(row.status)}' written as '${status}', OpenClaw's word for it.`);
    insertRow(ctx, "backup_runs", { id: row.id, created_at: row.created_at, archive_path: row.archive_path, status, manifest_json: row.manifest_json ?? JSON.stringify({ kind: "archive" }) });
  }
}

/** Leases are live locks of processes running against the old file: copying one would lock the new file for nobody. */
export function skipStateLeases(ctx: GlobalUpgradeContext): void {
  const rows = readAll(ctx, "state_leases");
  if (rows.length === 0) return;
  bump(ctx.unmapped, "state_leases", rows.length);
  note(ctx, "global.leases.not-copied", `${rows.length} state lease(s) not copied: leases are live locks of the old file, not data.`);
}
