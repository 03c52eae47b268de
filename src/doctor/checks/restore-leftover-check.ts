// Restore leftovers: the `<path>.pre-restore-<ts>` copies restore keeps (info), a swap interrupted between its two
// renames (error, --fix moves the copy back), and the `.<name>.restore-*` staging copies a killed restore leaves.
import fs from "node:fs";
import path from "node:path";
import { PRE_RESTORE_MARKER, preRestoreCopies, restoreDestinations, siblings } from "../../backup/pre-restore-copies.js";
import { parseStagingName } from "../../backup/restore-swap.js";
import { checkOwnedPath } from "../../state/owned-path.js";
import { isPathInside } from "../../state/paths.js";
import { pidAlive } from "../../state/pid-alive.js";
import { fsyncDir, pathExists } from "../../state/private-fs.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

/** The restore stamp in a kept copy's name (`<name>.pre-restore-<stamp>[-n]`), or null. */
function copyStamp(dest: string, copy: string): string | null {
  const m = /^(\d{8}T\d{6}Z)(?:-\d+)?$/.exec(path.basename(copy).slice(`${path.basename(dest)}${PRE_RESTORE_MARKER}`.length));
  return m ? m[1]! : null;
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
        const removed: string[] = [];
        for (const dir of dirs) {
          // Only what the check saw, and only a real directory (never a link or anything else that took its place).
          if (checkOwnedPath(path.dirname(dest), dir, { action: "remove the restore staging copy", allowMissing: true, expect: "dir" }).kind !== "dir") continue;
          fs.rmSync(dir, { recursive: true, force: true });
          removed.push(dir);
        }
        fsyncDir(path.dirname(dest));
        return `removed ${removed.length > 0 ? removed.join(", ") : "nothing (already gone)"}`;
      },
    },
  };
}

const PRUNE_HINT = "openclaw-state backup prune --pre-restore";

/**
 * The copies restore keeps on purpose: information, not a problem (a warning would nag on every run until the
 * operator deletes their safety net). The title says how to remove them, since info findings show no fix line.
 */
function keptFinding(dest: string, copies: readonly string[]): Finding {
  const missing = pathExists(dest) ? "" : ` (${dest} itself is missing; move the copy back by hand if you want it)`;
  const title =
    copies.length === 1
      ? `Previous copy of ${dest} kept by \`backup restore\` at ${copies[0]}${missing}; \`${PRUNE_HINT}\` removes it once the restored state is confirmed good`
      : `${copies.length} previous copies of ${dest} kept by \`backup restore\` (newest ${copies[0]})${missing}; \`${PRUNE_HINT}\` removes them once the restored state is confirmed good`;
  return {
    id: "restore.leftover",
    severity: "info",
    title,
    detail: copies.join("\n"),
    fix: `\`${PRUNE_HINT}\` (add --older-than 30d to keep recent ones); doctor never deletes them.`,
    path: dest,
  };
}

/**
 * A restore killed between its two renames: the live path is gone, the copy it renamed aside is there, and the
 * staged tree it was about to rename in is still beside it under the same stamp. A missing path with only a kept
 * copy is not that (the copy outlives a restore that finished; the path may have been removed since on purpose).
 */
function interruptedCopy(dest: string, copies: readonly string[]): string | null {
  if (pathExists(dest)) return null;
  const stamps = new Set(staleStagingDirs(dest).map((d) => parseStagingName(path.basename(d))!.stamp));
  return copies.find((c) => {
    const stamp = copyStamp(dest, c);
    return stamp !== null && stamps.has(stamp);
  }) ?? null;
}

export const restoreLeftoverCheck: DoctorCheck = {
  id: "restore",
  run(ctx: CheckContext): CheckResult {
    const findings: Finding[] = [];
    const repairs: Repair[] = [];
    const targets = restoreDestinations(ctx.paths);
    for (const dest of targets) {
      const copies = preRestoreCopies(dest);
      if (copies.length === 0) continue;
      const interrupted = interruptedCopy(dest, copies);
      if (!interrupted) {
        findings.push(keptFinding(dest, copies));
        continue;
      }
      findings.push({
        id: "restore.interrupted",
        severity: "error",
        title: `${dest} is missing after an interrupted restore; its previous copy is ${interrupted}`,
        fix: "`doctor --fix` moves the previous copy back into place; then re-run `backup restore` if you still want the archive's state.",
        path: dest,
      });
      repairs.push({
        id: "restore.recover",
        description: `move ${interrupted} back to ${dest}`,
        order: -100,
        applyBeforeOpen() {
          const root = path.dirname(dest);
          if (checkOwnedPath(root, dest, { action: "move the previous copy back to", allowMissing: true }).kind !== "missing") throw new Error(`${dest} exists again; left both in place`);
          checkOwnedPath(root, interrupted, { action: "move back" });
          fs.renameSync(interrupted, dest);
          fsyncDir(root);
          return `recovered ${dest}`;
        },
      });
    }
    for (const dest of targets) {
      const dirs = staleStagingDirs(dest);
      if (dirs.length === 0) continue;
      const { finding, repair } = stagingFinding(dest, dirs);
      findings.push(finding);
      repairs.push(repair);
    }
    return { findings, repairs };
  },
};
