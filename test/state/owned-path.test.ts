import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkOwnedPath, ownedPathProblem, prepareOwnedDestination, removeOwnedFile, UnsafeOwnedPathError } from "../../src/state/owned-path.js";

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

describe("prepareOwnedDestination", () => {
  it("creates the missing parents below the root and returns the free destination", () => {
    const dest = path.join(root, "migrated", "run-1", "agents", "main", "sessions", "a.jsonl");
    expect(prepareOwnedDestination(root, dest, "move into")).toBe(dest);
    expect(fs.lstatSync(path.dirname(dest)).isDirectory()).toBe(true);
    expect(fs.lstatSync(path.join(root, "migrated")).mode & 0o777).toBe(0o700);
  });

  it("never creates through a link: migrated/ pointing elsewhere is refused and nothing appears there", () => {
    fs.symlinkSync(outside, path.join(root, "migrated"));
    const dest = path.join(root, "migrated", "run-1", "a.jsonl");
    expect(() => prepareOwnedDestination(root, dest, "move into")).toThrow(UnsafeOwnedPathError);
    expect(fs.readdirSync(outside)).toEqual(["victim.jsonl"]);
  });

  it("refuses a destination already taken (a rename would replace it), even when the caller cached its dir", () => {
    const made = new Set<string>();
    const dest = path.join(root, "migrated", "run-1", "a.jsonl");
    prepareOwnedDestination(root, dest, "move into", made);
    fs.writeFileSync(dest, "already here\n");
    expect(() => prepareOwnedDestination(root, dest, "move into", made)).toThrow(/something is already there \(file\)/);
    // A cached parent swapped for a link afterwards is still caught: the walk runs for every destination.
    fs.rmSync(path.join(root, "migrated", "run-1"), { recursive: true });
    fs.symlinkSync(outside, path.join(root, "migrated", "run-1"));
    expect(() => prepareOwnedDestination(root, path.join(root, "migrated", "run-1", "b.jsonl"), "move into", made)).toThrow(/symbolic link/);
    expect(fs.readdirSync(outside)).toEqual(["victim.jsonl"]);
  });
});

describe("removeOwnedFile", () => {
  it("removes a regular file; a missing one is fine", () => {
    const file = path.join(root, "agents", "main", "sessions", "a.jsonl");
    expect(removeOwnedFile(root, file)).toBeNull();
    expect(fs.existsSync(file)).toBe(false);
    expect(removeOwnedFile(root, file)).toBeNull();
  });

  it("leaves a link, a FIFO and anything behind a symlinked parent in place, naming why (never throws)", () => {
    fs.symlinkSync(outside, path.join(root, "agents", "evil"));
    expect(removeOwnedFile(root, path.join(root, "agents", "evil", "victim.jsonl"))).toMatch(/parent .*evil is a symbolic link/);
    const link = path.join(root, "link.tmp");
    fs.symlinkSync(path.join(outside, "victim.jsonl"), link);
    expect(removeOwnedFile(root, link)).toMatch(/symbolic link/);
    const fifo = path.join(root, "fifo.tmp");
    execFileSync("mkfifo", [fifo]);
    expect(removeOwnedFile(root, fifo)).toMatch(/a FIFO/);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(fs.readFileSync(path.join(outside, "victim.jsonl"), "utf8")).toBe("{}\n");
  });
});

describe("the refusal message", () => {
  it("names the path, the reason, that nothing was touched, and the caller's next step", () => {
    fs.symlinkSync(outside, path.join(root, "agents", "evil"));
    const target = path.join(root, "agents", "evil", "victim.jsonl");
    expect(() => checkOwnedPath(root, target, { action: "set aside", next: "Remove the link by hand." })).toThrow(
      `Refusing to set aside ${target}: its parent ${path.join(root, "agents", "evil")} is a symbolic link (never followed out of ${root}); nothing was touched there. Remove the link by hand.`,
    );
  });
});
