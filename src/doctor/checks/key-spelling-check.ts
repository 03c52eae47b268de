// Rows an earlier openclaw-state wrote in OpenClaw's format under a key its runtime never reads: named, and re-spelled by --fix.
import fs from "node:fs";
import { formatCount } from "../../core/format-bytes.js";
import { findMisspelledRows, misspelledFingerprint, respellKeys, type MisspelledRow } from "../../state/key-spellings.js";
import { openLeaseDatabase } from "../../state/lease.js";
import { backupBeforeRepair } from "../repair-backup.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, MovedRow, RepairContext, RepairReport } from "../types.js";

// Keys come from the database and may hold anything (terminal escapes included): JSON in every message.
const label = (table: string, keyJson: string): string => `${table} ${keyJson}`;

function what(r: MisspelledRow): string {
  const from = label(r.spelling.table, r.fromKey);
  if (r.action === "rename") return `${from} → ${JSON.stringify(r.spelling.to)}`;
  if (r.action === "replace-older") return `${from} → ${JSON.stringify(r.spelling.to)}, replacing the older row there`;
  return `${from}: the row already under ${JSON.stringify(r.spelling.to)} is as new or newer (or the same record) and is kept`;
}

function movedRow(r: MisspelledRow): MovedRow {
  return { from: label(r.spelling.table, r.fromKey), to: label(r.spelling.table, r.toKey), action: r.action === "keep-existing" ? "superseded" : "moved" };
}

/** The repair: scan again under the lease, back up, re-spell in one transaction; every row is named in the report. */
export async function applyKeySpellingRepair(rctx: RepairContext): Promise<RepairReport> {
  const before = findMisspelledRows(rctx.global);
  if (before.length === 0) return { detail: "nothing left to re-spell", rows: { backupPath: null, moved: [], left: [] } };
  const expected = misspelledFingerprint(before);
  const backupPath = await backupBeforeRepair(rctx, "re-spelling the keys OpenClaw does not read");
  const result = respellKeys(rctx.global, rctx.paths.stateDir, Date.now(), expected);
  const covered = backupPath ? `covered by ${backupPath}` : "no backup (--no-backup)";
  if (result.changedSinceScan) {
    const reason = "changed since the backup was taken (run `doctor --fix` again)";
    return { failed: true, detail: `nothing re-spelled: the rows ${reason}; ${covered}`, rows: { backupPath, moved: [], left: result.rows.map((r) => ({ row: label(r.spelling.table, r.fromKey), reason })) } };
  }
  const lines = result.rows.map(what);
  if (result.keptRowsPath) lines.push(`every row dropped is kept in ${result.keptRowsPath}`);
  return { detail: [...lines, covered].join("; "), rows: { backupPath, moved: result.rows.map(movedRow), left: [] } };
}

export const keySpellingCheck: DoctorCheck = {
  id: "key-spelling",
  run(ctx: CheckContext): CheckResult {
    if (!fs.existsSync(ctx.paths.globalDbPath)) return { findings: [], repairs: [] };
    let rows: MisspelledRow[];
    try {
      const db = openLeaseDatabase(ctx.paths, "read");
      try {
        rows = findMisspelledRows(db);
      } finally {
        db.close();
      }
    } catch {
      // An unopenable database is the storage check's finding.
      return { findings: [], repairs: [] };
    }
    if (rows.length === 0) return { findings: [], repairs: [] };
    const limit = ctx.verbose ? Infinity : 20;
    const lines = rows.slice(0, limit).map(what);
    if (rows.length > limit) lines.push(`… and ${formatCount(rows.length - limit)} more (--verbose lists all)`);
    const finding: Finding = {
      id: "storage.key-spelling",
      severity: "warning",
      title: `${formatCount(rows.length)} row(s) in the global database are keyed as an earlier openclaw-state spelled them, which OpenClaw never reads (sandbox containers and browsers, the restart sentinel, the device identity, exec approvals)`,
      detail: lines.join("\n"),
      fix: "`doctor --fix` re-spells them in one transaction after a verified backup; where OpenClaw's spelling already holds a row, the newer one is kept and the other is copied to migrated/key-spellings-<time>/global.sqlite before it is removed.",
      path: ctx.paths.globalDbPath,
    };
    return {
      findings: [finding],
      repairs: [
        {
          id: "storage.key-spelling.respell",
          description: `re-spell ${formatCount(rows.length)} row key(s) OpenClaw does not read, after a verified backup`,
          // After the legacy migration (50): a merge into this state may add OpenClaw's spelling of the same row,
          // and the run's archive, if any, covers this too.
          order: 65,
          apply: applyKeySpellingRepair,
        },
      ],
    };
  },
};
