// The state lock for mutating commands: a SQLite write lock held past the busy timeout is exit 75 naming the
// holder (reset and restore included); before the global DB exists the <stateDir>.lock file is the lock.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ARCHIVE_NAME_PATTERN } from "../../src/backup/compression.js";
import { acquireBootstrapLock, bootstrapLockPath, readBootstrapLock } from "../../src/state/bootstrap-lock.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { nextLine } from "../helpers/crash.js";
import { makeTempDir, makeTempState, repoRoot, runBin, runInProcess, snapshotTree } from "../helpers/temp-state.js";

const sqliteModule = createRequire(import.meta.url).resolve("better-sqlite3");

// Holds BEGIN IMMEDIATE on argv[3] until killed.
const SQLITE_LOCKER = `
const Database = require(process.argv[2]);
const db = new Database(process.argv[3]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("locked\\n");
setInterval(() => {}, 1000);
`;

// Takes the bootstrap lock file of state dir argv[2] through the compiled module, then waits until killed.
const FILE_LOCKER = `
import(process.argv[3]).then(({ acquireBootstrapLock }) => {
  acquireBootstrapLock(process.argv[2], { command: "doctor --fix" });
  process.stdout.write("locked\\n");
  setInterval(() => {}, 1000);
});
`;

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function start(source: string, args: string[]): ChildProcessWithoutNullStreams {
  const script = path.join(makeTempDir(), "script.cjs");
  fs.writeFileSync(script, source);
  const child = spawn(process.execPath, [script, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  return child;
}

describe("a SQLite write lock held past the busy timeout", () => {
  it("reset, restore and doctor --fix exit 75 naming the holder's pid; nothing changes", async () => {
    const { env, paths, stateDir } = makeTempState("legacy-state");
    expect((await runInProcess(["doctor", "--fix", "--yes"], env)).code).toBe(0);
    const archive = path.join(paths.backupDir, fs.readdirSync(paths.backupDir).find((n) => ARCHIVE_NAME_PATTERN.test(n))!);
    const locker = start(SQLITE_LOCKER, [sqliteModule, paths.globalDbPath]);
    expect(await nextLine(locker)).toBe("locked");
    const fast = { ...env, OPENCLAW_STATE_BUSY_TIMEOUT_MS: "300" };
    // Something for doctor --fix to repair, so it needs the lease.
    fs.chmodSync(paths.configPath, 0o644);
    const tree = snapshotTree(stateDir);
    for (const args of [["reset", "--scope", "config", "--yes"], ["backup", "restore", archive, "--yes"], ["doctor", "--fix", "--yes"]]) {
      const run = await runBin(args, fast);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(75);
      expect(run.stderr).toMatch(/locked by another process/);
      if (fs.existsSync("/proc/locks")) expect(run.stderr).toContain(`pid ${locker.pid}`);
      expect(run.stderr).not.toMatch(/Unexpected failure|\n\s+at .+:\d+:\d+/);
      const json = await runBin([...args, "--json"], fast);
      expect(json.code).toBe(75);
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "state_locked" } });
    }
    locker.kill("SIGKILL");
    expect(snapshotTree(stateDir)).toEqual(tree);
  });
});

describe("the lock before the global DB exists", () => {
  it("a live holder of <stateDir>.lock makes doctor --fix, restore and reset exit 75 naming it; --force goes on", async () => {
    const { env, paths, stateDir } = makeTempState("legacy-state");
    // An archive of this state to restore from, taken before anything created a global DB.
    const backup = await runInProcess(["backup", "create", "--json"], env);
    expect(backup.code, backup.stderr).toBe(0);
    const archive = JSON.parse(backup.stdout).archivePath as string;
    expect(fs.existsSync(paths.globalDbPath)).toBe(false);

    const holder = start(FILE_LOCKER, [stateDir, path.join(repoRoot, "dist", "state", "bootstrap-lock.js")]);
    expect(await nextLine(holder)).toBe("locked");
    expect(readBootstrapLock(stateDir)).toMatchObject({ live: true, pid: holder.pid, mine: false });
    const tree = snapshotTree(stateDir);
    for (const args of [["doctor", "--fix", "--yes", "--no-backup"], ["backup", "restore", archive, "--yes"], ["reset", "--scope", "config", "--yes"]]) {
      const run = await runInProcess(args, env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(75);
      expect(run.stderr).toMatch(new RegExp(`locked by \`doctor --fix\` \\(pid ${holder.pid}`));
      expect(run.stderr).toContain(bootstrapLockPath(stateDir));
    }
    expect(snapshotTree(stateDir)).toEqual(tree);
    // A global DB that appears meanwhile (a restore bringing one in): the lease honours the live lock file too.
    openGlobalDatabase(paths, { mode: "write", create: true }).close();
    const withDb = await runInProcess(["reset", "--scope", "config", "--yes"], env);
    expect(withDb.code, withDb.stderr).toBe(75);
    expect(withDb.stderr).toContain(bootstrapLockPath(stateDir));
    // --force goes on regardless.
    const forced = await runInProcess(["reset", "--scope", "config", "--yes", "--force"], env);
    expect(forced.code, forced.stderr).toBe(0);
    holder.kill("SIGKILL");
  });

  it("doctor --fix on a fresh state holds the lock file while it works and removes it when done", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(fs.existsSync(bootstrapLockPath(stateDir))).toBe(false);
  });

  it("a dead holder's lock file is taken over; a reset of a legacy-only state removes its lock when done", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    fs.writeFileSync(bootstrapLockPath(stateDir), JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import("node:os")).hostname(), command: "crashed", startedAt: 1 }));
    expect(readBootstrapLock(stateDir)?.live).toBe(false);
    const run = await runInProcess(["reset", "--scope", "config", "--yes"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(fs.existsSync(bootstrapLockPath(stateDir))).toBe(false);
  });

  it("acquireBootstrapLock: null where the parent dir does not exist; release only removes its own file", () => {
    const root = makeTempDir();
    expect(acquireBootstrapLock(path.join(root, "missing", "state"), { command: "x" })).toBeNull();
    const lock = acquireBootstrapLock(path.join(root, "state"), { command: "x" })!;
    expect(fs.statSync(lock.path).mode & 0o777).toBe(0o600);
    lock.release();
    expect(fs.existsSync(lock.path)).toBe(false);
  });
});
