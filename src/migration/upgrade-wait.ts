// What a migration run left for the next `doctor --fix`: sources not retired, agent databases set aside — and so whether the format upgrade waits.
import type { MigrationRunResult, SourceOutcome } from "./types.js";

/** How the reason of a source left in place for its set-aside agent database begins. */
export const SET_ASIDE_PREFIX = "not imported: agent database";

/** Sources whose rows are committed but whose file is still in place (the retire was refused or failed). */
export function unretiredOutcomes(outcomes: readonly SourceOutcome[]): SourceOutcome[] {
  return outcomes.filter((o) => o.retired === null && (o.status === "imported" || o.status === "warning" || o.status === "already-imported"));
}

/**
 * Why the format upgrade after this run must wait (null: it may run). The importers write this tool's format: a
 * failed source, a source not yet retired or an agent database set aside is finished by a later `doctor --fix`,
 * which needs the state still in that format. The upgrade runs on the `doctor --fix` that completes them.
 */
export function upgradeWaitReason(run: MigrationRunResult): string | null {
  const parts: string[] = [];
  for (const b of run.skippedDatabases ?? []) parts.push(`agent database "${b.agentId}" (${b.path}) cannot be opened (${b.reason}): move it out of the state dir or restore it from an archive, as the migration run's warning says`);
  const unretired = unretiredOutcomes(run.sources).length;
  if (unretired > 0) parts.push(`${unretired} imported source(s) could not be retired yet (the next \`doctor --fix\` retires them once the way is clear)`);
  // The sources waiting for a set-aside database are named by it above; any other failure is counted.
  const failed = run.sources.filter((o) => o.status === "failed" && !o.reason?.startsWith(SET_ASIDE_PREFIX)).length;
  if (failed > 0) parts.push(`${failed} source(s) failed`);
  if (run.status === "failed" && parts.length === 0) parts.push(run.error ?? "the migration run failed");
  return parts.length > 0 ? parts.join("; ") : null;
}
