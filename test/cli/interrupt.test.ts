// The leftover registry (src/core/interrupt.ts) and the CLI's words for it (src/cli/interrupt.ts): in-process for the
// bookkeeping, in a child process (built dist/) for what the signals do, since they end the process they land in.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupLine, CLEANUP_DELAY_ENV, leftoverLines } from "../../src/cli/interrupt.js";
import { pendingLeftovers, registerLeftover } from "../../src/core/interrupt.js";
import { makeTempDir, repoRoot } from "../helpers/temp-state.js";

const coreUrl = pathToFileURL(path.join(repoRoot, "dist", "core", "interrupt.js")).href;
const cliUrl = pathToFileURL(path.join(repoRoot, "dist", "cli", "interrupt.js")).href;

const releases: Array<() => void> = [];
afterEach(() => {
  for (const release of releases.splice(0)) release();
});

describe("the leftover registry", () => {
  it("holds what is registered until it is released, and listens for signals only meanwhile", () => {
    const before = process.listenerCount("SIGINT");
    const a = registerLeftover({ path: "/tmp/a", what: "staging dir" });
    const b = registerLeftover({ path: "/tmp/b", what: "partial archive" });
    releases.push(a, b);
    expect(pendingLeftovers()).toEqual([
      { path: "/tmp/a", what: "staging dir" },
      { path: "/tmp/b", what: "partial archive" },
    ]);
    // One listener per signal, however many leftovers.
    expect(process.listenerCount("SIGINT")).toBe(before + 1);
    expect(process.listenerCount("SIGTERM")).toBeGreaterThan(0);
    a();
    expect(pendingLeftovers()).toEqual([{ path: "/tmp/b", what: "partial archive" }]);
    expect(process.listenerCount("SIGINT")).toBe(before + 1);
    b();
    b();
    expect(pendingLeftovers()).toEqual([]);
    // Nothing registered: the kernel's default action again (kills at once, even in a long synchronous step).
    expect(process.listenerCount("SIGINT")).toBe(before);
  });
});

describe("the CLI's words", () => {
  it("names each leftover, what it is, and that it may go", () => {
    expect(leftoverLines([{ path: "/b/.openclaw-backup-staging-1-abcdef", what: "staging dir of an unfinished archive" }])).toEqual([
      "left behind: /b/.openclaw-backup-staging-1-abcdef (staging dir of an unfinished archive) — safe to delete",
    ]);
    expect(leftoverLines([])).toEqual([]);
    expect(cleanupLine([{ path: "/x", what: "y" }])).toContain("Ctrl-C again to quit at once");
    expect(cleanupLine([{ path: "/x", what: "y" }, { path: "/z", what: "y" }])).toContain("2 temporary dirs");
  });
});

/**
 * Runs a script in a fresh node that registers `dir` (with the CLI's words installed), then signals itself as
 * `body` says; the event loop is kept busy-free and alive so only a signal can end it.
 */
function runScript(dir: string, body: string, env: NodeJS.ProcessEnv = {}): { status: number | null; signal: NodeJS.Signals | null; stderr: string; ms: number } {
  const script = `
    const { registerLeftover } = await import(${JSON.stringify(coreUrl)});
    const { installInterruptReporting } = await import(${JSON.stringify(cliUrl)});
    installInterruptReporting(process.stderr, process.env);
    const dir = ${JSON.stringify(dir)};
    setInterval(() => {}, 1000);
    ${body}
  `;
  const started = Date.now();
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 20_000 });
  return { status: r.status, signal: r.signal, stderr: r.stderr, ms: Date.now() - started };
}

function stagingDir(): string {
  const dir = path.join(makeTempDir("ocs-interrupt-unit-"), "staging");
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "archive.partial"), "x".repeat(1024));
  return dir;
}

describe("signals (child process)", () => {
  it("the first SIGINT removes what is registered, then the process dies by SIGINT (a shell's 130)", () => {
    const dir = stagingDir();
    const r = runScript(dir, `registerLeftover({ path: dir, what: "staging dir" }); process.kill(process.pid, "SIGINT");`);
    expect(r.signal, r.stderr).toBe("SIGINT");
    expect(fs.existsSync(dir)).toBe(false);
    expect(r.stderr).toContain("interrupted: removing");
    expect(r.stderr).not.toContain("left behind");
  });

  it("SIGTERM cleans up the same way and dies by SIGTERM", () => {
    const dir = stagingDir();
    const r = runScript(dir, `registerLeftover({ path: dir, what: "staging dir" }); process.kill(process.pid, "SIGTERM");`);
    expect(r.signal, r.stderr).toBe("SIGTERM");
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("a second SIGINT during the cleanup exits at once, names what is still there, and removes nothing more", () => {
    const dir = stagingDir();
    const gone = stagingDir();
    // `gone` was released (the run removed it itself): it is not named.
    const r = runScript(
      dir,
      `registerLeftover({ path: dir, what: "staging dir of an unfinished archive" });
       registerLeftover({ path: ${JSON.stringify(gone)}, what: "other" })();
       process.kill(process.pid, "SIGINT");
       setTimeout(() => process.kill(process.pid, "SIGINT"), 200);`,
      { [CLEANUP_DELAY_ENV]: "15000" },
    );
    expect(r.signal, r.stderr).toBe("SIGINT");
    // Long before the held-back cleanup (15 s) would have run.
    expect(r.ms).toBeLessThan(10_000);
    expect(fs.existsSync(dir)).toBe(true);
    expect(r.stderr).toContain(`left behind: ${dir} (staging dir of an unfinished archive) — safe to delete\n`);
    expect(r.stderr).not.toContain("other");
  });

  it("a leftover that cannot be removed does not stop the exit", () => {
    const dir = stagingDir();
    const r = runScript(dir, `registerLeftover({ path: dir, what: "staging dir" }, () => { throw new Error("EACCES"); }); process.kill(process.pid, "SIGINT");`);
    expect(r.signal, r.stderr).toBe("SIGINT");
    expect(fs.existsSync(dir)).toBe(true);
  });

  it("with nothing registered, SIGINT keeps the default action (no notice, no handler)", () => {
    const dir = stagingDir();
    const r = runScript(dir, `registerLeftover({ path: dir, what: "staging dir" })(); process.kill(process.pid, "SIGINT");`);
    expect(r.signal, r.stderr).toBe("SIGINT");
    expect(r.stderr).toBe("");
    expect(fs.existsSync(dir)).toBe(true);
  });
});
