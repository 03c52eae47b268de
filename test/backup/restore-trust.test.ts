// Restore's trust boundary on real files: workspace destinations, links in the live state, stored paths moved
// with --target, archive leases dropped in every database, and `--backup` before anything is replaced.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { OperationError } from "../../src/core/errors.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { agentDb, countRows, seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, runBin, runInProcess, snapshotTree, type TempState } from "../helpers/temp-state.js";

const yes = async (): Promise<boolean> => true;

/** sqlite3 shell output: an independent reader of what restore wrote. */
function sqlite(file: string, sql: string): string {
  const r = spawnSync("sqlite3", [file, sql], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

function stateWithWorkspace(): { state: TempState; ws: string } {
  const state = makeTempState("legacy-state");
  seedState(state);
  const ws = path.join(state.root, "ws");
  fs.mkdirSync(path.join(ws, "src"), { recursive: true });
  fs.writeFileSync(path.join(ws, "src", "main.ts"), "export {};\n");
  fs.writeFileSync(state.paths.configPath, `{ agents: { defaults: { workspace: "~/ws" } } }`);
  return { state, ws };
}

/** Rows holding absolute paths into the state dir, as the importers write them. */
function seedStoredPaths(state: TempState): void {
  const db = openGlobalDatabase(state.paths, { mode: "write" });
  try {
    const agentDir = path.join(state.stateDir, "agents", "main", "agent");
    const cronStore = path.join(state.stateDir, "cron", "jobs.json");
    db.handle.prepare("INSERT INTO auth_profile_stores (store_key, agent_dir, profiles_json, updated_at) VALUES (?, ?, '{}', 1)").run(agentDir, agentDir);
    db.handle.prepare("INSERT INTO auth_profile_state (store_key, agent_dir, state_json, updated_at) VALUES (?, ?, '{}', 1)").run(agentDir, agentDir);
    db.handle.prepare("INSERT INTO cron_jobs (store_key, job_id, job_json, updated_at) VALUES (?, 'nightly', '{}', 1)").run(cronStore);
    db.handle.prepare("INSERT INTO agent_model_catalogs (catalog_key, agent_dir, updated_at) VALUES ('agents/main/agent', ?, 1)").run(agentDir);
    db.handle.prepare("INSERT INTO workspace_setup_state (workspace_key, workspace_path, updated_at) VALUES ('main', ?, 1)").run(path.join(state.stateDir, "workspace"));
    db.handle.prepare("INSERT INTO config_health_entries (config_path, updated_at_ms) VALUES (?, 1)").run(state.paths.configPath);
    // A path that only shares a prefix with the state dir is not inside it and must stay as it is.
    db.handle.prepare("INSERT INTO auth_profile_stores (store_key, agent_dir, profiles_json, updated_at) VALUES (?, ?, '{}', 1)").run(`${state.stateDir}-other/agent`, "/elsewhere");
  } finally {
    db.close();
  }
}

describe("restore trust boundary", () => {
  it("restores a workspace where the current config names it, and shows that destination in the dry-run", async () => {
    const { state, ws } = stateWithWorkspace();
    const backup = await createBackup({ paths: state.paths });
    fs.rmSync(path.join(ws, "src", "main.ts"));

    const dry = await runInProcess(["backup", "restore", backup.archivePath, "--dry-run"], state.env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`replace\\s+${ws.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s+workspace, 1 file\\(s\\), .*; current config agents\\.defaults\\.workspace`));
    const done = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes });
    expect(done.plan.find((i) => i.kind === "workspace")).toMatchObject({ destination: ws, origin: "current config agents.defaults.workspace" });
    expect(fs.readFileSync(path.join(ws, "src", "main.ts"), "utf8")).toBe("export {};\n");
  });

  it("a workspace the current config no longer names is refused (exit 1, nothing written) unless --workspace names its destination", async () => {
    const { state, ws } = stateWithWorkspace();
    const backup = await createBackup({ paths: state.paths });
    fs.writeFileSync(state.paths.configPath, "{}");
    const before = snapshotTree(state.root);
    const refused = await runInProcess(["backup", "restore", backup.archivePath, "--yes"], state.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^error: backup restore refused the workspace .*\/ws: .*is not a workspace in the current config .*--workspace .*=<dir>, use --target, or pass --no-include-workspace; nothing was written/);
    expect(snapshotTree(state.root)).toEqual(before);

    const elsewhere = path.join(state.root, "projects", "ws-restored");
    const named = await runInProcess(["backup", "restore", backup.archivePath, "--yes", "--workspace", `${ws}=${elsewhere}`], state.env);
    expect(named.stderr).toBe("");
    expect(named.code).toBe(0);
    expect(fs.readFileSync(path.join(elsewhere, "src", "main.ts"), "utf8")).toBe("export {};\n");
    // The archive folder name works too; --workspace with --target is a usage error; an unknown name as well.
    const byName = await runInProcess(["backup", "restore", backup.archivePath, "--dry-run", "--workspace", `1-ws=${elsewhere}`], state.env);
    expect(byName.code).toBe(0);
    const withTarget = await runInProcess(["backup", "restore", backup.archivePath, "--yes", "--target", path.join(makeTempDir(), "t"), "--workspace", `1-ws=${elsewhere}`], state.env);
    expect(withTarget.code).toBe(2);
    const unknown = await runInProcess(["backup", "restore", backup.archivePath, "--yes", "--workspace", `/nope=${elsewhere}`], state.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--workspace \/nope=… names no workspace of the archive; it holds .*\/ws \(1-ws\)/);
  });

  it("never writes through a symlink inside the live state: a config behind a linked folder is refused", async () => {
    const state = makeTempState();
    const outside = path.join(state.root, "dotfiles");
    fs.mkdirSync(outside);
    fs.mkdirSync(state.stateDir);
    fs.symlinkSync(outside, path.join(state.stateDir, "conf"));
    const env = { ...state.env, OPENCLAW_CONFIG_PATH: path.join(state.stateDir, "conf", "openclaw.json") };
    const paths = resolveStatePaths({ env });
    fs.writeFileSync(paths.configPath, '{ "gateway": { "port": 1 } }');
    const backup = await createBackup({ paths, onlyConfig: true });
    fs.writeFileSync(paths.configPath, '{ "gateway": { "port": 2 } }');
    const before = snapshotTree(state.root);
    const error = await restoreBackup({ paths, archivePath: backup.archivePath, confirm: yes }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect((error as Error).message).toMatch(/refused the config .*: .*\/conf inside the state dir is a symbolic link; restore never writes through a link/);
    expect(snapshotTree(state.root)).toEqual(before);
  });

  it("--target moves every stored absolute path into the restored state dir (store keys included); sqlite3 reads them back", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    seedStoredPaths(state);
    const backup = await createBackup({ paths: state.paths });
    const target = path.join(makeTempDir(), "restored");
    const result = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, target, confirm: yes });
    const newState = path.join(target, "state");
    const global = path.join(newState, "state", "openclaw.sqlite");
    const agentDir = path.join(newState, "agents", "main", "agent");
    expect(sqlite(global, "SELECT store_key || '|' || agent_dir FROM auth_profile_stores WHERE agent_dir <> '/elsewhere'")).toBe(`${agentDir}|${agentDir}`);
    expect(sqlite(global, "SELECT store_key || '|' || agent_dir FROM auth_profile_state")).toBe(`${agentDir}|${agentDir}`);
    expect(sqlite(global, "SELECT store_key FROM cron_jobs")).toBe(path.join(newState, "cron", "jobs.json"));
    expect(sqlite(global, "SELECT agent_dir FROM agent_model_catalogs")).toBe(agentDir);
    expect(sqlite(global, "SELECT workspace_path FROM workspace_setup_state")).toBe(path.join(newState, "workspace"));
    expect(sqlite(global, "SELECT config_path FROM config_health_entries")).toBe(path.join(newState, "openclaw.json"));
    expect(sqlite(global, "SELECT path FROM agent_databases")).toBe(path.join(agentDir, "openclaw-agent.sqlite"));
    expect(sqlite(global, "SELECT store_key FROM auth_profile_stores WHERE agent_dir = '/elsewhere'")).toBe(`${state.stateDir}-other/agent`);
    const dump = sqlite(global, ".dump");
    expect(dump.split("\n").filter((l) => l.includes(`'${state.stateDir}/`) || l.includes(`'${state.stateDir}'`))).toEqual([]);
    expect(result.pathsRewritten).toBe(9);
  });

  it("an in-place restore into another state dir moves the stored paths there too", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    seedStoredPaths(state);
    const backup = await createBackup({ paths: state.paths });
    const otherDir = path.join(makeTempDir(), "moved", ".openclaw");
    const paths = resolveStatePaths({ env: { ...state.env, OPENCLAW_STATE_DIR: otherDir } });
    await restoreBackup({ paths, archivePath: backup.archivePath, confirm: yes });
    expect(sqlite(paths.globalDbPath, "SELECT store_key FROM cron_jobs")).toBe(path.join(otherDir, "cron", "jobs.json"));
  });

  it("drops another host's lease from every restored database, so the next write command is not locked out", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const lease = "INSERT INTO state_leases (scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at) VALUES ('maintenance', 'state', '4242@other-host', 9999999999999, 1, '{\"pid\":4242,\"host\":\"other-host\"}', 1, 1)";
    sqlite(state.paths.globalDbPath, lease);
    // An agent-side table of the same name (a plugin's, say) is cleared as well: a lease in an archive means nothing here.
    sqlite(agentDb(state), "CREATE TABLE state_leases (scope TEXT, lease_key TEXT, owner TEXT, expires_at INTEGER, heartbeat_at INTEGER, payload_json TEXT, created_at INTEGER, updated_at INTEGER)");
    sqlite(agentDb(state), lease);
    const backup = await createBackup({ paths: state.paths });
    const result = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes, force: true });
    expect(result.databases.map((d) => [d.role, d.leasesDropped])).toEqual([
      ["agent", 1],
      ["global", 1],
    ]);
    expect(sqlite(state.paths.globalDbPath, "SELECT count(*) FROM state_leases")).toBe("0");
    expect(sqlite(agentDb(state), "SELECT count(*) FROM state_leases")).toBe("0");
    const fix = await runInProcess(["doctor", "--fix"], state.env);
    expect(fix.stderr).not.toMatch(/locked/);
    expect(fix.code).not.toBe(75);
  });

  it("--backup takes a verified backup of the current state first; the prompt says the state is replaced", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const backup = await createBackup({ paths: state.paths });
    fs.writeFileSync(path.join(state.stateDir, "notes", "after.md"), "written after the backup\n");
    const consent = await runInProcess(["backup", "restore", backup.archivePath, "--backup"], state.env);
    expect(consent.code).toBe(2);
    expect(consent.stderr).toMatch(/backup restore would replace the current state at .*\.openclaw \(current copy kept at .*\.openclaw\.pre-restore-\d{8}T\d{6}Z\) from .* after a verified backup of the current state \(--backup\): it needs consent and cannot ask for it here .*so nothing was changed\. Re-run with --yes/);
    const asked = await runInProcess(["backup", "restore", backup.archivePath, "--backup"], state.env, [false]);
    expect(asked.stdout).toMatch(/A verified backup of the current state is also taken first \(--backup\)/);

    const run = await runInProcess(["backup", "restore", backup.archivePath, "--backup", "--yes", "--json"], state.env);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.ok).toBe(true);
    const pre = doc.preRestoreBackup as { archivePath: string; verified: boolean };
    expect(pre.verified).toBe(true);
    expect(fs.existsSync(path.join(state.stateDir, "notes", "after.md"))).toBe(false);
    // --backup no longer replaces the kept copy: the replaced state dir is kept beside it as well.
    expect(doc.keptCopies).toEqual([{ kind: "state", path: state.stateDir, keptAt: expect.stringMatching(/\.openclaw\.pre-restore-\d{8}T\d{6}Z$/) }]);
    expect(fs.readFileSync(path.join(doc.keptCopies[0].keptAt, "notes", "after.md"), "utf8")).toBe("written after the backup\n");
    // The pre-restore archive holds what was replaced: restoring it brings the later file back.
    expect((await verifyBackup(pre.archivePath)).ok).toBe(true);
    const back = path.join(makeTempDir(), "back");
    await restoreBackup({ paths: state.paths, archivePath: pre.archivePath, target: back, confirm: yes });
    expect(fs.readFileSync(path.join(back, "state", "notes", "after.md"), "utf8")).toBe("written after the backup\n");
    expect(countRows(agentDb(state), "sessions")).toBe(20);

    const withTarget = await runInProcess(["backup", "restore", backup.archivePath, "--backup", "--yes", "--target", path.join(makeTempDir(), "t")], state.env);
    expect(withTarget.code).toBe(2);
    expect(withTarget.stderr).toMatch(/--backup .* with --target nothing is replaced/);
  });

  it("refuses a directory or a FIFO as the archive path at once, with one line (binary)", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const dir = makeTempDir();
    const fifo = path.join(dir, "archive.tar.gz");
    spawnSync("mkfifo", [fifo]);
    for (const [arg, kind] of [
      [fifo, "a FIFO \\(named pipe\\)"],
      [dir, "a directory"],
    ] as const) {
      for (const args of [["backup", "restore", arg, "--yes"], ["backup", "restore", arg, "--dry-run"], ["backup", "verify", arg]]) {
        const r = await runBin(args, state.env, { timeoutMs: 20_000 });
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
        expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
        expect(r.stderr).toMatch(new RegExp(`^error: .* is ${kind}, not an archive; pass the path of a \\.tar\\.gz or \\.tar\\.zst file`));
      }
    }
  });
});
