// Entries named `..x`, `...` or `..` -prefixed are inside the state dir: reset --scope full removes them
// instead of refusing as "outside the state dir" (isPathInside compared a string prefix).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isPathInside } from "../../src/state/paths.js";
import { makeTempState, runInProcess } from "../helpers/temp-state.js";

describe("dot-dot named entries", () => {
  it("isPathInside: `..x` and `...` are children, `..` and `../x` are not", () => {
    const root = "/srv/state";
    for (const name of ["..x", "...", "..hidden/deeper", ".. spaced"]) expect(isPathInside(root, path.join(root, name)), name).toBe(true);
    for (const p of ["/srv", "/srv/other", "/srv/state-backups", "/srv/..x"]) expect(isPathInside(root, p), p).toBe(false);
  });

  it("reset --scope full removes them with the rest of the state", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    fs.writeFileSync(path.join(stateDir, "..x"), "x");
    fs.mkdirSync(path.join(stateDir, "..."));
    fs.writeFileSync(path.join(stateDir, "...", "f"), "y");
    const dry = await runInProcess(["reset", "--scope", "full", "--dry-run"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(path.join(stateDir, "..x"));
    expect(dry.stdout).toContain(path.join(stateDir, "..."));
    const run = await runInProcess(["reset", "--scope", "full", "--yes"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(fs.existsSync(stateDir)).toBe(false);
  });
});
