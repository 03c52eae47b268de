// End to end: the real binary restarts `backup create` (same pid) with the semi-space flag where Node has process.execve.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { IMPORT_REEXEC_FLAGS, REEXEC_FLAGS } from "../../src/cli/plan-reexec.js";
import { addSessions, agentDb, seedState } from "../helpers/backup-state.js";
import { binPath, chownToNobody, makeTempState, NOBODY, runBin } from "../helpers/temp-state.js";

const canExecve = typeof (process as { execve?: unknown }).execve === "function";
const asRoot = process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0;

interface Start {
  pid: number;
  execArgv: string[];
}

/** Runs the binary with a preloaded hook that logs each start of its main thread (pid and Node flags). */
async function runLogged(args: string[], env: NodeJS.ProcessEnv, dir: string) {
  const hook = path.join(dir, "log-start.mjs");
  const log = path.join(dir, `starts-${Math.random().toString(36).slice(2)}.jsonl`);
  fs.writeFileSync(
    hook,
    'import fs from "node:fs";\nimport { isMainThread } from "node:worker_threads";\nif (isMainThread) fs.appendFileSync(process.env.START_LOG, JSON.stringify({ pid: process.pid, execArgv: process.execArgv }) + "\\n");\n',
  );
  const run = await runBin(args, { ...env, START_LOG: log, NODE_OPTIONS: `--import ${JSON.stringify(hook).slice(1, -1)}` });
  const starts = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Start);
  return { run, starts };
}

describe("bin/openclaw-state.js restart for backup create", () => {
  it("backup create runs in a restarted image of the same process with the flag, and completes with its snapshot on a worker", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    // Over 4 MiB: the snapshot and its check go to a worker thread (smaller jobs run inline).
    addSessions(agentDb(state), 1000, 300, 200);
    expect(fs.statSync(agentDb(state)).size).toBeGreaterThan(4 * 1024 * 1024);
    const { run, starts } = await runLogged(["backup", "create", "--output", `${state.root}/out/`, "--json"], state.env, state.root);
    expect(run.code, run.stderr).toBe(0);
    // Nothing on stderr: the restart itself prints nothing (no warning from process.execve).
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, status: "completed", verified: true });
    if (canExecve) {
      expect(starts).toHaveLength(2);
      expect(starts[1]!.pid).toBe(starts[0]!.pid);
      expect(starts[0]!.execArgv).not.toEqual(expect.arrayContaining([...REEXEC_FLAGS]));
      expect(starts[1]!.execArgv).toEqual(expect.arrayContaining([...REEXEC_FLAGS]));
    } else {
      expect(starts).toHaveLength(1);
    }
  }, 120_000);

  it("doctor --fix runs its import in a restarted image with --expose-gc (its collections between batches then run)", async () => {
    const state = makeTempState("legacy-state");
    const { run, starts } = await runLogged(["doctor", "--fix", "--yes", "--no-backup", "--json"], state.env, state.root);
    expect(run.code, run.stderr).toBe(0);
    // Only the tool's own --no-backup warning: nothing from Node about the restart.
    expect(run.stderr).not.toContain("(node:");
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true });
    if (canExecve) {
      expect(starts.map((s) => s.pid)).toEqual([starts[0]!.pid, starts[0]!.pid]);
      expect(starts[0]!.execArgv).not.toContain("--expose-gc");
      expect(starts[1]!.execArgv).toEqual(expect.arrayContaining([...IMPORT_REEXEC_FLAGS]));
    } else {
      expect(starts).toHaveLength(1);
    }
    // A plain doctor (no --fix) starts once.
    const check = await runLogged(["doctor", "--json"], state.env, state.root);
    expect(check.starts).toHaveLength(1);
  }, 120_000);

  it("other commands, OPENCLAW_STATE_REEXEC=0 and a failing create keep their exit codes and run where they started", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const list = await runLogged(["backup", "list", "--json"], state.env, state.root);
    expect(list.run.code, list.run.stderr).toBe(0);
    expect(list.starts).toHaveLength(1);

    const off = await runLogged(["backup", "create", "--output", `${state.root}/out/`, "--json"], { ...state.env, OPENCLAW_STATE_REEXEC: "0" }, state.root);
    expect(off.run.code, off.run.stderr).toBe(0);
    expect(off.starts).toHaveLength(1);

    const missing = await runLogged(["backup", "create", "--json"], { ...state.env, OPENCLAW_STATE_DIR: path.join(state.root, "nowhere") }, state.root);
    expect(missing.run.code).toBe(1);
    expect(JSON.parse(missing.run.stdout)).toMatchObject({ ok: false, error: { code: "no_state" } });
    expect(missing.starts).toHaveLength(canExecve ? 2 : 1);
  }, 120_000);
});

describe("bin/openclaw-state.js with a Node binary the user cannot reach by its path", () => {
  // CI's Node 24 sits in a `mktemp -d` directory (mode 700, root's) and the permission tests run the binary as
  // `nobody` through setpriv: the process starts, but execve of process.execPath fails with EACCES, and Node aborts
  // on a failed execve (SIGABRT) instead of throwing. The import then has to run without the restart.
  it.runIf(asRoot)("doctor --fix runs in the process it started in and exits 0 (it was SIGABRT)", (ctx) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-private-node-"));
    try {
      const node = path.join(dir, "node");
      try {
        fs.linkSync(process.execPath, node);
      } catch {
        fs.copyFileSync(process.execPath, node);
        fs.chmodSync(node, 0o755);
      }
      const state = makeTempState("legacy-state");
      chownToNobody(state.root);
      const asNobody = (args: string[]) =>
        spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", node, ...args], { env: state.env, encoding: "utf8", timeout: 60_000 });
      // The situation itself: nobody runs this Node but cannot execute it again by its path.
      const probe = asNobody(["-e", "require('node:fs').accessSync(process.execPath, 1)"]);
      if (probe.status === null || probe.stderr.includes("setpriv:")) ctx.skip("setpriv cannot start Node as nobody here");
      expect(probe.stderr).toContain("EACCES");
      const run = asNobody([binPath, "doctor", "--fix", "--yes", "--no-backup", "--json"]);
      expect(run.signal, run.stderr).toBeNull();
      expect(run.status, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ ok: true });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
