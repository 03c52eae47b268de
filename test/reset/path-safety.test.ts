// path-safety: removal never follows links, and realpath helpers see through links only where they should.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { realpathDeep, removalLocation, removeNoFollow } from "../../src/reset/path-safety.js";
import { makeTempDir, snapshotTree } from "../helpers/temp-state.js";

describe("removeNoFollow", () => {
  it("unlinks a symlink to a directory and leaves the directory and its files", () => {
    const root = makeTempDir();
    const target = path.join(root, "target");
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, "f.txt"), "keep");
    const link = path.join(root, "link");
    fs.symlinkSync(target, link);
    const before = snapshotTree(target);
    expect(removeNoFollow(link)).toBe("removed");
    expect(fs.existsSync(link)).toBe(false);
    expect(snapshotTree(target)).toEqual(before);
  });

  it("removes a directory holding links without touching what they point at", () => {
    const root = makeTempDir();
    const outside = path.join(root, "outside");
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, "f.txt"), "keep");
    const dir = path.join(root, "dir", "nested");
    fs.mkdirSync(dir, { recursive: true });
    fs.symlinkSync(outside, path.join(dir, "to-dir"));
    fs.symlinkSync(path.join(outside, "f.txt"), path.join(dir, "to-file"));
    const before = snapshotTree(outside);
    removeNoFollow(path.join(root, "dir"));
    expect(fs.existsSync(path.join(root, "dir"))).toBe(false);
    expect(snapshotTree(outside)).toEqual(before);
  });

  it("reports a path that is already gone", () => {
    expect(removeNoFollow(path.join(makeTempDir(), "nope"))).toBe("missing");
  });
});

describe("realpathDeep / removalLocation", () => {
  it("resolves links in the parents but not the last component", () => {
    const root = makeTempDir();
    const real = path.join(fs.realpathSync(root), "real");
    fs.mkdirSync(real);
    fs.symlinkSync(real, path.join(root, "alias"));
    fs.symlinkSync("/etc", path.join(real, "etc-link"));
    expect(realpathDeep(path.join(root, "alias", "missing", "x"))).toBe(path.join(real, "missing", "x"));
    expect(removalLocation(path.join(root, "alias", "etc-link"))).toBe(path.join(real, "etc-link"));
  });
});
