// A state on a read-only filesystem (a real read-only bind mount in a private mount namespace: chmod does not
// stop root): read commands work, doctor names the cause instead of "restore from a backup", and commands
// that must write say "read-only filesystem" instead of "Unexpected failure" or ENOENT.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { migrate } from "../helpers/migration.js";
import { describe, expect, it } from "vitest";
import { ARCHIVE_NAME_PATTERN } from "../../src/backup/compression.js";
import { agentDbPath } from "../../src/state/paths.js";
import { seedSessions } from "../helpers/seed-sessions.js";
import { binPath, makeTempDir, makeTempState, runInProcess } from "../helpers/temp-state.js";

/** `unshare -rm` (user + mount namespace) lets the test bind-mount read-only as any user, root included. */
function readOnlyMountsWork(): boolean {
  const dir = makeTempDirUntracked();
  const run = spawnSync("unshare", ["-rm", "sh", "-c", `mount --bind "${dir}" "${dir}" && mount -o remount,bind,ro "${dir}" && ! touch "${dir}/x" 2>/dev/null`], { encoding: "utf8" });
  fs.rmSync(dir, { recursive: true, force: true });
  return run.status === 0;
}

function makeTempDirUntracked(): string {
  return fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "ocs-ro-probe-"));
}

const CAN_MOUNT = readOnlyMountsWork();

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs each command against `root` mounted read-only; outputs go to a writable dir outside it. */
function runReadOnly<K extends string>(root: string, env: NodeJS.ProcessEnv, named: Record<K, string[]>): Record<K, Ran> {
  const out = makeTempDir("ocs-ro-out-");
  const keys = Object.keys(named) as K[];
  const commands = keys.map((k) => named[k]);
  const lines = commands.map((args, i) => {
    const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
    return `"${process.execPath}" "${binPath}" ${quoted} >"${out}/${i}.out" 2>"${out}/${i}.err"; echo $? >"${out}/${i}.code"`;
  });
  const script = [`set -e`, `mount --bind "${root}" "${root}"`, `mount -o remount,bind,ro "${root}"`, `set +e`, ...lines].join("\n");
  const run = spawnSync("unshare", ["-rm", "bash", "-c", script], { env, encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  const result = {} as Record<K, Ran>;
  keys.forEach((k, i) => {
    result[k] = {
      code: Number(fs.readFileSync(path.join(out, `${i}.code`), "utf8").trim()),
      stdout: fs.readFileSync(path.join(out, `${i}.out`), "utf8"),
      stderr: fs.readFileSync(path.join(out, `${i}.err`), "utf8"),
    };
  });
  return result;
}

/** Leaves a committed row only in the -wal, with no -shm beside it (what a crash on a now read-only disk leaves). */
function walOnlyRow(file: string): void {
  const handle = new Database(file);
  handle.pragma("wal_autocheckpoint = 0");
  const now = Date.now();
  handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES ('s-wal', 'agent:main:only-in-wal', 'conversation', ?, ?)").run(now, now);
  const wal = fs.readFileSync(`${file}-wal`);
  const main = fs.readFileSync(file);
  handle.close();
  fs.writeFileSync(file, main);
  fs.writeFileSync(`${file}-wal`, wal, { mode: 0o600 });
  fs.rmSync(`${file}-shm`, { force: true });
}

describe.skipIf(!CAN_MOUNT)("a state on a read-only filesystem", () => {
  it("read commands work, doctor names the cause, writers say read-only filesystem", async () => {
    const { env, root, paths } = makeTempState("legacy-state");
    // An earlier openclaw-state's output (design-v1, with its pre-migration archive): the rows below are written in it.
    await migrate(paths, { backup: true });
    seedSessions(paths, "main", [{ sessionId: "s-ro", key: "agent:main:ro", updatedAt: Date.now() }]);
    walOnlyRow(agentDbPath(paths, "main"));
    const archive = fs.readdirSync(paths.backupDir).find((n) => ARCHIVE_NAME_PATTERN.test(n))!;

    const { doctor, inspect, list, show, history, plan, backups, verify, create, reset, restore } = runReadOnly(root, env, {
      doctor: ["doctor"],
      inspect: ["inspect", "--check"],
      list: ["sessions", "list", "--json"],
      show: ["sessions", "show", "agent:main:only-in-wal"],
      history: ["migrate", "history"],
      plan: ["migrate", "plan"],
      backups: ["backup", "list"],
      verify: ["backup", "verify", path.join(paths.backupDir, archive)],
      create: ["backup", "create"],
      reset: ["reset", "--scope", "config", "--yes"],
      restore: ["backup", "restore", path.join(paths.backupDir, archive), "--yes"],
    });
    for (const [label, r] of Object.entries({ doctor, inspect, list, show, history, plan, backups, verify })) {
      expect(r.code, `${label}: ${r.stdout}${r.stderr}`).toBe(0);
    }
    expect(doctor.stdout).toMatch(/State directory is not writable \(read-only filesystem\)/);
    expect(doctor.stdout).not.toMatch(/restore it from a backup|cannot be opened/i);
    expect(doctor.stdout).toMatch(/✓ Agent database "main" ok/);
    // The committed row that lives only in the -wal is read (through the private copy).
    const keys = (JSON.parse(list.stdout).sessions as Array<{ key: string }>).map((s) => s.key);
    expect(keys).toEqual(expect.arrayContaining(["agent:main:only-in-wal", "agent:main:ro"]));
    expect(inspect.stdout).toMatch(/integrity ok/);
    for (const [label, r] of Object.entries({ create, reset, restore })) {
      expect(r.code, label).toBe(1);
      expect(r.stderr, label).toMatch(/read-only file ?system|EROFS/i);
      expect(r.stderr, label).not.toMatch(/Unexpected failure|ENOENT/);
    }
    // Nothing leaked into the temp dir: the private copies are removed on close.
    expect(fs.readdirSync(process.env.TMPDIR ?? "/tmp").filter((n) => n.startsWith("openclaw-state-ro-"))).toEqual([]);
  });
});

/** Breaks a sessions CHECK constraint in place and leaves the file in rollback mode (opened read-only without a copy). */
function breakCheckConstraint(file: string): void {
  const handle = new Database(file);
  handle.pragma("ignore_check_constraints = ON");
  const changed = handle.prepare("UPDATE sessions SET session_scope = 'nowhere' WHERE rowid = (SELECT min(rowid) FROM sessions)").run().changes;
  handle.pragma("journal_mode = DELETE");
  handle.close();
  expect(changed).toBe(1);
}

describe.skipIf(!CAN_MOUNT)("checks on a read-only state", () => {
  it("doctor --deep and inspect --check say the CHECK constraints went unverified instead of calling the database whole", async () => {
    const { env, root, paths } = makeTempState("legacy-state");
    await migrate(paths);
    const dbFile = agentDbPath(paths, "main");
    breakCheckConstraint(dbFile);
    // Writable: the same check finds the broken row.
    const writable = await runInProcess(["doctor", "--deep", "--json"], env);
    expect(writable.code).toBe(1);
    expect(writable.stdout).toMatch(/CHECK constraint failed in sessions/);
    const { doctor, inspect } = runReadOnly(root, env, { doctor: ["doctor", "--deep", "--json"], inspect: ["inspect", "--check", "--json"] });
    // Read-only, SQLite skips CHECK constraints: not an error, but not a clean bill either.
    expect(doctor.code, doctor.stderr).toBe(0);
    const findings = JSON.parse(doctor.stdout).findings as Array<{ id: string; severity: string; detail?: string; path?: string }>;
    const limit = findings.find((f) => f.id === "agent-db.check-limit" && f.path === dbFile);
    expect(limit?.severity).toBe("warning");
    expect(limit?.detail).toMatch(/CHECK constraints not verified/);
    expect(inspect.code, inspect.stderr).toBe(0);
    const agent = (JSON.parse(inspect.stdout).databases as Array<{ path: string; integrity: string; checkLimit: string | null }>).find((d) => d.path === dbFile);
    expect(agent?.integrity).toBe("ok");
    expect(agent?.checkLimit).toMatch(/read-only/);
  });
});

describe.skipIf(CAN_MOUNT)("read-only filesystem tests", () => {
  it("are skipped: this machine cannot create a read-only bind mount (unshare -rm + mount --bind)", () => {
    expect(CAN_MOUNT).toBe(false);
  });
});

