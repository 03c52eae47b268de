// A reader that goes away (`| head`, a closed pipe) ends the command quietly: no EPIPE stack trace, no hang,
// the command's own exit code. Through the real binary, repeated: the crash used to show in ~2 of 5 runs.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveStatePaths } from "../../src/state/paths.js";
import { appendTranscript, seedSessions } from "../helpers/seed-sessions.js";
import { migrate } from "../helpers/migration.js";
import { binPath, fixturesDir, runInProcess } from "../helpers/temp-state.js";

// One seeded state for the whole file (makeTempState's dirs are removed after each test).
let state: { root: string; env: NodeJS.ProcessEnv; paths: ReturnType<typeof resolveStatePaths> };

afterAll(() => fs.rmSync(state.root, { recursive: true, force: true }));

beforeAll(async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-pipe-"));
  fs.cpSync(path.join(fixturesDir, "legacy-state"), path.join(root, ".openclaw"), { recursive: true });
  const env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: path.join(root, ".openclaw") };
  state = { root, env, paths: resolveStatePaths({ env }) };
  // The importers' design-v1 state (an earlier openclaw-state's output), where the seeding helpers write their rows.
  await migrate(state.paths);
  const now = Date.now();
  seedSessions(state.paths, "main", Array.from({ length: 3000 }, (_, i) => ({ sessionId: `p-${i}`, key: `agent:main:pipe:${i}`, updatedAt: now - i * 1000 })));
  appendTranscript(state.paths, "main", "p-0", Array.from({ length: 400 }, (_, i) => ({ type: "message", id: `m${i}`, message: { role: "user", content: `line ${i} ${"x".repeat(200)}` } })));
}, 120_000);

const COMMANDS = [
  ["doctor", "--verbose"],
  ["inspect", "--verbose"],
  ["migrate", "history", "--verbose"],
  ["backup", "list"],
  ["sessions", "show", "agent:main:pipe:0", "--events", "400"],
  ["sessions", "list", "--limit", "all"],
  ["sessions", "list", "--limit", "all", "--json"],
];

/** Spawns the binary and closes our end of its stdout at once (before it writes) or after the first chunk. */
function runClosed(args: string[], when: "at-start" | "after-first-chunk"): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binPath, ...args], { env: state.env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    if (when === "at-start") child.stdout.destroy();
    else child.stdout.once("data", () => child.stdout.destroy());
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("stdout closed by the reader", () => {
  for (const args of COMMANDS) {
    it(`${args.join(" ")}: ends quietly, exit 0, 2 × 2 runs`, async () => {
      for (let i = 0; i < 2; i += 1) {
        for (const when of ["at-start", "after-first-chunk"] as const) {
          const run = await runClosed(args, when);
          expect(run.stderr, `${when} #${i}`).not.toMatch(/EPIPE|Unhandled|\n\s+at .+:\d+:\d+/);
          expect(run.code, `${when} #${i}: ${run.stderr}`).toBe(0);
        }
      }
    }, 120_000);
  }

  it("`| head -1` in a shell with pipefail: the tool's own status is 0 and nothing reaches stderr", () => {
    for (const args of [["doctor", "--verbose"], ["sessions", "list", "--limit", "all"]]) {
      const cmd = `set -o pipefail; ${JSON.stringify(process.execPath)} ${JSON.stringify(binPath)} ${args.join(" ")} | head -1 >/dev/null`;
      for (let i = 0; i < 3; i += 1) {
        const run = spawnSync("bash", ["-c", cmd], { env: state.env, encoding: "utf8" });
        expect(run.stderr).toBe("");
        expect(run.status).toBe(0);
      }
    }
  });
});
