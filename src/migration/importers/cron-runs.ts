// Importer for cron run logs (`cron/runs/<jobId>.jsonl` beside a store) → cron_run_logs, streamed line by line.
//
// Line shape (SPEC §4.3; OpenClaw src/cron/run-log-types.ts): {ts, jobId, action:"finished", status, error,
// summary, diagnostics:{summary}, delivered, deliveryStatus, deliveryError, sessionId, sessionKey, runId,
// runAtMs, durationMs, nextRunAtMs, model, provider, usage:{total_tokens|…}}; older lines use camelCase usage.
import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import path from "node:path";
import { OperationError } from "../../core/errors.js";
import { describeLineParseError } from "../../core/redact.js";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { listRegularFiles, sourceRelativePath } from "../inventory.js";
import { assertUnchanged } from "../json-source.js";
import { depthMessage, findExcessDepth } from "../json-depth.js";
import { isBlankLine, skipBom, streamLines, withOpenFile } from "../line-stream.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportContext, ImportCounts, PlannedSource, SourceInspection } from "../types.js";
import { epochMs, flag, int, obj, str } from "./coerce.js";
import { cronStores, storeAtImport } from "./cron-jobs.js";

const SUFFIX = ".jsonl";
const MAX_LISTED_WARNINGS = 20;

type Obj = Record<string, unknown>;

function detect(ctx: DetectContext): DetectedSource[] {
  const seen = new Set<string>();
  const found: DetectedSource[] = [];
  // Configured stores come first: a runs/ dir shared with the default store belongs to the configured one.
  for (const store of cronStores(ctx.root, ctx.paths, ctx.config)) {
    if (seen.has(store.runsDir)) continue;
    seen.add(store.runsDir);
    for (const name of listRegularFiles(store.runsDir)) {
      if (!name.endsWith(SUFFIX) || name === SUFFIX) continue;
      const file = path.join(store.runsDir, name);
      found.push({ kind: "cron-runs", agentId: null, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false });
    }
  }
  return found;
}

function inspect(source: DetectedSource): SourceInspection {
  const hash = crypto.createHash("sha256");
  let records = 0;
  const result = withOpenFile(source.path, (fd) =>
    streamLines(fd, source.path, (buf, start, end) => void (isBlankLine(buf, start, end) ? 0 : (records += 1)), { onChunk: (chunk) => hash.update(chunk) }),
  );
  const sha256 = hash.digest("hex");
  if (records === 0) return { sha256, sizeBytes: result.bytes, records: 0, notes: [], skipReason: "empty file (nothing to import; left in place)" };
  return { sha256, sizeBytes: result.bytes, records, notes: [] };
}

function totalTokens(usage: Obj | null): number | null {
  if (!usage) return null;
  const total = int(usage.total_tokens) ?? int(usage.totalTokens);
  if (total !== null) return total;
  const input = int(usage.input_tokens) ?? int(usage.inputTokens);
  const output = int(usage.output_tokens) ?? int(usage.outputTokens);
  return input === null && output === null ? null : (input ?? 0) + (output ?? 0);
}

function importRuns(db: GlobalDatabase, source: PlannedSource, ctx: ImportContext): ImportCounts {
  const file = source.path;
  const store = storeAtImport(ctx, (s) => s.runsDir === path.dirname(path.resolve(file)), file);
  const jobId = path.basename(file, SUFFIX);
  // Raw prepared statement: one row per line of possibly long logs.
  const upsert = db.prepare(
    `INSERT INTO cron_run_logs (store_key, job_id, seq, ts, status, error, summary, diagnostics_summary, delivery_status, delivery_error, delivered, session_id, session_key, run_id, run_at_ms, duration_ms, next_run_at_ms, model, provider, total_tokens, entry_json, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (store_key, job_id, seq) DO UPDATE SET ts = excluded.ts, status = excluded.status, error = excluded.error, summary = excluded.summary, diagnostics_summary = excluded.diagnostics_summary, delivery_status = excluded.delivery_status, delivery_error = excluded.delivery_error, delivered = excluded.delivered, session_id = excluded.session_id, session_key = excluded.session_key, run_id = excluded.run_id, run_at_ms = excluded.run_at_ms, duration_ms = excluded.duration_ms, next_run_at_ms = excluded.next_run_at_ms, model = excluded.model, provider = excluded.provider, total_tokens = excluded.total_tokens, entry_json = excluded.entry_json, created_at = excluded.created_at`,
  );
  const hash = crypto.createHash("sha256");
  const warnings: string[] = [];
  let extra = 0;
  const warn = (text: string): void => {
    if (warnings.length < MAX_LISTED_WARNINGS) warnings.push(text);
    else extra += 1;
  };
  let seq = 0;
  let written = 0;
  let skipped = 0;
  let lastTs = source.mtimeMs;
  let otherJob = 0;
  withOpenFile(file, (fd) =>
    streamLines(
      fd,
      file,
      (buf, lineStart, end, lineNo, terminated) => {
        const start = skipBom(buf, lineStart, end, lineNo);
        if (isBlankLine(buf, start, end)) return;
        // seq is the line's position among non-blank lines: a line skipped here leaves a gap, never a shift.
        seq += 1;
        const text = isUtf8(buf.subarray(start, end)) ? buf.toString("utf8", start, end) : null;
        let entry: Obj | null = null;
        let problem = text === null ? "invalid UTF-8" : findExcessDepth(buf, start, end) !== 0 ? depthMessage() : "";
        if (text !== null && problem === "") {
          try {
            entry = obj(JSON.parse(text));
            if (!entry) problem = "not a JSON object";
          } catch (error) {
            problem = describeLineParseError(error, text);
          }
        }
        if (!entry) {
          skipped += 1;
          warn(`${file}:${lineNo}: ${terminated ? `${problem}; line skipped` : "truncated final line dropped"}`);
          return;
        }
        if (str(entry.jobId) && str(entry.jobId) !== jobId) otherJob += 1;
        const ts = epochMs(entry.ts) ?? epochMs(entry.runAtMs) ?? lastTs;
        lastTs = ts;
        const diagnostics = obj(entry.diagnostics);
        upsert.run(
          store.storeKey,
          jobId,
          seq,
          epochMs(entry.ts),
          str(entry.status),
          str(entry.error),
          str(entry.summary),
          str(diagnostics?.summary),
          str(entry.deliveryStatus),
          str(entry.deliveryError),
          flag(entry.delivered),
          str(entry.sessionId),
          str(entry.sessionKey),
          str(entry.runId),
          epochMs(entry.runAtMs),
          int(entry.durationMs),
          epochMs(entry.nextRunAtMs),
          str(entry.model),
          str(entry.provider),
          totalTokens(obj(entry.usage)),
          text,
          ts,
        );
        written += 1;
      },
      { onChunk: (chunk) => hash.update(chunk) },
    ),
  );
  assertUnchanged(source, hash.digest("hex"));
  if (written === 0) throw new OperationError("invalid_run_log", `${file}: no line is a JSON run record; the file was left in place.`, { path: file });
  if (extra > 0) warnings.push(`… and ${extra} more warning(s)`);
  const notes = [`store_key ${store.storeKey}, job ${jobId}`];
  if (otherJob > 0) notes.push(`${otherJob} line(s) name another jobId: stored under the file's job ${jobId}, as the runtime read them`);
  return { records: seq, rows: { cron_run_logs: written }, skipped, warnings, notes, expect: { storeKey: store.storeKey, jobId, lastSeq: seq, written } };
}

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const { storeKey, jobId, lastSeq, written } = expected.expect;
  const n = (db.prepare("SELECT count(*) AS n FROM cron_run_logs WHERE store_key = ? AND job_id = ? AND seq <= ?").get(storeKey, jobId, lastSeq) as { n: number }).n;
  return n >= Number(written) ? null : `job ${String(jobId)}: expected ${String(written)} run log row(s), found ${n}`;
}

export const cronRunsImporter: GlobalSourceImporter = {
  kind: "cron-runs",
  target: "global",
  label: { one: "legacy cron run log", many: "legacy cron run logs", records: "lines" },
  targetTable: "cron_run_logs",
  targetTables: ["cron_run_logs"],
  detect,
  inspect,
  import: importRuns,
  verify,
};
