// The table helper measures screen cells: CJK and emoji take two, so columns line up; cuts keep whole characters.
import { describe, expect, it } from "vitest";
import { cellWidth, cleanCell, fitColumns, formatHeader, formatRow, renderTable, truncateEnd, truncateMiddle, tsvLine, type TableColumn } from "../../../src/cli/render/table.js";
import { listCells, listColumns } from "../../../src/cli/render/sessions-render.js";
import type { SessionSummary } from "../../../src/sessions/session-row.js";

/** Where `needle` starts in `line`, in screen cells (what a terminal shows), not UTF-16 units. */
function cellColumn(line: string, needle: string): number {
  const at = line.indexOf(needle);
  expect(at, `${needle} in ${line}`).toBeGreaterThanOrEqual(0);
  return cellWidth(line.slice(0, at));
}

describe("cell widths", () => {
  it("counts CJK and emoji as two cells, combining marks as none", () => {
    expect(cellWidth("abc")).toBe(3);
    expect(cellWidth("会话")).toBe(4);
    expect(cellWidth("🦞")).toBe(2);
    expect(cellWidth("👩‍💻")).toBe(2);
    expect(cellWidth("e\u0301")).toBe(1);
    // UTF-16 length disagrees: the bug the helper fixes.
    expect("🦞".length).toBe(2);
    expect("👩‍💻".length).toBe(5);
  });

  it("cuts by cells at the end or in the middle, never inside a character", () => {
    expect(truncateEnd("会话会话会话", 7)).toBe("会话会…");
    expect(cellWidth(truncateEnd("会话会话会话", 7))).toBeLessThanOrEqual(7);
    expect(truncateEnd("👩‍💻👩‍💻👩‍💻", 4)).toBe("👩‍💻…");
    expect(truncateEnd("short", 10)).toBe("short");
    const key = "telegram:group:-1001234567890:topic:42";
    const cut = truncateMiddle(key, 20);
    expect(cellWidth(cut)).toBe(20);
    expect(cut.endsWith(":topic:42")).toBe(true);
    expect(cut.startsWith("telegr")).toBe(true);
    expect(truncateMiddle("频道:群组:话题:四十二:尾巴", 11)).toMatch(/…/);
    expect(cellWidth(truncateMiddle("频道:群组:话题:四十二:尾巴", 11))).toBeLessThanOrEqual(11);
  });

  it("shows control characters and bidi overrides as escapes, so a cell is one harmless line", () => {
    expect(cleanCell("a\tb\nc\u001b[31md\u202eе")).toBe("a\\tb\\nc\\x1b[31md\\u202eе");
    expect(cleanCell(cleanCell("x\ny"))).toBe("x\\ny");
  });

  it("tsv escapes backslash, tab and newlines: one record per line, fixed field count", () => {
    const line = tsvLine(["a\tb", "c\nd", "e\\f", null, 42]);
    expect(line).toBe("a\\tb\tc\\nd\te\\\\f\t\t42");
    expect(line.split("\t")).toHaveLength(5);
    expect(line).not.toContain("\n");
  });
});

describe("tables", () => {
  const columns: TableColumn[] = [{ header: "Name" }, { header: "Age", cut: "none" }, { header: "Note", min: 4 }];

  it("aligns columns after CJK and emoji cells", () => {
    const lines = renderTable(columns, [["会话会话", "5m ago", "x"], ["🦞 lobster", "3h ago", "y"], ["plain", "2d ago", "z"]], 80);
    const ages = lines.map((l, i) => cellColumn(l, i === 0 ? "Age" : "ago") - (i === 0 ? 0 : 3));
    expect(new Set(ages).size).toBe(1);
    expect(cellColumn(lines[1]!, "5m ago")).toBe(cellColumn(lines[3]!, "2d ago"));
    expect(cellColumn(lines[2]!, "3h ago")).toBe(cellColumn(lines[3]!, "2d ago"));
  });

  it("shrinks the widest cuttable column first and keeps fixed ones whole", () => {
    const widths = fitColumns(columns, [["a".repeat(50), "5m ago", "b".repeat(30)]], 40);
    expect(widths[1]).toBe(6);
    expect(widths[0]! + widths[1]! + widths[2]! + 2).toBe(40);
    expect(Math.abs(widths[0]! - widths[2]!)).toBeLessThanOrEqual(1);
  });

  it("does not pad a column wider than its widest cell", () => {
    const widths = fitColumns(columns, [["short", "5m ago", "n"]], 200);
    expect(widths).toEqual([5, 6, 4]);
    expect(formatHeader(columns, widths)).toBe("Name  Age    Note");
  });

  it("formatRow cuts at the edge when the minimums do not fit, and keeps `whole` cells uncut", () => {
    const wide: TableColumn[] = [{ header: "A", cut: "none" }, { header: "B", cut: "none" }];
    const w = fitColumns(wide, [["x".repeat(30), "y".repeat(30)]], 40);
    expect(cellWidth(formatRow(["x".repeat(30), "y".repeat(30)], wide, w, { limit: 40 }))).toBe(40);
    const keyed: TableColumn[] = [{ header: "Key", cut: "middle", min: 4 }, { header: "N", cut: "none" }];
    const kw = fitColumns(keyed, [["k".repeat(20), "1"]], 10);
    expect(formatRow(["k".repeat(20), "1"], keyed, kw, { whole: new Set([0]) })).toBe(`${"k".repeat(20)} 1`);
  });
});

describe("sessions list table at 80 and 200 columns", () => {
  const now = Date.UTC(2026, 0, 2);
  const row = (key: string, model: string | null, extra: Partial<SessionSummary> = {}): SessionSummary =>
    ({ agentId: "main", key, sessionId: "s", updatedAt: now - 300_000, createdAt: now, kind: "group", model, totalTokens: 1200, contextTokens: 200_000, flags: ["think:high"], channel: null, ...extra }) as SessionSummary;
  const rows = [
    row("agent:main:telegram:group:-1001234567890:topic:42:with-a-long-tail-of-words", "claude-sonnet-4-20250514-with-a-suffix"),
    row("agent:main:discord:group:会话频道:🦞", "模型-🦞"),
    row("agent:main:main", null, { kind: "direct", flags: [] }),
  ];
  const cells = rows.map((r) => listCells(r, now, { multi: false, stripAgent: "main", verbose: false }).map(cleanCell));

  it("drops the agent prefix when one agent is listed", () => {
    expect(cells.map((c) => c[1])).toEqual(["telegram:group:-1001234567890:topic:42:with-a-long-tail-of-words", "discord:group:会话频道:🦞", "main"]);
    const multi = listCells(rows[2]!, now, { multi: true, stripAgent: null, verbose: false });
    expect(multi.slice(0, 3)).toEqual(["main", "direct", "agent:main:main"]);
  });

  for (const width of [80, 200]) {
    it(`fits ${width} columns, keeps each key's tail, and aligns Age across CJK/emoji rows`, () => {
      const columns = listColumns(false);
      const widths = fitColumns(columns, cells, width);
      const lines = [formatHeader(columns, widths, width), ...cells.map((c) => formatRow(c, columns, widths, { limit: width }))];
      for (const l of lines) expect(cellWidth(l), l).toBeLessThanOrEqual(width);
      const age = cellColumn(lines[0]!, "Age");
      for (const l of lines.slice(1)) expect(cellColumn(l, "5m ago"), l).toBe(age);
      expect(lines[1]).toMatch(/words\s/);
      expect(lines[2]).toContain("🦞");
      if (width === 200) {
        // Room for everything: whole values, and the key is as wide as its widest key, not padded to 100.
        expect(lines[1]).toContain("telegram:group:-1001234567890:topic:42:with-a-long-tail-of-words");
        expect(widths[1]).toBe(cellWidth(cells[0]![1]!));
        expect(lines[1]).toContain("claude-sonnet-4-20250514-with-a-suffix");
      } else {
        // The key keeps twice the room of Model and Flags, its head and its distinguishing tail.
        expect(lines[1]).toMatch(/telegr.*….*tail-of-words /);
        expect(widths[1]).toBeGreaterThanOrEqual(2 * widths[3]! - 1);
      }
    });
  }
});
