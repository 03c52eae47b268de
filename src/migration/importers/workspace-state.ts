// Importer for agent workspaces' `.openclaw/workspace-state.json` (bootstrap/setup markers) → workspace_setup_state.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { resolveConfigPath } from "../../backup/config-workspaces.js";
import { isWorkspaceDirName } from "../../state/paths.js";
import { sourceRelativePath } from "../inventory.js";
import { isObject, shapeError } from "../json-source.js";
import type { DetectContext, DetectedSource } from "../types.js";
import { jsonRowsImporter, ms, num, row } from "./json-rows.js";

const STATE_SEGMENTS = [".openclaw", "workspace-state.json"] as const;

/**
 * Workspaces the runtime seeds: the default ones inside the state dir (`workspace`, `workspace-<agent>`)
 * and every `agents.defaults.workspace` / `agents.list[].workspace` of the config.
 */
function workspaceDirs(ctx: DetectContext): string[] {
  const dirs = new Set<string>();
  try {
    for (const name of fs.readdirSync(ctx.root)) if (isWorkspaceDirName(name)) dirs.add(path.join(ctx.root, name));
  } catch {
    // No state dir yet: only configured workspaces.
  }
  const agents = isObject(ctx.config) && isObject(ctx.config.agents) ? ctx.config.agents : null;
  const configured: unknown[] = [];
  if (agents && isObject(agents.defaults)) configured.push(agents.defaults.workspace);
  if (agents && Array.isArray(agents.list)) for (const a of agents.list) if (isObject(a)) configured.push(a.workspace);
  for (const raw of configured) if (typeof raw === "string" && raw.trim() !== "") dirs.add(resolveConfigPath(raw.trim(), ctx.paths));
  return [...dirs].sort();
}

/** The row key the runtime uses for a workspace: a hash of its resolved path, so moves of the state dir do not matter. */
export function workspaceKey(workspaceDir: string): string {
  return crypto.createHash("sha256").update(path.resolve(workspaceDir)).digest("hex");
}

function detect(ctx: DetectContext): DetectedSource[] {
  const found: DetectedSource[] = [];
  for (const dir of workspaceDirs(ctx)) {
    const file = path.join(dir, ...STATE_SEGMENTS);
    try {
      if (!fs.lstatSync(file).isFile()) continue;
    } catch {
      continue;
    }
    found.push({ kind: "workspace-state", agentId: null, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false });
  }
  return found;
}

/**
 * `{version, bootstrapSeededAt?, setupCompletedAt?}` with ISO timestamps; older files say `onboardingCompletedAt`.
 * Shape from OpenClaw's agent workspace code and its tests (`.openclaw/workspace-state.json`).
 * A workspace outside the state dir is not in the pre-migration backup, so the framework moves its file under
 * migrated/<runId>/ (never deletes it), like every source outside the state dir.
 */
export const workspaceStateImporter = jsonRowsImporter({
  kind: "workspace-state",
  label: { one: "legacy workspace-state file", many: "legacy workspace-state files", records: "workspaces" },
  targetTable: "workspace_setup_state",
  targetTables: ["workspace_setup_state"],
  detect,
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    const workspaceDir = path.dirname(path.dirname(source.path));
    return {
      records: 1,
      rows: [
        row("workspace_setup_state", ["workspace_key"], {
          workspace_key: workspaceKey(workspaceDir),
          workspace_path: workspaceDir,
          version: num(v.version) ?? 1,
          bootstrap_seeded_at: ms(v.bootstrapSeededAt),
          setup_completed_at: ms(v.setupCompletedAt) ?? ms(v.onboardingCompletedAt),
          updated_at: source.mtimeMs,
        }),
      ],
    };
  },
});
