// ByteSink: small texts as joined chunks, large ones grown in place; the bytes are the UTF-8 of what was written.
import { describe, expect, it } from "vitest";
import { ByteSink } from "../../src/core/byte-sink.js";

describe("ByteSink", () => {
  it("returns the UTF-8 bytes of everything written, small and large", () => {
    for (const count of [0, 1, 50, 200_000]) {
      const sink = new ByteSink();
      const parts: string[] = [];
      for (let i = 0; i < count; i += 1) {
        const text = i % 7 === 0 ? `é😀${i},` : `"k${i}":${i},`;
        parts.push(text);
        sink.write(text);
      }
      const bytes = sink.finish();
      expect(bytes.equals(Buffer.from(parts.join(""), "utf8"))).toBe(true);
    }
  });

  it("takes single writes larger than its chunk size", () => {
    const sink = new ByteSink();
    const big = "€".repeat(3 * 1024 * 1024);
    sink.write("[");
    sink.write(JSON.stringify(big));
    sink.write("]");
    const bytes = sink.finish();
    expect(bytes.length).toBe(Buffer.byteLength(big) + 4);
    expect(JSON.parse(bytes.toString("utf8"))).toEqual([big]);
  });
});
