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
import { resolveStatePaths } from "../../src/state/paths.js";
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
      // Restore keeps what it replaced: once the restored tree is in place, the old one is whole beside it.
      if (which === "restored") {
        const kept = fs.readdirSync(state.root).filter((n) => n.startsWith(`${path.basename(state.stateDir)}.pre-restore-`));
        expect(kept, `after ${outcomes.join(", ")}`).toHaveLength(1);
        expect(dirView(path.join(state.root, kept[0]!)), `kept copy after ${outcomes.join(", ")}`).toEqual(old);
      }
    }
    expect(outcomes.some((o) => o.startsWith("killed")), outcomes.join(", ")).toBe(true);
  });
});

describe("crash during backup prune", () => {
  it("every kill leaves only whole archives under their names, never an operator's copy or a kept one touched, and the re-run converges", async () => {
    const state = makeTempState("legacy-state");
    seedState(state, { agents: ["main"] });
    const out = path.join(state.root, "backups");
    const made: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const r = await runBin(["backup", "create", "--output", `${out}/`, "--json"], state.env);
      expect(r.code, r.stderr).toBe(0);
      made.push((JSON.parse(r.stdout) as { archivePath: string }).archivePath);
    }
    // An operator's renamed copy of the oldest archive: never ours to prune.
    const copy = path.join(out, "KEEP-before-upgrade.tar.gz");
    fs.copyFileSync(made[0]!, copy);
    const copyBytes = fs.readFileSync(copy);
    const newest = made.at(-1)!;
    const args = ["backup", "prune", "--dir", out, "--keep-last", "1", "--yes", "--json"];
    const t0 = Date.now();
    const dry = await runBin([...args, "--dry-run"], state.env);
    expect(dry.code, dry.stderr).toBe(0);
    const fullMs = Math.max(200, (Date.now() - t0) * 2);
    const pristine = path.join(state.root, "backups-pristine");
    execFileSync("cp", ["-a", out, pristine]);
    const rand = prng(Number(process.env.CRASH_SEED ?? 13));
    const outcomes: string[] = [];
    for (let i = 0; i < KILLS; i += 1) {
      // Each attempt starts from the same six archives and the copy (a killed prune's ledger rows may be gone:
      // identity then falls back to verifying each archive, the path a lost ledger takes too).
      fs.rmSync(out, { recursive: true, force: true });
      execFileSync("cp", ["-a", pristine, out]);
      // Early kills: prune deletes one archive after another, so the moments that matter are in its first half.
      const ms = Math.floor(50 + (rand() * fullMs) / 2);
      outcomes.push(`${await runAndKill(args, state.env, ms)}@${ms}`);
      for (const name of fs.readdirSync(out).filter((n) => ARCHIVE_NAME_PATTERN.test(n))) {
        expect((await verifyBackup(path.join(out, name))).ok, `${name} after ${outcomes.join(", ")}`).toBe(true);
      }
      expect(fs.existsSync(newest), `newest archive after ${outcomes.join(", ")}`).toBe(true);
      expect(fs.readFileSync(copy).equals(copyBytes), `operator's copy after ${outcomes.join(", ")}`).toBe(true);
    }
    expect(outcomes.some((o) => o.startsWith("killed")), outcomes.join(", ")).toBe(true);
    const last = await runBin(args, state.env);
    expect(last.code, last.stderr).toBe(0);
    expect(fs.readdirSync(out).filter((n) => ARCHIVE_NAME_PATTERN.test(n)).sort()).toEqual([path.basename(copy), path.basename(newest)].sort());
    const again = await runBin(args, state.env);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { removed: unknown[] }).removed).toEqual([]);
  });
});

/** What "the same state" means: every non-DB file byte for byte (with modes), every DB by canonical dump. */
function stateView(state: TempState): unknown {
  return dirView(state.stateDir);
}

function dirView(stateDir: string): unknown {
  const files = Object.entries(snapshotTree(stateDir)).filter(([rel]) => !/\.sqlite(-wal|-shm|-journal)?$/.test(rel));
  return JSON.stringify({ files, dbs: dumpState(resolveStatePaths({ stateDir, env: {} })) });
}
