// Small formatting helpers shared by the human renderers.

// Kept importable from here: the formatters live in src/core/ so core code can use them too.
export { formatBytes, formatCount, formatTime } from "../../core/format-bytes.js";
import { truncateEnd } from "./table.js";

/** Token counts the way chat UIs print them: 950, 1.2k, 12k, 200k, 1.5m. */
export function formatKTokens(n: number): string {
  if (n >= 1_000_000) return `${trimZero((n / 1_000_000).toFixed(1))}m`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${trimZero((n / 1000).toFixed(1))}k`;
  return String(Math.round(n));
}

function trimZero(value: string): string {
  return value.endsWith(".0") ? value.slice(0, -2) : value;
}

/** The Tokens cell: `total/ctx (pct%)`; a side that is unknown prints `?`, both unknown print `unknown`. */
export function formatTokensCell(total: number | null | undefined, contextTokens: number | null | undefined): string {
  const hasTotal = typeof total === "number" && Number.isFinite(total) && total >= 0;
  const hasContext = typeof contextTokens === "number" && Number.isFinite(contextTokens) && contextTokens > 0;
  if (!hasTotal && !hasContext) return "unknown";
  if (!hasTotal) return `?/${formatKTokens(contextTokens as number)}`;
  if (!hasContext) return `${formatKTokens(total as number)}/?`;
  const pct = Math.round(((total as number) / (contextTokens as number)) * 100);
  return `${formatKTokens(total as number)}/${formatKTokens(contextTokens as number)} (${pct}%)`;
}

/**
 * "just now", "5m ago", "3h ago", "2d ago", "5mo ago", "56y ago" relative to `now`; "-" when unknown. Never
 * wider than AGE_TEXT_WIDTH, so an epoch-0 timestamp cannot push a table's columns apart.
 */
export function formatAge(ms: number | null | undefined, now: number): string {
  if (ms === null || ms === undefined) return "-";
  const diff = now - ms;
  if (diff < -60_000) return "in future";
  if (diff < 60_000) return "just now";
  const minutes = Math.floor(diff / 60_000);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ago`;
  const days = Math.floor(hours / 24);
  if (days < 60) return `${days}d ago`;
  if (days < 730) return `${Math.floor(days / 30.44)}mo ago`;
  const years = Math.floor(days / 365.25);
  return years < 1000 ? `${years}y ago` : ">999y ago";
}

/** The widest formatAge text ("in future", ">999y ago"). */
export const AGE_TEXT_WIDTH = 9;

/** Cuts `text` to `width` screen cells (CJK and emoji count two), marking the cut with "…". */
export function truncate(text: string, width: number): string {
  return truncateEnd(text, Math.max(1, width));
}
