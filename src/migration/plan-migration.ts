// The read-only migration plan (SPEC §5): every legacy source with its hash, records, target and action.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { collectGarbage } from "../core/heap.js";
import { describeError } from "../core/errors.js";
import { isOpenclawFormat, type DbFormat } from "../state/db-format.js";
import { agentDbPath, isPathInside, liveStatePaths, type StatePaths } from "../state/paths.js";
import { openLedgerDatabase, readDatabaseFormat, type GlobalDatabase } from "../state/state-databases.js";
import { IMPORTERS } from "./importers/index.js";
import { compareText, takeInventory, type Inventory } from "./inventory.js";
import { configuredMainKey, planConfig, readConfig } from "./legacy-config.js";
import { takeLegacyInventory } from "./legacy-inventory.js";
import { isCompactionCheckpointTranscript } from "./legacy-paths.js";
import { failedSourceArchive, findLatestSourceByPath, findSourceByKey, sourceKeyFor } from "./ledger.js";
import { sourceDestinations } from "./source-destinations.js";
import type { DetectContext, DetectedSource, KindSummary, MigrationPlan, MigrationProgress, PlanAction, PlanFacts, PlannedSource, SourceImporter, SourceInspection, SourceKind } from "./types.js";

export interface PlanMigrationOptions {
  paths: StatePaths;
  /** The ledger to consult (open global DB); otherwise it is opened read-only when it exists. */
  ledger?: GlobalDatabase;
  /** An earlier plan of the same tree: files with the same size and mtime reuse its hashes instead of re-reading. */
  previous?: MigrationPlan;
  onProgress?: (event: MigrationProgress) => void;
  /**
   * Decide each source's conditional destinations from the file itself even where that takes a second read (a session
   * index: ACP metadata, delivery routes). Only the views that show destinations ask (`doctor --dry-run`, `migrate
   * plan`): a second pass over a 60 MB index doubles the plan's CPU, which every `doctor` and `--fix` would pay.
   */
  reach?: boolean;
}

/** Plans whose sources wait because a database is in OpenClaw's format (kept off the serialized plan). */
const blockedPlans = new WeakMap<MigrationPlan, DbFormat>();

/** The database format that keeps this plan's sources from being imported (null when none does). */
export function planBlockedBy(plan: MigrationPlan): DbFormat | null {
  return blockedPlans.get(plan) ?? null;
}

/** Plans whose sources are merged into a state already in OpenClaw's current format (merge-legacy.ts). */
const mergePlans = new WeakMap<MigrationPlan, DbFormat>();

/** The current-format global database this plan's sources merge into, or null (the state is in this tool's format). */
export function planMergesInto(plan: MigrationPlan): DbFormat | null {
  return mergePlans.get(plan) ?? null;
}

/** Inspections behind each plan, kept off the serialized plan (index session-id lists can be long). */
const inspections = new WeakMap<MigrationPlan, Map<string, { mtimeMs: number; inspection: SourceInspection }>>();

export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// Re-exported: the config readers moved to legacy-config.ts (importers use them without importing the planner).
export { configuredMainKey, readConfiguredMainKey, readLegacyConfig } from "./legacy-config.js";

function emptySummary(): KindSummary {
  return { files: 0, bytes: 0, records: 0, byAction: { import: 0, "already-imported": 0, "changed-since-import": 0, skip: 0 } };
}

/**
 * Import order: agent-database sources by agent, then global-database sources; within a group by kind
 * (registry order: indexes before transcripts, cron jobs before their state); the old root store before
 * the agent's own (newer wins ties).
 */
function compareSources(a: PlannedSource, b: PlannedSource, kindOrder: Map<SourceKind, number>): number {
  const byAgent = a.targetDatabase === "agent" ? compareText(a.agentId ?? "", b.agentId ?? "") : 0;
  return (
    Number(a.targetDatabase === "global") - Number(b.targetDatabase === "global") ||
    byAgent ||
    kindOrder.get(a.kind)! - kindOrder.get(b.kind)! ||
    compareText(a.agentId ?? "", b.agentId ?? "") ||
    Number(b.legacyRoot) - Number(a.legacyRoot) ||
    compareText(a.relativePath, b.relativePath)
  );
}

export function planFingerprint(plan: Pick<MigrationPlan, "sources" | "layout">): string {
  const parts = [
    plan.sources.map((s) => [s.relativePath, s.kind, s.sha256, s.sizeBytes, s.action]),
    // A legacy state dir that was just moved into place is the same tree: leave it out.
    plan.layout.filter((l) => l.kind !== "legacy-state-dir").map((l) => [l.kind, l.action]),
  ];
  return crypto.createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

function openLedger(paths: StatePaths): GlobalDatabase | null {
  // The live ledger: this tool's format or OpenClaw's current one (same ledger columns), for a staging state too.
  const live = liveStatePaths(paths);
  if (!fs.existsSync(live.globalDbPath)) return null;
  let db: GlobalDatabase;
  try {
    db = openLedgerDatabase(live, { mode: "read" });
  } catch {
    return null;
  }
  // An empty file (another process between creating it and committing its schema, or one that died there) has no ledger yet.
  if (db.format.id === "new") {
    db.close();
    return null;
  }
  return db;
}

export interface Detection {
  inv: Inventory;
  ctx: DetectContext;
  detected: Array<{ importer: SourceImporter; source: DetectedSource }>;
  /** Files named like a source that a released OpenClaw's runtime still reads beside its databases: absolute path → why. */
  live: Map<string, string>;
  /** The format of every database that exists (global, then agents by id). */
  formats: StateFormats;
}

export interface StateFormats {
  global: DbFormat | null;
  agents: Map<string, DbFormat>;
  /** The first database in a released OpenClaw's format (or a newer one) that keeps legacy sources waiting. */
  foreign: DbFormat | null;
  /**
   * The global database when every database of the state is in OpenClaw's current format: legacy sources are then
   * imported into a staging state and merged, record by record, into those databases (merge-legacy.ts).
   */
  mergeInto: DbFormat | null;
}


function formatOf(file: string, role: "global" | "agent"): DbFormat | null {
  // Unopenable: the storage check names it.
  return fs.existsSync(file) ? readDatabaseFormat(file, role).format : null;
}

/** Reads user_version and table names of each database (read-only, no row read). */
export function readStateFormats(paths: StatePaths, agentIds: Iterable<string>): StateFormats {
  const global = formatOf(paths.globalDbPath, "global");
  const agents = new Map<string, DbFormat>();
  for (const id of agentIds) {
    const f = formatOf(agentDbPath(paths, id), "agent");
    if (f) agents.set(id, f);
  }
  const current = (f: DbFormat | null): boolean => f !== null && f.id === "openclaw" && f.current;
  const mergeable = current(global) && [...agents.values()].every(current);
  const foreign = [global, ...agents.values()].find((f) => isOpenclawFormat(f)) ?? null;
  return { global, agents, foreign: mergeable ? null : foreign, mergeInto: mergeable ? global : null };
}

/** Why a legacy source waits when the databases are in OpenClaw's format (the importers write the design-v1 tables). */
export function foreignFormatReason(format: DbFormat): string {
  return `the databases were written by ${format.writtenBy}, a format openclaw-state cannot write yet — run \`openclaw doctor --fix\``;
}

/** Every importer's detection over the tree (directory listings only): what `imported` means. */
export function detectSources(paths: StatePaths): Detection {
  const inv = takeInventory(paths);
  const config = readConfig(paths, inv.root).value;
  const ctx: DetectContext = { paths, root: inv.root, sessionsDirs: inv.sessionsDirs, agentDirs: inv.agentDirs, mainKey: configuredMainKey(config), config };
  // A staging state (the merge path) is judged by the live databases: they decide what is live and what merges.
  const formats = readStateFormats(liveStatePaths(paths), inv.agentDirs.map((a) => a.agentId));
  const live = new Map<string, string>();
  const detected = IMPORTERS.flatMap((importer) => importer.detect(ctx).map((source) => ({ importer, source }))).filter(({ source }) => {
    // OpenClaw 2026.6.33 and 2026.9.6 still read agents/<id>/agent/models.json at runtime (its doctor leaves it):
    // beside an agent database in their format it is live state, not a legacy source.
    // An agent without a database yet goes by the global DB's format (its runtime reads the file all the same).
    const format = source.agentId ? formats.agents.get(source.agentId) ?? formats.global : undefined;
    if (source.kind === "model-catalog" && isOpenclawFormat(format)) {
      live.set(path.resolve(source.path), `OpenClaw's live model catalog (its runtime reads it beside an agent database in ${format.writtenBy}'s format)`);
      return false;
    }
    // Its format has no table for media bytes either: <stateDir>/media/ is its live media store beside such a global DB.
    if (source.kind === "media" && isOpenclawFormat(formats.global) && isPathInside(path.join(paths.stateDir, "media"), source.path)) {
      live.set(path.resolve(source.path), `OpenClaw's live media store (its runtime reads media/ files beside a global database in ${formats.global.writtenBy}'s format)`);
      return false;
    }
    // A compaction checkpoint is a copy of a transcript: OpenClaw 2026.9.6 never imports it (the inventory keeps it).
    if (source.kind === "transcript" && isCompactionCheckpointTranscript(path.basename(source.path))) return false;
    return true;
  });
  return { inv, ctx, detected, live, formats };
}

export async function planMigration(options: PlanMigrationOptions): Promise<MigrationPlan> {
  const { paths } = options;
  const { inv, ctx, detected, live, formats } = detectSources(paths);
  if (options.reach) ctx.reach = true;
  // An earlier plan's inspections lack what `reach` reads a second time: not reused for such a plan.
  const reuse = options.previous && !options.reach ? inspections.get(options.previous) : undefined;
  const cache = new Map<string, { mtimeMs: number; inspection: SourceInspection }>();
  // Every other file of the tree, classified from the same detection: what is not imported is named.
  const inventory = takeLegacyInventory({ paths, root: inv.root, detected: new Set(detected.map(({ source }) => path.resolve(source.path))), live });

  // lstat: a source swapped for a link, FIFO or directory since the listing is named, never opened.
  const stats = detected.map(({ source }) => {
    try {
      return fs.lstatSync(source.path);
    } catch {
      return null;
    }
  });
  const bytesTotal = stats.reduce((n, st) => n + (st?.isFile() ? st.size : 0), 0);
  let bytesDone = 0;
  const planned: PlannedSource[] = [];
  for (let i = 0; i < detected.length; i += 1) {
    const { importer, source } = detected[i]!;
    const st = stats[i];
    if (!st) continue; // vanished since the directory listing
    const base: PlannedSource = {
      ...source,
      sizeBytes: st.size,
      mtimeMs: Math.trunc(st.mtimeMs),
      sha256: null,
      records: null,
      targetTable: importer.targetTable,
      // Read-only and shared per (kind, agent), not one array per source.
      openclawTables: sourceDestinations(importer.kind, source.agentId).names,
      sourceKey: null,
      targetDatabase: importer.target,
      action: "import",
      notes: [],
    };
    options.onProgress?.({ phase: "plan", done: i, total: detected.length, bytesDone, bytesTotal, current: source.relativePath });
    if (!st.isFile()) {
      planned.push({ ...base, sizeBytes: 0, action: "skip", attention: true, reason: `${st.isSymbolicLink() ? "is a symbolic link" : st.isDirectory() ? "is a directory" : st.isFIFO() ? "is a FIFO" : "is not a regular file"} where a legacy file is expected: not read, not imported; replace it with the regular file` });
      continue;
    }
    // ~7 KB of garbage per inspected source: collected in batches so a plan of 10k files stays small.
    if (i > 0 && i % 2048 === 0) collectGarbage();
    let inspection: SourceInspection;
    const prior = reuse?.get(source.path);
    try {
      inspection = prior && prior.mtimeMs === base.mtimeMs && prior.inspection.sizeBytes === st.size ? prior.inspection : importer.inspect(source, ctx);
    } catch (error) {
      const denied = (error as NodeJS.ErrnoException).code === "EACCES" || (error as NodeJS.ErrnoException).code === "EPERM";
      // Not `migrate skip`: the file would stay in the state dir, where the pre-migration backup must read it.
      const fix = denied ? `; make it readable by this user (chmod u+r ${source.path}) or move it out of the state dir` : "";
      planned.push({ ...base, action: "skip", attention: true, reason: `cannot be read: ${describeError(error)}${fix}` });
      continue;
    }
    bytesDone += st.size;
    cache.set(source.path, { mtimeMs: base.mtimeMs, inspection });
    planned.push({
      ...base,
      sizeBytes: inspection.sizeBytes,
      sha256: inspection.sha256,
      records: inspection.records,
      notes: [...inspection.notes],
      ...(inspection.sessionId ? { sessionId: inspection.sessionId } : {}),
      ...(inspection.routedSessionIds ? { routedAgents: Object.keys(inspection.routedSessionIds).sort(compareText) } : {}),
      // Decided from the file itself: a destination it cannot reach is not named, one it does loses its `(if …)`.
      ...(inspection.reach ? { reach: inspection.reach, openclawTables: sourceDestinations(importer.kind, source.agentId, inspection.reach.tables).names } : {}),
      ...(inspection.skipReason ? { action: "skip" as PlanAction, reason: inspection.skipReason } : {}),
      // Named, counted and hashed like any source, but not imported: the importers write only this tool's format.
      ...(formats.foreign && !inspection.skipReason ? { action: "skip" as PlanAction, attention: true, reason: foreignFormatReason(formats.foreign) } : {}),
    });
    if (i % 16 === 15) await yieldToLoop();
  }

  const facts: PlanFacts = { referencedSessionIds: new Map(), indexesWithMainKey: new Map(), routedSessions: new Map() };
  const addTo = (map: Map<string, Set<string>>, key: string, values: Iterable<string>): void => {
    const set = map.get(key) ?? new Set<string>();
    for (const v of values) set.add(v);
    map.set(key, set);
  };
  for (const s of planned) {
    const inspection = cache.get(s.path)?.inspection;
    if (s.agentId === null) continue;
    if (inspection?.referencedSessionIds) addTo(facts.referencedSessionIds, s.agentId, inspection.referencedSessionIds);
    if (inspection?.hasMainKey) addTo(facts.indexesWithMainKey, s.agentId, [s.relativePath]);
    // A session the store's own keys also name stays with the store's agent, transcript included.
    const own = inspection?.routedSessionIds ? new Set(inspection.referencedSessionIds ?? []) : null;
    for (const [other, ids] of Object.entries(inspection?.routedSessionIds ?? {})) {
      // The other agent's store references them too (its transcripts link to them), and this agent's follow them.
      addTo(facts.referencedSessionIds, other, ids);
      const routed = facts.routedSessions.get(s.agentId) ?? new Map<string, string>();
      for (const id of ids) if (!own!.has(id) && !routed.has(id)) routed.set(id, other);
      facts.routedSessions.set(s.agentId, routed);
    }
  }

  const ledger = options.ledger ?? openLedger(paths);
  try {
    for (const s of planned) {
      if (s.action === "skip" || s.sha256 === null) continue;
      s.sourceKey = sourceKeyFor(s.kind, s.relativePath, s.targetTable, s.sha256, s.sizeBytes);
      if (!ledger) continue;
      const row = findSourceByKey(ledger, s.sourceKey);
      if (row?.status === "skipped") {
        s.notes.push(`set aside before by \`migrate skip\` (run ${row.last_run_id}${skipReason(row.report_json)}) and put back: planned again`);
      } else if (row && row.status !== "failed") {
        s.action = "already-imported";
        s.reason = row.removed_source ? "imported before; the file is back (unchanged): it is retired again" : "imported before; the file is retired on the next --fix";
        s.previous = { runId: row.last_run_id, status: row.status, importedAt: row.imported_at, sha256: row.source_sha256 };
        continue;
      }
      if (row?.status === "failed") {
        const reason = failedReason(row.report_json);
        s.notes.push(`the previous attempt (run ${row.last_run_id}) failed${reason ? `: ${reason}` : ""}`);
        // The same bytes were archived before that attempt: a retry needs no new backup while that archive exists.
        const archive = failedSourceArchive(ledger, row);
        if (archive && fs.existsSync(archive)) s.coveredByBackup = archive;
      }
      const earlier = findLatestSourceByPath(ledger, s.relativePath, s.kind);
      if (earlier) {
        s.action = "changed-since-import";
        s.reason = `changed since it was imported${earlier.imported_at ? ` on ${new Date(earlier.imported_at).toISOString()}` : ""} (run ${earlier.last_run_id}): imported again by upsert`;
        s.previous = { runId: earlier.last_run_id, status: earlier.status, importedAt: earlier.imported_at, sha256: earlier.source_sha256 };
      }
    }
  } finally {
    if (ledger && !options.ledger) ledger.close();
  }

  for (const importer of IMPORTERS) importer.finalize?.(planned.filter((s) => s.kind === importer.kind), facts);
  for (const s of planned) {
    const fail = s.notes.find((n) => n.startsWith("will fail"));
    if (fail && s.action !== "skip") s.willFail = fail.replace(/^will fail:\s*/, "");
  }
  const kindOrder = new Map(IMPORTERS.map((i, n) => [i.kind, n]));
  planned.sort((a, b) => compareSources(a, b, kindOrder));
  options.onProgress?.({ phase: "plan", done: detected.length, total: detected.length, bytesDone, bytesTotal });

  const summary: MigrationPlan["summary"] = Object.fromEntries(IMPORTERS.map((i) => [i.kind, emptySummary()]));
  for (const s of planned) {
    const k = (summary[s.kind] ??= emptySummary());
    k.files += 1;
    k.bytes += s.sizeBytes;
    k.records += s.records ?? 0;
    k.byAction[s.action] += 1;
  }
  const configPlan = planConfig(paths, inv.root);
  const plan: MigrationPlan = {
    stateDir: paths.stateDir,
    root: inv.root,
    plannedAt: Date.now(),
    sources: planned,
    layout: inv.layout,
    leftovers: inv.leftovers,
    notes: inv.notes,
    inventory,
    config: configPlan,
    summary,
    pending: planned.some((s) => s.action !== "skip") || inv.layout.some((l) => l.action === "move") || configPlan.keys.some((k) => k.blocked === null),
    fingerprint: "",
  };
  plan.fingerprint = planFingerprint(plan);
  inspections.set(plan, cache);
  if (formats.foreign) blockedPlans.set(plan, formats.foreign);
  if (formats.mergeInto) mergePlans.set(plan, formats.mergeInto);
  return plan;
}

/**
 * Makes `target` (the plan a caller showed) hold `fresh` (the plan re-made under the lease) and returns it:
 * a plan of 20k sources is ~25 MB, and the caller keeps its copy for its report while the run goes on.
 */
export function adoptPlan(target: MigrationPlan, fresh: MigrationPlan): MigrationPlan {
  if (target === fresh) return target;
  Object.assign(target, fresh);
  const blocked = blockedPlans.get(fresh);
  if (blocked) blockedPlans.set(target, blocked);
  else blockedPlans.delete(target);
  const merge = mergePlans.get(fresh);
  if (merge) mergePlans.set(target, merge);
  else mergePlans.delete(target);
  const cache = inspections.get(fresh);
  if (cache) inspections.set(target, cache);
  inspections.delete(fresh);
  return target;
}

/** Drops what `plan` keeps for a re-plan (each source's inspection): once no re-plan follows, it is dead weight. */
export function forgetInspections(plan: MigrationPlan): void {
  inspections.delete(plan);
}

function skipReason(reportJson: string | null): string {
  const reason = failedReason(reportJson);
  return reason ? `: ${reason}` : "";
}

function failedReason(reportJson: string | null): string | null {
  if (!reportJson) return null;
  try {
    const r = JSON.parse(reportJson) as { reason?: unknown };
    return typeof r.reason === "string" ? r.reason : null;
  } catch {
    return null;
  }
}
