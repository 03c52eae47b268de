// path-safety: removal never follows links, every target goes through checkOwnedPath, realpath helpers see through links only where they should.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OperationError } from "../../src/core/errors.js";
import { assertSafeTarget, realpathDeep, removalLocation, removeNoFollow } from "../../src/reset/path-safety.js";
import { resolveStatePaths } from "../../src/state/paths.js";
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

describe("assertSafeTarget (through checkOwnedPath)", () => {
  function statePaths(root: string) {
    const stateDir = path.join(root, ".openclaw");
    fs.mkdirSync(stateDir, { recursive: true });
    return resolveStatePaths({ env: { HOME: root, OPENCLAW_STATE_DIR: stateDir } });
  }

  it("refuses a target under a symlinked parent, even one pointing back inside the state dir", () => {
    const root = makeTempDir();
    const paths = statePaths(root);
    fs.mkdirSync(path.join(paths.stateDir, "real"));
    fs.writeFileSync(path.join(paths.stateDir, "real", "f"), "x");
    fs.symlinkSync(path.join(paths.stateDir, "real"), path.join(paths.stateDir, "alias"));
    const target = path.join(paths.stateDir, "alias", "f");
    expect(() => assertSafeTarget({ path: target, root: paths.stateDir }, paths)).toThrow(/its parent .*alias is a symbolic link/);
    try {
      assertSafeTarget({ path: target, root: paths.stateDir }, paths);
    } catch (error) {
      expect((error as OperationError).code).toBe("reset_unsafe_path");
    }
  });

  it("refuses a FIFO, reports a missing path, and accepts a final symlink (removed as a link)", () => {
    const root = makeTempDir();
    const paths = statePaths(root);
    const fifo = path.join(paths.stateDir, "pipe");
    execFileSync("mkfifo", [fifo]);
    expect(() => assertSafeTarget({ path: fifo, root: paths.stateDir }, paths)).toThrow(/FIFO/);
    expect(assertSafeTarget({ path: path.join(paths.stateDir, "gone"), root: paths.stateDir }, paths).kind).toBe("missing");
    fs.symlinkSync("/etc", path.join(paths.stateDir, "etc-link"));
    expect(assertSafeTarget({ path: path.join(paths.stateDir, "etc-link"), root: paths.stateDir }, paths).kind).toBe("symlink");
  });

  it("checks the state dir itself and a config outside it against their parent", () => {
    const root = makeTempDir();
    const paths = statePaths(root);
    expect(assertSafeTarget({ path: paths.stateDir, root: paths.stateDir, isStateDir: true }, paths).kind).toBe("dir");
    const config = path.join(root, "etc", "openclaw.json");
    fs.mkdirSync(path.dirname(config));
    fs.writeFileSync(config, "{}");
    expect(assertSafeTarget({ path: config, root: config }, paths).kind).toBe("file");
  });
});
