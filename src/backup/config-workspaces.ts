// Reads the agent workspace paths from the config file (`agents.defaults.workspace`, `agents.list[].workspace`).
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import { Json5SyntaxError, parseJson5 } from "../core/json5-text.js";
import { readRegularTextSync } from "../core/safe-read.js";
import { expandUserPath, type StatePaths } from "../state/paths.js";

export interface ConfiguredWorkspace {
  path: string;
  /** Where in the config it came from, for messages. */
  origin: string;
}

export interface ConfiguredWorkspaces {
  workspaces: ConfiguredWorkspace[];
  warnings: string[];
  /**
   * The config exists but does not parse as JSON5: which workspaces it names is unknown. `backup create` fails on
   * this (a backup silently without the workspaces is worse than none); the other readers use the warning.
   */
  unparseable: OperationError | null;
}

/** `~` expands against the home dir; a relative path is taken relative to the config file's directory. */
export function resolveConfigPath(raw: string, paths: StatePaths): string {
  if (raw === "~" || raw.startsWith("~/")) return expandUserPath(raw, paths.homeDir);
  return path.resolve(path.dirname(paths.configPath), raw);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Workspace paths named in the config, in config order, duplicates removed; a missing config means none. */
export function readConfiguredWorkspaces(paths: StatePaths): ConfiguredWorkspaces {
  let text: string;
  try {
    // Never a blocking read: a FIFO or device at the config path is named in the warning instead.
    text = readRegularTextSync(paths.configPath, { what: "config file" });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { workspaces: [], warnings: [], unparseable: null };
    return { workspaces: [], warnings: [`Could not read ${paths.configPath} (${describeError(error)}); workspaces were not included.`], unparseable: null };
  }
  let config: unknown;
  try {
    config = parseJson5(text);
  } catch (error) {
    const { where, why } = parseProblem(paths.configPath, error);
    return { workspaces: [], warnings: [`${where}: the config does not parse as JSON5 (${why}); workspaces were not included.`], unparseable: configParseError(paths.configPath, error) };
  }
  const found: ConfiguredWorkspace[] = [];
  const agents = isRecord(config) ? config.agents : undefined;
  if (isRecord(agents)) {
    const defaults = agents.defaults;
    if (isRecord(defaults) && typeof defaults.workspace === "string" && defaults.workspace.trim() !== "") {
      found.push({ path: resolveConfigPath(defaults.workspace.trim(), paths), origin: "agents.defaults.workspace" });
    }
    if (Array.isArray(agents.list)) {
      agents.list.forEach((agent, index) => {
        if (!isRecord(agent) || typeof agent.workspace !== "string" || agent.workspace.trim() === "") return;
        const id = typeof agent.id === "string" ? ` (${agent.id})` : "";
        found.push({ path: resolveConfigPath(agent.workspace.trim(), paths), origin: `agents.list[${index}].workspace${id}` });
      });
    }
  }
  const seen = new Set<string>();
  const workspaces = found.filter((w) => (seen.has(w.path) ? false : (seen.add(w.path), true)));
  return { workspaces, warnings: [], unparseable: null };
}

/** Where (`file:line:column` of the text as written) and why a config does not parse. */
function parseProblem(file: string, error: unknown): { where: string; why: string } {
  if (error instanceof Json5SyntaxError) return { where: `${file}:${error.line}:${error.column}`, why: error.reason };
  return { where: file, why: describeError(error) };
}

/** `<file>:<line>:<column>: does not parse as JSON5 (<reason>)` with the way out, as an exit-1 error. */
export function configParseError(file: string, error: unknown): OperationError {
  const { where, why } = parseProblem(file, error);
  return new OperationError(
    "config_unparseable",
    `${where}: the config does not parse as JSON5 (${why}), so the workspaces it names are unknown; fix it, or run \`backup create --no-include-workspace\` to back up without the workspaces.`,
    { path: file },
  );
}
