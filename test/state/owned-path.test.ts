import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkOwnedPath, ownedPathProblem, UnsafeOwnedPathError } from "../../src/state/owned-path.js";

let dir: string;
let root: string;
let outside: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "owned-path-"));
  root = path.join(dir, "state");
  outside = path.join(dir, "elsewhere");
  fs.mkdirSync(path.join(root, "agents", "main", "sessions"), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "victim.jsonl"), "{}\n");
  fs.writeFileSync(path.join(root, "agents", "main", "sessions", "a.jsonl"), "{}\n");
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("checkOwnedPath", () => {
  it("accepts a regular file and a directory inside the root", () => {
    expect(checkOwnedPath(root, path.join(root, "agents/main/sessions/a.jsonl"), { action: "move" }).kind).toBe("file");
    expect(checkOwnedPath(root, path.join(root, "agents/main"), { action: "delete", expect: "dir" }).kind).toBe("dir");
  });

  it("refuses a path outside the root and the root itself", () => {
    expect(() => checkOwnedPath(root, path.join(outside, "victim.jsonl"), { action: "move" })).toThrow(/not inside/);
    expect(() => checkOwnedPath(root, path.join(root, "..", "elsewhere", "victim.jsonl"), { action: "move" })).toThrow(UnsafeOwnedPathError);
    expect(() => checkOwnedPath(root, root, { action: "delete" })).toThrow(/boundary/);
  });

  it("refuses a symlinked parent, even when the file behind it exists", () => {
    fs.symlinkSync(outside, path.join(root, "agents", "evil"));
    const target = path.join(root, "agents", "evil", "victim.jsonl");
    expect(() => checkOwnedPath(root, target, { action: "move" })).toThrow(/parent .*evil is a symbolic link/);
    expect(ownedPathProblem(root, target, { action: "move" })).toMatch(/symbolic link/);
    expect(fs.existsSync(path.join(outside, "victim.jsonl"))).toBe(true);
  });

  it("refuses a final symlink unless allowed, and then never follows it", () => {
    const link = path.join(root, "link.jsonl");
    fs.symlinkSync(path.join(outside, "victim.jsonl"), link);
    expect(() => checkOwnedPath(root, link, { action: "delete" })).toThrow(/symbolic link/);
    expect(checkOwnedPath(root, link, { action: "delete", allowSymlink: true }).kind).toBe("symlink");
  });

  it("refuses a FIFO without opening it", () => {
    const fifo = path.join(root, "agents", "main", "sessions", "b.jsonl");
    execFileSync("mkfifo", [fifo]);
    expect(() => checkOwnedPath(root, fifo, { action: "move" })).toThrow(/a FIFO/);
  });

  it("answers missing only when allowed, and checks the expected kind", () => {
    const missing = path.join(root, "agents", "nobody", "x.jsonl");
    expect(checkOwnedPath(root, missing, { action: "delete", allowMissing: true }).kind).toBe("missing");
    expect(() => checkOwnedPath(root, missing, { action: "delete" })).toThrow(/parent .* cannot be read|nothing is there/);
    expect(() => checkOwnedPath(root, path.join(root, "agents"), { action: "move", expect: "file" })).toThrow(/directory, not a file/);
  });
});
