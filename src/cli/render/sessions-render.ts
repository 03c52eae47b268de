// Renders `sessions list` (a fixed-width table streamed row by row, or a streamed JSON document) and `sessions show`.
import type { SessionList } from "../../sessions/list-sessions.js";
import type { SessionSummary } from "../../sessions/session-row.js";
import type { ShowSessionResult, ShownEvent } from "../../sessions/show-session.js";
import { ExitCode, OpenclawStateError } from "../../core/errors.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
import { DEFAULT_COLUMNS } from "../output.js";
import { AGE_TEXT_WIDTH, formatAge, formatBytes, formatCount, formatTime, formatTokensCell, truncate } from "./format.js";

/** Widths come from the output width, not the rows: rows print as they stream, before later ones are read. */
const KIND_WIDTH = 11;
const AGE_WIDTH = AGE_TEXT_WIDTH;
const TOKENS_WIDTH = 16;
const FLAGS_MIN = 10;
/** Lines between waits for stdout to drain: keeps `--limit all` flat in memory behind a slow pipe. */
const FLUSH_EVERY = 500;
/** Text never gets fewer columns than this, however long the line's prefix. */
const MIN_TEXT_WIDTH = 20;

export interface TextLayout {
  /** Columns to fit each line into (terminal width). */
  width: number;
  /** Print message text whole (newlines kept, continuation lines indented) instead of one fitted line. */
  full: boolean;
}

export async function renderSessionList(output: Output, list: SessionList): Promise<number> {
  const storeFailed = list.stores.some((s) => s.error !== undefined);
  if (output.json) {
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
    const written = await output.writeJsonStream(head, "sessions", list.rows());
    if (written.error !== undefined) return written.error instanceof OpenclawStateError ? written.error.exitCode : ExitCode.failed;
    return storeFailed ? ExitCode.failed : ExitCode.ok;
  }

  const s = output.style;
  const multi = list.stores.length > 1;
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
  const layout = listLayout(output.columns ?? DEFAULT_COLUMNS, multi ? Math.min(16, Math.max(5, ...list.stores.map((st) => st.agentId.length))) : 0);
  const header = [
    layout.agent > 0 ? "Agent".padEnd(layout.agent) : null,
    "Kind".padEnd(KIND_WIDTH),
    "Key".padEnd(layout.key),
    "Age".padEnd(AGE_WIDTH),
    "Model".padEnd(layout.model),
    "Tokens (ctx %)".padEnd(TOKENS_WIDTH),
    "Flags",
  ];
  output.log(s.bold(truncate(header.filter((c) => c !== null).join(" "), layout.width)));
  let n = 0;
  for (const row of list.rows()) {
    output.log(listLine(output, row, list.now, layout));
    if (++n % FLUSH_EVERY === 0) {
      await output.flush();
      if (output.isClosed()) break;
    }
  }
  await output.flush();
  return storeFailed ? ExitCode.failed : ExitCode.ok;
}

function storeNote(store: SessionList["stores"][number]): string {
  if (store.error !== undefined) return " (unreadable, skipped)";
  return store.exists ? "" : " (no database yet)";
}

export interface ListLayout {
  width: number;
  agent: number;
  key: number;
  model: number;
}

/**
 * Column widths that fit `width`: Kind, Age and Tokens are fixed; Key gets most of the rest, Model a quarter
 * (8–24), Flags what is left. Below ~70 columns the minimums win and lines are cut at the edge instead.
 */
export function listLayout(width: number, agent: number): ListLayout {
  const fixed = (agent > 0 ? agent + 1 : 0) + KIND_WIDTH + 1 + AGE_WIDTH + 1 + TOKENS_WIDTH + 1;
  const rest = Math.max(0, width - fixed);
  const model = Math.min(24, Math.max(8, Math.floor(rest / 4)));
  const key = Math.min(100, Math.max(12, rest - model - 2 - FLAGS_MIN));
  return { width, agent, key, model };
}

function listLine(output: Output, row: SessionSummary, now: number, layout: ListLayout): string {
  // --verbose prints every key and flag whole (for grep/awk), whatever the width.
  const key = output.verbose ? row.key : truncate(row.key, layout.key);
  const flags = output.verbose ? [...row.flags, `id:${row.sessionId}`, ...(row.channel ? [`channel:${row.channel}`] : [])] : row.flags;
  const cells = [
    layout.agent > 0 ? truncate(row.agentId, layout.agent).padEnd(layout.agent) : null,
    row.kind.padEnd(KIND_WIDTH),
    key.padEnd(layout.key),
    formatAge(row.updatedAt, now).padEnd(AGE_WIDTH),
    truncate(row.model ?? "-", layout.model).padEnd(layout.model),
    formatTokensCell(row.totalTokens, row.contextTokens).padEnd(TOKENS_WIDTH),
    flags.join(" "),
  ];
  const line = cells
    .filter((c) => c !== null)
    .join(" ")
    .trimEnd();
  return output.verbose ? line : truncate(line, layout.width);
}

export function renderSessionShow(output: Output, result: ShowSessionResult, layout: TextLayout = { width: 120, full: false }): number {
  if (output.json) {
    output.writeJson(jsonEnvelope("sessions show", result));
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
