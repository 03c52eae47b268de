// SIGKILL at random moments of `backup create` and `backup restore`: no partial archive published, state fully old or fully restored.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ARCHIVE_NAME_PATTERN } from "../../src/backup/compression.js";
import { prng } from "../../bench/legacy-corpus.mjs";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { addSessions, agentDb, seedState } from "../helpers/backup-state.js";
import { runAndKill } from "../helpers/crash.js";
import { dumpState } from "../helpers/migration.js";
import { makeTempState, runBin, snapshotTree, type TempState } from "../helpers/temp-state.js";

const KILLS = Number(process.env.RELIABILITY_BACKUP_KILLS ?? 6);

/** A state big enough (~8 MB of SQLite) that create and restore take long enough to be interrupted. */
function bigState(): TempState {
  const state = makeTempState("legacy-state");
  seedState(state, { agents: ["main", "ops"] });
  addSessions(agentDb(state, "main"), 1000, 2000, 10);
  addSessions(agentDb(state, "ops"), 1000, 1000, 10);
  return state;
}

async function timedRun(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = Date.now();
  const r = await runBin(args, env);
  expect(r.code, r.stderr).toBe(0);
  return Date.now() - t0;
}

describe("crash during backup create", () => {
  it("publishes only complete archives; leftovers never show in backup list, and the next run succeeds", async () => {
    const state = bigState();
    const out = path.join(state.root, "backups");
    const args = ["backup", "create", "--output", `${out}/`, "--json"];
    const fullMs = await timedRun(args, state.env);
    const rand = prng(Number(process.env.CRASH_SEED ?? 5));
    const outcomes: string[] = [];
    for (let i = 0; i < KILLS; i += 1) {
      const ms = Math.floor(100 + rand() * fullMs);
      outcomes.push(`${await runAndKill(args, state.env, ms)}@${ms}`);
      // Every file with an archive name is complete and verifies; partial data only ever lives under a temp name.
      for (const name of fs.readdirSync(out)) {
        const file = path.join(out, name);
        if (/\.tar\.gz$/.test(name)) expect((await verifyBackup(file)).ok, `${name} after ${outcomes.join(", ")}`).toBe(true);
        else expect(name, outcomes.join(", ")).toMatch(/^\.openclaw-backup-staging-\d+-/);
      }
    }
    expect(outcomes.some((o) => o.startsWith("killed")), outcomes.join(", ")).toBe(true);
    const list = await runBin(["backup", "list", "--dir", out, "--json"], state.env);
    expect(list.code, list.stderr).toBe(0);
    const archives = fs.readdirSync(out).filter((n) => ARCHIVE_NAME_PATTERN.test(n));
    const listed = JSON.parse(list.stdout) as { backups?: Array<{ archivePath: string; manifestOk: boolean }> };
    expect(listed.backups?.map((b) => path.basename(b.archivePath)).sort()).toEqual(archives.sort());
    expect(listed.backups?.every((b) => b.manifestOk)).toBe(true);
    expect(await timedRun(args, state.env)).toBeGreaterThan(0);
    // Stale staging dirs of killed runs are swept by the next create.
    expect(fs.readdirSync(out).filter((n) => !ARCHIVE_NAME_PATTERN.test(n))).toEqual([]);
  });
});

describe("crash during backup restore", () => {
  it("leaves the state dir fully old or fully restored after every kill", async () => {
    const state = bigState();
    const archive = path.join(state.root, "backups", "snap.tar.gz");
    await timedRun(["backup", "create", "--output", archive], state.env);
    // Change the live state so "old" and "restored" differ.
    addSessions(agentDb(state, "main"), 20_000, 500, 5);
    fs.writeFileSync(path.join(state.stateDir, "notes", "readme.md"), "# changed after the backup\n");
    const old = stateView(state);
    const oldCopy = path.join(state.root, "old-copy");
    execFileSync("cp", ["-a", state.stateDir, oldCopy]);

    // The fully restored tree, from an uninterrupted restore of the same archive.
    const args = ["backup", "restore", archive, "--yes", "--json"];
    const t0 = Date.now();
    const ref = await runBin(args, state.env);
    expect(ref.code, ref.stderr).toBe(0);
    const fullMs = Date.now() - t0;
    const restored = stateView(state);
    expect(restored).not.toEqual(old);

    const rand = prng(Number(process.env.CRASH_SEED ?? 9));
    const outcomes: string[] = [];
    for (let i = 0; i < KILLS; i += 1) {
      // Put the old state back (as a fresh copy) before each attempt.
      fs.rmSync(state.stateDir, { recursive: true, force: true });
      for (const n of fs.readdirSync(state.root)) if (n.includes(".pre-restore-") || n.includes(".restore-")) fs.rmSync(path.join(state.root, n), { recursive: true, force: true });
      execFileSync("cp", ["-a", oldCopy, state.stateDir]);
      expect(stateView(state)).toEqual(old);
      const ms = Math.floor(100 + rand() * fullMs);
      const outcome = await runAndKill(args, state.env, ms);
      outcomes.push(`${outcome}@${ms}`);
      const now = stateView(state);
      const which = now === old ? "old" : now === restored ? "restored" : "mixed";
      expect(which, `after ${outcomes.join(", ")}`).not.toBe("mixed");
    }
    expect(outcomes.some((o) => o.startsWith("killed")), outcomes.join(", ")).toBe(true);
  });
});

/** What "the same state" means: every non-DB file byte for byte (with modes), every DB by canonical dump. */
function stateView(state: TempState): unknown {
  const files = Object.entries(snapshotTree(state.stateDir)).filter(([rel]) => !/\.sqlite(-wal|-shm|-journal)?$/.test(rel));
  return JSON.stringify({ files, dbs: dumpState(state.paths) });
}
