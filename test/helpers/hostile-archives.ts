// Hostile archive builders (SPEC §11): each case writes a damaged or malicious variant of a valid archive.
import fs from "node:fs";
import zlib from "node:zlib";
import { appendZeroBomb, manifestOf, readRawEntries, tarBytes, withManifest, writeRawArchive, type RawEntry } from "./tar-tools.js";

export const VICTIM = "payload/state/notes/readme.md";

export interface Built {
  valid: string;
  entries: RawEntry[];
  root: string;
}

export function build(valid: string): Built {
  const entries = readRawEntries(valid);
  return { valid, entries, root: manifestOf(entries).archiveRoot };
}

export type Case = [name: string, expected: RegExp, make: (b: Built, file: string) => void];

const file = (root: string, rel: string): string => `${root}/${rel}`;
const victimOf = (b: Built): RawEntry => b.entries.find((e) => e.path === file(b.root, VICTIM))!;
const replaceVictim = (b: Built, with_: RawEntry | null): RawEntry[] => b.entries.flatMap((e) => (e.path === file(b.root, VICTIM) ? (with_ ? [with_] : []) : [e]));
const editManifest = (b: Built, edit: (m: ReturnType<typeof manifestOf>) => void): RawEntry[] => {
  const m = manifestOf(b.entries);
  edit(m);
  return withManifest(b.entries, m);
};

export const CASES: Case[] = [
  ["path traversal", /path traversal/, (b, f) => writeRawArchive(f, [...b.entries, { path: file(b.root, "payload/state/../../../../evil.txt"), type: "File", data: Buffer.from("x") }])],
  ["absolute path", /absolute path/, (b, f) => writeRawArchive(f, [...b.entries, { path: "/tmp/openclaw-evil.txt", type: "File", data: Buffer.from("x") }])],
  ["symlink entry", /symbolic link/, (b, f) => writeRawArchive(f, [...b.entries, { path: file(b.root, "payload/state/notes/link"), type: "SymbolicLink", linkpath: "/etc/passwd", data: Buffer.alloc(0) }])],
  ["hardlink entry", /hard link/, (b, f) => writeRawArchive(f, [...b.entries, { path: file(b.root, "payload/state/notes/hard"), type: "Link", linkpath: file(b.root, VICTIM), data: Buffer.alloc(0) }])],
  ["device entry", /device node/, (b, f) => writeRawArchive(f, [...b.entries, { path: file(b.root, "payload/state/zero"), type: "CharacterDevice", data: Buffer.alloc(0) }])],
  ["FIFO entry", /FIFO/, (b, f) => writeRawArchive(f, [...b.entries, { path: file(b.root, "payload/state/fifo"), type: "FIFO", data: Buffer.alloc(0) }])],
  ["truncated gzip", /truncated or corrupt/, (b, f) => {
    const bytes = fs.readFileSync(b.valid);
    fs.writeFileSync(f, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  }],
  ["flipped byte", /truncated or corrupt|sha256|damaged/, (b, f) => {
    const bytes = Buffer.from(fs.readFileSync(b.valid));
    const at = Math.floor(bytes.length / 2);
    bytes[at] = bytes[at]! ^ 0xff;
    fs.writeFileSync(f, bytes);
  }],
  ["gzip checksum mismatch", /truncated or corrupt/, (b, f) => {
    const bytes = Buffer.from(fs.readFileSync(b.valid));
    bytes[bytes.length - 6] = bytes[bytes.length - 6]! ^ 0xff;
    fs.writeFileSync(f, bytes);
  }],
  ["tampered file with the original manifest", /sha256 of payload\/state\/notes\/readme\.md does not match/, (b, f) => {
    const v = victimOf(b);
    writeRawArchive(f, replaceVictim(b, { ...v, data: Buffer.from(v.data.toString("utf8").toUpperCase()) }));
  }],
  ["wrong sha256 in the manifest", /sha256 of payload\/state\/notes\/readme\.md does not match/, (b, f) =>
    writeRawArchive(f, editManifest(b, (m) => {
      m.files.find((x) => x.archivePath === VICTIM)!.sha256 = "0".repeat(64);
    }))],
  ["missing listed file", /listed file payload\/state\/notes\/readme\.md is missing/, (b, f) => writeRawArchive(f, replaceVictim(b, null))],
  ["extra unlisted file", /unlisted file/, (b, f) => writeRawArchive(f, [...b.entries, { path: file(b.root, "payload/state/notes/extra.txt"), type: "File", data: Buffer.from("extra") }])],
  ["duplicate entry", /appears twice/, (b, f) => writeRawArchive(f, [...b.entries.slice(0, -1), victimOf(b), b.entries[b.entries.length - 1]!])],
  ["second manifest", /second manifest\.json/, (b, f) => writeRawArchive(f, [...b.entries, b.entries[0]!])],
  ["unknown manifest version", /unknown manifest version 2/, (b, f) =>
    writeRawArchive(f, editManifest(b, (m) => {
      m.schemaVersion = 2;
    }))],
  ["entry larger than its manifest size", /larger than its manifest size/, (b, f) => {
    const v = victimOf(b);
    writeRawArchive(f, replaceVictim(b, { ...v, data: Buffer.concat([v.data, Buffer.from("more")]) }));
  }],
  ["decompression bomb inside an entry", /larger than its manifest size \(67108864 >/, (b, f) => {
    const v = victimOf(b);
    writeRawArchive(f, replaceVictim(b, { ...v, data: Buffer.alloc(64 * 1024 * 1024) }));
  }],
  ["decompression bomb after the end marker", /inflates past/, (b, f) => {
    fs.copyFileSync(b.valid, f);
    appendZeroBomb(f, 200);
  }],
  ["manifest not the first entry", /first entry is/, (b, f) => writeRawArchive(f, [...b.entries.slice(1), b.entries[0]!])],
  // A plain tar is an archive too (`--compression none`); bytes that are none of the three are refused.
  ["not gzip, zstd or tar", /not a gzip, zstd or tar archive/, (_b, f) => fs.writeFileSync(f, Buffer.from("not an archive\n".repeat(64)))],
  ["missing end-of-archive marker", /without an end-of-archive marker/, (b, f) => writeRawArchive(f, b.entries, { eof: false })],
  ["data after the end marker", /data follows the end-of-archive marker/, (b, f) =>
    fs.writeFileSync(f, zlib.gzipSync(Buffer.concat([tarBytes(b.entries), tarBytes([{ path: file(b.root, "payload/state/hidden"), type: "File", data: Buffer.from("hidden") }])])))],
];

