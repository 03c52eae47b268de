// Renders `backup list`: one table of archives with their short ids, no wider than 100 columns, plus restore's kept copies.
import path from "node:path";
import type { ListBackupsResult } from "../../backup/list-backups.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
import { DEFAULT_COLUMNS } from "../output.js";
import { formatBytes } from "./format.js";
import { withIsoTimes } from "./json-time.js";
import { cleanCell, fitColumns, formatHeader, formatRow, renderTable, truncateEnd, type TableColumn } from "./table.js";

/** The listing stays readable in a split pane and in mail: never wider than this, even on a wide terminal. */
export const BACKUP_LIST_MAX_WIDTH = 100;

const ARCHIVE_COLUMNS: TableColumn[] = [
  { header: "ID", cut: "none" },
  { header: "Created (UTC)", cut: "none" },
  { header: "Status", cut: "none" },
  { header: "Type", cut: "none" },
  { header: "Size", align: "right", cut: "none" },
  // Default names (`<time>-openclaw-backup.tar.zst`, 47 cells) fit whole at 100 columns; a longer one is cut in the middle.
  { header: "Archive", cut: "middle", min: 16, gap: 2 },
];

const COPY_COLUMNS: TableColumn[] = [
  { header: "Kept (UTC)", cut: "none" },
  { header: "Type", cut: "none", gap: 2 },
  { header: "Size", align: "right", cut: "none", gap: 1 },
  { header: "Previous copy", cut: "middle", min: 16, gap: 2 },
];

/** "2026-01-02 03:04": minutes are enough to tell backups apart by eye; the id and --json carry the rest. */
function shortTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? "-" : d.toISOString().slice(0, 16).replace("T", " ");
}

/** `--json`: the result with its times as ISO-8601 (json-time.ts). */
function backupListJson(result: ListBackupsResult): Record<string, unknown> {
  return {
    ...result,
    backups: result.backups.map((b) => withIsoTimes(b, ["createdAt"])),
    preRestoreCopies: result.preRestoreCopies.map((c) => withIsoTimes(c, ["createdAt"])),
  };
}

export function renderBackupList(output: Output, result: ListBackupsResult): void {
  if (output.json) {
    output.writeJson(jsonEnvelope("backup list", backupListJson(result)));
    return;
  }
  const s = output.style;
  const width = Math.min(output.columns ?? DEFAULT_COLUMNS, BACKUP_LIST_MAX_WIDTH);
  // Archives in the backup dir are named relative to it (said once in the heading); --verbose prints whole paths.
  const shown = (file: string): string => (!output.verbose && path.dirname(file) === result.backupDir ? path.basename(file) : file);
  output.log(s.bold(`Backups in ${cleanCell(result.backupDir)}${result.runsRead ? "" : " (no global database, so no recorded runs)"}:`));
  if (result.backups.length === 0) output.log("  none");
  else {
    const rows = result.backups.map((b) => {
      const status = !b.exists ? "missing" : b.manifestOk === false ? "unreadable" : b.status;
      const kind = b.compression ?? (b.exists ? "?" : "-");
      return [b.shortId ?? "-", shortTime(b.createdAt), status, kind, b.sizeBytes === null ? "-" : formatBytes(b.sizeBytes), b.archivePath === "" ? "(no archive recorded)" : shown(b.archivePath)].map(cleanCell);
    });
    const widths = fitColumns(ARCHIVE_COLUMNS, rows, width);
    const whole = output.verbose ? new Set([ARCHIVE_COLUMNS.length - 1]) : undefined;
    output.log(s.bold(formatHeader(ARCHIVE_COLUMNS, widths, width)));
    result.backups.forEach((b, i) => {
      const line = formatRow(rows[i]!, ARCHIVE_COLUMNS, widths, { limit: width, whole });
      output.log(b.exists && b.manifestOk !== false ? line : s.yellow(line));
      // Why an archive cannot be read goes on its own line, so the table keeps its width.
      if (b.exists && b.manifestOk === false) {
        const why = b.problemCode === "zstd_unsupported" ? "zstd: needs Node.js 22.15 or newer, or the zstd command, to read" : `not readable: ${b.problem ?? "no openclaw-state manifest"}`;
        const note = `  ↳ ${cleanCell(why)}`;
        output.log(s.dim(output.verbose ? note : truncateEnd(note, width)));
      }
    });
  }
  const { missing, failed } = result.hidden;
  if (missing + failed > 0) {
    const parts = [missing > 0 ? `${missing} run(s) whose archive is gone` : "", failed > 0 ? `${failed} older failed run(s)` : ""].filter(Boolean).join(" and ");
    output.log(s.dim(`  ${parts} not shown (--all lists them; \`backup prune\` forgets them)`));
  }
  if (result.backups.some((b) => b.shortId !== null)) output.log(s.dim("`backup verify|restore` take an ID (or its prefix) or `latest`."));
  if (result.preRestoreCopies.length + result.preRestoreNotOurs.length > 0) {
    output.log(s.bold("Previous copies kept by restore (`backup prune --pre-restore` removes them):"));
    if (result.preRestoreCopies.length > 0) {
      const rows = result.preRestoreCopies.map((c) => [shortTime(c.createdAt), c.kind, c.sizeBytes === null ? "" : formatBytes(c.sizeBytes), c.path]);
      const lines = output.verbose ? renderTable(COPY_COLUMNS, rows, Number.MAX_SAFE_INTEGER) : renderTable(COPY_COLUMNS, rows, width);
      output.log(s.bold(lines[0]!));
      for (const line of lines.slice(1)) output.log(line);
    }
    for (const n of result.preRestoreNotOurs) output.log(s.dim(`  not ours, kept ${cleanCell(n.path)}: ${cleanCell(n.reason)}`));
  }
  for (const w of result.warnings) output.warn(`${s.yellow("!")} ${w}`);
}
