// The `--backup` step of reset: a verified backup through src/backup (wired once the backup module lands).
import { OperationError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import type { ResetBackupInfo } from "./apply-reset.js";

export async function takeResetBackup(paths: StatePaths): Promise<ResetBackupInfo> {
  throw new OperationError(
    "backup_unavailable",
    `reset --backup needs the backup module, which this build does not include yet; take a backup of ${paths.stateDir} by hand and re-run without --backup.`,
  );
}
