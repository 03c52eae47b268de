// Resolves the state dir, config, credentials, backup dir and database paths (SPEC §2), env overrides included.
import os from "node:os";
import path from "node:path";
import { UsageError } from "../core/errors.js";
import { normalizeAgentId } from "./agent-id.js";

export const GLOBAL_DB_RELATIVE = path.join("state", "openclaw.sqlite");
export const AGENT_DB_FILENAME = "openclaw-agent.sqlite";
export const DEFAULT_AGENT_ID = "main";

export interface StatePaths {
  homeDir: string;
  stateDir: string;
  configPath: string;
  credentialsDir: string;
  backupDir: string;
  globalDbPath: string;
  agentsDir: string;
  /**
   * The merge path's staging state (src/migration/merge-legacy.ts): the databases live under this directory
   * (`<dbRoot>/state/openclaw.sqlite`, `<dbRoot>/agents/<id>/agent/…`) while every legacy source, the config and the
   * formats that decide what is live are read from the real state dir. Absent for every other caller.
   */
  staging?: { dbRoot: string; liveGlobalDbPath: string; liveAgentsDir: string };
}

export interface ResolveStatePathsOptions {
  /** The `--state-dir` flag; wins over every env variable. */
  stateDir?: string | undefined;
  env?: NodeJS.ProcessEnv;
}

/** A literal "undefined"/"null" (a common shell-templating accident) counts as unset. */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value === "" || value === "undefined" || value === "null") return undefined;
  return value;
}

export function resolveHomeDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = envValue(env, "OPENCLAW_HOME") ?? envValue(env, "HOME") ?? os.homedir();
  return path.resolve(home);
}

/** Expands `~` and `~/x` against the resolved home and makes the path absolute. */
export function expandUserPath(input: string, homeDir: string): string {
  if (input === "~") return homeDir;
  if (input.startsWith("~/") || input.startsWith(`~${path.sep}`)) return path.join(homeDir, input.slice(2));
  return path.resolve(input);
}

/**
 * The state dir the flag or OPENCLAW_STATE_DIR names; undefined when neither is given. A given-but-empty
 * value (`--state-dir ""`, `OPENCLAW_STATE_DIR=` from an unset shell or template variable, or a literal
 * "undefined"/"null") is a usage error, never the default ~/.openclaw: a destructive command would
 * otherwise act on the real state.
 */
function explicitStateDir(options: ResolveStatePathsOptions, env: NodeJS.ProcessEnv): string | undefined {
  if (options.stateDir !== undefined) {
    if (options.stateDir.trim() === "") {
      throw new UsageError("--state-dir is empty (an unset variable in the script?): give the state directory, or leave the flag out to use $OPENCLAW_STATE_DIR or ~/.openclaw.", "empty_state_dir");
    }
    return options.stateDir;
  }
  const raw = env.OPENCLAW_STATE_DIR;
  if (raw === undefined) return undefined;
  if (envValue(env, "OPENCLAW_STATE_DIR") === undefined) {
    throw new UsageError(
      `OPENCLAW_STATE_DIR is set but ${raw.trim() === "" ? "empty" : `to the literal ${JSON.stringify(raw.trim())}`} (an unset variable in the script or template?): set it to the state directory, or unset it to use ~/.openclaw.`,
      "empty_state_dir",
    );
  }
  return raw.trim();
}

export function resolveStatePaths(options: ResolveStatePathsOptions = {}): StatePaths {
  const env = options.env ?? process.env;
  const homeDir = resolveHomeDir(env);
  const stateRaw = explicitStateDir(options, env);
  const stateDir = stateRaw !== undefined ? expandUserPath(stateRaw, homeDir) : path.join(homeDir, ".openclaw");
  const configRaw = envValue(env, "OPENCLAW_CONFIG_PATH");
  const credentialsRaw = envValue(env, "OPENCLAW_OAUTH_DIR");
  const backupRaw = envValue(env, "OPENCLAW_BACKUP_DIR");
  return {
    homeDir,
    stateDir,
    configPath: configRaw ? expandUserPath(configRaw, homeDir) : path.join(stateDir, "openclaw.json"),
    credentialsDir: credentialsRaw ? expandUserPath(credentialsRaw, homeDir) : path.join(stateDir, "credentials"),
    // A sibling of the state dir on purpose: backups never contain backups and survive `reset --scope full`.
    backupDir: backupRaw ? expandUserPath(backupRaw, homeDir) : `${stateDir.replace(/[\\/]+$/, "")}-backups`,
    globalDbPath: path.join(stateDir, GLOBAL_DB_RELATIVE),
    agentsDir: path.join(stateDir, "agents"),
  };
}

/** The agent DB path; the id is normalized (and rejected if unsafe) before it touches a path. */
export function agentDbPath(paths: StatePaths, agentId: string): string {
  const id = normalizeAgentId(agentId);
  return path.join(paths.staging ? path.join(paths.staging.dbRoot, "agents") : paths.agentsDir, id, "agent", AGENT_DB_FILENAME);
}

/** The paths of a staging state whose databases live under `dbRoot` (inside the state dir), all else as `paths`. */
export function stagingStatePaths(paths: StatePaths, dbRoot: string): StatePaths {
  return { ...paths, globalDbPath: path.join(dbRoot, GLOBAL_DB_RELATIVE), staging: { dbRoot, liveGlobalDbPath: paths.globalDbPath, liveAgentsDir: paths.agentsDir } };
}

/** The state's own databases: for a staging state, the live ones its formats are read from. */
export function liveStatePaths(paths: StatePaths): StatePaths {
  if (!paths.staging) return paths;
  const { staging: _staging, ...rest } = paths;
  return { ...rest, globalDbPath: paths.staging.liveGlobalDbPath };
}

/** True when `child` is `parent` or inside it (both absolute). Entries named `..x` or `...` are inside. */
export function isPathInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The default workspace folder names inside the state dir (`workspace`, `workspace-<agentId>`). */
export function isWorkspaceDirName(name: string): boolean {
  return name === "workspace" || name.startsWith("workspace-");
}
