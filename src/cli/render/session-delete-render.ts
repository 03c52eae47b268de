// Renders `sessions delete`: the plan (dry run and before the prompt), the consent question, and the outcome or its JSON envelope.
import type { DeleteSessionEntryResult } from "../../runtime/delete-session.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
import { formatBytes, formatCount } from "./format.js";

const LABELS: Record<string, string> = {
  sessions: "session row",
  session_entries: "entry row",
  session_routes: "route",
  session_conversations: "conversation link",
  conversations: "conversation (used by no other session)",
  transcript_events: "transcript event",
  transcript_event_identities: "transcript identity row",
  transcript_snapshots: "transcript snapshot",
  trajectory_runtime_events: "trajectory event",
  transcript_generations: "generation row",
};

export interface DeletePlanView {
  /** Where the copy goes; null with --no-backup. */
  backupDir: string | null;
}

export function renderDeletePlan(output: Output, plan: DeleteSessionEntryResult, view: DeletePlanView): void {
  if (output.json) return;
  const s = output.style;
  output.log(s.bold(`Session ${plan.sessionKey} (${plan.sessionId}) of agent ${plan.agentId}`));
  for (const [table, n] of Object.entries(plan.rows)) if (n > 0) output.log(`  would delete  ${formatCount(n)} ${LABELS[table] ?? table}${n === 1 ? "" : "(s)"}`);
  if (plan.otherSessionsForKey > 0) output.log(s.dim(`  keeps         ${formatCount(plan.otherSessionsForKey)} older session(s) that used this key (each is its own session)`));
  output.log(view.backupDir ? `  backup        a verified standalone copy in ${view.backupDir}, written first` : s.yellow("  backup        none (--no-backup): the session cannot be recovered"));
}

export function confirmDelete(output: Output, plan: DeleteSessionEntryResult, view: DeletePlanView): Promise<boolean> {
  return output.confirm(`Delete session ${plan.sessionKey} (${formatCount(plan.rows.transcript_events ?? 0)} transcript event(s))?${view.backupDir ? "" : " This cannot be undone."}`);
}

export function renderDelete(output: Output, result: DeleteSessionEntryResult, view: DeletePlanView): void {
  if (output.json) {
    output.writeJson(jsonEnvelope("sessions delete", { ...result, backupDir: view.backupDir }));
    return;
  }
  if (result.dryRun) {
    renderDeletePlan(output, result, view);
    output.log("Dry run: nothing was deleted.");
    return;
  }
  const s = output.style;
  const events = result.rows.transcript_events ?? 0;
  output.log(`${s.green("Deleted")} session ${result.sessionKey} (${result.sessionId}) of agent ${result.agentId}: ${formatCount(events)} transcript event(s) and everything the session owned, in one transaction.`);
  if (result.backup) output.log(`Backup: ${result.backup.path} (${formatBytes(result.backup.bytes)}, sha256 ${result.backup.sha256.slice(0, 16)}…, verified before the delete)`);
  else output.warn("No backup was written (--no-backup).");
}
