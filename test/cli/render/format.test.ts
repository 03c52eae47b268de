// Shared formatting helpers: token cells (known and unknown sides), k-tokens, ages, truncation.
import { describe, expect, it } from "vitest";
import { AGE_TEXT_WIDTH, formatAge, formatKTokens, formatTokensCell, truncate } from "../../../src/cli/render/format.js";

describe("formatTokensCell", () => {
  it.each<[number | null | undefined, number | null | undefined, string]>([
    [1200, 200_000, "1.2k/200k (1%)"],
    [150_000, 200_000, "150k/200k (75%)"],
    [250_000, 200_000, "250k/200k (125%)"],
    [0, 200_000, "0/200k (0%)"],
    [999, 1000, "999/1k (100%)"],
    [null, 200_000, "?/200k"],
    [undefined, 128_000, "?/128k"],
    [1200, null, "1.2k/?"],
    [1200, 0, "1.2k/?"],
    [null, null, "unknown"],
    [undefined, undefined, "unknown"],
    [Number.NaN, -1, "unknown"],
  ])("total %s, ctx %s → %s", (total, ctx, cell) => {
    expect(formatTokensCell(total, ctx)).toBe(cell);
  });
});

describe("formatKTokens", () => {
  it.each([
    [0, "0"],
    [950, "950"],
    [1000, "1k"],
    [1234, "1.2k"],
    [9999, "10k"],
    [12_345, "12k"],
    [1_000_000, "1m"],
    [1_550_000, "1.6m"],
  ])("%d → %s", (n, text) => expect(formatKTokens(n)).toBe(text));
});

describe("formatAge", () => {
  const now = 10_000_000_000;
  it.each<[number | null, string]>([
    [now, "just now"],
    [now - 59_000, "just now"],
    [now + 30_000, "just now"],
    [now + 3_600_000, "in future"],
    [now - 5 * 60_000, "5m ago"],
    [now - 3 * 3_600_000, "3h ago"],
    [now - 47 * 3_600_000, "47h ago"],
    [now - 3 * 86_400_000, "3d ago"],
    [now - 59 * 86_400_000, "59d ago"],
    [now - 61 * 86_400_000, "2mo ago"],
    [now - 729 * 86_400_000, "23mo ago"],
    [now - 20_789 * 86_400_000, "56y ago"],
    [now - 1e15, ">999y ago"],
    [null, "-"],
  ])("%s → %s", (ms, text) => expect(formatAge(ms, now)).toBe(text));

  it("never exceeds AGE_TEXT_WIDTH, whatever the timestamp", () => {
    for (const ms of [0, -8.64e15, 1, now - 1e12, now - 1e13, now + 1e12]) expect(formatAge(ms, now).length).toBeLessThanOrEqual(AGE_TEXT_WIDTH);
  });
});

describe("truncate", () => {
  it("keeps short text and marks cuts", () => {
    expect(truncate("abc", 3)).toBe("abc");
    expect(truncate("abcdef", 4)).toBe("abc…");
  });
});
