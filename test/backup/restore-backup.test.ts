// restoreBackup on real files: round trip, modes, leases, dry-run, consent, --target, rollback, kept backup dirs and copies.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { StateLockedError, UsageError } from "../../src/core/errors.js";
import { openDatabase } from "../../src/state/database.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { agentDb, countRows, seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, modeOf, snapshotTree, type TempState } from "../helpers/temp-state.js";

const yes = async (): Promise<boolean> => true;

function insertLease(state: TempState, options: { live: boolean; scope?: string }): void {
  const db = openGlobalDatabase(state.paths, { mode: "write" });
  try {
    const now = Date.now();
    const payload = options.live ? { pid: process.pid, host: os.hostname(), startedAt: now, command: "doctor --fix" } : { pid: 999999, host: "elsewhere", startedAt: 0, command: "old" };
    db.handle
      .prepare("INSERT INTO state_leases (scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at) VALUES (?, 'state', 'x', ?, ?, ?, ?, ?)")
      .run(options.scope ?? "maintenance", options.live ? now + 600_000 : 1, now, JSON.stringify(payload), now, now);
  } finally {
    db.close();
  }
}

function journalMode(file: string): string {
  const db = openDatabase({ path: file, role: "agent", mode: "read" });
  try {
    return db.handle.pragma("journal_mode", { simple: true }) as string;
  } finally {
    db.close();
  }
}

/** Restore staging dirs left in `dir` (none after any restore that finished or failed cleanly). */
function staging(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.includes(".restore-") && !n.includes(".pre-restore-"));
}

/** The `<name>.pre-restore-<ts>` copies in `dir`, as full paths. */
function keptCopies(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((n) => n.includes(".pre-restore-"))
    .map((n) => path.join(dir, n));
}

describe("restoreBackup", () => {
  it("round trip: brings back deleted rows and files with private modes, drops leases, re-enables WAL", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    insertLease(state, { live: false, scope: "gateway_locks" });
    const backup = await createBackup({ paths: state.paths });

    // Damage the live state after the backup.
    const db = openDatabase({ path: agentDb(state), role: "agent", mode: "write" });
    db.handle.exec("DELETE FROM sessions WHERE session_id IN ('s-1', 's-2', 's-3')");
    db.close();
    fs.rmSync(path.join(state.stateDir, "notes", "readme.md"));
    fs.writeFileSync(path.join(state.stateDir, "notes", "new.txt"), "after the backup");
    fs.chmodSync(path.join(state.stateDir, "notes"), 0o755);
    expect(countRows(agentDb(state), "sessions")).toBe(17);

    const result = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes });
    expect(result.status).toBe("restored");
    expect(result.plan).toEqual([expect.objectContaining({ kind: "state", destination: state.stateDir, action: "replace" })]);
    expect(countRows(agentDb(state), "sessions")).toBe(20);
    expect(countRows(agentDb(state), "transcript_events")).toBe(100);
    expect(fs.readFileSync(path.join(state.stateDir, "notes", "readme.md"), "utf8")).toBe("# notes\n");
    expect(fs.existsSync(path.join(state.stateDir, "notes", "new.txt"))).toBe(false);
    expect(fs.readlinkSync(path.join(state.stateDir, "readme-link"))).toBe("notes/readme.md");
    expect(fs.existsSync(path.join(state.stateDir, "escape-link"))).toBe(false); // never archived: it leads out of the tree

    expect(modeOf(state.stateDir)).toBe(0o700);
    expect(modeOf(path.join(state.stateDir, "notes"))).toBe(0o700);
    expect(modeOf(path.join(state.stateDir, "empty"))).toBe(0o700);
    expect(modeOf(path.join(state.stateDir, "notes", "readme.md"))).toBe(0o600);
    expect(modeOf(path.join(state.stateDir, "scripts", "run.sh"))).toBe(0o700);
    expect(modeOf(agentDb(state))).toBe(0o600);
    expect(modeOf(state.paths.globalDbPath)).toBe(0o600);

    expect(journalMode(agentDb(state))).toBe("wal");
    expect(countRows(state.paths.globalDbPath, "state_leases", "global")).toBe(0);
    expect(result.databases.find((d) => d.role === "global")!.leasesDropped).toBe(1);
    for (const f of [agentDb(state), state.paths.globalDbPath]) {
      expect(fs.existsSync(`${f}-wal`)).toBe(false);
      expect(fs.existsSync(`${f}-shm`)).toBe(false);
    }
    // The replaced state dir is kept (it used to be deleted here): the file written after the backup is in it.
    expect(staging(state.root)).toEqual([]);
    expect(result.keptCopies).toEqual([{ kind: "state", path: state.stateDir, keptAt: expect.stringMatching(/\.openclaw\.pre-restore-\d{8}T\d{6}Z$/) }]);
    expect(keptCopies(state.root)).toEqual([result.keptCopies[0]!.keptAt]);
    expect(result.plan[0]!.keptAt).toBe(result.keptCopies[0]!.keptAt);
    expect(fs.readFileSync(path.join(result.keptCopies[0]!.keptAt, "notes", "new.txt"), "utf8")).toBe("after the backup");
    expect(countRows(path.join(result.keptCopies[0]!.keptAt, path.relative(state.stateDir, agentDb(state))), "sessions")).toBe(17);
    expect(staging(path.dirname(backup.archivePath))).toEqual([]);
  });

  it("--dry-run verifies and plans, and leaves everything byte-for-byte unchanged", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const backup = await createBackup({ paths: state.paths });
    fs.writeFileSync(path.join(state.stateDir, "notes", "new.txt"), "x");
    const before = snapshotTree(state.root);
    const result = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, dryRun: true, confirm: yes });
    expect(result.status).toBe("dry-run");
    expect(result.plan[0]).toMatchObject({ destination: state.stateDir, action: "replace", files: backup.manifest.files.length });
    expect(snapshotTree(state.root)).toEqual(before);
  });

  it("a declined restore changes nothing", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const backup = await createBackup({ paths: state.paths });
    const before = snapshotTree(state.root);
    const result = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: async () => false });
    expect(result.status).toBe("declined");
    expect(snapshotTree(state.root)).toEqual(before);
  });

  it("refuses while another live process holds the lease (exit 75), unchanged; --force takes it over", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const backup = await createBackup({ paths: state.paths });
    insertLease(state, { live: true });
    const before = snapshotTree(state.root);
    const error = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateLockedError);
    expect((error as StateLockedError).exitCode).toBe(75);
    expect((error as Error).message).toMatch(/locked by `doctor --fix` \(pid \d+/);
    expect(snapshotTree(state.root)).toEqual(before);
    const dry = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, dryRun: true });
    expect(dry.warnings.join("\n")).toMatch(/locked by `doctor --fix`.*The real restore would exit 75/);
    expect(snapshotTree(state.root)).toEqual(before);

    const forced = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes, force: true });
    expect(forced.status).toBe("restored");
    expect(countRows(state.paths.globalDbPath, "state_leases", "global")).toBe(0);
  });

  it("--target restores into a fresh directory with the registry pointing there; a non-empty target is refused", async () => {
    const state = makeTempState("legacy-state");
    seedState(state, { agents: ["main", "ops"] });
    const backup = await createBackup({ paths: state.paths });
    const before = snapshotTree(state.root);
    const target = path.join(makeTempDir(), "restored");
    const result = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, target, confirm: yes });
    expect(result.plan.map((i) => [i.kind, i.destination, i.action])).toEqual([["state", path.join(target, "state"), "create"]]);
    expect(snapshotTree(state.root)).toEqual(before);
    const restored = resolveStatePaths({ stateDir: path.join(target, "state"), env: {} });
    const db = openGlobalDatabase(restored, { mode: "read" });
    try {
      const rows = db.all(db.q.selectFrom("agent_databases").select(["agent_id", "path"]).orderBy("agent_id"));
      expect(rows).toEqual([
        { agent_id: "main", path: path.join(target, "state", "agents", "main", "agent", "openclaw-agent.sqlite") },
        { agent_id: "ops", path: path.join(target, "state", "agents", "ops", "agent", "openclaw-agent.sqlite") },
      ]);
    } finally {
      db.close();
    }
    expect(modeOf(target)).toBe(0o700);
    expect(fs.readdirSync(target)).toEqual(["state"]);

    const full = makeTempDir();
    fs.writeFileSync(path.join(full, "x"), "x");
    await expect(restoreBackup({ paths: state.paths, archivePath: backup.archivePath, target: full, confirm: yes })).rejects.toBeInstanceOf(UsageError);
    expect(fs.readdirSync(full)).toEqual(["x"]);
  });

  it("rolls back every swapped asset when a later swap fails", async () => {
    const state = makeTempState("legacy-state");
    const env = { ...state.env, OPENCLAW_CONFIG_PATH: path.join(state.root, "etc", "openclaw.json") };
    const paths = resolveStatePaths({ env });
    const withConfig = { ...state, env, paths };
    seedState(withConfig);
    const backup = await createBackup({ paths });
    expect(backup.manifest.assets.map((a) => a.kind)).toEqual(["state", "config"]);
    fs.writeFileSync(path.join(state.stateDir, "notes", "new.txt"), "x");
    fs.writeFileSync(paths.configPath, '{"changed": true}');
    // The lease row taken (and released) in the live global DB is the one write a failed swap leaves behind.
    const tree = (): Record<string, unknown> => {
      const t = snapshotTree(state.root);
      delete t[".openclaw/state/openclaw.sqlite"];
      return t;
    };
    const before = tree();
    await expect(restoreBackup({ paths, archivePath: backup.archivePath, confirm: yes, failAfterSwaps: 1 })).rejects.toMatchObject({ code: "restore_failed" });
    expect(tree()).toEqual(before);
    expect(countRows(paths.globalDbPath, "state_leases", "global")).toBe(0);
    expect(countRows(paths.globalDbPath, "agent_databases", "global")).toBe(1);

    const ok = await restoreBackup({ paths, archivePath: backup.archivePath, confirm: yes });
    expect(ok.plan.map((i) => i.kind).sort()).toEqual(["config", "state"]);
    expect(fs.readFileSync(paths.configPath, "utf8")).toMatch(/comment/);
    expect(fs.existsSync(path.join(state.stateDir, "notes", "new.txt"))).toBe(false);
    // The failed attempt kept nothing (it rolled back); the good one kept both replaced paths.
    expect(staging(path.join(state.root, "etc"))).toEqual([]);
    expect(ok.keptCopies.map((k) => [k.kind, k.path]).sort()).toEqual([
      ["config", paths.configPath],
      ["state", state.stateDir],
    ]);
    const keptConfig = ok.keptCopies.find((k) => k.kind === "config")!.keptAt;
    expect(keptCopies(path.join(state.root, "etc"))).toEqual([keptConfig]);
    expect(fs.readFileSync(keptConfig, "utf8")).toBe('{"changed": true}');
  });

  it("keeps a backups dir inside the state dir (the archive it restores from included), and recreates a deleted state dir", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    // create refuses a destination inside the state dir; an operator can still copy an archive there.
    const made = await createBackup({ paths: state.paths });
    const inside = path.join(state.stateDir, "backups", path.basename(made.archivePath));
    fs.mkdirSync(path.dirname(inside), { mode: 0o700 });
    fs.copyFileSync(made.archivePath, inside);
    const result = await restoreBackup({ paths: state.paths, archivePath: inside, confirm: yes });
    expect(result.status).toBe("restored");
    expect(fs.existsSync(inside)).toBe(true);

    const outside = await createBackup({ paths: state.paths });
    fs.rmSync(state.stateDir, { recursive: true });
    const recreated = await restoreBackup({ paths: state.paths, archivePath: outside.archivePath, confirm: yes });
    expect(recreated.plan[0]!.action).toBe("create");
    expect(countRows(agentDb(state), "sessions")).toBe(20);
  });

  it("restores workspaces to their recorded paths unless --no-include-workspace", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const ws = path.join(state.root, "ws");
    fs.mkdirSync(path.join(ws, "src"), { recursive: true });
    fs.writeFileSync(path.join(ws, "src", "main.ts"), "export {};\n");
    fs.writeFileSync(state.paths.configPath, `{ agents: { defaults: { workspace: "~/ws", }, }, }`);
    const backup = await createBackup({ paths: state.paths });
    expect(backup.manifest.assets.map((a) => a.kind)).toEqual(["state", "workspace"]);
    fs.rmSync(path.join(ws, "src", "main.ts"));

    const skipped = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes, includeWorkspace: false });
    expect(skipped.skipped).toEqual([{ kind: "workspace", path: ws, reason: "--no-include-workspace" }]);
    expect(fs.existsSync(path.join(ws, "src", "main.ts"))).toBe(false);

    await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes });
    expect(fs.readFileSync(path.join(ws, "src", "main.ts"), "utf8")).toBe("export {};\n");
  });

  it("carries over the archive it restores from when it lies inside the replaced state dir", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const made = await createBackup({ paths: state.paths });
    const inside = path.join(state.stateDir, "notes", "copy.tar.gz");
    fs.copyFileSync(made.archivePath, inside);
    const result = await restoreBackup({ paths: state.paths, archivePath: inside, confirm: yes });
    expect(result.plan[0]!.keep).toContain("notes/copy.tar.gz");
    expect(fs.existsSync(inside)).toBe(true);
    expect(staging(state.root)).toEqual([]);
    // The archive moved into the restored tree; the kept copy of the old state holds the rest, not the archive.
    expect(keptCopies(state.root)).toEqual([result.keptCopies[0]!.keptAt]);
    expect(fs.existsSync(path.join(result.keptCopies[0]!.keptAt, "notes", "copy.tar.gz"))).toBe(false);
    expect(fs.readFileSync(path.join(result.keptCopies[0]!.keptAt, "notes", "readme.md"), "utf8")).toBe("# notes\n");
  });

  it("stages a config that now lives inside the state dir within the state tree; refuses a clash", async () => {
    const state = makeTempState("legacy-state");
    fs.rmSync(path.join(state.stateDir, "openclaw.json"));
    const env = { ...state.env, OPENCLAW_CONFIG_PATH: path.join(state.root, "etc", "openclaw.json") };
    const outside = { ...state, env, paths: resolveStatePaths({ env }) };
    seedState(outside);
    const made = await createBackup({ paths: outside.paths });
    // Restored with the default layout: the config goes to <stateDir>/openclaw.json, inside the state tree.
    const result = await restoreBackup({ paths: state.paths, archivePath: made.archivePath, confirm: yes });
    expect(result.plan.find((i) => i.kind === "config")).toMatchObject({ nestedIn: "payload/state", destination: path.join(state.stateDir, "openclaw.json") });
    expect(fs.readFileSync(path.join(state.stateDir, "openclaw.json"), "utf8")).toMatch(/comment/);
    expect(modeOf(path.join(state.stateDir, "openclaw.json"))).toBe(0o600);

    const clash = makeTempState("legacy-state");
    const clashEnv = { ...clash.env, OPENCLAW_CONFIG_PATH: path.join(clash.root, "etc", "openclaw.json") };
    seedState({ ...clash, env: clashEnv, paths: resolveStatePaths({ env: clashEnv }) });
    const both = await createBackup({ paths: resolveStatePaths({ env: clashEnv }) });
    const before = snapshotTree(clash.root);
    await expect(restoreBackup({ paths: clash.paths, archivePath: both.archivePath, confirm: yes })).rejects.toMatchObject({ code: "restore_conflict" });
    expect(snapshotTree(clash.root)).toEqual(before);
  });
});
