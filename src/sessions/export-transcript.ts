// Writes one transcript as JSONL for support, page by page through the bounded reader: 0600, temp + link, never overwrites.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describeError, OperationError } from "../core/errors.js";
import { removeOwnedFile } from "../state/owned-path.js";
import { fsyncDir, pathExists, PRIVATE_FILE_MODE } from "../state/private-fs.js";
import { assertNotLegacyDestination } from "../migration/export-guard.js";
import type { StatePaths } from "../state/paths.js";
import type { AgentDatabase } from "../state/state-databases.js";
import { readTranscriptEvents, TRANSCRIPT_MAX_BYTES_CAP, TRANSCRIPT_MAX_EVENTS_CAP, type TranscriptEvent } from "../state/transcript-reader.js";

/** 1 MiB pages keep memory flat whatever the transcript size (larger pages only grow the GC backlog). */
const EXPORT_PAGE_BYTES = 1024 * 1024;

export interface ExportTranscriptOptions {
  /** An open agent DB (its read snapshot, if any, makes the export consistent); or `paths` to open one. */
  db?: AgentDatabase;
  paths?: StatePaths;
  agentId: string;
  sessionId: string;
  /** Absolute path of the file to create; it must not exist. */
  file: string;
}

export interface ExportTranscriptResult {
  path: string;
  events: number;
  bytes: number;
}

/**
 * Refuses an existing target before anything is read, and again atomically when the file is published; with
 * `paths`, also a target the next `doctor --fix` would import as legacy state (a session folder, a legacy name).
 */
export function assertExportTarget(file: string, paths?: StatePaths): void {
  if (paths) assertNotLegacyDestination(paths, file);
  if (pathExists(file)) {
    throw new OperationError("export_exists", `Export target ${file} already exists; choose another --export path (nothing was written).`, { path: file });
  }
  const dir = path.dirname(file);
  if (!isDirectory(dir)) {
    throw new OperationError("export_dir_missing", `Cannot export to ${file}: directory ${dir} does not exist; create it or choose another --export path.`, { path: file });
  }
}

export function exportTranscript(options: ExportTranscriptOptions): ExportTranscriptResult {
  const file = options.file;
  assertExportTarget(file, options.paths);
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.tmp-${crypto.randomBytes(6).toString("hex")}`);
  const fd = fs.openSync(temp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, PRIVATE_FILE_MODE);
  let events = 0;
  let bytes = 0;
  let published = false;
  try {
    const read = (cursor: string | undefined, maxBytes: number) =>
      readTranscriptEvents({ db: options.db, paths: options.paths, agentId: options.agentId, sessionId: options.sessionId, cursor, maxEvents: TRANSCRIPT_MAX_EVENTS_CAP, maxBytes });
    let cursor: string | undefined;
    for (;;) {
      let result = read(cursor, EXPORT_PAGE_BYTES);
      if (result.kind === "page" && result.events.length === 0 && result.requiredBytes !== undefined) {
        if (result.requiredBytes > TRANSCRIPT_MAX_BYTES_CAP) {
          throw new OperationError("event_too_large", `Session ${options.sessionId} has a transcript event of ${result.requiredBytes} bytes, above the ${TRANSCRIPT_MAX_BYTES_CAP}-byte read cap; export stopped and ${file} was not created.`);
        }
        result = read(cursor, result.requiredBytes);
      }
      if (result.kind === "missing") break;
      if (result.kind === "reset") {
        throw new OperationError("transcript_changed", `The transcript of session ${options.sessionId} changed during the export (${result.reason}); ${file} was not created, run the export again.`);
      }
      if (result.events.length > 0) {
        const chunk = toJsonl(result.events);
        writeAll(fd, chunk);
        events += result.events.length;
        bytes += chunk.length;
      }
      if (!result.hasMore) break;
      cursor = result.nextCursor;
    }
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    publish(temp, file);
    published = true;
    fsyncDir(dir);
    return { path: file, events, bytes };
  } finally {
    if (!published) {
      try {
        fs.closeSync(fd);
      } catch {
        // Already closed before a failed publish.
      }
      removeOwnedFile(dir, temp);
    }
  }
}

/** One buffer per page, filled in place (no joined intermediate string). */
function toJsonl(events: TranscriptEvent[]): Buffer {
  let size = events.length;
  for (const e of events) size += Buffer.byteLength(e.json, "utf8");
  const chunk = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const e of events) {
    offset += chunk.write(e.json, offset, "utf8");
    chunk[offset++] = 0x0a;
  }
  return chunk;
}

function writeAll(fd: number, chunk: Buffer): void {
  let offset = 0;
  while (offset < chunk.length) offset += fs.writeSync(fd, chunk, offset, chunk.length - offset);
}

/** link() fails if the target appeared meanwhile, so an existing file is never replaced. */
function publish(temp: string, file: string): void {
  try {
    fs.linkSync(temp, file);
    removeOwnedFile(path.dirname(temp), temp);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      throw new OperationError("export_exists", `Export target ${file} appeared while exporting; it was left untouched and nothing was written.`, { path: file });
    }
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EXDEV" && code !== "ENOSYS") {
      throw new OperationError("export_failed", `Cannot create ${file}: ${describeError(error)}.`, { path: file, cause: error });
    }
  }
  // File systems without hard links: re-check, then rename (a small window, documented).
  assertExportTarget(file);
  fs.renameSync(temp, file);
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
