// Resolves the state dir, config, credentials, backup dir and database paths (SPEC §2), env overrides included.
import os from "node:os";
import path from "node:path";
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

export function resolveStatePaths(options: ResolveStatePathsOptions = {}): StatePaths {
  const env = options.env ?? process.env;
  const homeDir = resolveHomeDir(env);
  const stateRaw = options.stateDir ?? envValue(env, "OPENCLAW_STATE_DIR");
  const stateDir = stateRaw ? expandUserPath(stateRaw, homeDir) : path.join(homeDir, ".openclaw");
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
  return path.join(paths.agentsDir, id, "agent", AGENT_DB_FILENAME);
}

/** True when `child` is `parent` or inside it (both absolute). */
export function isPathInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The default workspace folder names inside the state dir (`workspace`, `workspace-<agentId>`). */
export function isWorkspaceDirName(name: string): boolean {
  return name === "workspace" || name.startsWith("workspace-");
}
