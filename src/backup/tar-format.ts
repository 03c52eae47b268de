// Tar framing on top of node-tar's Header/Pax codecs: header encoding for the writer, a strict streaming reader.
//
// The reader is our own loop (not tar.Parser) so that every header is judged before a single body byte
// is consumed, bodies stream straight to the caller with backpressure, and nothing is ever buffered
// beyond one header or one small pax record.
import { Header, Pax, type HeaderData } from "tar";

export const BLOCK = 512;
/** Two zero blocks end a tar stream. */
export const TAR_EOF = Buffer.alloc(BLOCK * 2);
/** Pax extended headers larger than this are refused (ours hold one path). */
export const MAX_PAX_BYTES = 64 * 1024;

const ALLOWED_PAX_KEYS = new Set([
  "path",
  "size",
  "mtime",
  "atime",
  "ctime",
  "uid",
  "gid",
  "uname",
  "gname",
  "charset",
  "comment",
  "SCHILY.dev",
  "SCHILY.ino",
  "SCHILY.nlink",
]);

export interface EncodeEntry {
  path: string;
  type: "File" | "Directory";
  size: number;
  mode: number;
  mtime: Date;
}

const uid = typeof process.getuid === "function" ? process.getuid() : 0;
const gid = typeof process.getgid === "function" ? process.getgid() : 0;

/** The header block(s) for one entry: a pax header first when the path or size does not fit ustar. */
export function encodeEntryHeader(entry: EncodeEntry): Buffer {
  const path = entry.type === "Directory" && !entry.path.endsWith("/") ? `${entry.path}/` : entry.path;
  const header = new Header({ path, type: entry.type, size: entry.size, mode: entry.mode, mtime: entry.mtime, uid, gid, uname: "", gname: "" });
  const needPax = header.encode();
  if (!needPax) return header.block!;
  const pax = new Pax({ path, size: entry.size, mtime: entry.mtime }).encode();
  return Buffer.concat([pax, header.block!]);
}

/** Zero bytes that round a body of `size` up to the next block. */
export function paddingFor(size: number): Buffer {
  const rest = size % BLOCK;
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(BLOCK - rest);
}

/** A refusal with the reason already phrased for the operator. */
export class TarProblem extends Error {}

export interface TarEntry {
  path: string;
  /** node-tar's type name: File, OldFile, Directory, SymbolicLink, Link, FIFO, CharacterDevice, … */
  type: string;
  size: number;
  mode: number;
  mtime: Date | undefined;
  linkpath: string | undefined;
  /** Offset of the entry's header in the uncompressed stream, for messages. */
  offset: number;
}

export interface TarBody {
  write(chunk: Buffer): void | Promise<void>;
  end(): void | Promise<void>;
}

export interface TarVisitor {
  /** Judges the header (throw TarProblem to refuse) and returns where its body goes. */
  entry(entry: TarEntry): TarBody | Promise<TarBody>;
}

function paxKeys(body: string): string[] {
  const keys: string[] = [];
  for (const line of body.split("\n")) {
    if (line === "") continue;
    const m = /^\d+ ([^=]+)=/.exec(line);
    if (!m) throw new TarProblem("malformed pax extended header record");
    keys.push(m[1]!);
  }
  return keys;
}

function isZero(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i += 1) if (buf[i] !== 0) return false;
  return true;
}

/**
 * Reads an uncompressed tar stream. Only ustar entries with optional pax path/size/time records are
 * understood; global headers and GNU long-name records are refused. The stream must end with the
 * two-zero-block marker, after which only zero padding may follow.
 */
export async function readTar(chunks: AsyncIterable<Buffer>, visitor: TarVisitor): Promise<void> {
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let state: "header" | "body" | "pad" | "pax" | "zero" | "eof" = "header";
  let need = BLOCK;
  let body: TarBody | undefined;
  let bodyLeft = 0;
  let padLeft = 0;
  let paxSize = 0;
  let ex: HeaderData | undefined;
  let headerOffset = 0;

  const takeBlock = (data: Buffer, pos: number): { block: Buffer | undefined; pos: number } => {
    const want = need - pendingBytes;
    const avail = data.length - pos;
    if (avail < want) {
      pending.push(data.subarray(pos));
      pendingBytes += avail;
      return { block: undefined, pos: data.length };
    }
    const piece = data.subarray(pos, pos + want);
    const block = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]);
    pending = [];
    pendingBytes = 0;
    return { block, pos: pos + want };
  };

  for await (const chunk of chunks) {
    let pos = 0;
    while (pos < chunk.length) {
      if (state === "eof") {
        if (!isZero(chunk.subarray(pos))) throw new TarProblem(`data follows the end-of-archive marker at byte ${offset + pos}`);
        pos = chunk.length;
        break;
      }
      if (state === "body") {
        const n = Math.min(bodyLeft, chunk.length - pos);
        if (n > 0) await body!.write(chunk.subarray(pos, pos + n));
        pos += n;
        bodyLeft -= n;
        if (bodyLeft === 0) {
          await body!.end();
          body = undefined;
          state = padLeft > 0 ? "pad" : "header";
          need = BLOCK;
        }
        continue;
      }
      if (state === "pad") {
        const n = Math.min(padLeft, chunk.length - pos);
        pos += n;
        padLeft -= n;
        if (padLeft === 0) state = "header";
        continue;
      }
      const blockStart = offset + pos - pendingBytes;
      const taken = takeBlock(chunk, pos);
      pos = taken.pos;
      const block = taken.block;
      if (!block) break;
      if (state === "pax") {
        const text = block.subarray(0, paxSize).toString("utf8");
        const keys = paxKeys(text);
        const bad = keys.find((k) => !ALLOWED_PAX_KEYS.has(k));
        if (bad) throw new TarProblem(`unsupported pax header field "${bad}" at byte ${headerOffset}`);
        ex = Pax.parse(text, undefined, false);
        state = "header";
        need = BLOCK;
        continue;
      }
      const header = new Header(block, 0, ex);
      if (state === "zero") {
        if (!header.nullBlock) throw new TarProblem(`a lone zero block at byte ${blockStart - BLOCK} is followed by more entries`);
        state = "eof";
        continue;
      }
      if (header.nullBlock) {
        if (ex) throw new TarProblem(`a pax header at byte ${headerOffset} is not followed by an entry`);
        state = "zero";
        continue;
      }
      if (!header.cksumValid) throw new TarProblem(`damaged tar header at byte ${blockStart} (checksum mismatch)`);
      headerOffset = blockStart;
      const type = header.type;
      const size = header.size ?? 0;
      if (type === "ExtendedHeader") {
        if (ex) throw new TarProblem(`two pax headers in a row at byte ${blockStart}`);
        if (size > MAX_PAX_BYTES) throw new TarProblem(`pax header of ${size} bytes at byte ${blockStart} is too large`);
        paxSize = size;
        if (size === 0) {
          ex = {};
        } else {
          need = Math.ceil(size / BLOCK) * BLOCK;
          state = "pax";
        }
        continue;
      }
      ex = undefined;
      const entry: TarEntry = {
        path: header.path ?? "",
        type,
        size,
        mode: header.mode ?? 0,
        mtime: header.mtime,
        linkpath: header.linkpath || undefined,
        offset: blockStart,
      };
      body = await visitor.entry(entry);
      if (size === 0) {
        await body.end();
        body = undefined;
        continue;
      }
      bodyLeft = size;
      padLeft = (BLOCK - (size % BLOCK)) % BLOCK;
      state = "body";
    }
    offset += chunk.length;
  }
  if (state !== "eof") {
    throw new TarProblem(state === "header" || state === "zero" ? "the archive ends without an end-of-archive marker (truncated)" : "the archive is truncated in the middle of an entry");
  }
}
