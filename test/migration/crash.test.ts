// SIGKILL at random moments of `doctor --fix` on a few hundred sources, then re-run: the same final databases.
import { describe, expect, it } from "vitest";
import { prng } from "../../bench/legacy-corpus.mjs";
import { resolveStatePaths } from "../../src/state/paths.js";
import { assertNothingRetiredWithoutRows, leftInPlace, legacyCorpusState, retiredNames, runAndKill } from "../helpers/crash.js";
import { runBin } from "../helpers/temp-state.js";
import { dumpState } from "../helpers/migration.js";

const CORPUS = { agents: ["main", "ops"], sessionsPerAgent: 150, linesPerSession: 30, meanLineBytes: 500, seed: 7, extras: ["truncated", "corrupt"] as Array<"truncated" | "corrupt">, mtime: Date.UTC(2026, 0, 2) };
const ARGS = ["doctor", "--fix", "--yes", "--no-backup", "--json"];
// runBin spawns the compiled binary of this very tree: test/global-setup.ts builds dist/ once, before any test.

/** v1 transcript ids hash the file's absolute path (as OpenClaw's do): the two state dirs give two 16-hex prefixes. */
function withoutV1Prefixes(dump: unknown): unknown {
  return JSON.parse(JSON.stringify(dump).replace(/\b[0-9a-f]{16}-(?=[0-9a-z]+\b)/g, "<v1>-")) as unknown;
}

function corpus(): { env: NodeJS.ProcessEnv; stateDir: string } {
  return legacyCorpusState(CORPUS);
}

describe("crash safety", () => {
  it("kill -9 at random moments, re-run: identical databases, nothing retired without its rows", async () => {
    const reference = corpus();
    const t0 = Date.now();
    const ref = await runBin(ARGS, reference.env);
    const fullMs = Date.now() - t0;
    expect(ref.code).toBe(1); // the corrupt files fail and stay, by design: exit 1
    expect(JSON.parse(ref.stdout).migration.run.status).toBe("warning");
    const expected = withoutV1Prefixes(dumpState(resolveStatePaths({ env: reference.env })));

    const crashed = corpus();
    const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
    const rand = prng(seed);
    const kills: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      // Within the first half of an uninterrupted run: each kill lands mid-run, and later runs have less left.
      const ms = Math.floor(150 + rand() * fullMs * 0.5);
      const outcome = await runAndKill(ARGS, crashed.env, ms);
      kills.push(outcome === "killed" ? ms : -ms);
      const retired = assertNothingRetiredWithoutRows(crashed.stateDir);
      if (process.env.CRASH_DEBUG) console.log(`kill ${i}: ${outcome} after ${ms} ms, ${retired} retired so far`);
    }
    expect(kills.filter((k) => k > 0).length, "at least one run must really be killed").toBeGreaterThan(0);
    const final = await runBin(ARGS, crashed.env);
    expect(final.code, `seed ${seed}, kills ${kills.join(",")}: ${final.stderr}`).toBe(1);
    expect(JSON.parse(final.stdout).migration.run.totals.failed, final.stderr).toBe(JSON.parse(ref.stdout).migration.run.totals.failed);
    expect(withoutV1Prefixes(dumpState(resolveStatePaths({ env: crashed.env }))), `seed ${seed}, kills at ${kills.join(", ")} ms`).toEqual(expected);
    expect(assertNothingRetiredWithoutRows(crashed.stateDir)).toBe(assertNothingRetiredWithoutRows(reference.stateDir));
    expect(retiredNames(crashed.stateDir)).toEqual(retiredNames(reference.stateDir));
    expect(leftInPlace(crashed.stateDir, CORPUS.agents)).toEqual(leftInPlace(reference.stateDir, CORPUS.agents));
  }, 120_000);
});
