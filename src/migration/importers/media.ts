// Importer for legacy media files (`<stateDir>/media/<subdir>/<id>`, and the config dir's media/ when the config
// lives elsewhere) → media_blobs, one source per file so each is verified and retired on its own.
//
// Layout (OpenClaw src/media/store.ts): `media/<subdir>/<id>` with subdirs such as inbound/ and outbound/, ids
// `<name>---<uuid>.<ext>`; `*.tmp` files are unfinished downloads and are not media. A blob is one BLOB value, so
// a file is read whole (SQLite has no streaming bind): files over MAX_MEDIA_BYTES stay where they are, which bounds
// the import's memory and loses nothing, because OpenClaw 2026.9.6 keeps media as files under media/ (the format
// upgrade writes every imported blob back there), so a large file left in place is already where it reads it.
import fs from "node:fs";
import path from "node:path";
import { OperationError } from "../../core/errors.js";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { compareText, sourceRelativePath } from "../inventory.js";
import { assertUnchanged, sha256Of } from "../json-source.js";
import { hashFile } from "../line-stream.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource, SourceInspection } from "../types.js";

export const MAX_MEDIA_BYTES = 64 * 1024 * 1024;
/** Why a large media file is not imported; it stays a live file, which is where OpenClaw's format keeps media. */
export const LARGE_MEDIA_REASON = `larger than ${MAX_MEDIA_BYTES / 1048576} MiB; it stays in media/ as it is, where OpenClaw 2026.9.6 reads media files (nothing to do)`;
const MAX_DEPTH = 4;

const CONTENT_TYPES: Record<string, string> = {
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".heic": "image/heic",
  ".svg": "image/svg+xml",
  ".mp3": "audio/mpeg",
  ".m4a": "audio/mp4",
  ".ogg": "audio/ogg",
  ".oga": "audio/ogg",
  ".opus": "audio/opus",
  ".wav": "audio/wav",
  ".mp4": "video/mp4",
  ".mov": "video/quicktime",
  ".webm": "video/webm",
  ".pdf": "application/pdf",
  ".txt": "text/plain",
  ".json": "application/json",
  ".zip": "application/zip",
};

export function contentTypeOf(id: string): string | null {
  return CONTENT_TYPES[path.extname(id).toLowerCase()] ?? null;
}

function mediaRoots(ctx: DetectContext): string[] {
  const roots = [path.join(ctx.root, "media")];
  const configMedia = path.join(path.dirname(ctx.paths.configPath), "media");
  if (path.resolve(path.dirname(ctx.paths.configPath)) !== path.resolve(ctx.paths.stateDir) && !roots.some((r) => path.resolve(r) === path.resolve(configMedia))) roots.push(configMedia);
  return roots;
}

/** `<root>/<subdir…>/<id>` → the blob's (subdir, id): subdir is the relative directory ("" for files at the top). */
function blobKey(file: string, root: string): { subdir: string; id: string } {
  const rel = path.relative(root, file).split(path.sep);
  return { subdir: rel.slice(0, -1).join("/"), id: rel[rel.length - 1]! };
}

function detect(ctx: DetectContext): DetectedSource[] {
  const found: DetectedSource[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => compareText(a.name, b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < MAX_DEPTH) walk(p, depth + 1);
      else if (e.isFile() && !e.name.endsWith(".tmp") && !e.name.startsWith(".")) found.push({ kind: "media", agentId: null, path: p, relativePath: sourceRelativePath(ctx.root, p), legacyRoot: false });
    }
  };
  for (const root of mediaRoots(ctx)) walk(root, 0);
  return found;
}

function inspect(source: DetectedSource): SourceInspection {
  const { sha256, sizeBytes } = hashFile(source.path);
  if (sizeBytes > MAX_MEDIA_BYTES) {
    return { sha256, sizeBytes, records: 1, notes: [], skipReason: LARGE_MEDIA_REASON };
  }
  return { sha256, sizeBytes, records: 1, notes: [] };
}

function rootOf(file: string, ctx: { paths: { stateDir: string; configPath: string } }): string {
  const roots = [path.join(ctx.paths.stateDir, "media"), path.join(path.dirname(ctx.paths.configPath), "media")];
  return roots.find((r) => !path.relative(r, file).startsWith("..")) ?? path.dirname(file);
}

function importMedia(db: GlobalDatabase, source: PlannedSource, ctx: { paths: { stateDir: string; configPath: string } }): ImportCounts {
  const size = fs.statSync(source.path).size;
  if (size > MAX_MEDIA_BYTES) throw new OperationError("source_too_large", `${source.path} is larger than ${MAX_MEDIA_BYTES / 1048576} MiB; it was left in place.`, { path: source.path });
  const bytes = fs.readFileSync(source.path);
  assertUnchanged(source, sha256Of(bytes));
  const { subdir, id } = blobKey(source.path, rootOf(source.path, ctx));
  const contentType = contentTypeOf(id);
  db.prepare(
    "INSERT INTO media_blobs (subdir, id, content_type, size_bytes, blob, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (subdir, id) DO UPDATE SET content_type = excluded.content_type, size_bytes = excluded.size_bytes, blob = excluded.blob, updated_at = excluded.updated_at",
  ).run(subdir, id, contentType, bytes.length, bytes, source.mtimeMs, source.mtimeMs);
  return {
    records: 1,
    rows: { media_blobs: 1 },
    skipped: 0,
    warnings: [],
    notes: contentType ? [] : [`no content type known for ${JSON.stringify(path.extname(id) || id)}: stored without one`],
    expect: { subdir, id, size: bytes.length, sha256: source.sha256 ?? "" },
  };
}

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const row = db.prepare("SELECT size_bytes, length(blob) AS n FROM media_blobs WHERE subdir = ? AND id = ?").get(expected.expect.subdir, expected.expect.id) as { size_bytes: number; n: number } | undefined;
  if (!row) return `media blob ${String(expected.expect.id)} missing after commit`;
  return row.n === Number(expected.expect.size) && row.size_bytes === row.n ? null : `media blob ${String(expected.expect.id)}: ${row.n} bytes stored, ${String(expected.expect.size)} expected`;
}

export const mediaImporter: GlobalSourceImporter = {
  kind: "media",
  target: "global",
  label: { one: "legacy media file", many: "legacy media files", records: "files" },
  targetTable: "media_blobs",
  targetTables: ["media_blobs"],
  detect,
  inspect,
  import: importMedia,
  verify,
};
