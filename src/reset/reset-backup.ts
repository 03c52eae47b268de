// The `--backup` step of reset: a full, verified backup through createBackup() before anything is removed.
import { createBackup } from "../backup/create-backup.js";
import type { StatePaths } from "../state/paths.js";

/** What the backup step reports to the reset (kept here so apply-reset and this file do not import each other). */
export interface ResetBackupInfo {
  archivePath: string;
  verified: boolean;
}

export async function takeResetBackup(paths: StatePaths): Promise<ResetBackupInfo> {
  // Workspaces included: `full` may remove the ones inside the state dir, and the archive is the only way back.
  const result = await createBackup({ paths, verify: true, includeWorkspace: true, purpose: "pre-reset" });
  return { archivePath: result.archivePath, verified: result.status === "completed" && result.verified };
}
