// Importer for `cron/jobs-state.json` (runtime state beside a cron store) → the runtime columns of cron_jobs.
//
// Shape (SPEC §4.3; OpenClaw src/commands/doctor/cron/legacy-store-migration.ts):
// {"version":1,"jobs":{"<id>":{"updatedAtMs","scheduleIdentity","state":{…}}}}. A state whose
// scheduleIdentity differs from the job's current schedule loses its nextRunAtMs, as the runtime does.
import path from "node:path";
import { OperationError } from "../../core/errors.js";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { assertUnchanged, inspectJsonSource, readJsonSource, shapeError, verifyKeys } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportContext, ImportCounts, PlannedSource } from "../types.js";
import { epochMs, obj, str } from "./coerce.js";
import { cronStores, storeAtImport } from "./cron-jobs.js";
import { defaultCronStaggerMs } from "./cron-defaults.js";
import { STATE_COLUMNS, stateColumns } from "./cron-normalize.js";

type Obj = Record<string, unknown>;

function stateEntries(file: string, value: unknown): { entries: Array<[string, Obj]>; notes: string[]; skipped: number } {
  const o = obj(value);
  const jobs = obj(o?.jobs);
  if (!o || !jobs) throw shapeError(file, 'a cron state file ({"version":1,"jobs":{…}})', value);
  if (o.version !== undefined && o.version !== 1) {
    throw new OperationError("unsupported_version", `${file}: cron state version ${JSON.stringify(o.version)} is not supported (expected 1); the file was left in place.`, { path: file });
  }
  const notes = o.version === undefined ? ["no version field: read as version 1"] : [];
  const entries: Array<[string, Obj]> = [];
  let skipped = 0;
  for (const [id, entry] of Object.entries(jobs)) {
    const e = obj(entry);
    if (e && id.trim() !== "") entries.push([id.trim(), e]);
    else skipped += 1;
  }
  return { entries, notes, skipped };
}

/**
 * The row's identity as the file's job had it before the import gave its cron schedule the top-of-hour default
 * stagger (null when it has no such stagger). OpenClaw 2026.9.6's doctor compares a state's identity with the job
 * as the file has it, so a state written for "0 * * * *" without a stagger still matches: its nextRunAtMs stays.
 */
function identityBeforeDefaultStagger(identity: string | null): string | null {
  if (identity === null) return null;
  try {
    const parsed = JSON.parse(identity) as { schedule?: Obj };
    const s = obj(parsed.schedule);
    if (!s || s.kind !== "cron" || typeof s.expr !== "string" || s.staggerMs === undefined || s.staggerMs !== defaultCronStaggerMs(s.expr)) return null;
    delete s.staggerMs;
    return JSON.stringify(parsed);
  } catch {
    return null;
  }
}

function detect(ctx: DetectContext): DetectedSource[] {
  return cronStores(ctx.root, ctx.paths, ctx.config)
    .filter((s) => isRegularFile(s.statePath))
    .map((s) => ({ kind: "cron-state" as const, agentId: null, path: s.statePath, relativePath: sourceRelativePath(ctx.root, s.statePath), legacyRoot: false }));
}

function inspect(source: DetectedSource) {
  return inspectJsonSource(source, (value) => {
    const { entries, notes } = stateEntries(source.path, value);
    return { records: entries.length, notes: [...notes, "merged into the runtime columns of the store's cron_jobs rows (imported first)"] };
  });
}

function importState(db: GlobalDatabase, source: PlannedSource, ctx: ImportContext): ImportCounts {
  const store = storeAtImport(ctx, (s) => s.statePath === path.resolve(source.path), source.path);
  const { value, sha256 } = readJsonSource(source.path);
  assertUnchanged(source, sha256);
  const { entries, notes, skipped } = stateEntries(source.path, value);
  const identityOf = db.prepare("SELECT schedule_identity FROM cron_jobs WHERE store_key = ? AND job_id = ?");
  const update = db.prepare(
    `UPDATE cron_jobs SET ${STATE_COLUMNS.map((c) => `${c} = ?`).join(", ")}, state_json = ?, runtime_updated_at_ms = ?, updated_at = max(updated_at, coalesce(?, updated_at)) WHERE store_key = ? AND job_id = ?`,
  );
  let updated = 0;
  let reset = 0;
  const missing: string[] = [];
  const applied: string[] = [];
  for (const [id, entry] of entries) {
    const row = identityOf.get(store.storeKey, id) as { schedule_identity: string | null } | undefined;
    if (!row) {
      missing.push(id);
      continue;
    }
    const state: Obj = { ...(obj(entry.state) ?? {}) };
    const identity = str(entry.scheduleIdentity);
    // Either form matches (a state written with the default stagger spelled out is the same schedule).
    const same = identity === row.schedule_identity || (identity !== null && identity === identityBeforeDefaultStagger(row.schedule_identity));
    if (identity !== null && !same && state.nextRunAtMs !== undefined) {
      delete state.nextRunAtMs;
      reset += 1;
    }
    const values = stateColumns(state);
    const updatedAt = epochMs(entry.updatedAtMs);
    update.run(...STATE_COLUMNS.map((c) => values[c]), JSON.stringify(state), updatedAt, updatedAt, store.storeKey, id);
    updated += 1;
    applied.push(id);
  }
  if (entries.length > 0 && updated === 0 && isRegularFile(store.storePath)) {
    // The jobs file is still in place: it failed or was skipped. Keep the state for the run that imports it.
    throw new OperationError("cron_jobs_pending", `${source.path}: none of its ${entries.length} job(s) is in cron_jobs yet because ${store.storePath} has not been imported; the file was left in place until it is.`, { path: source.path });
  }
  const out = [...notes];
  if (missing.length > 0) out.push(`${missing.length} state entr${missing.length === 1 ? "y" : "ies"} for job(s) not in the store ignored, as the runtime does: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", …" : ""}`);
  if (reset > 0) out.push(`${reset} job(s) changed schedule since their state was written: nextRunAtMs dropped (recomputed by the scheduler)`);
  return {
    records: entries.length,
    rows: { cron_jobs: updated },
    skipped: skipped + missing.length,
    warnings: [],
    notes: out,
    expect: { storeKey: store.storeKey, ids: JSON.stringify(applied) },
  };
}

/** Every job whose state this file set still has a state_json. */
function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const storeKey = String(expected.expect.storeKey ?? "");
  const has = db.prepare("SELECT 1 FROM cron_jobs WHERE store_key = ? AND job_id = ? AND state_json IS NOT NULL").pluck();
  return verifyKeys(expected, "ids", (id) => has.get(storeKey, id) !== undefined, "cron job state(s)");
}

export const cronStateImporter: GlobalSourceImporter = {
  kind: "cron-state",
  target: "global",
  label: { one: "legacy cron state file", many: "legacy cron state files", records: "job states" },
  targetTable: "cron_jobs",
  targetTables: ["cron_jobs"],
  detect,
  inspect,
  import: importState,
  verify,
};
