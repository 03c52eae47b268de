// What an archive argument names: a path, `latest`, or an id prefix from `backup list`, resolved among this state's listed archives.
import fs from "node:fs";
import path from "node:path";
import { NotFoundError, UsageError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import { SHORT_ID_MIN } from "./archive-id.js";
import { ARCHIVE_NAME_PATTERN } from "./compression.js";
import type { BackupListItem } from "./list-backups.js";

export interface ResolveArchiveOptions {
  paths: StatePaths;
  /** The argument as given. */
  ref: string;
  /** Backup directory to resolve `latest` and ids in (default: paths.backupDir, as `backup list`). */
  dir?: string;
  /** For telling a reference from a file of the same name (default: process.cwd()). */
  cwd?: string;
}

export interface ResolvedArchive {
  archivePath: string;
  /** How the argument was read: a path as given, `latest`, or an id prefix. */
  via: "path" | "latest" | "id";
  /** The archive's short id when resolved through the listing. */
  shortId?: string;
}

/** An id reference: at least 4 hex digits (the shown ids have 8; a shorter prefix still resolves when unique). */
const ID_REF = /^[0-9a-f]{4,64}$/i;

/** True when `ref` is read as `latest` or an id rather than as a path. */
export function isArchiveReference(ref: string): boolean {
  return ref === "latest" || ID_REF.test(ref);
}

/**
 * Resolves an archive argument. A path (anything with a slash, an archive suffix, `-` for stdin, or not shaped
 * like a reference) is returned as given. `latest` is the newest listed archive that exists, reads as ours and
 * did not fail; an id prefix must match exactly one listed archive that exists. Ambiguity is a usage error
 * (exit 2) naming the candidates; a reference that matches nothing is not_found (exit 1) naming the directory.
 */
export async function resolveArchiveRef(options: ResolveArchiveOptions): Promise<ResolvedArchive> {
  const { ref } = options;
  if (ref === "-" || ref.includes("/") || ref.includes(path.sep) || ARCHIVE_NAME_PATTERN.test(ref) || !isArchiveReference(ref)) {
    return { archivePath: ref, via: "path" };
  }
  const cwd = options.cwd ?? process.cwd();
  const local = path.resolve(cwd, ref);
  if (fs.existsSync(local)) {
    throw new UsageError(`${JSON.stringify(ref)} is both a file in ${cwd} and an archive reference; pass ./${ref} for the file, or the archive's full path.`, "ambiguous_archive");
  }
  // Loaded only for a reference: the listing reads backup_runs through the storage core (Kysely, ~0.2 CPU-s to
  // load), which a plain path — most restores and verifies — never needs.
  const { listBackups } = await import("./list-backups.js");
  const listed = await listBackups({ paths: options.paths, dir: options.dir });
  const where = listed.backupDir;
  const present = listed.backups.filter((b) => b.exists && b.archivePath !== "");
  if (ref === "latest") {
    const usable = present.filter((b) => b.status !== "failed" && b.manifestOk !== false);
    const newest = usable[0];
    if (!newest) {
      throw new NotFoundError(`There is no archive for \`latest\` in ${where}${present.length > 0 ? ` (${present.length} listed, none readable as a completed backup)` : ""}; take one with \`openclaw-state backup create\`, or name an archive by its path.`);
    }
    const tied = usable.filter((b) => b.createdAt === newest.createdAt && b.archivePath !== newest.archivePath);
    if (tied.length > 0) throw ambiguous(ref, [newest, ...tied], "have the same newest time");
    return { archivePath: newest.archivePath, via: "latest", ...(newest.shortId ? { shortId: newest.shortId } : {}) };
  }
  const prefix = ref.toLowerCase();
  const matches = present.filter((b) => b.id !== null && b.id.startsWith(prefix));
  if (matches.length === 0) {
    throw new NotFoundError(`No archive in ${where} has an id starting with ${prefix}; \`openclaw-state backup list\` shows the ids (or name the archive by its path).`);
  }
  if (matches.length > 1) throw ambiguous(ref, matches, new Set(matches.map((m) => m.id)).size === 1 ? "are copies with the same id" : `share the prefix ${prefix}`);
  const only = matches[0]!;
  return { archivePath: only.archivePath, via: "id", ...(only.shortId ? { shortId: only.shortId } : {}) };
}

function ambiguous(ref: string, candidates: readonly BackupListItem[], why: string): UsageError {
  const named = candidates.map((c) => `${c.id ? c.id.slice(0, Math.max(SHORT_ID_MIN, c.shortId?.length ?? 0)) : "-"} ${c.archivePath}`).join(", ");
  return new UsageError(`${JSON.stringify(ref)} is ambiguous: ${candidates.length} archives ${why} (${named}); name one by a longer id or its path.`, "ambiguous_archive");
}
