// Media the design-v1 import had taken into media_blobs, written back to <stateDir>/media/ where OpenClaw 2026.9.6 reads it.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { ensurePrivateDirBelow } from "../state/private-fs.js";
import { forEachMediaBlob, listMediaBlobs } from "../state/upgrade/upgrade-global-db.js";

/** `<stateDir>/media/<subdir>/<id>`, or null when a row's names would leave media/ (a hostile or corrupt row). */
export function mediaFile(paths: StatePaths, subdir: string, id: string): string | null {
  const root = path.join(paths.stateDir, "media");
  const parts = subdir === "" ? [id] : [...subdir.split("/"), id]; // "" = a file directly under media/
  if (parts.some((p) => p === "" || p === "." || p === ".." || p.includes("\\") || p.includes("\0"))) return null;
  const file = path.join(root, ...parts);
  return isPathInside(root, file) && file !== root ? file : null;
}

/** The files a write-back would create (dry run): names only, nothing read but the row keys. */
export function mediaWriteBackPlan(paths: StatePaths, source: string): string[] {
  return listMediaBlobs(source)
    .map((r) => mediaFile(paths, r.subdir, r.id))
    .filter((file): file is string => file !== null && !fs.existsSync(file));
}

export interface MediaWriteBack {
  written: string[];
  /** Rows not written, each with why (they stay in the kept design-v1 file). */
  warnings: string[];
}

/**
 * OpenClaw keeps media as files (its doctor leaves media/ on disk; its format has no table for the bytes). Each blob
 * is written 0600 with O_EXCL — never over an existing file, never through a link (a link in a parent dir is refused).
 */
export function writeBackMedia(paths: StatePaths, source: string): MediaWriteBack {
  const out: MediaWriteBack = { written: [], warnings: [] };
  // Thousands of files share a few dirs: each dir is checked (and created) once, not once per file.
  const ensured = new Set<string>();
  forEachMediaBlob(source, ({ subdir, id, blob }) => {
    const file = mediaFile(paths, subdir, id);
    if (!file) {
      out.warnings.push(`Media ${JSON.stringify(`${subdir}/${id}`)} names a path outside ${path.join(paths.stateDir, "media")}; it stays in the kept global database only.`);
      return;
    }
    try {
      const dir = path.dirname(file);
      if (!ensured.has(dir)) {
        ensurePrivateDirBelow(paths.stateDir, dir);
        ensured.add(dir);
      }
      fs.writeFileSync(file, blob, { mode: 0o600, flag: "wx" });
      out.written.push(file);
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === "EEXIST" ? "a file is already there (left as it is)" : describeError(error);
      out.warnings.push(`Media ${subdir}/${id} not written back to ${file}: ${why}; it stays in the kept global database.`);
    }
  });
  return out;
}
