// Never-shipped sidecar SQLite files (plugin-state/state.sqlite, tasks/runs.sqlite, tasks/flows/registry.sqlite,
// flows/registry.sqlite, with their -wal/-shm/-journal files): the design deletes them instead of importing them
// (a branch-local layout nobody ran in production). They are deleted after the verified pre-migration backup, which
// keeps a snapshot; without a backup they are moved under migrated/<run>/ like any source. Nothing is written.
import fs from "node:fs";
import path from "node:path";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { hashFile } from "../line-stream.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource, SourceInspection } from "../types.js";

export const SIDECAR_DATABASES = ["plugin-state/state.sqlite", "tasks/runs.sqlite", "tasks/flows/registry.sqlite", "flows/registry.sqlite"] as const;
const COMPANIONS = ["-wal", "-shm", "-journal"];
const SQLITE_HEADER = "SQLite format 3\u0000";

function isSqliteFile(file: string): boolean {
  try {
    const fd = fs.openSync(file, "r");
    try {
      const buf = Buffer.alloc(16);
      return fs.readSync(fd, buf, 0, 16, 0) === 16 && buf.toString("latin1") === SQLITE_HEADER;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

function detect(ctx: DetectContext): DetectedSource[] {
  const found: DetectedSource[] = [];
  for (const rel of SIDECAR_DATABASES) {
    const file = path.join(ctx.root, ...rel.split("/"));
    for (const f of [file, ...COMPANIONS.map((c) => `${file}${c}`)]) {
      if (isRegularFile(f)) found.push({ kind: "sqlite-sidecar", agentId: null, path: f, relativePath: sourceRelativePath(ctx.root, f), legacyRoot: false });
    }
  }
  return found;
}

function inspect(source: DetectedSource): SourceInspection {
  const { sha256, sizeBytes } = hashFile(source.path);
  const main = source.path.replace(/-(wal|shm|journal)$/, "");
  // Only a real SQLite database (and its own companions) is ever deleted.
  if (!isSqliteFile(main)) return { sha256, sizeBytes, records: 0, notes: [], skipReason: `${path.basename(main)} is not a SQLite database: not deleted; left in place for review` };
  return { sha256, sizeBytes, records: 0, notes: ["never-shipped sidecar database: not imported (the design deletes it); deleted after the verified backup, which keeps a snapshot"] };
}

function importSidecar(): ImportCounts {
  return { records: 0, rows: {}, skipped: 0, warnings: [], notes: ["never-shipped sidecar database: nothing imported; the file is deleted after the verified backup (moved under migrated/<run>/ when the run has no backup)"], expect: {} };
}

export const sqliteSidecarImporter: GlobalSourceImporter = {
  kind: "sqlite-sidecar",
  target: "global",
  label: { one: "never-shipped sidecar database file", many: "never-shipped sidecar database files", records: "files" },
  targetTable: "(deleted)",
  targetTables: [],
  retire: "delete-after-backup",
  detect,
  inspect,
  import: importSidecar,
  verify: (_db: unknown, _source: PlannedSource) => null,
};
