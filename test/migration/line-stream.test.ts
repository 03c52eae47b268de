// The streaming line splitter: chunk boundaries, CRLF, a final line without newline, the huge-line cap.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hashFile, LineTooLongError, streamLines, withOpenFile } from "../../src/migration/line-stream.js";
import { makeTempDir } from "../helpers/temp-state.js";

function split(content: string | Buffer, chunkBytes: number, maxLineBytes?: number): Array<[string, number, boolean]> {
  const file = path.join(makeTempDir(), "f.jsonl");
  fs.writeFileSync(file, content);
  const out: Array<[string, number, boolean]> = [];
  withOpenFile(file, (fd) => streamLines(fd, file, (buf, s, e, n, t) => out.push([buf.toString("utf8", s, e), n, t]), { chunkBytes, ...(maxLineBytes ? { maxLineBytes } : {}) }));
  return out;
}

describe("streamLines", () => {
  it.each([1, 2, 3, 5, 7, 64])("splits the same way with %i-byte chunks", (chunk) => {
    expect(split('{"a":1}\r\n\n{"é":"ü"}\nlast', chunk)).toEqual([
      ['{"a":1}', 1, true],
      ["", 2, true],
      ['{"é":"ü"}', 3, true],
      ["last", 4, false],
    ]);
  });

  it("reports no final line when the file ends with a newline", () => {
    expect(split("a\nb\n", 3)).toEqual([
      ["a", 1, true],
      ["b", 2, true],
    ]);
  });

  it("refuses a line longer than the cap with file:line", () => {
    expect(() => split(`ok\n${"x".repeat(100)}\n`, 8, 50)).toThrow(LineTooLongError);
    expect(() => split(`ok\n${"x".repeat(100)}\n`, 8, 50)).toThrow(/f\.jsonl:2: line is longer than/);
  });

  it("hashes a file in chunks like a one-shot hash", () => {
    const file = path.join(makeTempDir(), "h");
    fs.writeFileSync(file, Buffer.alloc(3000, 7));
    const expected = crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    expect(hashFile(file, 1024)).toEqual({ sizeBytes: 3000, sha256: expected });
  });
});
