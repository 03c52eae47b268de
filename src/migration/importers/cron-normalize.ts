// Legacy cron job shapes → the current job shape (SPEC §4.3), and the job → cron_jobs row projection.
//
// Shape facts (OpenClaw's public sources: src/cron/normalize.ts, src/cron/store/row-codec.ts,
// src/commands/doctor/cron/legacy-store-migration.ts and legacy-notify.ts): `jobId` is the old `id`;
// `schedule.cron` the old `expr`; `atMs` (number or string) becomes an ISO `at`; booleans may be the
// strings "true"/"false"; a missing `sessionTarget` follows the payload kind; `notify: true` becomes a
// webhook delivery to the config's `cron.webhook`. As openclaw@2026.9.6's doctor (normalizeStoredCronJobs): a string
// `schedule` is a cron expression; a top-level `command` is a systemEvent payload; top-level agent-turn and delivery
// fields go to the payload, then its delivery hints to `delivery`; an `every` schedule is anchored at `createdAtMs`;
// a cron schedule gets upstream's stagger and a job without a name upstream's name for it (cron-defaults.ts).
import { bool, epochMs, flag, idText, int, jsonOrNull, num, obj, str } from "./coerce.js";
import { defaultCronStaggerMs, explicitCronStaggerMs, inferCronJobName } from "./cron-defaults.js";

type Obj = Record<string, unknown>;

/** Delivery hints the oldest jobs kept at the top level (upstream's stripLegacyTopLevelFields, plus `bestEffort`). */
const TOP_LEVEL_DELIVERY_FIELDS = ["deliver", "channel", "to", "threadId", "bestEffortDeliver", "bestEffort", "provider"];

export interface NormalizedJob {
  id: string;
  job: Obj;
  /** Legacy conversions applied (for the plan's notes): "jobId", "schedule.cron", … */
  legacy: string[];
  /** Problems the operator should see (the job is still imported). */
  warnings: string[];
}

function coerceSchedule(raw: Obj, legacy: Set<string>): Obj | null {
  const next: Obj = { ...raw };
  // As upstream: `cron` stands in for a missing (or blank) `expr`; the expression is kept trimmed.
  if (str(raw.cron) && !str(raw.expr)) {
    next.expr = str(raw.cron);
    legacy.add("schedule.cron");
  }
  delete next.cron;
  if (typeof next.expr === "string") next.expr = next.expr.trim();
  const rawKind = str(raw.kind)?.toLowerCase();
  const atMs = raw.atMs;
  const atString = str(raw.at);
  let kind = rawKind === "at" || rawKind === "every" || rawKind === "cron" ? rawKind : undefined;
  if (!kind) {
    if (atString || atMs !== undefined) kind = "at";
    else if (num(raw.everyMs) !== null) kind = "every";
    else if (str(next.expr)) kind = "cron";
  }
  if (!kind) return null;
  next.kind = kind;
  if (atMs !== undefined) {
    legacy.add("atMs");
    const ms = epochMs(atMs);
    if (!atString && ms !== null) next.at = new Date(ms).toISOString();
    delete next.atMs;
  } else if (atString) {
    const ms = Date.parse(atString);
    next.at = Number.isFinite(ms) ? new Date(ms).toISOString() : atString;
  }
  for (const field of kind === "cron" ? ["everyMs", "anchorMs"] : ["everyMs", "anchorMs", "staggerMs"]) {
    if (field in next) {
      const n = int(next[field]);
      if (n === null) delete next[field];
      else {
        if (typeof next[field] === "string") legacy.add(`${field} as string`);
        next[field] = n;
      }
    }
  }
  if (kind === "at" && !str(next.at)) return null;
  if (kind === "every" && num(next.everyMs) === null) return null;
  if (kind === "cron" && !str(next.expr)) return null;
  if (kind === "cron") {
    // As upstream's doctor: the stagger as it reads one, else 5 minutes for a top-of-hour expression, else none.
    const explicit = explicitCronStaggerMs(raw.staggerMs);
    const stagger = explicit ?? defaultCronStaggerMs(String(next.expr));
    if (stagger === undefined) delete next.staggerMs;
    else next.staggerMs = stagger;
    if (explicit !== undefined && typeof raw.staggerMs === "string") legacy.add("staggerMs as string");
    if (explicit === undefined && stagger !== undefined) legacy.add("staggerMs default (top of the hour)");
  }
  return next;
}

/** The schedule a job carries: its `schedule` object, or (oldest files) schedule fields at the top level. */
function scheduleSource(job: Obj): Obj | null {
  // upstream #33451/#18445: `"schedule": "0 9 * * *"` is a cron expression.
  if (typeof job.schedule === "string") return str(job.schedule) ? { kind: "cron", expr: str(job.schedule) } : null;
  const schedule = obj(job.schedule);
  if (schedule) return schedule;
  if (job.cron !== undefined || job.expr !== undefined || job.atMs !== undefined || job.at !== undefined || job.everyMs !== undefined) {
    return { kind: job.kind, cron: job.cron, expr: job.expr, at: job.at, atMs: job.atMs, everyMs: job.everyMs, anchorMs: job.anchorMs, tz: job.tz, staggerMs: job.staggerMs };
  }
  return null;
}

function coercePayload(raw: Obj, top: Obj): Obj | null {
  const next: Obj = { ...raw };
  const kindRaw = str(raw.kind)?.toLowerCase();
  if (kindRaw === "agentturn") next.kind = "agentTurn";
  else if (kindRaw === "systemevent") next.kind = "systemEvent";
  else if (!kindRaw) {
    if (str(raw.message)) next.kind = "agentTurn";
    else if (str(raw.text)) next.kind = "systemEvent";
  }
  if (next.kind === "agentTurn") {
    // Oldest jobs kept the agent-turn options and delivery hints beside the payload (upstream: copyTopLevelAgentTurnFields).
    for (const field of ["model", "thinking"]) if (!str(next[field]) && str(top[field])) next[field] = str(top[field]);
    if (num(next.timeoutSeconds) === null && num(top.timeoutSeconds) !== null) next.timeoutSeconds = num(top.timeoutSeconds);
    for (const field of ["allowUnsafeExternalContent", "deliver", "bestEffortDeliver"]) if (typeof next[field] !== "boolean" && typeof top[field] === "boolean") next[field] = top[field];
    // A top-level `bestEffort` (upstream reads only `bestEffortDeliver`) is the same hint: kept as one.
    if (typeof next.bestEffortDeliver !== "boolean" && typeof top.bestEffort === "boolean") next.bestEffortDeliver = top.bestEffort;
    for (const field of ["channel", "to", "provider"]) if (typeof next[field] !== "string" && str(top[field])) next[field] = str(top[field]);
    if (!("threadId" in next) && idText(top.threadId) !== null) next.threadId = idText(top.threadId);
    if (typeof next.timeoutSeconds === "string") next.timeoutSeconds = int(next.timeoutSeconds);
    for (const field of ["allowUnsafeExternalContent", "lightContext", "deliver", "bestEffortDeliver"]) {
      if (field in next) {
        const b = bool(next[field]);
        if (b === null) delete next[field];
        else next[field] = b;
      }
    }
    if (!str(next.channel) && str(next.provider)) next.channel = str(next.provider);
    delete next.provider;
  }
  if (next.kind !== "agentTurn" && next.kind !== "systemEvent") return null;
  // As 2026.9.6's payload normalizer (normalizeCronPayload): the message or event text is stored trimmed.
  for (const field of ["message", "text"]) if (typeof next[field] === "string") next[field] = (next[field] as string).trim();
  return next;
}

function coerceDelivery(raw: Obj): Obj {
  const next: Obj = { ...raw };
  const mode = str(raw.mode)?.toLowerCase();
  if (mode === "deliver") next.mode = "announce";
  else if (mode === "announce" || mode === "none" || mode === "webhook") next.mode = mode;
  else delete next.mode;
  const channel = str(raw.channel)?.toLowerCase();
  if (channel) next.channel = channel;
  else delete next.channel;
  if ("bestEffort" in next) {
    const b = bool(next.bestEffort);
    if (b === null) delete next.bestEffort;
    else next.bestEffort = b;
  }
  return next;
}

/**
 * The delivery patch a payload's legacy hints make (upstream's buildDeliveryPatchFromLegacyPayload): `deliver: false`
 * is mode none, any other hint mode announce; null when the payload has none.
 */
function deliveryHints(payload: Obj): Obj | null {
  const deliver = bool(payload.deliver);
  const bestEffort = bool(payload.bestEffortDeliver);
  const channel = (str(payload.channel) ?? str(payload.provider))?.toLowerCase();
  const to = str(payload.to);
  const threadId = idText(payload.threadId);
  if (deliver === null && bestEffort === null && !channel && !to && threadId === null) return null;
  return {
    mode: deliver === false ? "none" : "announce",
    ...(channel ? { channel } : {}),
    ...(to ? { to } : {}),
    ...(threadId !== null ? { threadId } : {}),
    ...(bestEffort !== null ? { bestEffort } : {}),
  };
}

function isHttpUrl(value: string | null): value is string {
  return value !== null && /^https?:\/\/\S+$/i.test(value);
}

/** `notify: true` → a webhook delivery (or completion destination) to `cron.webhook`; dropped when inert. */
function migrateNotify(job: Obj, legacyWebhook: string | null, warnings: string[], legacy: Set<string>, label: string): void {
  if (!("notify" in job)) return;
  legacy.add("notify");
  const notify = bool(job.notify) === true;
  delete job.notify;
  if (!notify) return;
  const delivery = obj(job.delivery);
  const mode = str(delivery?.mode);
  if (mode === "webhook" && isHttpUrl(str(delivery?.to))) return;
  if (!legacyWebhook) return; // nothing to deliver to: the flag was inert
  if (!isHttpUrl(legacyWebhook)) {
    job.notify = true;
    warnings.push(`job ${label}: "notify: true" kept as is: the config's cron.webhook is not an http(s) URL`);
    return;
  }
  if (mode === undefined || mode === null || mode === "none" || mode === "webhook") job.delivery = { ...delivery, mode: "webhook", to: legacyWebhook };
  else job.delivery = { ...delivery, completionDestination: { mode: "webhook", to: legacyWebhook } };
}

/** Normalizes one raw job; null (with the reason) when it has no id to key it by. */
export function normalizeCronJob(raw: unknown, index: number, legacyWebhook: string | null): NormalizedJob | { skip: string } {
  const base = obj(raw);
  if (!base) return { skip: `job #${index + 1} is not an object` };
  const job: Obj = { ...(obj(base.job) ?? obj(base.data) ?? base) };
  const legacy = new Set<string>();
  const warnings: string[] = [];
  const id = idText(job.id) ?? idText(job.jobId);
  if (!id) return { skip: `job #${index + 1} has no id` };
  if (job.id === undefined) legacy.add("jobId");
  job.id = id;
  delete job.jobId;
  const label = JSON.stringify(id);

  for (const field of ["enabled", "deleteAfterRun"]) {
    if (typeof job[field] === "string") legacy.add(`${field} as string`);
    if (field in job) {
      const b = bool(job[field]);
      if (b === null) delete job[field];
      else job[field] = b;
    }
  }
  if (typeof job.enabled !== "boolean") job.enabled = true;

  // Named from the job as the file has it, before anything below fills in its schedule or payload (upstream's order).
  if (str(job.name)) job.name = str(job.name);
  else {
    if (job.name !== undefined && job.name !== null && job.name !== "" && typeof job.name !== "string") {
      warnings.push(`job ${label}: its name ${JSON.stringify(job.name)} is not text; named as OpenClaw names a job without one (the retired file keeps it)`);
    }
    const asSchedule = typeof job.schedule === "string" ? { kind: "cron", expr: job.schedule.trim() } : obj(job.schedule);
    job.name = inferCronJobName(asSchedule, obj(job.payload));
    legacy.add("name inferred");
  }

  const scheduleRaw = scheduleSource(job);
  if (typeof job.schedule === "string") legacy.add("schedule as string");
  // Top-level schedule fields were folded into scheduleRaw: only then are they dropped (a string schedule leaves them).
  else if (!obj(job.schedule)) for (const field of ["cron", "expr", "at", "atMs", "everyMs", "anchorMs", "tz", "staggerMs", "kind"]) delete job[field];
  const schedule = scheduleRaw ? coerceSchedule(scheduleRaw, legacy) : null;
  if (schedule?.kind === "every" && !("anchorMs" in schedule)) {
    // As upstream's doctor: an interval with no anchor runs from the job's creation (else its last update).
    const anchor = typeof job.createdAtMs === "number" && Number.isFinite(job.createdAtMs) ? job.createdAtMs : typeof job.updatedAtMs === "number" && Number.isFinite(job.updatedAtMs) ? job.updatedAtMs : null;
    if (anchor !== null) {
      schedule.anchorMs = Math.max(0, Math.floor(anchor));
      legacy.add(anchor === job.createdAtMs ? "anchorMs from createdAtMs" : "anchorMs from updatedAtMs");
    }
  }
  if (schedule) job.schedule = schedule;
  else warnings.push(`job ${label} has no usable schedule: imported with its JSON only`);
  const rawStagger = scheduleRaw?.staggerMs;
  if (schedule?.kind === "cron" && rawStagger !== undefined && rawStagger !== null && explicitCronStaggerMs(rawStagger) === undefined) {
    // Upstream drops it the same way (its runtime refuses such a schedule); the retired file keeps the value.
    warnings.push(`job ${label}: staggerMs ${JSON.stringify(rawStagger)} is not a whole number of milliseconds >= 0: ${schedule.staggerMs === undefined ? "dropped" : `replaced by the default ${String(schedule.staggerMs)}`}`);
  }

  let payload = obj(job.payload);
  if (!payload) {
    // Upstream's order: message, then text, then a shell-era `command` (#33451, #18445) as the event text.
    if (str(job.message)) payload = { kind: "agentTurn", message: str(job.message) };
    else if (str(job.text)) payload = { kind: "systemEvent", text: str(job.text) };
    else if (str(job.command)) {
      payload = { kind: "systemEvent", text: str(job.command) };
      legacy.add("command");
      delete job.command;
    }
  }
  const normalizedPayload = payload ? coercePayload(payload, job) : null;
  if (normalizedPayload) job.payload = normalizedPayload;
  else warnings.push(`job ${label} has no usable payload: imported with its JSON only`);
  const topDelivery = TOP_LEVEL_DELIVERY_FIELDS.filter((f) => f in job);
  if (normalizedPayload?.kind === "agentTurn") {
    if (topDelivery.length > 0 || "allowUnsafeExternalContent" in job) legacy.add("top-level delivery fields");
    // Copied into the payload by coercePayload: the top-level copies go (upstream strips them).
    for (const field of [...TOP_LEVEL_DELIVERY_FIELDS, "allowUnsafeExternalContent"]) delete job[field];
  }
  // Upstream also strips them from a systemEvent job, where nothing reads them: kept here (docs/migration.md).
  for (const field of ["message", "text", "model", "thinking", "timeoutSeconds"]) delete job[field];

  const target = str(job.sessionTarget)?.toLowerCase();
  if (target === "main" || target === "isolated") job.sessionTarget = target;
  else {
    delete job.sessionTarget;
    const kind = normalizedPayload?.kind;
    if (kind === "systemEvent" || kind === "agentTurn") {
      job.sessionTarget = kind === "systemEvent" ? "main" : "isolated";
      legacy.add("sessionTarget");
    }
  }
  const wake = str(job.wakeMode)?.toLowerCase();
  job.wakeMode = wake === "now" || wake === "next-heartbeat" ? wake : "now";
  if (schedule?.kind === "at" && !("deleteAfterRun" in job)) job.deleteAfterRun = true;

  // Delivery hints on the old payload become (or patch) the job's delivery; an isolated turn announces by default.
  const delivery = obj(job.delivery);
  const hints = normalizedPayload ? deliveryHints(normalizedPayload) : null;
  if (hints) {
    legacy.add("payload delivery fields");
    for (const field of ["deliver", "channel", "provider", "to", "threadId", "bestEffortDeliver"]) delete normalizedPayload![field];
  }
  if (delivery) job.delivery = hints ? { ...coerceDelivery(delivery), ...hints } : coerceDelivery(delivery);
  else if (hints) job.delivery = { mode: "announce", ...hints };
  else if (normalizedPayload?.kind === "agentTurn" && job.sessionTarget === "isolated") job.delivery = { mode: "announce" };
  migrateNotify(job, legacyWebhook, warnings, legacy, label);
  return { id, job, legacy: [...legacy], warnings };
}

/** The schedule identity the runtime compares with `jobs-state.json` (a changed schedule drops nextRunAtMs). */
export function scheduleIdentity(job: Obj): string | null {
  const s = obj(job.schedule);
  if (!s) return null;
  const enabled = typeof job.enabled === "boolean" ? job.enabled : true;
  let schedule: Obj;
  if (s.kind === "at") schedule = { kind: "at", at: s.at };
  else if (s.kind === "every") schedule = { kind: "every", everyMs: s.everyMs, anchorMs: s.anchorMs };
  else if (s.kind === "cron") schedule = { kind: "cron", expr: s.expr, tz: s.tz, staggerMs: s.staggerMs };
  else return null;
  return JSON.stringify({ version: 1, enabled, schedule });
}

/** The runtime-state columns from a job's `state` object. */
export function stateColumns(state: Obj | null): Record<string, unknown> {
  const s = state ?? {};
  return {
    next_run_at_ms: int(s.nextRunAtMs),
    running_at_ms: int(s.runningAtMs),
    last_run_at_ms: int(s.lastRunAtMs),
    last_run_status: str(s.lastRunStatus) ?? str(s.lastStatus),
    last_error: str(s.lastError),
    last_duration_ms: int(s.lastDurationMs),
    consecutive_errors: int(s.consecutiveErrors),
    consecutive_skipped: int(s.consecutiveSkipped),
    schedule_error_count: int(s.scheduleErrorCount),
    last_delivery_status: str(s.lastDeliveryStatus),
    last_delivery_error: str(s.lastDeliveryError),
    last_delivered: flag(s.lastDelivered),
    last_failure_alert_at_ms: int(s.lastFailureAlertAtMs),
  };
}

export const STATE_COLUMNS = Object.keys(stateColumns(null));

/** Every cron_jobs column of a normalized job (state columns from its inline `state`, when any). */
export function cronJobRow(storeKey: string, n: NormalizedJob, sortOrder: number, fallbackMs: number): Record<string, unknown> {
  const job = n.job;
  const schedule = obj(job.schedule) ?? {};
  const payload = obj(job.payload) ?? {};
  const delivery = obj(job.delivery) ?? {};
  const failureDest = obj(delivery.failureDestination) ?? {};
  const alertRaw = job.failureAlert;
  const alert = obj(alertRaw) ?? {};
  const state = obj(job.state);
  const hasState = state !== null && Object.keys(state).length > 0;
  const createdAt = epochMs(job.createdAtMs);
  const updatedAt = epochMs(job.updatedAtMs) ?? createdAt ?? fallbackMs;
  const { state: _state, updatedAtMs: _updated, ...definition } = job;
  const agentTurn = payload.kind === "agentTurn";
  return {
    store_key: storeKey,
    job_id: n.id,
    name: str(job.name),
    description: str(job.description),
    enabled: job.enabled === false ? 0 : 1,
    delete_after_run: flag(job.deleteAfterRun),
    created_at_ms: createdAt,
    agent_id: str(job.agentId),
    session_key: str(job.sessionKey),
    schedule_kind: str(schedule.kind),
    schedule_expr: schedule.kind === "cron" ? str(schedule.expr) : null,
    schedule_tz: schedule.kind === "cron" ? str(schedule.tz) : null,
    every_ms: schedule.kind === "every" ? int(schedule.everyMs) : null,
    anchor_ms: schedule.kind === "every" ? int(schedule.anchorMs) : null,
    at: schedule.kind === "at" ? str(schedule.at) : null,
    stagger_ms: schedule.kind === "cron" ? int(schedule.staggerMs) : null,
    session_target: str(job.sessionTarget),
    wake_mode: str(job.wakeMode),
    payload_kind: str(payload.kind),
    payload_message: agentTurn ? str(payload.message) : str(payload.text),
    payload_model: agentTurn ? str(payload.model) : null,
    payload_fallbacks_json: agentTurn ? jsonOrNull(payload.fallbacks) : null,
    payload_thinking: agentTurn ? str(payload.thinking) : null,
    payload_timeout_seconds: agentTurn ? int(payload.timeoutSeconds) : null,
    payload_allow_unsafe_external_content: agentTurn ? flag(payload.allowUnsafeExternalContent) : null,
    payload_external_content_source_json: agentTurn ? jsonOrNull(payload.externalContentSource) : null,
    payload_light_context: agentTurn ? flag(payload.lightContext) : null,
    payload_tools_allow_json: agentTurn ? jsonOrNull(payload.toolsAllow) : null,
    delivery_mode: str(delivery.mode),
    delivery_channel: str(delivery.channel),
    delivery_to: str(delivery.to),
    delivery_thread_id: idText(delivery.threadId),
    delivery_account_id: str(delivery.accountId),
    delivery_best_effort: flag(delivery.bestEffort),
    failure_delivery_mode: str(failureDest.mode),
    failure_delivery_channel: str(failureDest.channel),
    failure_delivery_to: str(failureDest.to),
    failure_delivery_account_id: str(failureDest.accountId),
    failure_alert_disabled: alertRaw === false ? 1 : obj(alertRaw) ? 0 : null,
    failure_alert_after: int(alert.after),
    failure_alert_channel: str(alert.channel),
    failure_alert_to: str(alert.to),
    failure_alert_cooldown_ms: int(alert.cooldownMs),
    failure_alert_include_skipped: flag(alert.includeSkipped),
    failure_alert_mode: str(alert.mode),
    failure_alert_account_id: str(alert.accountId),
    ...stateColumns(hasState ? state : null),
    job_json: JSON.stringify(definition),
    state_json: hasState ? JSON.stringify(state) : null,
    runtime_updated_at_ms: epochMs(job.updatedAtMs),
    schedule_identity: scheduleIdentity(job),
    sort_order: sortOrder,
    updated_at: updatedAt,
  };
}
