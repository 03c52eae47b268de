// What is at the state dir path, and the checks commands make before using it: a missing dir is "no state
// here" for read commands, and anything but a directory is refused by every command that writes.
import { describePathKind, pathKind, type PathKind } from "../core/safe-read.js";
import { OperationError } from "../core/errors.js";
import type { StatePaths } from "./paths.js";

export type StateDirStatus = "directory" | "missing" | "not-a-directory";

export interface StateDirInfo {
  path: string;
  status: StateDirStatus;
  /** What is there: "a regular file", "a symlink to a FIFO (named pipe)", "a dangling symlink", … */
  description: string;
  kind: PathKind;
}

/** A symlink to a directory counts as a directory (reset refuses links separately). */
export function inspectStateDir(paths: StatePaths): StateDirInfo {
  const kind = pathKind(paths.stateDir);
  const isDir = kind.kind === "directory" || (kind.kind === "symlink" && kind.target === "directory");
  const status: StateDirStatus = kind.kind === null ? "missing" : isDir ? "directory" : "not-a-directory";
  return { path: paths.stateDir, status, description: kind.kind === null ? "missing" : describePathKind(kind), kind };
}

/** Exit 1, `--json` code `state_not_a_directory`: the state dir path holds something else. */
export function notADirectoryError(info: StateDirInfo, action: string): OperationError {
  return new OperationError(
    "state_not_a_directory",
    `The state dir ${info.path} is ${info.description}, not a directory; ${action}. Check --state-dir / OPENCLAW_STATE_DIR, or move that file aside.`,
    { path: info.path },
  );
}

/** Exit 1, `--json` code `no_state`: nothing at the state dir path (a mistyped --state-dir?). */
export function noStateError(info: StateDirInfo): OperationError {
  return new OperationError(
    "no_state",
    `No OpenClaw state at ${info.path}: the directory does not exist. Check --state-dir / OPENCLAW_STATE_DIR (or run \`openclaw-state doctor --fix\` to start a new, empty state there).`,
    { path: info.path },
  );
}

/**
 * `read`: the state must exist as a directory (read commands; a missing dir is an error, not an empty,
 * healthy state). `write`: it may be missing (the command creates or restores it) but must not be anything
 * other than a directory.
 */
export function assertStateDir(paths: StatePaths, need: "read" | "write"): StateDirInfo {
  const info = inspectStateDir(paths);
  if (info.status === "not-a-directory") throw notADirectoryError(info, need === "write" ? "nothing was changed" : "there is no state to read");
  if (info.status === "missing" && need === "read") throw noStateError(info);
  return info;
}

/**
 * The config path holds something other than a regular file (a FIFO, device, directory, link to one):
 * every reader refuses it unread, and this sentence says so; null when it is a file or absent.
 */
export function configPathProblem(paths: StatePaths): string | null {
  const kind = pathKind(paths.configPath);
  if (kind.kind === null || kind.kind === "file" || (kind.kind === "symlink" && kind.target === "file")) return null;
  return `The config path ${paths.configPath} is ${describePathKind(kind)}, not a regular file: it was not read, so config defaults apply (workspaces, session.mainKey).`;
}
