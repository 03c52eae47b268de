// Tar framing on top of node-tar's Header/Pax codecs: header encoding for the writer, a strict streaming reader.
//
// The reader is our own loop (not tar.Parser) so that every header is judged before a single body byte
// is consumed, bodies stream straight to the caller with backpressure, and nothing is ever buffered
// beyond one header or one small pax record.
// The two codecs by their own entry points: the package's main entry is a bundle of all of node-tar (~20 ms more of
// CPU to load in every backup command, none of it used).
import { Header } from "tar/header";
import { Pax } from "tar/pax";

export const BLOCK = 512;
/** Two zero blocks end a tar stream. */
export const TAR_EOF = Buffer.alloc(BLOCK * 2);
/** Pax extended headers and GNU long names larger than this are refused (they hold one path). */
export const MAX_PAX_BYTES = 64 * 1024;

const ALLOWED_PAX_KEYS = new Set([
  "path",
  "linkpath",
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

/**
 * In the chunk stream, one entry's whole body (plus its padding to the next block) that the caller checked by
 * other means: readTar hands it to TarBody.prechecked instead of bytes. It must start exactly where a body starts.
 */
export interface PrecheckedBody {
  readonly prechecked: true;
  /** Body plus padding, in tar bytes. */
  readonly length: number;
}

export interface TarBody<R extends PrecheckedBody = PrecheckedBody> {
  write(chunk: Buffer): void | Promise<void>;
  /** The body arrives as a pre-checked run (absent: such a run for this entry is refused). */
  prechecked?(run: R): void | Promise<void>;
  end(): void | Promise<void>;
}

export interface TarVisitor<R extends PrecheckedBody = PrecheckedBody> {
  /** Judges the header (throw TarProblem to refuse) and returns where its body goes. */
  entry(entry: TarEntry): TarBody<R> | Promise<TarBody<R>>;
}

/** What a pax record or a GNU long-name entry says about the next entry. */
interface Extended {
  path?: string;
  linkpath?: string;
  size?: number;
  mtime?: Date;
}

/**
 * Parses pax records (`<len> <key>=<value>\n`, len counting the record's bytes) exactly, by bytes: a value
 * may hold any byte but NUL. Unknown keys are refused; only path, linkpath, size and mtime are used.
 */
export function parsePaxRecords(body: Buffer, at: number): Extended {
  const ex: Extended = {};
  let pos = 0;
  while (pos < body.length) {
    const space = body.indexOf(0x20, pos);
    const lenText = space > pos ? body.subarray(pos, space).toString("latin1") : "";
    const len = /^[1-9]\d{0,8}$/.test(lenText) ? Number(lenText) : 0;
    if (len === 0 || pos + len > body.length || body[pos + len - 1] !== 0x0a) throw new TarProblem(`malformed pax extended header record at byte ${at}`);
    const record = body.subarray(space + 1, pos + len - 1);
    const eq = record.indexOf(0x3d);
    if (eq <= 0) throw new TarProblem(`malformed pax extended header record at byte ${at}`);
    const key = record.subarray(0, eq).toString("utf8");
    const value = record.subarray(eq + 1);
    if (!ALLOWED_PAX_KEYS.has(key)) throw new TarProblem(`unsupported pax header field "${key}" at byte ${at}`);
    if (key === "path" || key === "linkpath") {
      if (value.includes(0)) throw new TarProblem(`pax ${key} at byte ${at} contains a NUL byte`);
      ex[key] = value.toString("utf8");
    } else if (key === "size") {
      const text = value.toString("latin1");
      if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(Number(text))) throw new TarProblem(`pax size ${JSON.stringify(text)} at byte ${at} is not a size`);
      ex.size = Number(text);
    } else if (key === "mtime") {
      const seconds = Number(value.toString("latin1"));
      if (Number.isFinite(seconds)) ex.mtime = new Date(seconds * 1000);
    }
    pos += len;
  }
  return ex;
}

/** A GNU long name (`L`) or long link (`K`) body: the name, NUL-terminated. */
function parseLongName(body: Buffer, what: string, at: number): string {
  const end = body.indexOf(0);
  const name = body.subarray(0, end < 0 ? body.length : end);
  if (end >= 0 && body.subarray(end).some((b) => b !== 0)) throw new TarProblem(`GNU long ${what} at byte ${at} has bytes after its NUL`);
  return name.toString("utf8");
}

function isZero(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i += 1) if (buf[i] !== 0) return false;
  return true;
}

/**
 * The entry's type from its typeflag. node-tar turns a regular-file entry whose own name field ends in '/'
 * into a directory, but that field is only a truncated stand-in when a long name follows in pax or GNU form;
 * the full name decides (the old convention: a '0' entry named `dir/` is a directory).
 */
function entryType(block: Buffer, decoded: string, fullPath: string): string {
  const flag = block[156];
  if (flag !== 0x30 && flag !== 0x00) return decoded;
  if (fullPath.endsWith("/")) return "Directory";
  return flag === 0x00 ? "OldFile" : "File";
}

/** The size field (octal text, or GNU base-256 for large sizes), read from the block itself. */
function headerSize(block: Buffer, at: number): number {
  const field = block.subarray(124, 136);
  if (field[0]! & 0x80) {
    if (field[0] === 0xff) throw new TarProblem(`negative size in the tar header at byte ${at}`);
    let n = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i += 1) n = n * 256 + field[i]!;
    if (!Number.isSafeInteger(n)) throw new TarProblem(`size too large in the tar header at byte ${at}`);
    return n;
  }
  const text = field.toString("latin1").replace(/[\0 ]+$/, "").replace(/^ +/, "");
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarProblem(`malformed size ${JSON.stringify(text)} in the tar header at byte ${at}`);
  return parseInt(text, 8);
}

type MetaKind = "pax" | "longPath" | "longLink";
const META_TYPES: ReadonlyMap<string, MetaKind> = new Map([
  ["ExtendedHeader", "pax"],
  ["NextFileHasLongPath", "longPath"],
  ["NextFileHasLongLinkpath", "longLink"],
]);

/**
 * Reads an uncompressed tar stream: ustar entries, with the long-path forms GNU tar and Python's tarfile
 * write (pax `x` records, GNU `L`/`K` long names). Global headers and every other extension are refused.
 * A pax or GNU name replaces the header's own name and ustar prefix whole. The stream must end with the
 * two-zero-block marker, after which only zero padding may follow.
 */
export async function readTar<R extends PrecheckedBody = PrecheckedBody>(chunks: AsyncIterable<Buffer | R>, visitor: TarVisitor<R>): Promise<void> {
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let state: "header" | "body" | "pad" | "meta" | "zero" | "eof" = "header";
  let need = BLOCK;
  let body: TarBody<R> | undefined;
  let bodyLeft = 0;
  let bodySize = 0;
  let padLeft = 0;
  let metaKind: MetaKind = "pax";
  let metaSize = 0;
  let ex: Extended = {};
  const seenMeta = new Set<MetaKind>();
  let headerOffset = 0;

  const takeBlock = (data: Buffer, pos: number): { block: Buffer | undefined; pos: number } => {
    const want = need - pendingBytes;
    const avail = data.length - pos;
    if (avail < want) {
      // A copy: the chunk's memory may be freed once the next one is read (archive-source.ts, decompressed).
      pending.push(Buffer.from(data.subarray(pos)));
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
    if (!Buffer.isBuffer(chunk)) {
      if (state !== "body" || bodyLeft !== bodySize || bodyLeft + padLeft !== chunk.length || !body?.prechecked) {
        throw new TarProblem(`a pre-checked run of ${chunk.length} bytes at byte ${offset} does not cover exactly one entry's body`);
      }
      await body.prechecked(chunk);
      await body.end();
      body = undefined;
      state = "header";
      need = BLOCK;
      offset += chunk.length;
      continue;
    }
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
      if (state === "meta") {
        const data = block.subarray(0, metaSize);
        if (metaKind === "pax") ex = { ...ex, ...parsePaxRecords(data, headerOffset) };
        else if (metaKind === "longPath") ex.path = parseLongName(data, "name", headerOffset);
        else ex.linkpath = parseLongName(data, "link name", headerOffset);
        state = "header";
        need = BLOCK;
        continue;
      }
      // Decoded without the pending extension: node-tar would prepend the ustar prefix to a pax path.
      const header = new Header(block, 0);
      if (state === "zero") {
        if (!header.nullBlock) throw new TarProblem(`a lone zero block at byte ${blockStart - BLOCK} is followed by more entries`);
        state = "eof";
        continue;
      }
      if (header.nullBlock) {
        if (seenMeta.size > 0) throw new TarProblem(`an extended header at byte ${headerOffset} is not followed by an entry`);
        state = "zero";
        continue;
      }
      if (!header.cksumValid) throw new TarProblem(`damaged tar header at byte ${blockStart} (checksum mismatch)`);
      headerOffset = blockStart;
      const path = ex.path ?? header.path ?? "";
      const type = entryType(block, header.type, path);
      const rawSize = type === "Directory" ? 0 : headerSize(block, blockStart);
      const kind = META_TYPES.get(type);
      if (kind) {
        if (seenMeta.has(kind)) throw new TarProblem(`two ${kind === "pax" ? "pax headers" : "GNU long names"} for one entry at byte ${blockStart}`);
        seenMeta.add(kind);
        if (rawSize > MAX_PAX_BYTES) throw new TarProblem(`extended header of ${rawSize} bytes at byte ${blockStart} is too large`);
        metaKind = kind;
        metaSize = rawSize;
        if (rawSize > 0) {
          need = Math.ceil(rawSize / BLOCK) * BLOCK;
          state = "meta";
        }
        continue;
      }
      const size = type === "Directory" ? 0 : (ex.size ?? rawSize);
      const entry: TarEntry = {
        path,
        type,
        size,
        mode: header.mode ?? 0,
        mtime: ex.mtime ?? header.mtime,
        linkpath: ex.linkpath ?? (header.linkpath || undefined),
        offset: blockStart,
      };
      ex = {};
      seenMeta.clear();
      body = await visitor.entry(entry);
      if (size === 0) {
        await body.end();
        body = undefined;
        continue;
      }
      bodyLeft = size;
      bodySize = size;
      padLeft = (BLOCK - (size % BLOCK)) % BLOCK;
      state = "body";
    }
    offset += chunk.length;
  }
  if (state !== "eof") {
    throw new TarProblem(state === "header" || state === "zero" ? "the archive ends without an end-of-archive marker (truncated)" : "the archive is truncated in the middle of an entry");
  }
}
