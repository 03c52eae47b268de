// Rows an earlier openclaw-state wrote in OpenClaw's format under a key (or in a shape) its runtime never reads: named, and re-spelled by --fix.
import fs from "node:fs";
import { formatCount } from "../../core/format-bytes.js";
import { findAcpxGatewayRow, findMisspelledRows, misspelledFingerprint, respellKeys, type AcpxGatewayRow, type MisspelledRow } from "../../state/key-spellings.js";
import { openLeaseDatabase } from "../../state/open-lease-database.js";
import { backupBeforeRepair } from "../repair-backup.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, LeftRow, MovedRow, RepairContext, RepairReport } from "../types.js";

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

const acpxLabel = (a: AcpxGatewayRow): string => label("plugin_state_entries", a.key);
const EARLIER_SHAPE = '{"version":1,"id":…}';

/** The ACPX row the repair rewrites; null for one it leaves (named in the `.left` finding instead). */
function acpxWhat(a: AcpxGatewayRow | null): string | null {
  return a?.value.kind === "earlier" ? `${acpxLabel(a)}: ${EARLIER_SHAPE} → ${a.value.valueJson}` : null;
}

function acpxMoved(a: AcpxGatewayRow | null): MovedRow[] {
  return a?.value.kind === "earlier" ? [{ from: `${acpxLabel(a)} ${EARLIER_SHAPE}`, to: `${acpxLabel(a)} ${a.value.valueJson}`, action: "moved" }] : [];
}

function acpxLeft(a: AcpxGatewayRow | null): LeftRow[] {
  return a?.value.kind === "other" ? [{ row: acpxLabel(a), reason: a.value.reason }] : [];
}

/** The repair: scan again under the lease, back up, re-spell in one transaction; every row is named in the report. */
export async function applyKeySpellingRepair(rctx: RepairContext): Promise<RepairReport> {
  const before = findMisspelledRows(rctx.global);
  const acpxBefore = findAcpxGatewayRow(rctx.global);
  if (before.length === 0 && acpxBefore?.value.kind !== "earlier") return { detail: "nothing left to re-spell", rows: { backupPath: null, moved: [], left: acpxLeft(acpxBefore) } };
  const expected = misspelledFingerprint(before, acpxBefore);
  const backupPath = await backupBeforeRepair(rctx, "re-spelling the keys OpenClaw does not read");
  const result = respellKeys(rctx.global, rctx.paths.stateDir, Date.now(), expected);
  const covered = backupPath ? `covered by ${backupPath}` : "no backup (--no-backup)";
  if (result.changedSinceScan) {
    const reason = "changed since the backup was taken (run `doctor --fix` again)";
    const left = [...result.rows.map((r) => label(r.spelling.table, r.fromKey)), ...(result.acpx ? [acpxLabel(result.acpx)] : [])].map((row) => ({ row, reason }));
    return { failed: true, detail: `nothing re-spelled: the rows ${reason}; ${covered}`, rows: { backupPath, moved: [], left } };
  }
  const lines = [...result.rows.map(what), ...[acpxWhat(result.acpx)].filter((l) => l !== null)];
  if (result.keptRowsPath) lines.push(`every row dropped or rewritten is kept as it was in ${result.keptRowsPath}`);
  return { detail: [...lines, covered].join("; "), rows: { backupPath, moved: [...result.rows.map(movedRow), ...acpxMoved(result.acpx)], left: acpxLeft(result.acpx) } };
}

export const keySpellingCheck: DoctorCheck = {
  id: "key-spelling",
  run(ctx: CheckContext): CheckResult {
    if (!fs.existsSync(ctx.paths.globalDbPath)) return { findings: [], repairs: [] };
    let rows: MisspelledRow[];
    let acpx: AcpxGatewayRow | null;
    try {
      const db = openLeaseDatabase(ctx.paths, "read");
      try {
        rows = findMisspelledRows(db);
        acpx = findAcpxGatewayRow(db);
      } finally {
        db.close();
      }
    } catch {
      // An unopenable database is the storage check's finding.
      return { findings: [], repairs: [] };
    }
    const findings: Finding[] = [];
    const fixable = rows.length + (acpx?.value.kind === "earlier" ? 1 : 0);
    if (fixable > 0) {
      const limit = ctx.verbose ? Infinity : 20;
      const lines = [...rows.map(what), ...[acpxWhat(acpx)].filter((l) => l !== null)];
      const shown = lines.slice(0, limit);
      if (lines.length > limit) shown.push(`… and ${formatCount(lines.length - limit)} more (--verbose lists all)`);
      findings.push({
        id: "storage.key-spelling",
        severity: "warning",
        title: `${formatCount(fixable)} row(s) in the global database are keyed or shaped as an earlier openclaw-state wrote them, which OpenClaw never reads (sandbox containers and browsers, the restart sentinel, the device identity, exec approvals, the ACPX gateway instance id)`,
        detail: shown.join("\n"),
        fix: "`doctor --fix` re-spells them in one transaction after a verified backup; where OpenClaw's spelling already holds a row, the newer one is kept and the other is copied to migrated/key-spellings-<time>/global.sqlite before it is removed; the ACPX gateway instance id is rewritten as {instanceId, createdAt}, its old row copied to the same file.",
        path: ctx.paths.globalDbPath,
      });
    }
    if (acpx?.value.kind === "other") {
      findings.push({
        id: "storage.key-spelling.left",
        severity: "info",
        title: "The ACPX gateway instance row has neither the shape the ACPX runtime reads nor the one an earlier openclaw-state wrote: `doctor --fix` leaves it as it is (the ACPX runtime mints a new id over it)",
        detail: `${acpxLabel(acpx)}: ${acpx.value.reason}`,
        path: ctx.paths.globalDbPath,
      });
    }
    if (fixable === 0) return { findings, repairs: [] };
    return {
      findings,
      repairs: [
        {
          id: "storage.key-spelling.respell",
          description: `re-spell ${formatCount(fixable)} row(s) OpenClaw does not read, after a verified backup`,
          // After the legacy migration (50): a merge into this state may add OpenClaw's spelling of the same row,
          // and the run's archive, if any, covers this too.
          order: 65,
          apply: applyKeySpellingRepair,
        },
      ],
    };
  },
};
