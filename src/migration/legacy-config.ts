// The legacy config as the migration reads it: `openclaw.json` parsed tolerantly, never written.
import path from "node:path";
import { readRegularTextSync } from "../core/safe-read.js";
import { parseTolerantJson } from "../core/tolerant-json.js";
import type { StatePaths } from "../state/paths.js";

/** The config (`OPENCLAW_CONFIG_PATH`, else `<root>/openclaw.json`), JSON5-tolerant; null when absent or unreadable. */
export function readLegacyConfig(paths: StatePaths, root: string): Record<string, unknown> | null {
  for (const file of [paths.configPath, path.join(root, "openclaw.json")]) {
    try {
      // A FIFO or device here must not hang the plan: it is refused unread (doctor names it).
      const config = parseTolerantJson(readRegularTextSync(file, { what: "config file" }));
      return typeof config === "object" && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>) : null;
    } catch {
      continue;
    }
  }
  return null;
}

/** `session.mainKey` from the config, lower-cased; "main" when absent. */
export function configuredMainKey(config: Record<string, unknown> | null): string {
  const key = (config?.session as { mainKey?: unknown } | undefined)?.mainKey;
  return typeof key === "string" && key.trim() !== "" ? key.trim().toLowerCase() : "main";
}

/** `session.mainKey` from the config (JSON5), lower-cased; "main" when absent or unreadable. */
export function readConfiguredMainKey(paths: StatePaths, root: string): string {
  return configuredMainKey(readLegacyConfig(paths, root));
}
