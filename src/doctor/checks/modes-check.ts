// Permission check: state files readable by group/other (wider than 0600/0700), tightened by `--fix`.
import fs from "node:fs";
import path from "node:path";
import { isWorkspaceDirName } from "../../state/paths.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

export interface LooseModeEntry {
  path: string;
  mode: number;
  isDir: boolean;
}

/** Walks without following links; returns entries with any group/other permission bit set. */
export function findLooseModes(roots: string[]): LooseModeEntry[] {
  const loose: LooseModeEntry[] = [];
  const stack = [...roots];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(current);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) continue;
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if ((mode & 0o077) !== 0) loose.push({ path: current, mode, isDir: true });
      let names: string[];
      try {
        names = fs.readdirSync(current);
      } catch {
        continue;
      }
      for (const name of names) {
        // Workspaces hold the user's own project files (with their own modes), so they are not ours to tighten.
        if (isWorkspaceDirName(name)) continue;
        stack.push(path.join(current, name));
      }
    } else if (st.isFile() && (mode & 0o077) !== 0) {
      loose.push({ path: current, mode, isDir: false });
    }
  }
  return loose.sort((a, b) => a.path.localeCompare(b.path));
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, "0")}`;
}

export const modesCheck: DoctorCheck = {
  id: "modes",
  run(ctx: CheckContext): CheckResult {
    const { paths } = ctx;
    const roots = [paths.stateDir];
    if (!paths.configPath.startsWith(paths.stateDir + path.sep)) roots.push(paths.configPath);
    if (!paths.credentialsDir.startsWith(paths.stateDir + path.sep)) roots.push(paths.credentialsDir);
    const loose = findLooseModes(roots);
    if (loose.length === 0) {
      return fs.existsSync(paths.stateDir)
        ? { findings: [{ id: "modes", severity: "info", title: "File modes are private (0600 files, 0700 directories)" }], repairs: [] }
        : { findings: [], repairs: [] };
    }
    const shown = loose.slice(0, ctx.verbose ? loose.length : 10).map((e) => `${octal(e.mode)} ${e.path}`);
    if (!ctx.verbose && loose.length > shown.length) shown.push(`… and ${loose.length - shown.length} more (--verbose lists all)`);
    const finding: Finding = {
      id: "modes.loose",
      severity: "warning",
      title: `${loose.length} state ${loose.length === 1 ? "path is" : "paths are"} readable by group or others`,
      detail: shown.join("\n"),
      fix: "`doctor --fix` removes the group/other permission bits (owner bits are kept).",
    };
    const repair: Repair = {
      id: "modes.tighten",
      description: `remove group/other permissions from ${loose.length} path(s)`,
      order: 90,
      apply() {
        let changed = 0;
        // Listed again: earlier repairs (the legacy migration) may have moved files since the check.
        for (const entry of findLooseModes(roots)) {
          try {
            fs.chmodSync(entry.path, entry.mode & 0o700);
            changed += 1;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
          }
        }
        return `tightened ${changed} path(s)`;
      },
    };
    return { findings: [finding], repairs: [repair] };
  },
};
