// Renders `sessions list` (a table fitted to the width, tab-separated rows for scripts, or a streamed JSON
// document) and `sessions show`.
import type { SessionList } from "../../sessions/list-sessions.js";
import type { SessionSummary } from "../../sessions/session-row.js";
import type { ShowSessionResult, ShownEvent } from "../../sessions/show-session.js";
import { ExitCode, OpenclawStateError } from "../../core/errors.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
import { DEFAULT_COLUMNS } from "../output.js";
import { formatAge, formatBytes, formatCount, formatTime, formatTokensCell, truncate } from "./format.js";
import { isoTime, withIsoTimes } from "./json-time.js";
import { cleanCell, fitColumns, formatHeader, formatRow, tsvLine, type TableColumn } from "./table.js";

/** Lines between waits for stdout to drain: keeps `--limit all` flat in memory behind a slow pipe. */
const FLUSH_EVERY = 500;
/**
 * Rows read before the column widths are fixed: widths come from what is listed (no key padded to a width no
 * key needs), while `--limit all` still streams in bounded memory; a later, longer cell is cut to the column.
 */
const SAMPLE_ROWS = 200;
/** Text never gets fewer columns than this, however long the line's prefix. */
const MIN_TEXT_WIDTH = 20;

export type SessionListFormat = "table" | "tsv" | "json";
export const SESSION_LIST_FORMATS: readonly SessionListFormat[] = ["table", "tsv", "json"];

/** The tab-separated fields, in order (documented in docs/sessions.md; never reordered, only appended to). */
export const TSV_FIELDS = ["key", "agent", "kind", "updatedAt", "model", "totalTokens", "contextTokens", "flags", "sessionId"] as const;

export interface TextLayout {
  /** Columns to fit each line into (terminal width). */
  width: number;
  /** Print message text whole (newlines kept, continuation lines indented) instead of one fitted line. */
  full: boolean;
}

/** A session row as `--json` prints it: times as ISO-8601 (json-time.ts). */
function jsonRow(row: SessionSummary): Record<string, unknown> {
  return withIsoTimes(row, ["updatedAt", "createdAt"]);
}

/**
 * `sessions show --json`: every time of ours as ISO-8601. `entry` (the stored SessionEntry) and each event's `event`
 * (the transcript line) are the records as OpenClaw wrote them, printed verbatim, whatever form their times take.
 */
function showJson(result: ShowSessionResult): Record<string, unknown> {
  return {
    ...result,
    session: withIsoTimes(result.session, ["updatedAt", "createdAt", "startedAt", "endedAt"]),
    routes: result.routes.map((r) => withIsoTimes(r, ["updatedAt"])),
    otherSessionsForKey: { ...result.otherSessionsForKey, sessions: result.otherSessionsForKey.sessions.map((x) => withIsoTimes(x, ["updatedAt"])) },
    conversations: result.conversations.map((c) => withIsoTimes(c, ["firstSeenAt", "lastSeenAt"])),
    transcript: withIsoTimes(result.transcript, ["firstAt", "lastAt"]),
    events: { ...result.events, items: result.events.items.map((e) => withIsoTimes(e, ["createdAt"])) },
  };
}

function* mapRows<T, U>(rows: Iterable<T>, fn: (row: T) => U): Generator<U> {
  for (const row of rows) yield fn(row);
}

export async function renderSessionList(output: Output, list: SessionList, format: SessionListFormat = "table"): Promise<number> {
  const storeFailed = list.stores.some((s) => s.error !== undefined);
  if (output.json || format === "json") {
    const head = {
      version: 1,
      command: "sessions list",
      stores: list.stores,
      count: list.count,
      totalCount: list.totalCount,
      limit: list.limit,
      hasMore: list.hasMore,
      activeMinutes: list.activeMinutes,
      warnings: list.warnings,
    };
    for (const w of list.warnings) output.warn(`warning: ${w}`);
    const written = await output.writeJsonStream(head, "sessions", mapRows(list.rows(), jsonRow));
    if (written.error !== undefined) return written.error instanceof OpenclawStateError ? written.error.exitCode : ExitCode.failed;
    return storeFailed ? ExitCode.failed : ExitCode.ok;
  }
  if (format === "tsv") {
    // Only the rows on stdout; what a script must not miss (warnings, a cut-off listing) goes to stderr.
    for (const w of list.warnings) output.warn(`warning: ${w}`);
    for (const store of list.stores) if (store.error !== undefined) output.warn(`warning: session store ${store.path} (agent ${store.agentId}) is unreadable, skipped`);
    if (list.hasMore) output.warn(`note: ${formatCount(list.count)} of ${formatCount(list.totalCount)} sessions listed; --limit all lists every one`);
    await streamLines(output, list.rows(), tsvRow);
    return storeFailed ? ExitCode.failed : ExitCode.ok;
  }

  const s = output.style;
  const multi = list.stores.length > 1;
  // One agent listed: its `agent:<id>:` prefix is the same on every key, so it is said once instead.
  const single = !multi && list.stores[0] ? list.stores[0].agentId : null;
  if (multi) {
    output.log("Session stores:");
    for (const store of list.stores) output.log(`  ${store.agentId}: ${store.path}${storeNote(store)}`);
  } else if (list.stores[0]) {
    output.log(`Session store: ${list.stores[0].path}${storeNote(list.stores[0])}`);
  } else {
    output.log("Session stores: none (no agent databases found)");
  }
  for (const w of list.warnings) output.warn(`warning: ${w}`);
  if (list.activeMinutes !== null) output.log(`Active within the last ${formatCount(list.activeMinutes)} minute(s)`);
  const more = list.hasMore ? s.dim(" (--limit all shows every row)") : "";
  output.log(`Sessions listed: ${formatCount(list.count)} of ${formatCount(list.totalCount)}${more}`);
  if (list.count === 0) {
    output.log("No sessions found.");
    return storeFailed ? ExitCode.failed : ExitCode.ok;
  }
  if (single !== null && !output.verbose) {
    const show = single === "main" ? "`sessions show <key>`" : `\`sessions show <key> --agent ${single}\``;
    // Under 80 columns for a short agent id: the table below fits an 80-column terminal, its header line does too.
    output.log(`Keys without "agent:${cleanCell(single)}:" (${show} takes them as shown)`);
  }
  const width = output.columns ?? DEFAULT_COLUMNS;
  const now = list.now;
  const columns = listColumns(multi);
  const cells = (row: SessionSummary): string[] => listCells(row, now, { multi, stripAgent: output.verbose ? null : single, verbose: output.verbose });
  // --verbose prints every key and flag whole (for grep/awk), whatever the width.
  const whole = output.verbose ? new Set([columns.findIndex((c) => c.header === "Key"), columns.length - 1]) : undefined;
  const rows = list.rows();
  const sample: string[][] = [];
  let next = rows.next();
  while (!next.done && sample.length < SAMPLE_ROWS) {
    sample.push(cells(next.value).map(cleanCell));
    next = rows.next();
  }
  const widths = fitColumns(columns, sample, width);
  output.log(s.bold(formatHeader(columns, widths, width)));
  const line = (c: string[]): string => formatRow(c, columns, widths, { limit: width, whole });
  let n = 0;
  for (const c of sample) {
    output.log(line(c));
    if (++n % FLUSH_EVERY === 0) await output.flush();
  }
  if (!next.done && !output.isClosed()) {
    output.log(line(cells(next.value)));
    await streamLines(output, { [Symbol.iterator]: () => rows }, (row) => line(cells(row)));
  } else {
    await output.flush();
  }
  return storeFailed ? ExitCode.failed : ExitCode.ok;
}

/** Writes one line per row, waiting for stdout to drain now and then; stops once the reader is gone. */
async function streamLines(output: Output, rows: Iterable<SessionSummary>, toLine: (row: SessionSummary) => string): Promise<void> {
  let n = 0;
  for (const row of rows) {
    output.log(toLine(row));
    if (++n % FLUSH_EVERY === 0) {
      await output.flush();
      if (output.isClosed()) break;
    }
  }
  await output.flush();
}

/** A row for scripts: whole values, times in ISO-8601, token counts as plain numbers, empty for unknown. */
function tsvRow(row: SessionSummary): string {
  return tsvLine([row.key, row.agentId, row.kind, isoTime(row.updatedAt), row.model, row.totalTokens, row.contextTokens, row.flags.join(" "), row.sessionId]);
}

function storeNote(store: SessionList["stores"][number]): string {
  if (store.error !== undefined) return " (unreadable, skipped)";
  return store.exists ? "" : " (no database yet)";
}

/**
 * The table's columns: Age and Tokens keep their width; when the line is too wide the widest of Key, Model,
 * Flags (and Agent) gives way first, the key counting half (it is what the operator reads and types). Key is
 * cut in the middle, so its distinguishing tail (`…:topic:42`) stays.
 */
export function listColumns(multi: boolean): TableColumn[] {
  return [
    ...(multi ? [{ header: "Agent", min: 5, max: 16 } satisfies TableColumn] : []),
    { header: "Kind", min: 4, max: 11 },
    { header: "Key", cut: "middle", min: 16, weight: 2 },
    { header: "Age", cut: "none" },
    { header: "Model", min: 8 },
    { header: "Tokens (ctx %)", cut: "none" },
    { header: "Flags", min: 5 },
  ];
}

/** One row's cells, in `listColumns` order (raw: the table cleans and cuts them). */
export function listCells(row: SessionSummary, now: number, options: { multi: boolean; stripAgent: string | null; verbose: boolean }): string[] {
  const prefix = options.stripAgent === null ? null : `agent:${options.stripAgent}:`;
  const key = prefix !== null && row.key.startsWith(prefix) && row.key.length > prefix.length ? row.key.slice(prefix.length) : row.key;
  const flags = options.verbose ? [...row.flags, `id:${row.sessionId}`, ...(row.channel ? [`channel:${row.channel}`] : [])] : row.flags;
  return [
    ...(options.multi ? [row.agentId] : []),
    row.kind,
    key,
    formatAge(row.updatedAt, now),
    row.model ?? "-",
    formatTokensCell(row.totalTokens, row.contextTokens),
    flags.join(" "),
  ];
}

export function renderSessionShow(output: Output, result: ShowSessionResult, layout: TextLayout = { width: 120, full: false }): number {
  if (output.json) {
    output.writeJson(jsonEnvelope("sessions show", showJson(result)));
    return ExitCode.ok;
  }
  const s = output.style;
  const row = result.session;
  const now = Date.now();
  output.log(s.bold(`Session ${row.key} (agent ${result.agentId})`));
  const field = (label: string, value: string): void => output.log(`  ${label.padEnd(14)}${value}`);
  field("Store", result.store.path);
  field("Session id", row.sessionId);
  field("Kind", `${row.kind} (scope ${row.scope}${row.chatType ? `, chat ${row.chatType}` : ""})`);
  field("Route", routeText(result));
  if (row.status) field("Status", row.status);
  field("Updated", `${formatTime(row.updatedAt)} (${formatAge(row.updatedAt, now)})`);
  field("Created", formatTime(row.createdAt));
  if (row.startedAt !== null || row.endedAt !== null) field("Run", `${formatTime(row.startedAt)} → ${formatTime(row.endedAt)}`);
  field("Model", row.model ? `${row.modelProvider ? `${row.modelProvider}/` : ""}${row.model}` : "-");
  field("Tokens", formatTokensCell(row.totalTokens, row.contextTokens) + tokenDetail(row));
  if (row.channel) field("Channel", `${row.channel}${row.accountId ? ` (account ${row.accountId})` : ""}`);
  if (row.displayName) field("Display name", row.displayName);
  if (row.label) field("Label", row.label);
  if (row.spawnedBy || row.parentSessionKey) field("Spawned by", row.spawnedBy ?? row.parentSessionKey ?? "-");
  if (row.agentHarnessId) field("Harness", row.agentHarnessId);
  if (row.flags.length > 0) field("Flags", row.flags.join(" "));

  output.log(s.bold("Conversations"));
  if (result.conversations.length === 0) output.log(s.dim("  none"));
  for (const c of result.conversations) {
    const parts = [c.role.padEnd(11), c.channel, c.kind, c.peerId ? `peer ${c.peerId}` : null, c.threadId ? `thread ${c.threadId}` : null, c.accountId ? `account ${c.accountId}` : null, c.label ? `"${c.label}"` : null];
    output.log(`  ${parts.filter((p) => p !== null).join(" ")}`);
  }

  output.log(s.bold("Entry"));
  if (!result.entry) output.log(s.dim("  no session_entries row"));
  else output.log(`  ${entryText(result.entry, output.verbose)}`);

  const t = result.transcript;
  output.log(s.bold("Transcript"));
  if (t.eventCount === 0) output.log(s.dim("  no events"));
  else output.log(`  ${formatCount(t.eventCount)} event(s), ${formatBytes(t.bytes)}, ${formatTime(t.firstAt)} → ${formatTime(t.lastAt)} (seq ${t.firstSeq}–${t.lastSeq})`);
  const ev = result.events;
  if (ev.requested > 0 && t.eventCount > 0) {
    if (ev.requiredBytes !== undefined) {
      output.log(s.yellow(`  The newest event is ${formatCount(ev.requiredBytes)} bytes, above --max-bytes ${formatCount(ev.maxBytes)}; raise --max-bytes to see it.`));
    } else {
      const bounded = ev.items.length < ev.requested && ev.hasEarlier ? ` (byte budget ${formatCount(ev.maxBytes)} reached; --max-bytes raises it)` : "";
      output.log(s.bold(`Last ${ev.items.length} event(s)${bounded}`));
      for (const e of ev.items) for (const l of eventLines(e, layout)) output.log(l);
    }
  }
  if (result.export) output.log(`Exported ${formatCount(result.export.events)} event(s) (${formatBytes(result.export.bytes)}) to ${result.export.path}`);
  return ExitCode.ok;
}

function routeText(result: ShowSessionResult): string {
  const keys = result.routes.map((r) => r.key);
  const route = keys.length > 0 ? `routed from ${keys.join(", ")}` : "no route points here";
  const others = result.otherSessionsForKey.count;
  return others > 0 ? `${route}; ${others} other session(s) used this key` : route;
}

function tokenDetail(row: ShowSessionResult["session"]): string {
  const parts = [row.inputTokens !== null ? `in ${formatCount(row.inputTokens)}` : null, row.outputTokens !== null ? `out ${formatCount(row.outputTokens)}` : null];
  const shown = parts.filter((p) => p !== null);
  return shown.length > 0 ? `, ${shown.join(", ")}` : "";
}

/** Scalar entry fields on one line; objects are named (their content is in --json). */
function entryText(entry: Record<string, unknown>, verbose: boolean): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (value === null || value === undefined) continue;
    if (typeof value === "object") parts.push(`${key}={…}`);
    else parts.push(`${key}=${verbose ? String(value) : truncate(String(value), 40)}`);
  }
  return parts.length > 0 ? parts.join(" ") : "(empty)";
}

function eventLines(e: ShownEvent, layout: TextLayout): string[] {
  const event = e.event;
  const record = isRecord(event) ? event : null;
  const when = record && typeof record.timestamp === "string" ? record.timestamp.replace(/\.\d{3}Z$/, "Z") : formatTime(e.createdAt);
  const type = record && typeof record.type === "string" ? record.type : "?";
  return fitText(`  #${String(e.seq).padEnd(5)} ${when}  ${type.padEnd(9)} `, summarizeEvent(record, event), layout);
}

/**
 * `prefix` + text fitted to the width on one line (whitespace folded, "…" at the cut), or with `full` the
 * whole text: its first line after the prefix, later lines indented by four spaces.
 */
export function fitText(prefix: string, text: string, layout: TextLayout): string[] {
  if (!layout.full) return [`${prefix}${truncate(text.replace(/\s+/g, " ").trim(), Math.max(MIN_TEXT_WIDTH, layout.width - prefix.length))}`.trimEnd()];
  const [first = "", ...rest] = text.replace(/\r\n?/g, "\n").split("\n");
  return [`${prefix}${first}`.trimEnd(), ...rest.map((l) => `    ${l}`.trimEnd())];
}

function summarizeEvent(record: Record<string, unknown> | null, raw: unknown): string {
  if (!record) return typeof raw === "string" ? raw : JSON.stringify(raw);
  const type = record.type;
  if (type === "session") return `header v${String(record.version ?? 1)}${typeof record.cwd === "string" ? ` cwd ${record.cwd}` : ""}`;
  if (type === "message" && isRecord(record.message)) {
    const m = record.message;
    return `${typeof m.role === "string" ? m.role : "?"}: ${contentText(m.content)}`;
  }
  if (type === "compaction") return `summary: ${typeof record.summary === "string" ? record.summary : ""}`;
  if (type === "model_change") return `→ ${[record.provider, record.modelId ?? record.model].filter((v) => typeof v === "string").join("/")}`;
  if (type === "thinking_level_change") return `→ ${String(record.thinkingLevel ?? "?")}`;
  for (const key of ["summary", "label", "text", "content"]) if (typeof record[key] === "string") return record[key] as string;
  return "";
}

/** Message content as display text: text blocks, and markers for tool calls, images and thinking. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (typeof block.text === "string") parts.push(block.text);
    else if (block.type === "toolCall" || block.type === "tool_use") parts.push(`[tool ${String(block.name ?? "?")}]`);
    else if (block.type === "image") parts.push("[image]");
    else if (block.type === "thinking") parts.push("[thinking]");
  }
  return parts.join(" ");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
