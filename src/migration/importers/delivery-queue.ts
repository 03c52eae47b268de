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
    objectOf(source.path, value, "a queued delivery object");
    return { records: 1, notes: q.failed ? [`failed entry of ${q.queue}`] : [] };
  });
}

/** The typed columns of one entry (routing from the session queue's route/deliveryContext when present). */
export function entryRow(queue: string, failed: boolean, id: string, entry: Obj, mtime: number): Record<string, unknown> {
  const route = obj(entry.route) ?? obj(entry.deliveryContext) ?? {};
  const retryCount = int(entry.retryCount) ?? 0;
  const enqueuedAt = epochMs(entry.enqueuedAt);
  const lastAttemptAt = epochMs(entry.lastAttemptAt) ?? (retryCount > 0 ? enqueuedAt : null);
  return {
    queue_name: queue,
    id,
    status: failed ? "failed" : "pending",
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
  const row = entryRow(q.queue, q.failed, id, entry, Math.trunc(fs.statSync(source.path).mtimeMs));
  db.prepare(
    `INSERT INTO delivery_queue_entries (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")}) ON CONFLICT (queue_name, id) DO UPDATE SET ${COLUMNS.filter((c) => c !== "queue_name" && c !== "id").map((c) => `${c} = excluded.${c}`).join(", ")}`,
  ).run(...COLUMNS.map((c) => row[c]));
  const notes = idText(entry.id) === null ? [`no id in the entry: the file name ${stem} is its id`] : id !== stem ? [`entry id ${id} differs from the file name ${stem}: the entry's id is used`] : [];
  return { records: 1, rows: { delivery_queue_entries: 1 }, skipped: 0, warnings: [], notes, expect: { queue: q.queue, id, status: String(row.status) } };
}

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  if (expected.expect.marker) return null;
  const status = db.prepare("SELECT status FROM delivery_queue_entries WHERE queue_name = ? AND id = ?").pluck().get(expected.expect.queue, expected.expect.id) as string | undefined;
  return status === undefined ? `delivery queue entry ${String(expected.expect.queue)}/${String(expected.expect.id)} is missing after commit` : null;
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
