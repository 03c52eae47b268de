// Hostile and fuzzed archives through the CLI: exit 1 with one clear line (never a stack trace), nothing written outside staging.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { prng } from "../../bench/legacy-corpus.mjs";
import { createBackup } from "../../src/backup/create-backup.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { seedState } from "../helpers/backup-state.js";
import { build, CASES, type Built } from "../helpers/hostile-archives.js";
import { fixturesDir, runBin, runInProcess, snapshotTree, type CliRun, type TempState } from "../helpers/temp-state.js";

const ITERATIONS = Number(process.env.RELIABILITY_FUZZ ?? 300);
const STACK = /\n\s+at .+:\d+:\d+|Unexpected failure|internal_error/;

function expectCleanFailure(run: CliRun, context: string): void {
  expect(run.code, `${context}: ${run.stdout}${run.stderr}`).toBe(1);
  expect(run.stdout + run.stderr, context).not.toMatch(STACK);
  // verify reports "✗ <archive> failed verification: …" on stdout; restore fails with "error: …" on stderr.
  expect(run.stdout + run.stderr, context).toMatch(/^(error: |✗ ).+/m);
}

describe("hostile and fuzzed archives", () => {
  let state: TempState;
  let built: Built;
  let dir: string;
  let targets: string;

  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-fuzz-"));
    const stateDir = path.join(root, ".openclaw");
    fs.cpSync(path.join(fixturesDir, "legacy-state"), stateDir, { recursive: true });
    const env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir };
    state = { root, stateDir, env, paths: resolveStatePaths({ env }) };
    seedState(state, { sessions: 30 });
    const result = await createBackup({ paths: state.paths });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-fuzz-archives-"));
    targets = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-fuzz-targets-"));
    const valid = path.join(dir, "valid.tar.gz");
    fs.renameSync(result.archivePath, valid);
    built = build(valid);
    return () => {
      for (const d of [root, dir, targets]) fs.rmSync(d, { recursive: true, force: true });
    };
  });

  it("the hostile set through the CLI (a few through the real binary): verify and restore exit 1 with one clear line, the state is unchanged", async () => {
    const before = snapshotTree(state.root);
    for (const [index, [name, expected, make]] of CASES.entries()) {
      const hostile = path.join(dir, `${name.replace(/\W+/g, "-")}.tar.gz`);
      make(built, hostile);
      // Every fifth case spawns the binary (real stderr); the rest run in-process (same error mapping, faster).
      const cli = index % 5 === 0 ? runBin : runInProcess;
      const verify = await cli(["backup", "verify", hostile], state.env);
      expectCleanFailure(verify, `verify ${name}`);
      const restore = await cli(["backup", "restore", hostile, "--yes"], state.env);
      expectCleanFailure(restore, `restore ${name}`);
      expect(restore.stderr, name).toMatch(expected);
      expect(snapshotTree(state.root), name).toEqual(before);
    }
  }, 120_000);

  it(`${ITERATIONS} seeded mutations (byte flips, truncations, zeroed and repeated ranges): no crash, no write outside staging`, async () => {
    const seed = Number(process.env.FUZZ_SEED ?? 1234);
    const rand = prng(seed);
    const valid = fs.readFileSync(built.valid);
    const before = snapshotTree(state.root);
    let refused = 0;
    for (let i = 0; i < ITERATIONS; i += 1) {
      const bytes = Buffer.from(valid);
      const kind = Math.floor(rand() * 4);
      const at = Math.floor(rand() * bytes.length);
      let mutated: Buffer;
      if (kind === 0) {
        for (let k = 0; k < 1 + Math.floor(rand() * 4); k += 1) {
          const p = Math.floor(rand() * bytes.length);
          bytes[p] = bytes[p]! ^ (1 + Math.floor(rand() * 255));
        }
        mutated = bytes;
      } else if (kind === 1) mutated = bytes.subarray(0, at);
      else if (kind === 2) mutated = bytes.fill(0, at, Math.min(bytes.length, at + 1 + Math.floor(rand() * 512)));
      else mutated = Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.max(0, at - 256), at), bytes.subarray(at)]);
      const file = path.join(dir, `fuzz-${i}.tar.gz`);
      fs.writeFileSync(file, mutated);
      const context = `seed ${seed} iteration ${i} (mutation ${kind} at ${at})`;
      const verify = await runInProcess(["backup", "verify", file], state.env);
      expect([0, 1], `${context}: ${verify.stderr}`).toContain(verify.code);
      expect(verify.stdout + verify.stderr, context).not.toMatch(STACK);
      const target = path.join(targets, `t-${i}`);
      // Restore (which verifies while extracting) runs on every accepted archive and every other refused one.
      const tryRestore = verify.code === 0 || i % 2 === 0;
      const restore = tryRestore ? await runInProcess(["backup", "restore", file, "--yes", "--target", target], state.env) : null;
      if (restore) expect(restore.stdout + restore.stderr, context).not.toMatch(STACK);
      if (verify.code === 1) {
        refused += 1;
        if (restore) expectCleanFailure(restore, context);
        expect(fs.existsSync(target), context).toBe(false);
        // Every tenth refused archive also goes at the live paths: still refused, the state untouched.
        if (refused % 10 === 0) {
          const inPlace = await runInProcess(["backup", "restore", file, "--yes"], state.env);
          expectCleanFailure(inPlace, `${context} (in place)`);
        }
      } else {
        expect(restore?.code, `${context}: ${restore?.stderr}`).toBe(0);
        fs.rmSync(target, { recursive: true, force: true });
      }
      // Nothing left beside the targets (staging siblings removed), nothing changed in the state.
      expect(fs.readdirSync(targets), context).toEqual([]);
      fs.rmSync(file);
    }
    expect(snapshotTree(state.root)).toEqual(before);
    expect(refused).toBeGreaterThan(ITERATIONS * 0.8);
  }, 180_000);
});
