// Seeds a migrated-like state tree for reset tests: global DB + two agent DBs (one with crash-left WAL/SHM), config, credentials, legacy sessions, workspaces, backups.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { agentDbPath, resolveStatePaths, type StatePaths } from "../../src/state/paths.js";
import { openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import { insertLease } from "../helpers/leases.js";
import { makeTempState, type TempState } from "../helpers/temp-state.js";

export interface SeedOptions {
  /** OPENCLAW_CONFIG_PATH outside the state dir (`<root>/etc/openclaw.json`). */
  configOutside?: boolean;
  /** OPENCLAW_OAUTH_DIR outside the state dir (`<root>/oauth`). */
  credentialsOutside?: boolean;
  /** OPENCLAW_BACKUP_DIR inside the state dir (`<state>/backups`). */
  backupInside?: boolean;
}

export interface SeededState extends TempState {
  paths: StatePaths;
  mainDb: string;
  opsDb: string;
  outsideWorkspace: string;
  insideWorkspace: string;
  /** A file outside every reset location, the target of a symlink inside the state dir. */
  outsideTarget: string;
  symlinkInState: string;
  backupFile: string;
}

function insertSession(db: { handle: Database.Database }, id: string): void {
  const now = Date.now();
  db.handle
    .prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', ?, ?)")
    .run(id, `agent:${id}`, now, now);
}

/** Leaves -wal/-shm beside `file` as a crashed writer would (a clean close removes them, so they are put back). */
function leaveCrashSidecars(file: string): void {
  const handle = new Database(file);
  handle.pragma("journal_mode = WAL");
  handle.pragma("wal_autocheckpoint = 0");
  const now = Date.now();
  handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES ('s-crash', 'agent:crash', 'conversation', ?, ?)").run(now, now);
  const saved = ["-wal", "-shm"].map((suffix) => [`${file}${suffix}`, fs.readFileSync(`${file}${suffix}`)] as const);
  const main = fs.readFileSync(file);
  handle.close();
  fs.writeFileSync(file, main);
  for (const [p, bytes] of saved) fs.writeFileSync(p, bytes, { mode: 0o600 });
}

export function seedResetState(options: SeedOptions = {}): SeededState {
  const base = makeTempState("legacy-state");
  const { root, stateDir } = base;
  const env: NodeJS.ProcessEnv = { ...base.env };
  if (options.configOutside) {
    fs.mkdirSync(path.join(root, "etc"), { mode: 0o700 });
    fs.renameSync(path.join(stateDir, "openclaw.json"), path.join(root, "etc", "openclaw.json"));
    env.OPENCLAW_CONFIG_PATH = path.join(root, "etc", "openclaw.json");
  }
  if (options.credentialsOutside) env.OPENCLAW_OAUTH_DIR = path.join(root, "oauth");
  if (options.backupInside) env.OPENCLAW_BACKUP_DIR = path.join(stateDir, "backups");
  const paths = resolveStatePaths({ env });

  // The config names a workspace outside the state dir (expanded from ~ against HOME = root).
  const config = JSON.parse(fs.readFileSync(paths.configPath, "utf8")) as { agents: { defaults: Record<string, unknown> } };
  config.agents.defaults.workspace = "~/projects/ws";
  fs.writeFileSync(paths.configPath, JSON.stringify(config, null, 2));

  const global = openGlobalDatabase(paths, { mode: "write", create: true });
  for (const agentId of ["main", "ops"]) {
    const db = openAgentDatabase(paths, agentId, { mode: "write", create: true, global });
    insertSession(db, `s-${agentId}`);
    db.close();
  }
  global.close();
  leaveCrashSidecars(agentDbPath(paths, "ops"));

  fs.mkdirSync(paths.credentialsDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(paths.credentialsDir, "oauth.json"), '{"anthropic":{"token":"t"}}\n', { mode: 0o600 });

  const insideWorkspace = path.join(stateDir, "workspace");
  fs.mkdirSync(insideWorkspace, { mode: 0o700 });
  fs.writeFileSync(path.join(insideWorkspace, "AGENTS.md"), "# inside workspace\n");
  const outsideWorkspace = path.join(root, "projects", "ws");
  fs.mkdirSync(outsideWorkspace, { recursive: true });
  fs.writeFileSync(path.join(outsideWorkspace, "README.md"), "# outside workspace\n");

  const outsideTarget = path.join(root, "elsewhere", "keep-me.txt");
  fs.mkdirSync(path.dirname(outsideTarget));
  fs.writeFileSync(outsideTarget, "not openclaw state\n");
  const symlinkInState = path.join(stateDir, "linked-notes.txt");
  fs.symlinkSync(outsideTarget, symlinkInState);

  fs.mkdirSync(paths.backupDir, { recursive: true, mode: 0o700 });
  const backupFile = path.join(paths.backupDir, "2024-01-01T00-00-00.000Z-openclaw-backup.tar.gz");
  fs.writeFileSync(backupFile, "an earlier archive\n", { mode: 0o600 });

  return {
    ...base,
    env,
    paths,
    mainDb: agentDbPath(paths, "main"),
    opsDb: agentDbPath(paths, "ops"),
    outsideWorkspace,
    insideWorkspace,
    outsideTarget,
    symlinkInState,
    backupFile,
  };
}

/** Writes a live lease row as another holder would (the gateway, or a maintenance run with a running pid). */
export function holdLease(paths: StatePaths, scope: string, pid = process.pid): void {
  const global = openGlobalDatabase(paths, { mode: "write" });
  try {
    insertLease(global, scope, pid, Date.now() + 3_600_000);
  } finally {
    global.close();
  }
}
