// The `--backup` step of reset: a full, verified backup through createBackup() before anything is removed.
import { createBackup } from "../backup/create-backup.js";
import type { StatePaths } from "../state/paths.js";
import type { ResetBackupInfo } from "./apply-reset.js";

export async function takeResetBackup(paths: StatePaths): Promise<ResetBackupInfo> {
  // Workspaces included: `full` may remove the ones inside the state dir, and the archive is the only way back.
  const result = await createBackup({ paths, verify: true, includeWorkspace: true });
  return { archivePath: result.archivePath, verified: result.status === "completed" && result.verified };
}
