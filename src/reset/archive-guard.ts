// Finds, by content, the openclaw-state archives under the paths a reset would remove, so reset can keep them.
import fs from "node:fs";
import path from "node:path";
import { describeError, isOpenclawStateError } from "../core/errors.js";
import { readLeadingBytes } from "../core/safe-read.js";
import { ARCHIVE_NAME_PATTERN } from "../backup/compression.js";
import { readArchiveManifest } from "../backup/read-archive.js";
import { isPathInside } from "../state/paths.js";

/** A file reset must keep: an archive this tool wrote, or one whose manifest cannot be read here to tell. */
export interface GuardedArchive {
  path: string;
  /** Why it is kept: "openclaw-state archive (run …)" or why it could not be read. */
  reason: string;
}

/** A file that looks like an archive (name or magic bytes) but whose first entry is not our manifest. */
export interface ForeignArchive {
  path: string;
  problem: string;
}

export interface ArchiveScan {
  /** Ours (manifest read) or undecidable here (zstd on this Node, unreadable): never removed. */
  guarded: GuardedArchive[];
  /** Named like an archive but not ours: not protected by its name; reset says what happens to it. */
  foreign: ForeignArchive[];
}

export interface ArchiveScanOptions {
  /** Not descended into (the backup dir: kept whole anyway). */
  skip?: readonly string[];
  /** Manifest reads allowed in one scan; files past it are kept unread (bounds the cost of a hostile tree). */
  maxReads?: number;
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** Skippable zstd frames (pzstd writes one first): 0x184D2A50..5F little-endian. */
function isSkippableFrame(b: Buffer): boolean {
  return b.length >= 4 && (b[0]! & 0xf0) === 0x50 && b[1] === 0x2a && b[2] === 0x4d && b[3] === 0x18;
}

export const DEFAULT_MAX_READS = 2000;

function compressedMagic(b: Buffer): boolean {
  return b.subarray(0, 2).equals(GZIP_MAGIC) || b.subarray(0, 4).equals(ZSTD_MAGIC) || isSkippableFrame(b);
}

/** An error that says nothing about whose archive it is (this Node lacks zstd, the file cannot be read). */
function undecidable(error: unknown): boolean {
  if (isOpenclawStateError(error)) return error.code === "zstd_unsupported" || error.code === "archive_unreadable";
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

class Scanner {
  readonly scan: ArchiveScan = { guarded: [], foreign: [] };
  private reads = 0;
  private readonly seen = new Set<string>();

  constructor(private readonly options: ArchiveScanOptions) {}

  async file(file: string): Promise<void> {
    const named = ARCHIVE_NAME_PATTERN.test(path.basename(file));
    const head = readLeadingBytes(file, 4);
    if (head === null) return;
    // Any gzip/zstd file is read: a renamed archive (`KEEP`, `x.bak`) is still ours. A file only named like one is reported.
    if (!compressedMagic(head)) {
      if (named) this.scan.foreign.push({ path: file, problem: "its first bytes are neither gzip nor zstd" });
      return;
    }
    if (this.reads >= (this.options.maxReads ?? DEFAULT_MAX_READS)) {
      this.scan.guarded.push({ path: file, reason: `a compressed file not inspected (more than ${this.options.maxReads ?? DEFAULT_MAX_READS} in this tree); kept to be safe` });
      return;
    }
    this.reads += 1;
    try {
      // First entry only, bounded by the manifest size limit: the payload is never inflated.
      const manifest = await readArchiveManifest(file);
      this.scan.guarded.push({ path: file, reason: `openclaw-state archive (run ${manifest.runId}, ${manifest.createdAt})` });
    } catch (error) {
      if (undecidable(error)) this.scan.guarded.push({ path: file, reason: `a compressed file whose manifest cannot be read here (${describeError(error)}); kept to be safe` });
      else if (named) this.scan.foreign.push({ path: file, problem: describeError(error) });
    }
  }

  async walk(p: string): Promise<void> {
    const abs = path.resolve(p);
    if (this.seen.has(abs) || (this.options.skip ?? []).some((s) => isPathInside(path.resolve(s), abs))) return;
    this.seen.add(abs);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(abs);
    } catch {
      return;
    }
    // Never through a link: removing a link never removes what it points at.
    if (st.isFile()) return this.file(abs);
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = fs.readdirSync(abs).sort();
    } catch {
      return;
    }
    for (const name of names) await this.walk(path.join(abs, name));
  }
}

/** Every guarded or foreign archive at or under `roots` (files or directories), links never followed. */
export async function scanForArchives(roots: readonly string[], options: ArchiveScanOptions = {}): Promise<ArchiveScan> {
  const scanner = new Scanner(options);
  for (const root of roots) await scanner.walk(root);
  return scanner.scan;
}
