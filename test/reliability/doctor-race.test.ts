// Two `doctor --fix` at once, made deterministic: the second plans while the first is mid-run (or finishes before it locks).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runDoctor } from "../../src/doctor/run-doctor.js";
import { acquireBootstrapLock, bootstrapLockPath } from "../../src/state/bootstrap-lock.js";
import type { DoctorCheck } from "../../src/doctor/types.js";
import { readDatabaseFormat } from "../../src/state/state-databases.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { ExitCode, isOpenclawStateError } from "../../src/core/errors.js";
import { legacyCorpusState } from "../helpers/crash.js";
import { dumpState } from "../helpers/migration.js";
import { runBin, snapshotTree } from "../helpers/temp-state.js";

const CORPUS = { agents: ["main", "ops"], sessionsPerAgent: 6, linesPerSession: 8, meanLineBytes: 200, seed: 31, mtime: Date.UTC(2026, 0, 6) };
const FIX = ["doctor", "--fix", "--yes", "--no-backup", "--json"];

/** v1 transcript ids hash the file's absolute path (as OpenClaw's do): two state dirs give two 16-hex prefixes. */
function withoutV1Prefixes<T>(dump: T): T {
  return JSON.parse(JSON.stringify(dump).replace(/\b[0-9a-f]{16}-(?=[0-9a-z]+\b)/g, "<v1>-")) as T;
}

async function singleRun(): Promise<unknown> {
  const reference = legacyCorpusState(CORPUS, "ocs-race-ref-");
  const ref = await runBin(FIX, reference.env);
  expect(ref.code, ref.stderr).toBe(0);
  return withoutV1Prefixes(dumpState(resolveStatePaths({ env: reference.env })));
}

function sessionsTrees(stateDir: string): unknown {
  return CORPUS.agents.map((a) => snapshotTree(path.join(stateDir, "agents", a, "sessions")));
}

describe("doctor --fix racing another doctor --fix", () => {
  it("planning while the other run is creating the global DB (lock file held, schema not committed): exit 75 'locked', never internal_error", async () => {
    const expected = await singleRun();
    const state = legacyCorpusState(CORPUS, "ocs-race-");
    const paths = resolveStatePaths({ env: state.env });
    const legacyBefore = sessionsTrees(state.stateDir);
    // Process A's exact moment (run-doctor → openLeaseDatabase → openDatabase/applySchema): it holds <stateDir>.lock,
    // has created state/openclaw.sqlite and is inside the schema transaction. This test process plays A.
    const lock = acquireBootstrapLock(paths.stateDir, { command: "doctor --fix" });
    expect(lock).not.toBeNull();
    fs.mkdirSync(path.dirname(paths.globalDbPath), { recursive: true, mode: 0o700 });
    const a = new Database(paths.globalDbPath);
    try {
      a.pragma("journal_mode = WAL");
      a.exec("BEGIN IMMEDIATE; CREATE TABLE schema_meta (meta_key TEXT PRIMARY KEY);");
      expect(readDatabaseFormat(paths.globalDbPath, "global").format?.id).toBe("new");

      const b = await runBin(FIX, { ...state.env, OPENCLAW_STATE_BUSY_TIMEOUT_MS: "500" });
      const said = b.stdout + b.stderr;
      expect(said).not.toMatch(/internal_error|no such table/);
      expect(b.code, said).toBe(ExitCode.locked);
      expect(said).toMatch(/locked/i);
      // B changed nothing: the legacy files are where they were, A's half-made DB is still A's.
      expect(sessionsTrees(state.stateDir)).toEqual(legacyBefore);
    } finally {
      a.exec("ROLLBACK");
      a.close();
      lock!.release();
    }
    // A rolled back before its schema committed (nothing of it is left); B, told to retry, then does the whole job.
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(paths.globalDbPath + suffix, { force: true });
    const rerun = await runBin(FIX, state.env);
    expect(rerun.code, rerun.stdout.slice(0, 3000) + rerun.stderr).toBe(0);
    expect(withoutV1Prefixes(dumpState(paths))).toEqual(expected);
  });

  it("a run that planned before the other one finished (import and format upgrade) exits 75 once it holds the lease, and changes nothing", async () => {
    const expected = await singleRun();
    const state = legacyCorpusState(CORPUS, "ocs-race-late-");
    const paths = resolveStatePaths({ env: state.env });
    let other: Awaited<ReturnType<typeof runBin>> | undefined;
    let outcome: unknown;
    try {
      outcome = await runDoctor({
        paths,
        fix: true,
        migration: { backup: false },
        // Called after B's unlocked plan and before B takes any lock: process A runs from start to end right here.
        confirm: async () => {
          other = await runBin(FIX, state.env);
          return true;
        },
      });
    } catch (error) {
      outcome = error;
    }
    expect(other?.code, other?.stderr).toBe(0);
    const afterA = withoutV1Prefixes(dumpState(paths));
    expect(afterA).toEqual(expected);
    // B planned an import into design-v1 databases that A has since imported and rewritten in OpenClaw's format.
    expect(isOpenclawStateError(outcome), JSON.stringify((outcome as { repairs?: unknown }).repairs ?? String(outcome))).toBe(true);
    const error = outcome as { exitCode: number; code: string; message: string };
    expect(error.exitCode, error.message).toBe(ExitCode.locked);
    expect(error.message).toMatch(/changed by another process/i);
    expect(withoutV1Prefixes(dumpState(paths))).toEqual(afterA);
    // And the retry B was told to make finds nothing left to do.
    const retry = await runBin(FIX, state.env);
    expect(retry.code, retry.stdout.slice(0, 3000) + retry.stderr).toBe(0);
    expect(withoutV1Prefixes(dumpState(paths))).toEqual(expected);
  });
});

describe("doctor --fix: an unlocked read that breaks", () => {
  const failing = (before: () => void): DoctorCheck => ({
    id: "reads-state",
    run() {
      before();
      throw new Error("no such table: migration_sources");
    },
  });

  async function fixWith(check: DoctorCheck, stateDir: string): Promise<unknown> {
    try {
      return await runDoctor({ paths: resolveStatePaths({ env: { HOME: path.dirname(stateDir), OPENCLAW_STATE_DIR: stateDir } }), fix: true, checks: [check] });
    } catch (error) {
      return error;
    }
  }

  it("because another process created or swapped a database meanwhile: exit 75, the change named", async () => {
    const state = legacyCorpusState(CORPUS, "ocs-race-read-");
    const agentDb = path.join(state.stateDir, "agents", "main", "agent", "openclaw-agent.sqlite");
    const error = (await fixWith(failing(() => {
      fs.mkdirSync(path.dirname(agentDb), { recursive: true });
      new Database(agentDb).close();
    }), state.stateDir)) as { exitCode?: number; message?: string };
    expect(error.exitCode, error.message).toBe(ExitCode.locked);
    expect(error.message).toMatch(/locked or was just changed by another process: agents\/main\/agent\/openclaw-agent\.sqlite was created/);
  });

  it("while another live process holds the state's lock file: exit 75 naming it", async () => {
    const state = legacyCorpusState(CORPUS, "ocs-race-held-");
    const lockFile = bootstrapLockPath(state.stateDir);
    fs.writeFileSync(lockFile, JSON.stringify({ pid: process.ppid, host: os.hostname(), startedAt: Date.now(), command: "migrate upgrade" }), { mode: 0o600 });
    try {
      const error = (await fixWith(failing(() => {}), state.stateDir)) as { exitCode?: number; message?: string };
      expect(error.exitCode, error.message).toBe(ExitCode.locked);
      expect(error.message).toMatch(/State is locked by `migrate upgrade`.*no such table: migration_sources/);
    } finally {
      fs.rmSync(lockFile, { force: true });
    }
  });

  it("with nothing else going on: the error stands as it is (a bug here is not hidden as 'locked')", async () => {
    const state = legacyCorpusState(CORPUS, "ocs-race-bug-");
    const error = await fixWith(failing(() => {}), state.stateDir);
    expect(isOpenclawStateError(error)).toBe(false);
    expect((error as Error).message).toBe("no such table: migration_sources");
  });
});

describe("doctor --fix after a run killed between creating the global DB and committing its schema", () => {
  it("an empty global DB is a new state: the import runs and the state still ends in OpenClaw's format", async () => {
    const state = legacyCorpusState(CORPUS, "ocs-empty-global-");
    const paths = resolveStatePaths({ env: state.env });
    fs.mkdirSync(path.dirname(paths.globalDbPath), { recursive: true });
    fs.writeFileSync(paths.globalDbPath, "");
    const run = await runBin(FIX, state.env);
    expect(run.code, `${run.stdout.slice(0, 2000)} ${run.stderr}`).toBe(0);
    const repairs = (JSON.parse(run.stdout) as { repairs?: Array<{ id: string; status: string }> }).repairs ?? [];
    expect(repairs.find((r) => r.id === "format.upgrade")?.status).toBe("applied");
    expect(readDatabaseFormat(paths.globalDbPath, "global").format).toMatchObject({ id: "openclaw", current: true });
  }, 120_000);
});
