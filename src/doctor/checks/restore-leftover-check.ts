// Restore leftovers: `<path>.pre-restore-<ts>` copies, an interrupted swap that left none in place, and the
// `.<name>.restore-*` staging copies a killed restore leaves beside its destinations.
import fs from "node:fs";
import path from "node:path";
import { readConfiguredWorkspaces } from "../../backup/config-workspaces.js";
import { parseStagingName } from "../../backup/restore-swap.js";
import { isPathInside } from "../../state/paths.js";
import { pidAlive } from "../../state/pid-alive.js";
import { fsyncDir, lstatOrNull, pathExists } from "../../state/private-fs.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

export const PRE_RESTORE_MARKER = ".pre-restore-";

/** Names beside `dest` (in its parent dir) that `keep` accepts, sorted, as full paths. */
function siblings(dest: string, keep: (name: string) => boolean): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(dest));
  } catch {
    return [];
  }
  return names
    .filter(keep)
    .sort()
    .map((n) => path.join(path.dirname(dest), n));
}

/** Previous copies of `dest` kept by a restore, newest first (the stamp sorts as time). */
export function preRestoreCopies(dest: string): string[] {
  const base = `${path.basename(dest)}${PRE_RESTORE_MARKER}`;
  return siblings(dest, (n) => n.startsWith(base)).reverse();
}

/** Staging siblings of `dest` left by restores whose process is gone (a running restore's own are not listed). */
export function staleStagingDirs(dest: string): string[] {
  const base = path.basename(dest);
  return siblings(dest, (n) => {
    const parsed = parseStagingName(n);
    return parsed !== null && parsed.base === base && !(parsed.pid !== null && parsed.pid !== process.pid && pidAlive(parsed.pid));
  });
}

function stagingFinding(dest: string, dirs: string[]): { finding: Finding; repair: Repair } {
  return {
    finding: {
      id: "restore.staging",
      severity: "warning",
      title: `${dirs.length} staging cop${dirs.length === 1 ? "y" : "ies"} of ${dest} left by an interrupted \`backup restore\` (archive data, credentials included)`,
      detail: dirs.join("\n"),
      fix: "`doctor --fix` removes them; the live path was never touched by the restore that left them.",
      path: dest,
    },
    repair: {
      id: "restore.staging.remove",
      description: `remove ${dirs.length} restore staging cop${dirs.length === 1 ? "y" : "ies"} beside ${dest}`,
      order: -90,
      applyBeforeOpen() {
        for (const dir of dirs) {
          // Only what the check saw, and only a real directory (never a link that took its place).
          if (lstatOrNull(dir)?.isDirectory()) fs.rmSync(dir, { recursive: true, force: true });
        }
        fsyncDir(path.dirname(dest));
        return `removed ${dirs.join(", ")}`;
      },
    },
  };
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
    const stagingTargets = new Set([...targets, ...readConfiguredWorkspaces(paths).workspaces.map((w) => w.path)]);
    for (const dest of stagingTargets) {
      const dirs = staleStagingDirs(dest);
      if (dirs.length === 0) continue;
      const { finding, repair } = stagingFinding(dest, dirs);
      findings.push(finding);
      repairs.push(repair);
    }
    return { findings, repairs };
  },
};
