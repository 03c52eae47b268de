// readRegularFileSync never blocks: a FIFO (even with no writer), a directory, a device or a link to one is
// refused unread with its kind named; regular files and links to them read normally.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { describePathKind, NotRegularFileError, pathKind, readRegularFileSync, readRegularTextSync } from "../../src/core/safe-read.js";
import { makeTempDir } from "../helpers/temp-state.js";

describe("readRegularFileSync", () => {
  it("reads regular files and symlinks to them; honours maxBytes", () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, "a.json"), '{"a":1}');
    fs.symlinkSync(path.join(dir, "a.json"), path.join(dir, "link.json"));
    expect(readRegularTextSync(path.join(dir, "a.json"))).toBe('{"a":1}');
    expect(readRegularTextSync(path.join(dir, "link.json"))).toBe('{"a":1}');
    expect(() => readRegularFileSync(path.join(dir, "link.json"), { followSymlinks: false })).toThrow(/is a symlink to a regular file, not a regular file/);
    expect(() => readRegularFileSync(path.join(dir, "a.json"), { maxBytes: 3 })).toThrow(/above the 3-byte limit/);
    expect(readRegularFileSync(path.join(dir, "a.json")).length).toBe(7);
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    fs.writeFileSync(path.join(dir, "big"), big);
    expect(readRegularFileSync(path.join(dir, "big")).equals(big)).toBe(true);
  });

  it("refuses a FIFO with no writer at once (no hang), a directory, a device and a link to a FIFO", () => {
    const dir = makeTempDir();
    const fifo = path.join(dir, "openclaw.json");
    execFileSync("mkfifo", [fifo]);
    fs.symlinkSync(fifo, path.join(dir, "to-fifo"));
    const cases: Array<[string, RegExp]> = [
      [fifo, /is a FIFO \(named pipe\), not a regular file; it was not read/],
      [dir, /is a directory, not a regular file/],
      ["/dev/null", /is a character device, not a regular file/],
      [path.join(dir, "to-fifo"), /is a symlink to a FIFO \(named pipe\)/],
    ];
    for (const [p, message] of cases) {
      let caught: unknown;
      try {
        readRegularFileSync(p, { what: "config file" });
      } catch (error) {
        caught = error;
      }
      expect(caught, p).toBeInstanceOf(NotRegularFileError);
      expect((caught as Error).message).toMatch(message);
      expect((caught as NotRegularFileError).code).toBe("not_a_regular_file");
    }
    expect(() => readRegularFileSync(path.join(dir, "missing"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
  });

  it("pathKind / describePathKind name what is there without opening it", () => {
    const dir = makeTempDir();
    fs.symlinkSync(path.join(dir, "nowhere"), path.join(dir, "dangling"));
    expect(describePathKind(pathKind(path.join(dir, "dangling")))).toBe("a dangling symlink");
    expect(describePathKind(pathKind(path.join(dir, "none")))).toBe("missing");
    expect(pathKind(dir)).toEqual({ kind: "directory", target: "directory" });
  });
});
