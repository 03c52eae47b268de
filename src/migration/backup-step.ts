// The pre-migration backup, taken through the backup module's createBackup() contract (verified by default).
import { OperationError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";

export interface PreMigrationBackup {
  archivePath: string;
  warnings: string[];
}

export interface BackupStepOptions {
  paths: StatePaths;
  /** `--backup-dir`: a file or directory; default the backup dir beside the state dir. */
  output?: string;
  /** Files left out of the archive on purpose (a corrupt agent DB), each recorded in the manifest's `skipped` with its reason. */
  setAside?: ReadonlyArray<{ path: string; reason: string }>;
  onProgress?: (progress: { phase: string; bytesDone: number; bytesTotal: number }) => void;
}

export type PreMigrationBackupFn = (options: BackupStepOptions) => Promise<PreMigrationBackup>;

/** Writes and verifies the archive; throws when it cannot, so nothing is imported without it. */
export const takePreMigrationBackup: PreMigrationBackupFn = async (options) => {
  const { createBackup } = await import("../backup/create-backup.js");
  const result = await createBackup({
    paths: options.paths,
    ...(options.output ? { output: options.output } : {}),
    verify: true,
    // The migration never touches workspaces (the user's own files); the state, config and credentials are archived.
    includeWorkspace: false,
    purpose: "pre-migration",
    ...(options.setAside && options.setAside.length > 0 ? { setAside: options.setAside } : {}),
    onProgress: (e) => options.onProgress?.({ phase: e.phase, bytesDone: e.bytesDone, bytesTotal: e.bytesTotal ?? 0 }),
  });
  if (result.status !== "completed" || !result.verified) {
    throw new OperationError("backup_unverified", `The pre-migration backup ${result.archivePath} could not be verified; nothing was imported. Check the backup directory and re-run.`, { path: result.archivePath });
  }
  // A directory the walk could not read is missing from the archive: "verified" would be a lie about the state.
  const unreadable = result.manifest.skipped.filter((s) => s.reason === "unreadable").map((s) => s.path);
  if (unreadable.length > 0) {
    throw new OperationError(
      "backup_incomplete",
      `The pre-migration backup ${result.archivePath} is incomplete: ${unreadable.join(", ")} could not be read; make ${unreadable.length === 1 ? "it" : "them"} readable (chmod -R u+rX …) or move ${unreadable.length === 1 ? "it" : "them"} out of the state dir, then re-run (nothing was imported).`,
      { path: unreadable[0]! },
    );
  }
  return { archivePath: result.archivePath, warnings: result.warnings };
};
