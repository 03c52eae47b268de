// formatCount groups whole numbers without Intl (whose first use costs a backup command 20–35 ms) and still spells
// every value exactly as toLocaleString("en-US") does.
import { describe, expect, it } from "vitest";
import { formatCount } from "../../src/core/format-bytes.js";

describe("formatCount", () => {
  it("spells whole numbers, fractions and odd values as toLocaleString('en-US') does", () => {
    const values = [0, -0, 1, 12, 123, 999, 1000, 1234, 12_345, 123_456, 1_000_000, 3019, -1, -999, -1000, -1_234_567, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, 1234.5678, 0.5, NaN, Infinity, -Infinity];
    for (let i = 0; i < 2000; i += 1) values.push(Math.floor(Math.random() * 10 ** (1 + (i % 15))) * (i % 3 === 0 ? -1 : 1));
    for (const v of values) expect(formatCount(v), String(v)).toBe(v.toLocaleString("en-US"));
  });

  it("groups whole numbers without Intl", () => {
    const original = Number.prototype.toLocaleString;
    Number.prototype.toLocaleString = () => {
      throw new Error("Intl used");
    };
    try {
      expect(formatCount(1_234_567)).toBe("1,234,567");
      expect(formatCount(-3019)).toBe("-3,019");
      expect(formatCount(42)).toBe("42");
    } finally {
      Number.prototype.toLocaleString = original;
    }
  });
});
