// Transcript line parsing without a database: shared by the streamed import and the off-thread prepare pass.
import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describeError, OpenclawStateError, OperationError } from "../../core/errors.js";
import { describeLineParseError } from "../../core/redact.js";
import { depthMessage, findExcessDepth } from "../json-depth.js";
import { isBlankLine, skipBom, streamLines, withOpenFile } from "../line-stream.js";
import { CURRENT_TRANSCRIPT_VERSION, headerVersion, isSessionHeader, normalizeHeader, parseTimestamp, TranscriptNormalizer, type NormalizedEvent } from "./transcript-normalize.js";
import { canonicalFilePath } from "./transcript-v1-ids.js";

type Obj = Record<string, unknown>;

export interface HeaderLine {
  json: string;
  /** The header `id` when it is a non-empty string (the file stem stands in otherwise). */
  sessionId: string | null;
  timestamp: number | null;
  lineNo: number;
}

export interface EventLine extends Omit<NormalizedEvent, "json"> {
  /** The line to store; bytes (valid UTF-8, stored as TEXT) when it is the file's own line, sliced ahead. */
  json: string | Uint8Array;
  lineNo: number;
}

/** Receives parsed lines in file order; the import writes them, the prepare pass collects them. */
export interface TranscriptLineSink {
  /** Returns the session the transcript is imported into, when the sink decides it (v1 ids derive from it). */
  header(line: HeaderLine): string | void;
  /** `verbatim`: `line.json` is exactly these bytes (nothing was normalized). */
  event(line: EventLine, verbatim: { buf: Buffer; start: number; end: number } | null): void;
  /** A final line without "\n" that does not decode or parse: a crash mid-append, dropped. */
  dropped(lineNo: number): void;
}

/** Names a version this tool does not know: a number as such, anything else only by its type. */
export function unsupportedVersion(version: unknown): string {
  const what = typeof version === "number" && Number.isFinite(version) ? String(version) : `(a ${version === null ? "null" : Array.isArray(version) ? "array" : typeof version})`;
  return `unsupported transcript version ${what}`;
}

export function transcriptLineError(file: string, lineNo: number, what: string): OperationError {
  return new OperationError("invalid_transcript", `${file}:${lineNo}: ${what}; the file was left in place.`, { path: file });
}

/**
 * The header stored for a transcript that has none: what OpenClaw 2026.9.6's doctor --fix prepends to a header-less
 * session (version 3, the session id, the first entry's time — else the file's mtime — and a cwd), under the file
 * name's session id. Its cwd is the agent's workspace there; none is known here, so it is empty, as 2026.9.6 stores a
 * header without one.
 */
function headerlessHeader(file: string, first: Obj): Omit<HeaderLine, "lineNo"> {
  const sessionId = path.basename(file, ".jsonl").trim();
  const timestamp = parseTimestamp(first.timestamp) ?? Math.max(0, Math.trunc(fs.statSync(file).mtimeMs));
  const json = JSON.stringify({ type: "session", version: CURRENT_TRANSCRIPT_VERSION, id: sessionId, timestamp: new Date(timestamp).toISOString(), cwd: "" });
  return { json, sessionId: sessionId === "" ? null : sessionId, timestamp };
}

/** One transcript's lines → header and normalized events; throws the error the import reports for a bad line. */
/**
 * Where a version-1 transcript's ids come from (transcript-v1-ids.ts): the path OpenClaw reads it from (default: the
 * file's own, canonical) and the session it goes into (default: the one the sink's `header` returns, else the header
 * id, else the file name).
 */
export interface IdSource {
  sourcePath?: string;
  sessionId?: string;
}

export class TranscriptLineParser {
  records = 0;
  private normalizer: TranscriptNormalizer | null = null;
  /** The session id v1 ids were derived from; null for a version 2+ file (or before the header). */
  idSessionId: string | null = null;
  idSourcePath: string | null = null;

  constructor(
    private readonly file: string,
    private readonly sink: TranscriptLineSink,
    private readonly ids: IdSource = {},
  ) {}

  /** The normalizer for a file of `version`, once the sink has named the session. */
  private startNormalizer(version: number, headerless: boolean, fromHeader: string | null, fromSink: string | void): TranscriptNormalizer {
    if (version >= 2) return (this.normalizer = new TranscriptNormalizer(version));
    const sessionId = (typeof fromSink === "string" ? fromSink : undefined) ?? this.ids.sessionId ?? fromHeader ?? path.basename(this.file, ".jsonl");
    const sourcePath = this.ids.sourcePath ?? canonicalFilePath(this.file);
    this.idSessionId = sessionId;
    this.idSourcePath = sourcePath;
    return (this.normalizer = new TranscriptNormalizer(version, { headerless, ids: { sourcePath, sessionId } }));
  }

  line(buf: Buffer, lineStart: number, end: number, lineNo: number, terminated: boolean): void {
    const start = skipBom(buf, lineStart, end, lineNo);
    if (isBlankLine(buf, start, end)) return;
    if (!isUtf8(buf.subarray(start, end))) {
      if (!terminated) return this.sink.dropped(lineNo);
      throw transcriptLineError(this.file, lineNo, "invalid UTF-8");
    }
    if (findExcessDepth(buf, start, end) !== 0) throw transcriptLineError(this.file, lineNo, depthMessage());
    const text = buf.toString("utf8", start, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (!terminated) return this.sink.dropped(lineNo);
      throw transcriptLineError(this.file, lineNo, describeLineParseError(error, text));
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw transcriptLineError(this.file, lineNo, "expected a JSON object");
    this.records += 1;
    const obj = value as Obj;
    let normalizer = this.normalizer;
    if (normalizer === null) {
      if (!isSessionHeader(obj)) {
        // No header: read as version 1 (ids and parents assigned), as OpenClaw 2026.9.6's doctor imports such a file,
        // with the header its doctor --fix then prepends; this line is the first entry.
        const header = headerlessHeader(this.file, obj);
        normalizer = this.startNormalizer(1, true, header.sessionId, this.sink.header({ ...header, lineNo }));
      } else {
        const version = headerVersion(obj);
        if (version === null) throw transcriptLineError(this.file, lineNo, unsupportedVersion(obj.version));
        const header = normalizeHeader(obj, version);
        this.startNormalizer(version, false, header.sessionId, this.sink.header({ json: header.json, sessionId: header.sessionId, timestamp: header.timestamp, lineNo }));
        return;
      }
    }
    const event = normalizer.entry(obj, text, lineNo);
    this.sink.event({ ...event, lineNo }, event.json === text ? { buf, start, end } : null);
  }

  /** After the last line: the normalizer's warnings; a file without a header fails here. */
  finish(): string[] {
    if (this.normalizer === null) throw missingHeaderError(this.file);
    return this.normalizer.warnings;
  }

  /** The warnings so far, without the header check (the prepare pass leaves that to the import). */
  get warnings(): string[] {
    return this.normalizer?.warnings ?? [];
  }
}

export function missingHeaderError(file: string): OperationError {
  return transcriptLineError(file, 1, "missing session header (the file has no records)");
}

/**
 * A whole small transcript parsed ahead of its transaction, as plain data that crosses a worker boundary
 * cheaply: the file's bytes travel once (transferred, not copied) and each unchanged line is bound to its
 * INSERT as a slice of them, so the main thread never decodes or re-encodes the text.
 */
export interface PreparedTranscript {
  file: string;
  sha256: string;
  /** null with no error: the file has no header (the import fails it after the sha256 check). */
  header: HeaderLine | null;
  /** The file's bytes (null when there are no events). */
  bytes: ArrayBuffer | null;
  events: PreparedEvents;
  dropped: number[];
  records: number;
  normalizerWarnings: string[];
  /** The session id and path v1 ids were derived from (null: a version 2+ file, ids as written); the import re-reads the file when its own differ. */
  idSessionId: string | null;
  idSourcePath: string | null;
  /** The first bad line (or I/O failure), as the streamed import would have reported it. */
  error: { code: string; message: string } | null;
}

/** One entry per event, by column; `json[i]` is null when the stored line is `bytes[start[i], end[i])`. */
export interface PreparedEvents {
  start: number[];
  end: number[];
  json: Array<string | null>;
  id: Array<string | null>;
  parentId: Array<string | null>;
  type: Array<string | null>;
  idempotencyKey: Array<string | null>;
  timestamp: Array<number | null>;
  lineNo: number[];
}

/** Event `i` of a prepared transcript; an unchanged line is a view of the file's bytes. */
export function preparedEvent(events: PreparedEvents, bytes: Buffer, i: number): EventLine {
  return {
    json: events.json[i] ?? bytes.subarray(events.start[i], events.end[i]),
    id: events.id[i] ?? null,
    parentId: events.parentId[i] ?? null,
    type: events.type[i] ?? null,
    idempotencyKey: events.idempotencyKey[i] ?? null,
    timestamp: events.timestamp[i] ?? null,
    lineNo: events.lineNo[i]!,
  };
}

/** A buffer of at least `size` bytes that the result may own (the worker hands out recycled ones). */
export type BufferSource = (size: number) => Buffer;

const freshBuffer: BufferSource = (size) => Buffer.allocUnsafeSlow(size);

/** Reads, hashes and parses `file` in one pass; never throws (the error travels in the result). */
export function prepareTranscript(file: string, allocate: BufferSource = freshBuffer, ids: IdSource = {}): PreparedTranscript {
  const events: PreparedEvents = { start: [], end: [], json: [], id: [], parentId: [], type: [], idempotencyKey: [], timestamp: [], lineNo: [] };
  const out: PreparedTranscript = { file, sha256: "", header: null, bytes: null, events, dropped: [], records: 0, normalizerWarnings: [], idSessionId: null, idSourcePath: null, error: null };
  let buffer: Buffer | null = null;
  const parser = new TranscriptLineParser(file, {
    header: (line) => void (out.header = line),
    event: (line, verbatim) => {
      // A final line without "\n" arrives in a copied buffer: only lines inside the file buffer are sliced later.
      const sliced = verbatim !== null && buffer !== null && verbatim.buf.buffer === buffer.buffer;
      events.start.push(sliced ? verbatim.buf.byteOffset + verbatim.start : 0);
      events.end.push(sliced ? verbatim.buf.byteOffset + verbatim.end : 0);
      events.json.push(sliced ? null : typeof line.json === "string" ? line.json : Buffer.from(line.json).toString("utf8"));
      events.id.push(line.id);
      events.parentId.push(line.parentId);
      events.type.push(line.type);
      events.idempotencyKey.push(line.idempotencyKey);
      events.timestamp.push(line.timestamp);
      events.lineNo.push(line.lineNo);
    },
    dropped: (lineNo) => void out.dropped.push(lineNo),
  }, ids);
  try {
    withOpenFile(file, (fd) => {
      // One read of the whole file into a buffer of its own (never Node's shared pool: it is transferred).
      const own = allocate(fs.fstatSync(fd).size + 1);
      buffer = own;
      const read = streamLines(fd, file, (buf, start, end, lineNo, terminated) => parser.line(buf, start, end, lineNo, terminated), { buffer: own });
      // The file grew past the buffer since it was sized: a second read reused it, so let the import stream it.
      if (read.bytes >= own.length) throw new Error(`${file} grew while it was read`);
      out.sha256 = crypto.createHash("sha256").update(own.subarray(0, read.bytes)).digest("hex");
      out.records = parser.records;
      // A missing header (header stays null) is reported by the import after its sha256 check, as when streaming.
      out.normalizerWarnings = [...parser.warnings];
      out.idSessionId = parser.idSessionId;
      out.idSourcePath = parser.idSourcePath;
      if (events.lineNo.length > 0) out.bytes = own.buffer as ArrayBuffer;
    });
  } catch (error) {
    out.records = parser.records;
    out.idSessionId = parser.idSessionId;
    out.idSourcePath = parser.idSourcePath;
    out.error = { code: error instanceof OpenclawStateError ? error.code : "read_failed", message: error instanceof Error ? error.message : describeError(error) };
  }
  return out;
}
