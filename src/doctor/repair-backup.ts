// The verified archive a row-moving repair runs behind: the one this `doctor --fix` already took, else its own.
import { describeError, OperationError } from "../core/errors.js";
import { takePreMigrationBackup } from "../migration/backup-step.js";
import type { RepairContext } from "./types.js";

/**
 * The archive that holds the rows before a repair changes them: the run's pre-migration archive when its migration
 * took one, else a new one through the same step; null only with `--no-backup`. Throws `backup_failed` (nothing
 * changed) when it cannot be taken; `what` says what the repair was about to do ("moving the first-release rows").
 */
export async function backupBeforeRepair(rctx: RepairContext, what: string): Promise<string | null> {
  if (rctx.run?.backupPath) return rctx.run.backupPath;
  if (!rctx.migration.backup) return null;
  try {
    const backup = await takePreMigrationBackup({ paths: rctx.paths, ...(rctx.migration.backupDir ? { output: rctx.migration.backupDir } : {}) });
    return backup.archivePath;
  } catch (error) {
    throw new OperationError("backup_failed", `The verified backup before ${what} could not be taken (${describeError(error)}); no row was changed. Fix the backup directory (or pass --backup-dir) and re-run \`doctor --fix\`.`, { cause: error });
  }
}
