// `migrate skip <path> --reason …`: sets one legacy file aside under migrated/<run>/skipped/, recorded in the ledger.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { OperationError, UsageError } from "../core/errors.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { acquireMaintenanceLease } from "../state/lease.js";
import { openLedgerDatabase, type GlobalDatabase } from "../state/state-databases.js";
import { newRunId } from "./apply-migration.js";
import { sha256Of } from "./json-source.js";
import { sourceRelativePath } from "./inventory.js";
import { classifyPath, type PathClass } from "./legacy-inventory.js";
import { finishRun, sourceKeyFor, writeSource } from "./ledger.js";
import { detectSources } from "./plan-migration.js";
import { retiredPath, sourceBoundary } from "./retire.js";
import type { DetectedSource, RunTotals, SourceImporter, SourceOutcome } from "./types.js";
import { checkOwnedPath, prepareOwnedDestination, UnsafeOwnedPathError } from "../state/owned-path.js";
import { fsyncDir } from "../state/private-fs.js";

export interface SkipSourceOptions {
  paths: StatePaths;
  /** Open for writing with the maintenance lease held (not needed for a dry run). */
  global?: GlobalDatabase;
  /** As `migrate plan` prints it (relative to the state dir), or absolute. */
  target: string;
  reason: string;
  dryRun?: boolean;
}

export interface SkipSourceResult {
  runId: string | null;
  dryRun: boolean;
  path: string;
  relativePath: string;
  /** The importer kind when the file is a planned source, else its inventory class. */
  kind: string;
  class: PathClass["class"];
  reason: string;
  movedTo: string;
}

const SKIP_NEXT_STEP =
  "migrate skip moves only regular files and directories reached through the state dir's own directories: remove the link or special file by hand if it is not wanted.";

/** Relative paths are read as `migrate plan` prints them: relative to the state dir. */
function resolveTarget(paths: StatePaths, root: string, target: string): string {
  if (target.trim() === "") throw new UsageError("migrate skip needs the path of a legacy file (as `migrate plan` prints it).");
  return path.isAbsolute(target) ? path.resolve(target) : path.resolve(root, target);
}

export function skipSource(options: SkipSourceOptions): SkipSourceResult {
  const { paths } = options;
  const reason = options.reason.trim();
  if (reason === "") throw new UsageError("migrate skip needs --reason <text>: the ledger records why the file was set aside.");
  const detection = detectSources(paths);
  const root = detection.inv.root;
  const abs = resolveTarget(paths, root, options.target);
  const bySource = new Map<string, { importer: SourceImporter; source: DetectedSource }>(detection.detected.map((d) => [path.resolve(d.source.path), d]));
  const cls = classifyPath(root, abs, new Set(bySource.keys()), detection.live);
  const shown = sourceRelativePath(root, abs);
  if (cls.type === "missing") throw new OperationError("not_found", `${abs} does not exist; \`openclaw-state migrate plan\` lists the legacy files (nothing was changed).`, { path: abs });
  const planned = bySource.get(abs);
  if (!planned && !isPathInside(path.resolve(root), abs)) {
    throw new OperationError("skip_outside", `${abs} is outside the state dir and is not a legacy source: migrate skip only sets aside legacy files (nothing was changed).`, { path: abs });
  }
  // Before anything is opened or moved: a symlinked parent would move a file from elsewhere, a FIFO would block.
  const owned = checkOwnedPath(sourceBoundary(paths, abs, [root]), abs, { action: "set aside", next: SKIP_NEXT_STEP });
  if (cls.class === "current") throw new OperationError("skip_current", `${shown} is current state (${cls.reason}), not a legacy file: it is not set aside (nothing was changed).`, { path: abs });
  if (cls.class === "imported" && !planned) throw new OperationError("skip_current", `${shown} is not a legacy file (nothing was changed).`, { path: abs });
  if (cls.class === "plugin") {
    throw new OperationError("skip_plugin", `${shown} belongs to the ${cls.owner ?? "a"} plugin's own migration (${cls.reason}); setting it aside would hide it from that migration. Run \`openclaw doctor --fix\` with the plugin installed (nothing was changed).`, { path: abs });
  }
  if (cls.type === "dir") {
    const holdsSources = [...bySource.keys()].some((p) => isPathInside(abs, p));
    if (holdsSources) throw new OperationError("skip_dir", `${shown} is a directory holding legacy sources: skip its files one by one (nothing was changed).`, { path: abs });
  }
  const kind = planned ? planned.importer.kind : cls.class;
  const runId = options.dryRun ? null : newRunId(Date.now());
  const relative = planned ? planned.source.relativePath : shown;
  const movedTo = retiredPath(paths.stateDir, runId ?? "<run id>", `skipped/${relative.replace(/^\/+/, "")}`);
  const result: SkipSourceResult = { runId, dryRun: Boolean(options.dryRun), path: abs, relativePath: relative, kind, class: cls.class, reason, movedTo };
  if (options.dryRun) {
    // migrated/ reached through a link is refused now, not only when the move is tried.
    checkOwnedPath(paths.stateDir, movedTo, { action: "set aside into", allowMissing: true, next: SKIP_NEXT_STEP });
    return result;
  }
  if (!options.global) throw new Error("skipSource needs the global database unless dryRun");
  const global = options.global;

  // Hash, move, then record: the ledger only ever says what happened (a crash in between leaves the file
  // under migrated/, unrecorded but never lost).
  let sha256: string | null = null;
  let sizeBytes = 0;
  if (owned.kind === "file") {
    try {
      ({ sha256, sizeBytes } = hashRegularFile(abs));
    } catch (error) {
      if (error instanceof UnsafeOwnedPathError) throw error;
      // Unreadable (EACCES…): still set aside, recorded without a hash.
      sizeBytes = owned.stat!.size;
    }
  }
  const mtimeMs = Math.trunc(owned.stat!.mtimeMs);
  prepareOwnedDestination(paths.stateDir, movedTo, "set aside into");
  try {
    fs.renameSync(abs, movedTo);
  } catch (error) {
    throw new OperationError("skip_move_failed", `Cannot move ${abs} to ${movedTo} (${(error as Error).message}); nothing was changed.`, { path: abs, cause: error });
  }
  fsyncDir(path.dirname(movedTo));
  fsyncDir(path.dirname(abs));
  const startedAt = Date.now();
  const targetTable = planned ? planned.importer.targetTable : cls.target ?? "";
  const outcome: SourceOutcome = {
    kind: (planned ? planned.importer.kind : kind) as SourceOutcome["kind"],
    agentId: planned?.source.agentId ?? null,
    path: abs,
    relativePath: relative,
    sizeBytes,
    mtimeMs,
    sha256,
    targetTable,
    action: "skip",
    status: "skipped",
    reason: `set aside by migrate skip: ${reason}`,
    warnings: [],
    notes: [],
    retired: "moved",
    retiredTo: movedTo,
  };
  const totals: RunTotals = { sources: 1, imported: 0, alreadyImported: 0, failed: 0, skipped: 1, retired: 1, records: 0, bytes: 0 };
  const report = { kind: "skip" as const, stateDir: paths.stateDir, backupPath: null, backupSkipped: false, replanned: false, plan: null, sources: [outcome], changes: [`set aside ${relative} → ${movedTo}`], warnings: [], totals };
  finishRun(global, { runId: runId!, startedAt, finishedAt: startedAt, status: "completed" }, report);
  writeSource(global, {
    key: sourceKeyFor(outcome.kind, relative, targetTable, sha256 ?? sha256Of(`unreadable:${relative}`), sizeBytes),
    kind: outcome.kind,
    relativePath: relative,
    targetTable,
    sha256,
    sizeBytes,
    records: null,
    runId: runId!,
    status: "skipped",
    importedAt: null,
    removed: true,
    report: { ...outcome, mtime: new Date(outcome.mtimeMs).toISOString() },
  });
  return result;
}

/**
 * sha256 and size, opened without following a link and without blocking; the descriptor must still be a regular
 * file (one swapped for a FIFO or a link since the check is refused, nothing moved).
 */
function hashRegularFile(file: string): { sha256: string; sizeBytes: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new UnsafeOwnedPathError(file, "it was replaced by a symbolic link after it was checked", "set aside", SKIP_NEXT_STEP);
    throw error;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new UnsafeOwnedPathError(file, "it was replaced by something other than a regular file after it was checked", "set aside", SKIP_NEXT_STEP);
    const hash = crypto.createHash("sha256");
    const buf = Buffer.allocUnsafe(1 << 20);
    let size = 0;
    for (let n = fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = fs.readSync(fd, buf, 0, buf.length, null)) {
      size += n;
      hash.update(buf.subarray(0, n));
    }
    return { sha256: hash.digest("hex"), sizeBytes: size };
  } finally {
    fs.closeSync(fd);
  }
}

export interface MigrateSkipOptions extends Omit<SkipSourceOptions, "global"> {
  /** Take the maintenance lease even when another live process holds it. */
  force?: boolean;
}

/** Validates first (nothing is created for a refused path), then skips under the maintenance lease. */
export function migrateSkip(options: MigrateSkipOptions): SkipSourceResult {
  const checked = skipSource({ ...options, dryRun: true });
  if (options.dryRun) return checked;
  // The ledger may be OpenClaw's own (a state `doctor --fix` left in its format): the skip row goes there.
  const global = openLedgerDatabase(options.paths, { mode: "write", create: true });
  try {
    const lease = acquireMaintenanceLease(global, { command: "migrate skip", force: options.force });
    try {
      return skipSource({ ...options, global, dryRun: false });
    } finally {
      lease.release();
    }
  } finally {
    global.close();
  }
}
