// The one table helper for human listings: widths in screen cells (string-width), so CJK text and emoji line up.
import stringWidth from "string-width";

/** Screen cells `text` takes in a terminal (a CJK character or an emoji is two, a combining mark none). */
export function cellWidth(text: string): number {
  return stringWidth(text);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

function clusters(text: string): string[] {
  return Array.from(graphemes.segment(text), (s) => s.segment);
}

// C0/C1 controls, DEL and the bidi overrides/isolates: a hostile key or model name must not move the cursor,
// start an escape sequence, break a row over two lines or reverse the text after it.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** One line of plain text: controls shown as visible escapes (`\n`, `\t`, `\x1b`, `\u202e`). */
export function cleanCell(text: string): string {
  return text.replace(UNSAFE, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\t") return "\\t";
    if (c === "\r") return "\\r";
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`;
  });
}

/** The longest head of `text` that fits `width` cells, whole grapheme clusters only. */
function head(text: string, width: number): string {
  let out = "";
  let used = 0;
  for (const g of clusters(text)) {
    const w = cellWidth(g);
    if (used + w > width) break;
    out += g;
    used += w;
  }
  return out;
}

/** The longest tail of `text` that fits `width` cells. */
function tail(text: string, width: number): string {
  const parts = clusters(text);
  let out = "";
  let used = 0;
  for (let i = parts.length - 1; i >= 0; i -= 1) {
    const w = cellWidth(parts[i]!);
    if (used + w > width) break;
    out = parts[i]! + out;
    used += w;
  }
  return out;
}

/** `text` cut to `width` cells, the cut marked with "…" at the end. */
export function truncateEnd(text: string, width: number): string {
  if (cellWidth(text) <= width) return text;
  if (width <= 0) return "";
  return `${head(text, width - 1)}…`;
}

/**
 * `text` cut to `width` cells in the middle: a third of the room for its start, the rest for its end. For keys and
 * file names, whose distinguishing part is the tail (`…:topic:42`, `…-openclaw-backup.tar.zst`).
 */
export function truncateMiddle(text: string, width: number): string {
  if (cellWidth(text) <= width) return text;
  if (width <= 1) return truncateEnd(text, width);
  const room = width - 1;
  const front = head(text, Math.floor(room / 3));
  const back = tail(text, room - cellWidth(front));
  return `${front}…${back}`;
}

/** Pads `text` with spaces to `width` cells (left-aligned, or right-aligned for numbers). */
export function padCell(text: string, width: number, align: "left" | "right" = "left"): string {
  const pad = " ".repeat(Math.max(0, width - cellWidth(text)));
  return align === "right" ? pad + text : text + pad;
}

export interface TableColumn {
  header: string;
  align?: "left" | "right";
  /**
   * How a cell wider than its column is cut: at its end (default), in the middle (keeps the distinguishing
   * tail), or never (a fixed-width value such as an age: the column does not shrink).
   */
  cut?: "end" | "middle" | "none";
  /** The narrowest this column shrinks to (default 8, or its natural width when narrower). */
  min?: number;
  /** Never wider than this, whatever the rows hold. */
  max?: number;
  /** Spaces before this column (default 1; the first column has none). */
  gap?: number;
  /** How much room this column keeps, relative to the others, when the line must shrink (default 1; the key 2). */
  weight?: number;
}

/**
 * Column widths for `rows` (cells already cleaned) within `width` cells: each column as wide as its widest cell
 * or header, then, while the line is too wide, the widest column that may shrink (width ÷ weight) gives up one
 * cell, down to its minimum. When even the minimums do not fit, lines are cut at the edge by `formatRow`.
 */
export function fitColumns(columns: readonly TableColumn[], rows: readonly (readonly string[])[], width: number): number[] {
  const widths = columns.map((col, i) => {
    let w = cellWidth(col.header);
    for (const row of rows) w = Math.max(w, cellWidth(row[i] ?? ""));
    return col.max === undefined ? w : Math.min(w, col.max);
  });
  const floors = columns.map((col, i) => (col.cut === "none" ? widths[i]! : Math.min(widths[i]!, col.min ?? 8)));
  const gaps = columns.reduce((sum, col, i) => sum + (i === 0 ? 0 : (col.gap ?? 1)), 0);
  let total = gaps + widths.reduce((a, b) => a + b, 0);
  while (total > width) {
    let widest = -1;
    const share = (i: number): number => widths[i]! / (columns[i]!.weight ?? 1);
    for (let i = 0; i < widths.length; i += 1) if (widths[i]! > floors[i]! && (widest < 0 || share(i) > share(widest))) widest = i;
    if (widest < 0) break;
    widths[widest] = widths[widest]! - 1;
    total -= 1;
  }
  return widths;
}

/** Fits one cell to its column: cut by the column's rule (unless `whole`), then padded. */
export function fitCell(text: string, column: TableColumn, width: number, whole = false): string {
  const cut = whole || column.cut === "none" ? text : column.cut === "middle" ? truncateMiddle(text, width) : truncateEnd(text, width);
  return padCell(cut, width, column.align);
}

/**
 * One table line: cells fitted to `widths`, trailing spaces trimmed, and cut at `limit` cells when given (the
 * minimums did not fit). `whole` marks columns printed uncut (--verbose keys), which may then push past the edge.
 */
export function formatRow(cells: readonly string[], columns: readonly TableColumn[], widths: readonly number[], options: { limit?: number; whole?: ReadonlySet<number> } = {}): string {
  let line = "";
  columns.forEach((col, i) => {
    if (i > 0) line += " ".repeat(col.gap ?? 1);
    line += fitCell(cleanCell(cells[i] ?? ""), col, widths[i]!, options.whole?.has(i) ?? false);
  });
  line = line.trimEnd();
  return options.limit !== undefined && !options.whole?.size ? truncateEnd(line, options.limit) : line;
}

/** The header line of a table laid out by `fitColumns`. */
export function formatHeader(columns: readonly TableColumn[], widths: readonly number[], limit?: number): string {
  return formatRow(
    columns.map((c) => c.header),
    columns.map((c) => ({ ...c, cut: "end" as const })),
    widths,
    { limit },
  );
}

/** A whole small table (header + rows) within `width` cells. */
export function renderTable(columns: readonly TableColumn[], rows: readonly (readonly string[])[], width: number): string[] {
  const clean = rows.map((r) => r.map((c) => cleanCell(c)));
  const widths = fitColumns(columns, clean, width);
  return [formatHeader(columns, widths, width), ...clean.map((r) => formatRow(r, columns, widths, { limit: width }))];
}

// eslint-disable-next-line no-control-regex
const TSV_UNSAFE = /[\\\u0000-\u001f\u007f]/g;

/**
 * One tab-separated line for scripts (`cut -f`, `awk -F'\t'`): a backslash, tab, newline or carriage return inside
 * a value is escaped (`\\`, `\t`, `\n`, `\r`), other control characters as `\xNN`, so every record is exactly
 * one line with a fixed number of fields and nothing in it drives a terminal.
 */
export function tsvLine(cells: readonly (string | number | null | undefined)[]): string {
  return cells
    .map((c) => (c === null || c === undefined ? "" : String(c)).replace(TSV_UNSAFE, (ch) => (ch === "\\" ? "\\\\" : cleanCell(ch))))
    .join("\t");
}
