// Transcript line parsing without a database: shared by the streamed import and the off-thread prepare pass.
import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import { describeError, OpenclawStateError, OperationError } from "../../core/errors.js";
import { isBlankLine, streamLines, withOpenFile } from "../line-stream.js";
import { headerVersion, isSessionHeader, normalizeHeader, TranscriptNormalizer } from "./transcript-normalize.js";

type Obj = Record<string, unknown>;

export interface HeaderLine {
  json: string;
  /** The header `id` when it is a non-empty string (the file stem stands in otherwise). */
  sessionId: string | null;
  timestamp: number | null;
  lineNo: number;
}

export interface EventLine {
  json: string;
  id: string | null;
  parentId: string | null;
  type: string | null;
  idempotencyKey: string | null;
  timestamp: number | null;
  lineNo: number;
}

/** Receives parsed lines in file order; the import writes them, the prepare pass collects them. */
export interface TranscriptLineSink {
  header(line: HeaderLine): void;
  event(line: EventLine): void;
  /** A final line without "\n" that does not decode or parse: a crash mid-append, dropped. */
  dropped(lineNo: number): void;
}

export function transcriptLineError(file: string, lineNo: number, what: string): OperationError {
  return new OperationError("invalid_transcript", `${file}:${lineNo}: ${what}; the file was left in place.`, { path: file });
}

/** One transcript's lines → header and normalized events; throws the error the import reports for a bad line. */
export class TranscriptLineParser {
  records = 0;
  private normalizer: TranscriptNormalizer | null = null;

  constructor(
    private readonly file: string,
    private readonly sink: TranscriptLineSink,
  ) {}

  line(buf: Buffer, start: number, end: number, lineNo: number, terminated: boolean): void {
    if (isBlankLine(buf, start, end)) return;
    if (!isUtf8(buf.subarray(start, end))) {
      if (!terminated) return this.sink.dropped(lineNo);
      throw transcriptLineError(this.file, lineNo, "invalid UTF-8");
    }
    const text = buf.toString("utf8", start, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (!terminated) return this.sink.dropped(lineNo);
      throw transcriptLineError(this.file, lineNo, `invalid JSON (${describeError(error)})`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw transcriptLineError(this.file, lineNo, "expected a JSON object");
    this.records += 1;
    const obj = value as Obj;
    if (this.normalizer === null) {
      if (!isSessionHeader(obj)) throw transcriptLineError(this.file, lineNo, 'missing session header (the first line must be {"type":"session",…})');
      const version = headerVersion(obj);
      if (version === null) throw transcriptLineError(this.file, lineNo, `unsupported transcript version ${JSON.stringify(obj.version)}`);
      const header = normalizeHeader(obj, version);
      this.normalizer = new TranscriptNormalizer(version);
      return this.sink.header({ json: header.json, sessionId: header.sessionId, timestamp: header.timestamp, lineNo });
    }
    this.sink.event({ ...this.normalizer.entry(obj, text, lineNo), lineNo });
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

/** A whole small transcript parsed ahead of its transaction (plain data: it crosses a worker boundary). */
export interface PreparedTranscript {
  file: string;
  sha256: string;
  /** null with no error: the file has no header (the import fails it after the sha256 check). */
  header: HeaderLine | null;
  events: EventLine[];
  dropped: number[];
  records: number;
  normalizerWarnings: string[];
  /** The first bad line (or I/O failure), as the streamed import would have reported it. */
  error: { code: string; message: string } | null;
}

/** Reads, hashes and parses `file` in one pass; never throws (the error travels in the result). */
export function prepareTranscript(file: string): PreparedTranscript {
  const hash = crypto.createHash("sha256");
  const out: PreparedTranscript = { file, sha256: "", header: null, events: [], dropped: [], records: 0, normalizerWarnings: [], error: null };
  const parser = new TranscriptLineParser(file, {
    header: (line) => void (out.header = line),
    event: (line) => void out.events.push(line),
    dropped: (lineNo) => void out.dropped.push(lineNo),
  });
  try {
    withOpenFile(file, (fd) => streamLines(fd, file, (buf, start, end, lineNo, terminated) => parser.line(buf, start, end, lineNo, terminated), { onChunk: (chunk) => hash.update(chunk) }));
    out.sha256 = hash.digest("hex");
    out.records = parser.records;
    // A missing header (header stays null) is reported by the import after its sha256 check, as when streaming.
    out.normalizerWarnings = [...parser.warnings];
  } catch (error) {
    out.records = parser.records;
    out.error = { code: error instanceof OpenclawStateError ? error.code : "read_failed", message: error instanceof Error ? error.message : describeError(error) };
  }
  return out;
}
