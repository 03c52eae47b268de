// Restore leftovers: `<path>.pre-restore-<ts>` copies kept by `backup restore`, and an interrupted swap that left none in place.
import fs from "node:fs";
import path from "node:path";
import { isPathInside } from "../../state/paths.js";
import { fsyncDir, pathExists } from "../../state/private-fs.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

export const PRE_RESTORE_MARKER = ".pre-restore-";

/** Previous copies of `dest` kept by a restore, newest first (the stamp sorts as time). */
export function preRestoreCopies(dest: string): string[] {
  const base = `${path.basename(dest)}${PRE_RESTORE_MARKER}`;
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(dest));
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(base))
    .sort()
    .reverse()
    .map((n) => path.join(path.dirname(dest), n));
}

export const restoreLeftoverCheck: DoctorCheck = {
  id: "restore",
  run(ctx: CheckContext): CheckResult {
    const { paths } = ctx;
    const findings: Finding[] = [];
    const repairs: Repair[] = [];
    const targets = [paths.stateDir];
    for (const p of [paths.configPath, paths.credentialsDir]) if (!isPathInside(paths.stateDir, p)) targets.push(p);
    for (const dest of targets) {
      const copies = preRestoreCopies(dest);
      if (copies.length === 0) continue;
      const newest = copies[0]!;
      if (!pathExists(dest)) {
        // A restore killed between its two renames: the live path is gone, the previous copy is intact.
        findings.push({
          id: "restore.interrupted",
          severity: "error",
          title: `${dest} is missing after an interrupted restore; its previous copy is ${newest}`,
          fix: "`doctor --fix` moves the previous copy back into place; then re-run `backup restore` if you still want the archive's state.",
          path: dest,
        });
        repairs.push({
          id: "restore.recover",
          description: `move ${newest} back to ${dest}`,
          order: -100,
          applyBeforeOpen() {
            if (pathExists(dest)) throw new Error(`${dest} exists again; left both in place`);
            fs.renameSync(newest, dest);
            fsyncDir(path.dirname(dest));
            return `recovered ${dest}`;
          },
        });
      } else {
        findings.push({
          id: "restore.leftover",
          severity: "warning",
          title: `${copies.length} previous cop${copies.length === 1 ? "y" : "ies"} of ${dest} kept by \`backup restore\``,
          detail: copies.join("\n"),
          fix: "Remove them by hand once the restored state is confirmed good (doctor never deletes them).",
          path: dest,
        });
      }
    }
    return { findings, repairs };
  },
};
