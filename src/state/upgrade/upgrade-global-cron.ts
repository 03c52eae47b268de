// Cron: design-v1 cron_jobs (typed columns + job_json) → OpenClaw cron_jobs, cron_run_logs → task_runs (runtime 'cron').
//
// Target shapes are those openclaw@2026.9.6's own doctor writes (docs/openclaw-format/global-db.md §2): job_json is
// the job minus runtime fields with `state: {}` last, state_json the runtime state, schedule_identity version 2,
// grant_definition_revision the sha256 of the canonical definition (OpenClaw recomputes and compares it).
import crypto from "node:crypto";
import path from "node:path";
import { type GlobalUpgradeContext, bump, insertRow, isRecord, note, parseJsonObject, readAll } from "./upgrade-global-context.js";

/** Fields OpenClaw keeps out of job_json (runtime, not definition). */
const RUNTIME_JOB_FIELDS = ["runtimeAuthority", "runtimeAuthorityRecoveryRequired", "state", "updatedAtMs"];
/** OpenClaw writes a failure destination's keys in this order. */
const FAILURE_DESTINATION_FIELDS = ["channel", "to", "accountId", "mode"];

/** JSON with object keys sorted at every level (the canonical text OpenClaw hashes for grant revisions). */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number" && !Number.isFinite(value)) return JSON.stringify(String(value));
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(",")}]`;
  if (typeof value === "object") {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj).sort().filter((k) => obj[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function definitionRevision(jobJson: Record<string, unknown>): string {
  const { enabled: _enabled, state: _state, ...definition } = jobJson;
  return `sha256:${crypto.createHash("sha256").update(canonicalJson(definition)).digest("base64url")}`;
}

/**
 * When an enabled one-shot (`at`) job runs next, as OpenClaw computes it (computeOneShotNextRunAtMs): at its time,
 * unless a successful run at or after that time already happened. Undefined for any other schedule.
 */
function oneShotNextRunAtMs(job: Record<string, unknown>, state: Record<string, unknown>): number | undefined {
  const s = job.schedule;
  if (!isRecord(s) || s.kind !== "at") return undefined;
  const atMs = typeof s.at === "number" ? s.at : typeof s.at === "string" ? Date.parse(s.at) : NaN;
  if (!Number.isFinite(atMs)) return undefined;
  const lastRunAtMs = num(state.lastRunAtMs);
  if ((state.lastRunStatus ?? state.lastStatus) === "ok" && lastRunAtMs) return atMs > lastRunAtMs ? atMs : undefined;
  return atMs;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** schedule_identity as OpenClaw computes it; undefined when the schedule cannot be read (the column stays NULL). */
function scheduleIdentity(job: Record<string, unknown>): string | undefined {
  const s = job.schedule;
  if (!isRecord(s) || (job.pacing !== undefined && job.pacing !== null)) return undefined;
  const raw = str(s.kind)?.toLowerCase();
  const at = str(s.at);
  const everyMs = num(s.everyMs);
  const expr = str(s.expr);
  const kind = raw ?? (at ? "at" : everyMs !== undefined ? "every" : expr ? "cron" : undefined);
  let schedule: Record<string, unknown> | undefined;
  if (kind === "at" && at) schedule = { kind, at };
  else if (kind === "every" && everyMs !== undefined) schedule = { kind, everyMs, anchorMs: num(s.anchorMs) };
  else if (kind === "cron" && expr) schedule = { kind, expr, tz: str(s.tz), staggerMs: num(s.staggerMs) };
  if (!schedule) return undefined;
  return JSON.stringify({ version: 2, enabled: typeof job.enabled === "boolean" ? job.enabled : true, schedule, hasTrigger: job.trigger !== undefined && job.trigger !== null });
}

/**
 * Where OpenClaw looks for this store: design-v1 keys are the absolute jobs.json path at migration time. A default
 * store (`…/cron/jobs.json`) is re-rooted under the state dir being upgraded (the tree may have moved since).
 */
function targetStoreKey(ctx: GlobalUpgradeContext, sourceKey: string, seen: Map<string, string>): string {
  const known = seen.get(sourceKey);
  if (known) return known;
  const standard = path.resolve(ctx.stateDir, "cron", "jobs.json"); // legacy-name-ok: OpenClaw's cron_jobs.store_key is this path (a key, never read)
  let key = path.resolve(sourceKey);
  const defaultTail = `${path.sep}${path.relative(ctx.stateDir, standard)}`;
  if (key !== standard && key.endsWith(defaultTail) && !key.startsWith(path.resolve(ctx.stateDir) + path.sep)) {
    note(ctx, "global.cron.store-key-rerooted", `cron store ${sourceKey} is outside ${ctx.stateDir}: its jobs are written under ${standard}, where OpenClaw looks for the default store.`);
    key = standard;
  } else if (key !== standard) {
    note(ctx, "global.cron.custom-store", `cron store ${sourceKey} is not the default ${standard}: kept as is; OpenClaw lists it only when its config names that store (cron.store).`);
  }
  seen.set(sourceKey, key);
  return key;
}

/** The job minus runtime fields, createdAtMs filled when missing (before `state`, where OpenClaw's normalizer puts it). */
function jobJsonFor(job: Record<string, unknown>, createdAtMs: number | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(job)) if (!RUNTIME_JOB_FIELDS.includes(k)) out[k] = v;
  if (out.createdAtMs === undefined && createdAtMs !== undefined) out.createdAtMs = createdAtMs;
  if (isRecord(out.delivery) && isRecord(out.delivery.failureDestination)) {
    const fd = out.delivery.failureDestination;
    out.delivery = { ...out.delivery, failureDestination: Object.fromEntries(FAILURE_DESTINATION_FIELDS.filter((f) => Object.hasOwn(fd, f)).map((f) => [f, fd[f] ?? null])) };
  }
  out.state = {};
  return out;
}

export function upgradeCronJobs(ctx: GlobalUpgradeContext): Map<string, string> {
  const stores = new Map<string, string>();
  const rows = readAll(ctx, "cron_jobs", "store_key, sort_order, job_id");
  const order = new Map<string, number>();
  for (const row of rows) {
    const jobId = String(row.job_id);
    const job = parseJsonObject(row.job_json);
    const payloadKind = str(row.payload_kind) ?? (isRecord(job?.payload) ? str(job.payload.kind) : undefined);
    if (!job || !payloadKind) {
      bump(ctx.unmapped, "cron_jobs");
      note(ctx, "global.cron.job-unreadable", `cron job ${jobId}: ${job ? "no payload kind" : "job_json is not a JSON object"}; OpenClaw needs both, so it stays in the design-v1 file only.`);
      continue;
    }
    const storeKey = targetStoreKey(ctx, String(row.store_key), stores);
    const enabled = row.enabled === 1;
    const createdAt = num(row.created_at_ms) ?? num(row.updated_at);
    if (job.createdAtMs === undefined) note(ctx, "global.cron.created-at", `cron job ${jobId}: job_json had no createdAtMs; set from the row (${String(createdAt)}).`);
    const jobJson = jobJsonFor({ ...job, enabled }, createdAt);
    let name = str(row.name) ?? str(job.name);
    if (!name) {
      name = jobId;
      jobJson.name = name;
      note(ctx, "global.cron.name-from-id", `cron job ${jobId} had no name (OpenClaw requires one): named after its id.`);
    }
    const state = parseJsonObject(row.state_json) ?? {};
    if (state.runningAtMs !== undefined) {
      delete state.runningAtMs;
      note(ctx, "global.cron.running-cleared", `cron job ${jobId}: runningAtMs dropped (a run in flight at upgrade time is not running under the new runtime; OpenClaw clears it too).`);
    }
    if (!enabled && state.nextRunAtMs !== undefined) {
      delete state.nextRunAtMs;
      note(ctx, "global.cron.disabled-next-run", `cron job ${jobId} is disabled: nextRunAtMs dropped, as OpenClaw stores disabled jobs.`);
    }
    if (state.lastRunStatus === undefined && state.lastStatus !== undefined) state.lastRunStatus = state.lastStatus;
    const oneShot = enabled && num(state.nextRunAtMs) === undefined ? oneShotNextRunAtMs(jobJson, state) : undefined;
    if (oneShot !== undefined) {
      state.nextRunAtMs = oneShot;
      note(ctx, "global.cron.one-shot-next-run", `cron job ${jobId}: a one-shot job with no next run: nextRunAtMs set to its \`at\` time, as OpenClaw's doctor schedules it.`);
    }
    const updatedAt = num(row.runtime_updated_at_ms) ?? num(row.updated_at) ?? ctx.now;
    const identity = scheduleIdentity(jobJson);
    if (!identity) note(ctx, "global.cron.no-schedule-identity", `cron job ${jobId}: schedule not recognised (or paced); schedule_identity left NULL for OpenClaw to compute.`);
    const sort = num(row.sort_order) ?? order.get(storeKey) ?? 0;
    order.set(storeKey, Math.max(order.get(storeKey) ?? 0, sort + 1));
    insertRow(ctx, "cron_jobs", {
      store_key: storeKey,
      job_id: jobId,
      declaration_key: str(job.declarationKey) ?? null,
      owner_agent_id: isRecord(job.owner) ? (str(job.owner.agentId) ?? null) : null,
      name,
      description: str(row.description) ?? str(job.description) ?? null,
      enabled: enabled ? 1 : 0,
      agent_id: str(row.agent_id) ?? str(job.agentId) ?? null,
      payload_kind: payloadKind,
      job_json: JSON.stringify(jobJson),
      grant_definition_revision: definitionRevision(jobJson),
      grant_definition_generation: 1,
      grant_definition_updated_at: updatedAt,
      state_json: JSON.stringify(state),
      runtime_updated_at_ms: updatedAt,
      schedule_identity: identity ?? null,
      sort_order: sort,
      updated_at: updatedAt,
    });
  }
  return stores;
}

function completionStatus(entry: Record<string, unknown>, status: unknown): string {
  if (typeof entry.completionStatus === "string") return entry.completionStatus;
  if (status === "error" || status === "skipped") return "failed";
  if (status !== "ok") return "unknown";
  return entry.delivered === true || entry.deliveryStatus === "delivered" || entry.deliveryStatus === "not-requested" ? "succeeded" : "unknown";
}

/** OpenClaw keeps cron run history in task_runs; ids are `cron-runlog-import:<job>:<ts>:<n>` as its own import writes. */
export function upgradeCronRunLogs(ctx: GlobalUpgradeContext, stores: Map<string, string>): void {
  const rows = readAll(ctx, "cron_run_logs", "job_id, ts, store_key, seq");
  const ordinals = new Map<string, number>();
  const ids = new Set<string>();
  for (const row of rows) {
    const entry = parseJsonObject(row.entry_json) ?? {};
    const jobId = String(row.job_id);
    const ts = num(row.ts) ?? num(entry.ts);
    if (ts === undefined) {
      bump(ctx.unmapped, "cron_run_logs");
      note(ctx, "global.cron.run-no-ts", `cron run log ${jobId} #${String(row.seq)} has no timestamp; OpenClaw needs one: kept in the design-v1 file only.`);
      continue;
    }
    const ordinal = (ordinals.get(`${jobId}\0${ts}`) ?? 0) + 1;
    ordinals.set(`${jobId}\0${ts}`, ordinal);
    const taskId = `cron-runlog-import:${jobId}:${ts}:${ordinal}`;
    if (ids.has(taskId)) continue;
    ids.add(taskId);
    const pick = (col: string, key: string): unknown => row[col] ?? entry[key] ?? undefined;
    const status = pick("status", "status");
    const error = pick("error", "error");
    const summary = pick("summary", "summary");
    const delivered = row.delivered === 1 ? true : row.delivered === 0 ? false : entry.delivered;
    const merged = { ...entry, delivered, deliveryStatus: pick("delivery_status", "deliveryStatus") };
    const completion = completionStatus(merged, status);
    const taskStatus = status === "ok"
      ? completion === "succeeded" ? "succeeded" : "failed"
      : status === "error" && typeof error === "string" && /time(d)?\s*out|timeout/i.test(error) ? "timed_out" : "failed";
    if (status === "ok" && taskStatus === "failed") note(ctx, "global.cron.run-ok-unknown", `cron run ${taskId}: status ok without a delivery outcome is recorded as failed, as OpenClaw's own import does.`);
    const runAtMs = num(pick("run_at_ms", "runAtMs"));
    const storeKey = stores.get(String(row.store_key)) ?? path.resolve(String(row.store_key));
    const detail: Record<string, unknown> = {
      kind: "cron-run", status, completionStatus: completion, error: error ?? null, summary: summary ?? null, storeKey,
      errorReason: entry.errorReason, diagnostics: entry.diagnostics, delivered, deliveryStatus: merged.deliveryStatus,
      deliveryError: pick("delivery_error", "deliveryError"), deliverySuppressionReason: entry.deliverySuppressionReason,
      failureNotificationDelivery: entry.failureNotificationDelivery, delivery: entry.delivery,
      sessionId: pick("session_id", "sessionId"), runId: pick("run_id", "runId"), runAtMs,
      durationMs: pick("duration_ms", "durationMs"), nextRunAtMs: pick("next_run_at_ms", "nextRunAtMs"),
      model: pick("model", "model"), provider: pick("provider", "provider"), usage: entry.usage,
    };
    const sessionKey = pick("session_key", "sessionKey");
    insertRow(ctx, "task_runs", {
      task_id: taskId, runtime: "cron", task_kind: null, source_id: jobId, requester_session_key: "", owner_key: "", scope_kind: "system",
      child_session_key: typeof sessionKey === "string" && sessionKey.trim() !== "" ? sessionKey.trim() : null,
      run_id: taskId, task: jobId, status: taskStatus, delivery_status: "not_applicable", notify_policy: "silent",
      created_at: runAtMs ?? ts, started_at: runAtMs ?? null, ended_at: ts, last_event_at: ts,
      error: typeof error === "string" ? error : null, terminal_summary: typeof summary === "string" ? summary : null,
      terminal_outcome: taskStatus === "succeeded" ? "succeeded" : null, detail_json: JSON.stringify(detail),
    });
  }
  if (rows.length > 0) {
    insertRow(ctx, "migration_runs", {
      id: "state:cron-run-logs-to-task-runs:v1", started_at: ctx.now, finished_at: ctx.now, status: "completed",
      report_json: JSON.stringify({ imported: ctx.written.task_runs ?? 0, alreadyMirrored: 0, malformed: 0, skipped: false }),
    });
    note(ctx, "global.cron.run-log-receipt", "wrote OpenClaw's run-log receipt (state:cron-run-logs-to-task-runs:v1) so its doctor sees the run history as imported.");
  }
}
