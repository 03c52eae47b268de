// Where things sit inside an archive: asset roots, database locations, name limits, and where a recorded link leads.
import { PAYLOAD_DIR, type AssetKind } from "./types.js";

/** Longest single name (bytes) a Linux file system takes; longer names fail at restore with ENAMETOOLONG. */
export const NAME_MAX_BYTES = 255;
/** Longest archive path accepted (bytes): leaves room under PATH_MAX (4096) for the destination prefix. */
export const MAX_ARCHIVE_PATH_BYTES = 3800;
/** Longest symlink text Linux stores. */
export const MAX_LINK_TARGET_BYTES = 4095;
/** Symlinks followed while resolving one recorded link before it counts as a loop (Linux uses 40). */
const MAX_LINK_HOPS = 40;

export const STATE_ARCHIVE_PATH = `${PAYLOAD_DIR}/state`;
export const GLOBAL_DB_ARCHIVE_PATH = `${STATE_ARCHIVE_PATH}/state/openclaw.sqlite`;
const AGENT_DB_ARCHIVE_PATH = new RegExp(`^${STATE_ARCHIVE_PATH}/agents/([a-z0-9][a-z0-9_-]*)/agent/openclaw-agent\\.sqlite$`);
export const SQLITE_SIDECAR_SUFFIXES = ["-wal", "-shm", "-journal"] as const;

/** The archive path each asset kind must use (create writes exactly these; anything else is refused). */
export function assetPathProblem(kind: AssetKind, type: "dir" | "file", archivePath: string): string | null {
  const want: Record<AssetKind, { type: "dir" | "file"; path: RegExp; shape: string }> = {
    state: { type: "dir", path: new RegExp(`^${STATE_ARCHIVE_PATH}$`), shape: `${STATE_ARCHIVE_PATH}` },
    config: { type: "file", path: new RegExp(`^${PAYLOAD_DIR}/config/[^/]+$`), shape: `${PAYLOAD_DIR}/config/<name>` },
    credentials: { type: "dir", path: new RegExp(`^${PAYLOAD_DIR}/credentials$`), shape: `${PAYLOAD_DIR}/credentials` },
    workspace: { type: "dir", path: new RegExp(`^${PAYLOAD_DIR}/workspaces/[^/]+$`), shape: `${PAYLOAD_DIR}/workspaces/<name>` },
  };
  const rule = want[kind];
  if (type !== rule.type) return `a ${kind} asset must be a ${rule.type === "dir" ? "directory" : "file"}, the manifest says ${type === "dir" ? "directory" : "file"}`;
  if (!rule.path.test(archivePath)) return `a ${kind} asset must be archived at ${rule.shape}, not ${archivePath}`;
  return null;
}

/** The database role a path has by where it sits in the state asset, whatever the manifest says. */
export function roleAtArchivePath(archivePath: string): { role: "global" | "agent"; agentId: string | null } | null {
  if (archivePath === GLOBAL_DB_ARCHIVE_PATH) return { role: "global", agentId: null };
  const agent = AGENT_DB_ARCHIVE_PATH.exec(archivePath);
  return agent ? { role: "agent", agentId: agent[1]! } : null;
}

/** Why an archive path cannot be restored on Linux (a name over 255 bytes, a path over the limit), or null. */
export function pathLengthProblem(archivePath: string): string | null {
  if (Buffer.byteLength(archivePath) > MAX_ARCHIVE_PATH_BYTES) return `is ${Buffer.byteLength(archivePath)} bytes long, more than the ${MAX_ARCHIVE_PATH_BYTES} a restore can place`;
  const long = archivePath.split("/").find((seg) => Buffer.byteLength(seg) > NAME_MAX_BYTES);
  return long === undefined ? null : `has a ${Buffer.byteLength(long)}-byte name (file systems allow ${NAME_MAX_BYTES})`;
}

/**
 * Where a recorded symlink leads, resolved the way the kernel would inside the restored tree: component by
 * component, following the other recorded links (their targets resolved from where they sit), `..` applied
 * after the link before it. Returns why it leaves `root` (the asset's archive path), or null when it stays.
 */
export function linkEscape(linkPath: string, target: string, root: string, links: ReadonlyMap<string, string>): string | null {
  if (target.startsWith("/")) return `its target ${JSON.stringify(target)} is absolute`;
  const rootDepth = root.split("/").length;
  const stack = linkPath.split("/").slice(0, -1);
  let queue = target.split("/");
  let hops = 0;
  while (queue.length > 0) {
    const seg = queue.shift()!;
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (stack.length <= rootDepth) return `its target ${JSON.stringify(target)} leads out of ${root}`;
      stack.pop();
      continue;
    }
    stack.push(seg);
    const next = links.get(stack.join("/"));
    if (next === undefined) continue;
    hops += 1;
    if (hops > MAX_LINK_HOPS) return `its target ${JSON.stringify(target)} loops through other links`;
    if (next.startsWith("/")) return `its target ${JSON.stringify(target)} goes through ${stack.join("/")}, whose target is absolute`;
    stack.pop();
    queue = [...next.split("/"), ...queue];
  }
  return null;
}
