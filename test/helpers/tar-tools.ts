// Test helpers that take archives apart and hand-craft hostile ones (node-tar Header/Pax + zlib, no tool code).
import fs from "node:fs";
import zlib from "node:zlib";
import { Header, Pax } from "tar";

export interface RawEntry {
  path: string;
  /** node-tar type name: File, Directory, SymbolicLink, Link, FIFO, CharacterDevice, … */
  type: string;
  data: Buffer;
  mode?: number;
  linkpath?: string;
  /** Size written in the header when it should differ from data.length. */
  headerSize?: number;
}

/** The tar bytes of a .tar.gz or .tar.zst (by magic bytes; zstd needs a Node that has it). */
export function inflateArchive(file: string): Buffer {
  const bytes = fs.readFileSync(file);
  if (bytes[0] === 0x28 && bytes[1] === 0xb5) return (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer }).zstdDecompressSync(bytes);
  return zlib.gunzipSync(bytes);
}

/** Every entry of a .tar.gz or .tar.zst with its bytes (pax path records applied). */
export function readRawEntries(file: string): RawEntry[] {
  const tar = inflateArchive(file);
  const entries: RawEntry[] = [];
  let pos = 0;
  let ex: Record<string, unknown> | undefined;
  while (pos + 512 <= tar.length) {
    const header = new Header(tar, pos, ex as never);
    if (header.nullBlock) break;
    const size = header.size ?? 0;
    const data = tar.subarray(pos + 512, pos + 512 + size);
    pos += 512 + Math.ceil(size / 512) * 512;
    if (header.type === "ExtendedHeader") {
      ex = Pax.parse(data.toString("utf8"), undefined, false) as unknown as Record<string, unknown>;
      continue;
    }
    ex = undefined;
    entries.push({ path: header.path!, type: header.type, data: Buffer.from(data), mode: header.mode, linkpath: header.linkpath || undefined });
  }
  return entries;
}

function encode(entry: RawEntry): Buffer {
  const size = entry.headerSize ?? (entry.type === "File" || entry.type === "OldFile" ? entry.data.length : 0);
  const fields = { path: entry.path, type: entry.type as never, size, mode: entry.mode ?? 0o600, mtime: new Date(0), linkpath: entry.linkpath ?? "", uid: 0, gid: 0, uname: "", gname: "" };
  const header = new Header(fields);
  const parts: Buffer[] = [];
  if (header.encode()) parts.push(new Pax({ path: entry.path, size }).encode());
  parts.push(header.block!);
  if (entry.data.length > 0) {
    parts.push(entry.data);
    const rest = entry.data.length % 512;
    if (rest) parts.push(Buffer.alloc(512 - rest));
  }
  return Buffer.concat(parts);
}

/** The uncompressed tar bytes of `entries`, with (or without) the end-of-archive blocks. */
export function tarBytes(entries: readonly RawEntry[], eof = true): Buffer {
  return Buffer.concat([...entries.map(encode), eof ? Buffer.alloc(1024) : Buffer.alloc(0)]);
}

export function writeRawArchive(file: string, entries: readonly RawEntry[], options: { eof?: boolean } = {}): void {
  fs.writeFileSync(file, zlib.gzipSync(tarBytes(entries, options.eof ?? true)));
}

/** Appends gzip members (zstd frames to a .tar.zst) that inflate to `mib` MiB of zeros: a bomb in a few KiB. */
export function appendZeroBomb(file: string, mib: number): void {
  const head = Buffer.alloc(2);
  const probe = fs.openSync(file, "r");
  fs.readSync(probe, head, 0, 2, 0);
  fs.closeSync(probe);
  const zeros = Buffer.alloc(1024 * 1024);
  const member =
    head[0] === 0x28 && head[1] === 0xb5
      ? (zlib as unknown as { zstdCompressSync(b: Buffer): Buffer }).zstdCompressSync(zeros)
      : zlib.gzipSync(zeros, { level: 9 });
  const fd = fs.openSync(file, "a");
  try {
    for (let i = 0; i < mib; i += 1) fs.writeSync(fd, member);
  } finally {
    fs.closeSync(fd);
  }
}

export function manifestOf(entries: readonly RawEntry[]): Record<string, unknown> & { files: Array<{ archivePath: string; size: number; sha256: string }>; archiveRoot: string } {
  const entry = entries.find((e) => e.path.endsWith("/manifest.json"));
  if (!entry) throw new Error("no manifest entry");
  return JSON.parse(entry.data.toString("utf8"));
}

/** Replaces the manifest entry's JSON. */
export function withManifest(entries: readonly RawEntry[], manifest: unknown): RawEntry[] {
  return entries.map((e) => (e.path.endsWith("/manifest.json") ? { ...e, data: Buffer.from(JSON.stringify(manifest)) } : e));
}
