// Crash loop (SPEC §11): 20 SIGKILLs at random moments of `doctor --fix`, re-runs after each; the result equals an uninterrupted run.
import { describe, expect, it } from "vitest";
import { prng } from "../../bench/legacy-corpus.mjs";
import { resolveStatePaths } from "../../src/state/paths.js";
import { assertNothingRetiredWithoutRows, leftInPlace, legacyCorpusState, retiredNames, runAndKill } from "../helpers/crash.js";
import { dumpState } from "../helpers/migration.js";
import { runBin } from "../helpers/temp-state.js";

const AGENTS = ["main", "ops", "support"];
// 3 agents × 100 sessions + 3 indexes + truncated/corrupt extras: a few hundred sources.
const CORPUS = { agents: AGENTS, sessionsPerAgent: 100, linesPerSession: 25, meanLineBytes: 400, seed: 11, extras: ["truncated", "corrupt"] as Array<"truncated" | "corrupt">, mtime: Date.UTC(2026, 0, 3) };
const ARGS = ["doctor", "--fix", "--yes", "--no-backup", "--json"];
const KILLS = Number(process.env.RELIABILITY_KILLS ?? 20);

type Dump = ReturnType<typeof dumpState>;

/** "db table: N rows vs M expected" for every table whose rows differ. */
function differingTables(got: Dump, expected: Dump): string {
  const out: string[] = [];
  for (const db of new Set([...Object.keys(got), ...Object.keys(expected)])) {
    for (const table of new Set([...Object.keys(got[db] ?? {}), ...Object.keys(expected[db] ?? {})])) {
      const g = got[db]?.[table] ?? [];
      const e = expected[db]?.[table] ?? [];
      if (JSON.stringify(g) !== JSON.stringify(e)) out.push(`${db} ${table}: ${g.length} rows vs ${e.length} expected`);
    }
  }
  return out.join("; ") || "no table differs";
}

/** v1 transcript ids hash the file's absolute path (as OpenClaw's do): two state dirs give two 16-hex prefixes. */
function withoutV1Prefixes<T>(dump: T): T {
  return JSON.parse(JSON.stringify(dump).replace(/\b[0-9a-f]{16}-(?=[0-9a-z]+\b)/g, "<v1>-")) as T;
}

describe("crash loop: doctor --fix", () => {
  it(`${KILLS} SIGKILLs at random moments, each followed by a re-run: same tables, nothing retired without its rows, the ledger converges`, async () => {
    const reference = legacyCorpusState(CORPUS);
    const t0 = Date.now();
    const ref = await runBin(ARGS, reference.env);
    const fullMs = Date.now() - t0;
    // The corrupt extras fail by design: a run with a failed source exits 1 (partial success is not success).
    expect(ref.code, ref.stderr).toBe(1);
    const failed = JSON.parse(ref.stdout).migration.run.totals.failed as number;
    expect(failed).toBeGreaterThan(0);
    const expected = withoutV1Prefixes(dumpState(resolveStatePaths({ env: reference.env })));
    expect(expected["agents/main"]?.transcript_events?.length).toBeGreaterThan(1000);

    const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
    const rand = prng(seed);
    const log: string[] = [];
    let kills = 0;
    let corpora = 0;
    // A run that finishes before its kill leaves nothing to interrupt: check it, then start over on a fresh corpus.
    while (kills < KILLS && corpora < KILLS) {
      corpora += 1;
      const crashed = legacyCorpusState(CORPUS);
      for (let attempt = 0; attempt < KILLS * 2 && kills < KILLS; attempt += 1) {
        // Within the first ~60% of an uninterrupted run (timed under the same load), so most attempts land mid-run.
        const ms = Math.floor(120 + rand() * fullMs * 0.6);
        const outcome = await runAndKill(ARGS, crashed.env, ms);
        log.push(`corpus ${corpora}: ${outcome} at ${ms} ms`);
        assertNothingRetiredWithoutRows(crashed.stateDir);
        if (outcome !== "killed") {
          expect(outcome, log.join("; ")).toBe(1);
          break;
        }
        kills += 1;
      }
      const context = `seed ${seed}: ${log.join("; ")}`;
      const final = await runBin(ARGS, crashed.env);
      expect(final.code, `${context}: ${final.stderr}`).toBe(1);
      expect(JSON.parse(final.stdout).migration.run.totals.failed, context).toBe(failed);
      const paths = resolveStatePaths({ env: crashed.env });
      const got = withoutV1Prefixes(dumpState(paths));
      // vitest cannot show a diff this large ("no visual difference"): name the tables that differ.
      expect(got, `${context}: ${differingTables(got, expected)}`).toEqual(expected);
      expect(assertNothingRetiredWithoutRows(crashed.stateDir)).toBe(assertNothingRetiredWithoutRows(reference.stateDir));
      expect(retiredNames(crashed.stateDir)).toEqual(retiredNames(reference.stateDir));
      expect(leftInPlace(crashed.stateDir, AGENTS)).toEqual(leftInPlace(reference.stateDir, AGENTS));
      // Converged: one more run imports nothing and changes no table.
      const again = await runBin(ARGS, crashed.env);
      expect(again.code, again.stderr).toBe(1);
      const run = JSON.parse(again.stdout).migration?.run as { totals?: { imported?: number } } | undefined;
      expect(run?.totals?.imported ?? 0, context).toBe(0);
      expect(withoutV1Prefixes(dumpState(paths)), context).toEqual(expected);
    }
    expect(kills, log.join("; ")).toBe(KILLS);
  }, 240_000);
});
