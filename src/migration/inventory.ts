// Read-only inventory of the legacy tree: sessions dirs, archived leftovers, old layouts and old state dirs.
import fs from "node:fs";
import path from "node:path";
import { tryNormalizeAgentId } from "../state/agent-id.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { readLegacyConfig } from "./legacy-config.js";
import { resolveLegacyDefaultAgent } from "./legacy-default-agent.js";
import type { AgentDir, LayoutItem, LeftoverItem, SessionsDir } from "./types.js";

/** State dirs of the product's earlier names, looked for in the home dir. */
export const LEGACY_STATE_DIR_NAMES = [".clawdbot", ".moldbot", ".moltbot"] as const;

const LEFTOVER_PATTERNS: Array<[RegExp, LeftoverItem["pattern"]]> = [
  [/\.jsonl\.reset\.[^/]+$/, "reset"],
  [/\.jsonl\.deleted\.[^/]+$/, "deleted"],
  [/^sessions\.json\.bak(\..+)?$/, "bak"],
];

export interface Inventory {
  /** Where legacy sources are read: the state dir, or a legacy state dir that `--fix` moves into its place. */
  root: string;
  sessionsDirs: SessionsDir[];
  /** The agent that owns main-agent-by-default data (root `sessions/`, the old `agent/` dir): the config's default agent. */
  defaultAgentId: string;
  /** Every `agents/<id>/` with a valid id (whatever it holds). */
  agentDirs: AgentDir[];
  leftovers: LeftoverItem[];
  layout: LayoutItem[];
  notes: string[];
}

function lstat(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

function regularFiles(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/** Code-unit order: locale-independent (the same plan on every machine) and cheap for thousands of sources. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function toPosix(rel: string): string {
  return rel.split(path.sep).join("/");
}

/** A source's stable name: relative to the root with "/" separators, or its absolute path when outside it. */
export function sourceRelativePath(root: string, file: string): string {
  // isPathInside, not a ".." prefix test: a file named `..x` is inside the root.
  const rel = path.relative(root, file);
  return rel !== "" && isPathInside(root, file) ? toPosix(rel) : toPosix(path.resolve(file));
}

/** True when `file` is a regular file (symlinks and directories are not sources). */
export function isRegularFile(file: string): boolean {
  return lstat(file)?.isFile() ?? false;
}

/** Regular file names of a directory, sorted; [] when it does not exist. */
export function listRegularFiles(dir: string): string[] {
  return regularFiles(dir);
}

/** The default layout (`<home>/.openclaw`): only then may a legacy state dir be moved into its place. */
export function isDefaultStateDir(paths: StatePaths): boolean {
  return path.resolve(paths.stateDir) === path.join(paths.homeDir, ".openclaw");
}

/** Legacy `~/.clawdbot`-style dirs: the first one is moved by --fix when `~/.openclaw` does not exist yet. */
export function legacyStateDirItems(paths: StatePaths): LayoutItem[] {
  const items: LayoutItem[] = [];
  const stateExists = lstat(paths.stateDir) !== null;
  const movable = isDefaultStateDir(paths) && !stateExists;
  for (const name of LEGACY_STATE_DIR_NAMES) {
    const dir = path.join(paths.homeDir, name);
    const st = lstat(dir);
    if (!st) continue;
    if (st.isSymbolicLink()) {
      // The product leaves a link behind after moving the dir itself: nothing left to do.
      let target: string | null = null;
      try {
        target = fs.realpathSync(dir);
      } catch {
        target = null;
      }
      if (target !== null && lstat(paths.stateDir) && target === fs.realpathSync(paths.stateDir)) continue;
      items.push({ kind: "legacy-state-dir", path: dir, target: paths.stateDir, action: "report", reason: "is a symlink; left alone" });
      continue;
    }
    if (!st.isDirectory()) continue;
    if (movable && !items.some((i) => i.action === "move")) {
      items.push({ kind: "legacy-state-dir", path: dir, target: paths.stateDir, action: "move", reason: `${paths.stateDir} does not exist: \`doctor --fix\` moves this legacy state dir there, then migrates it` });
    } else {
      const why = !isDefaultStateDir(paths) ? "the state dir is not the default ~/.openclaw" : stateExists ? `${paths.stateDir} already exists` : "another legacy state dir is moved instead";
      items.push({ kind: "legacy-state-dir", path: dir, target: paths.stateDir, action: "report", reason: `not moved: ${why}; merge or remove it by hand` });
    }
  }
  return items;
}

/** Everything the importers and the layout step need to know about the tree; reads directory listings only. */
export function takeInventory(paths: StatePaths): Inventory {
  const layout = legacyStateDirItems(paths);
  const move = layout.find((i) => i.kind === "legacy-state-dir" && i.action === "move");
  const root = move ? move.path : paths.stateDir;
  const notes: string[] = [];
  const sessionsDirs: SessionsDir[] = [];

  const agentsDir = path.join(root, "agents");
  let agentNames: string[] = [];
  try {
    agentNames = fs
      .readdirSync(agentsDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    agentNames = [];
  }
  const agentDirs: AgentDir[] = agentNames
    .filter((name) => tryNormalizeAgentId(name) === name)
    .map((name) => ({ agentId: name, dir: path.join(agentsDir, name), agentDir: path.join(agentsDir, name, "agent") }));
  for (const name of agentNames) {
    const dir = path.join(agentsDir, name, "sessions");
    const st = lstat(dir);
    if (!st || !st.isDirectory()) continue;
    if (tryNormalizeAgentId(name) !== name) {
      notes.push(`agents/${name}/sessions ignored: ${JSON.stringify(name)} is not a valid agent id (rename the directory to a lower-case id)`);
      continue;
    }
    sessionsDirs.push({ agentId: name, dir, legacyRoot: false, files: regularFiles(dir) });
  }
  // Root sessions/ and agent/ predate multi-agent: they belong to the config's default agent, as upstream's doctor moves them.
  const owner = resolveLegacyDefaultAgent(readLegacyConfig(paths, root));
  const defaultAgentId = owner.agentId;
  const rootSessions = path.join(root, "sessions");
  const rootSt = lstat(rootSessions);
  if (rootSt?.isDirectory()) sessionsDirs.push({ agentId: defaultAgentId, dir: rootSessions, legacyRoot: true, files: regularFiles(rootSessions) });

  const leftovers: LeftoverItem[] = [];
  for (const d of sessionsDirs) {
    for (const name of d.files) {
      const match = LEFTOVER_PATTERNS.find(([re]) => re.test(name));
      if (!match) continue;
      const full = path.join(d.dir, name);
      leftovers.push({ path: full, relativePath: toPosix(path.relative(root, full)), sizeBytes: lstat(full)?.size ?? 0, pattern: match[1] });
    }
  }

  const oldAgentDir = path.join(root, "agent");
  const agentSt = lstat(oldAgentDir);
  const agentTarget = path.join(root, "agents", defaultAgentId, "agent");
  if (agentSt?.isDirectory()) {
    layout.push({
      kind: "legacy-agent-dir",
      path: oldAgentDir,
      target: agentTarget,
      action: "move",
      reason: `pre-multi-agent agent dir: \`doctor --fix\` moves its entries into agents/${defaultAgentId}/agent/ (existing entries there are kept)`,
    });
  } else if (agentSt?.isSymbolicLink()) {
    layout.push({ kind: "legacy-agent-dir", path: oldAgentDir, target: agentTarget, action: "report", reason: "is a symlink; left alone" });
  }
  if (owner.reason && (rootSt?.isDirectory() || agentSt?.isDirectory())) {
    notes.push(`root sessions/ and agent/ belong to agent "${defaultAgentId}": ${owner.reason}`);
  }
  return { root, sessionsDirs, defaultAgentId, agentDirs, leftovers, layout, notes };
}
