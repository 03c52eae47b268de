// Importer for the delivery queues: `delivery-queue/` (outbound) and `session-delivery-queue/`, pending and
// failed entries, one JSON file each → delivery_queue_entries; stale `*.delivered` markers are removed.
//
// Shapes (OpenClaw src/infra/outbound/delivery-queue-storage.ts, src/infra/session-delivery-queue-storage.ts):
// outbound {id, enqueuedAt, channel, to, accountId, payloads, threadId, …, session, mirror, retryCount,
// lastAttemptAt, lastError}; session {id, kind:"systemEvent"|"agentTurn"|"postCompactionDelegate", sessionKey,
// route|deliveryContext:{channel,to,accountId}, enqueuedAt, retryCount, lastAttemptAt, lastError}. Failed
// entries sit in `failed/`. `<id>.delivered` is a message already sent (ack renamed the entry before
// deleting it): nothing to import, the marker is retired with the others. Entries written before
// lastAttemptAt existed get lastAttemptAt = enqueuedAt when they were retried (as the runtime does).
//
// A pending entry queued 72 h ago or more (OPENCLAW_STATE_DELIVERY_HOLD_HOURS), or whose enqueue time is missing or
// in the future, is held for review, never deliverable: OpenClaw 2026.9.6's own doctor does not replay such an
// entry (upstream #135191) — it keeps it out of the queue and retains the original for a human. Ours is a row with
// status 'held' (no OpenClaw reader selects it); the format upgrade leaves it out of OpenClaw's queue the same way.
import fs from "node:fs";
import path from "node:path";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { hashFile } from "../line-stream.js";
import { listRegularFiles, sourceRelativePath } from "../inventory.js";
import { assertUnchanged, inspectJsonSource, objectOf, readJsonSource } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource, SourceInspection } from "../types.js";
import { epochMs, idText, int, obj, str } from "./coerce.js";

type Obj = Record<string, unknown>;

export const QUEUES = [
  { dir: "delivery-queue", queue: "outbound-delivery" },
  { dir: "session-delivery-queue", queue: "session-delivery" },
] as const;

const MARKER = ".delivered";

/** OpenClaw 2026.9.6's age limit for replaying a legacy pending entry (LEGACY_DELIVERY_QUEUE_MAX_AGE_MS, 72 h). */
export const DELIVERY_HOLD_AFTER_HOURS = 72;
/** Overrides the age limit: a number of hours, 0 or more (0 holds every pending entry). */
export const DELIVERY_HOLD_ENV = "OPENCLAW_STATE_DELIVERY_HOLD_HOURS";
/** The design-v1 status of an entry held for review: never selected as deliverable (OpenClaw reads 'pending'). */
export const HELD_STATUS = "held";

const HOUR_MS = 3_600_000;

export interface DeliveryHoldLimit {
  hours: number;
  ms: number;
  /** Set when the variable was given but unusable: the default applies, and the import says so. */
  problem: string | null;
}

/** The age from which a pending entry is held: OPENCLAW_STATE_DELIVERY_HOLD_HOURS when it is a number ≥ 0, else 72 h. */
export function deliveryHoldLimit(env: NodeJS.ProcessEnv = process.env): DeliveryHoldLimit {
  const raw = env[DELIVERY_HOLD_ENV]?.trim();
  const fallback = { hours: DELIVERY_HOLD_AFTER_HOURS, ms: DELIVERY_HOLD_AFTER_HOURS * HOUR_MS };
  if (raw === undefined || raw === "") return { ...fallback, problem: null };
  const hours = Number(raw);
  if (!Number.isFinite(hours) || hours < 0) {
    return { ...fallback, problem: `${DELIVERY_HOLD_ENV}=${JSON.stringify(raw.slice(0, 40))} is not a number of hours (0 or more); the default ${DELIVERY_HOLD_AFTER_HOURS} h was used` };
  }
  return { hours, ms: hours * HOUR_MS, problem: null };
}

/** Why a pending entry must not be delivered as is, or null when it may (OpenClaw 2026.9.6's rule, the age configurable). */
export function holdReason(enqueuedAt: number | null, now: number, limit: DeliveryHoldLimit): string | null {
  if (enqueuedAt === null) return "no usable enqueuedAt (its age cannot be verified)";
  if (enqueuedAt > now) return `enqueuedAt ${new Date(enqueuedAt).toISOString()} is in the future (its age cannot be verified)`;
  const age = now - enqueuedAt;
  if (age < limit.ms) return null;
  const days = age / (24 * HOUR_MS);
  return `pending since ${new Date(enqueuedAt).toISOString()} (${days >= 7 ? `${Math.floor(days)} days` : `${Math.floor(age / HOUR_MS)} h`}), at least ${limit.hours} h`;
}

interface QueueFile {
  queue: string;
  failed: boolean;
  marker: boolean;
}

/** Which queue a source belongs to, from its path (…/<queue dir>[/failed]/<file>). */
function queueFileOf(file: string): QueueFile {
  const dir = path.dirname(file);
  const failed = path.basename(dir) === "failed";
  const queueDir = path.basename(failed ? path.dirname(dir) : dir);
  const q = QUEUES.find((x) => x.dir === queueDir);
  if (!q) throw new Error(`${file} is not in a delivery queue directory`);
  return { queue: q.queue, failed, marker: file.endsWith(MARKER) };
}

function detect(ctx: DetectContext): DetectedSource[] {
  const found: DetectedSource[] = [];
  for (const q of QUEUES) {
    const dir = path.join(ctx.root, q.dir);
    for (const [sub, names] of [
      [dir, listRegularFiles(dir)],
      [path.join(dir, "failed"), listRegularFiles(path.join(dir, "failed"))],
    ] as const) {
      for (const name of names) {
        const marker = sub === dir && name.endsWith(MARKER);
        if (!marker && (!name.endsWith(".json") || name === ".json")) continue;
        const file = path.join(sub, name);
        found.push({ kind: "delivery-queue", agentId: null, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false });
      }
    }
  }
  return found;
}

function inspect(source: DetectedSource): SourceInspection {
  const q = queueFileOf(source.path);
  if (q.marker) {
    const { sha256, sizeBytes } = hashFile(source.path);
    return { sha256, sizeBytes, records: 0, notes: [`stale delivered marker (${q.queue}): the message was already sent; nothing is imported and the marker is removed`] };
  }
  return inspectJsonSource(source, (value) => {
    const entry = objectOf(source.path, value, "a queued delivery object");
    if (q.failed) return { records: 1, notes: [`failed entry of ${q.queue}`] };
    // The import decides again with its own clock; the plan says what it expects.
    const hold = holdReason(epochMs(entry.enqueuedAt), Date.now(), deliveryHoldLimit());
    return { records: 1, notes: hold === null ? [] : [`will be held for review, not delivered: ${hold}`] };
  });
}

/** The typed columns of one entry (routing from the session queue's route/deliveryContext when present). */
export function entryRow(queue: string, failed: boolean, id: string, entry: Obj, mtime: number, held = false): Record<string, unknown> {
  const route = obj(entry.route) ?? obj(entry.deliveryContext) ?? {};
  const retryCount = int(entry.retryCount) ?? 0;
  const enqueuedAt = epochMs(entry.enqueuedAt);
  const lastAttemptAt = epochMs(entry.lastAttemptAt) ?? (retryCount > 0 ? enqueuedAt : null);
  return {
    queue_name: queue,
    id,
    status: failed ? "failed" : held ? HELD_STATUS : "pending",
    entry_kind: str(entry.kind),
    session_key: str(entry.sessionKey) ?? str(obj(entry.session)?.key) ?? str(obj(entry.mirror)?.sessionKey),
    channel: str(entry.channel) ?? str(route.channel),
    target: str(entry.to) ?? str(route.to),
    account_id: str(entry.accountId) ?? str(route.accountId),
    retry_count: retryCount,
    last_attempt_at: lastAttemptAt,
    last_error: str(entry.lastError),
    recovery_state: str(entry.recoveryState),
    platform_send_started_at: epochMs(entry.platformSendStartedAt),
    entry_json: JSON.stringify(lastAttemptAt !== null && entry.lastAttemptAt === undefined ? { ...entry, lastAttemptAt } : entry),
    enqueued_at: enqueuedAt,
    updated_at: lastAttemptAt ?? enqueuedAt ?? mtime,
    failed_at: failed ? (epochMs(entry.failedAt) ?? mtime) : null,
  };
}

const COLUMNS = ["queue_name", "id", "status", "entry_kind", "session_key", "channel", "target", "account_id", "retry_count", "last_attempt_at", "last_error", "recovery_state", "platform_send_started_at", "entry_json", "enqueued_at", "updated_at", "failed_at"];

function importEntry(db: GlobalDatabase, source: PlannedSource): ImportCounts {
  const q = queueFileOf(source.path);
  if (q.marker) {
    assertUnchanged(source, hashFile(source.path).sha256);
    return { records: 0, rows: { delivery_queue_entries: 0 }, skipped: 0, warnings: [], notes: ["stale delivered marker removed (the message was already sent)"], expect: { marker: 1 } };
  }
  const { value, sha256 } = readJsonSource(source.path);
  assertUnchanged(source, sha256);
  const entry = objectOf(source.path, value, "a queued delivery object");
  const stem = path.basename(source.path, ".json");
  const id = idText(entry.id) ?? stem;
  const limit = deliveryHoldLimit();
  const hold = q.failed ? null : holdReason(epochMs(entry.enqueuedAt), Date.now(), limit);
  const row = entryRow(q.queue, q.failed, id, entry, Math.trunc(fs.statSync(source.path).mtimeMs), hold !== null);
  db.prepare(
    `INSERT INTO delivery_queue_entries (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")}) ON CONFLICT (queue_name, id) DO UPDATE SET ${COLUMNS.filter((c) => c !== "queue_name" && c !== "id").map((c) => `${c} = excluded.${c}`).join(", ")}`,
  ).run(...COLUMNS.map((c) => row[c]));
  const notes = idText(entry.id) === null ? [`no id in the entry: the file name ${stem} is its id`] : id !== stem ? [`entry id ${id} differs from the file name ${stem}: the entry's id is used`] : [];
  const warnings: string[] = [];
  if (limit.problem !== null && !q.failed) warnings.push(limit.problem);
  if (hold !== null) {
    // A warning, as OpenClaw's own doctor gives: someone must decide whether this message should still go out.
    warnings.push(`held for review, not delivered: ${q.queue} entry ${id} is ${hold}; imported with status '${HELD_STATUS}', the whole entry kept (the file is retired as usual: under migrated/<run>/, or in the pre-migration backup with --remove-sources). Review it and send a new message if it still matters; do not put it back in the queue.`);
  }
  return { records: 1, rows: { delivery_queue_entries: 1 }, skipped: 0, warnings, notes, expect: { queue: q.queue, id, status: String(row.status), held: hold === null ? 0 : 1 } };
}

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  if (expected.expect.marker) return null;
  const status = db.prepare("SELECT status FROM delivery_queue_entries WHERE queue_name = ? AND id = ?").pluck().get(expected.expect.queue, expected.expect.id) as string | undefined;
  if (status === undefined) return `delivery queue entry ${String(expected.expect.queue)}/${String(expected.expect.id)} is missing after commit`;
  // A held entry that came out deliverable would be sent on reconnect: checked, not assumed.
  return status === expected.expect.status ? null : `delivery queue entry ${String(expected.expect.queue)}/${String(expected.expect.id)} has status '${status}' after commit, expected '${String(expected.expect.status)}'`;
}

export const deliveryQueueImporter: GlobalSourceImporter = {
  kind: "delivery-queue",
  target: "global",
  label: { one: "legacy delivery queue file", many: "legacy delivery queue files", records: "entries" },
  targetTable: "delivery_queue_entries",
  targetTables: ["delivery_queue_entries"],
  detect,
  inspect,
  import: importEntry,
  verify,
};
