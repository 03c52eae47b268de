// Where a user-requested export must not land: anywhere the next `doctor --fix` would import it as legacy state.
import fs from "node:fs";
import path from "node:path";
import { OperationError } from "../core/errors.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { matchLegacyRule } from "./legacy-paths.js";
import { detectSources } from "./plan-migration.js";

/** Resolves links in the existing part of the path: an export through a symlinked dir is judged where it lands. */
function landingPath(file: string): string {
  const abs = path.resolve(file);
  try {
    return path.join(fs.realpathSync(path.dirname(abs)), path.basename(abs));
  } catch {
    return abs;
  }
}

function realOr(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/** Why writing `file` would feed the migration (null when it is a safe place). */
export function legacyDestinationReason(paths: StatePaths, file: string): string | null {
  const target = landingPath(file);
  const stateDir = realOr(paths.stateDir);
  if (isPathInside(stateDir, target)) {
    const rel = path.relative(stateDir, target).split(path.sep).join("/");
    if (/^(agents\/[^/]+\/)?sessions(\/|$)/.test(rel)) return `${target} is in a session folder of the state dir: the next \`doctor --fix\` would import it as a legacy transcript`;
    const rule = matchLegacyRule(rel, "file");
    if (rule && rule.class !== "current") return `${target} is a legacy state path (${rule.reason}): the next \`doctor --fix\` would ${rule.class === "imported" ? "import" : "report"} it`;
  }
  // Wherever an importer reads today (a configured cron store elsewhere, a credentials dir, workspaces).
  const ext = path.extname(target);
  for (const { importer, source } of detectSources(paths).detected) {
    if (realOr(path.dirname(source.path)) === path.dirname(target) && path.extname(source.path) === ext) {
      return `${target} is beside ${importer.label.many} (${source.relativePath}): the next \`doctor --fix\` would import it`;
    }
  }
  return null;
}

/** Refuses an export destination the migration would pick up again (nothing is written). */
export function assertNotLegacyDestination(paths: StatePaths, file: string): void {
  const reason = legacyDestinationReason(paths, file);
  if (reason) throw new OperationError("export_legacy_path", `Refusing to export there: ${reason}. Choose a path outside the state dir (nothing was written).`, { path: file });
}
