// Reuse of unchanged database snapshots: a database whose files were not written since the last verified archive
// gets that archive's compressed snapshot bytes copied as they are (no VACUUM INTO, no re-compression).
//
// "Unchanged" is decided like restic and git decide it: every commit writes the main file (rollback journal) or
// the -wal (WAL mode), so identical (device, inode, size, mtime, ctime) of the database, its -wal and its -journal
// mean no commit happened. SQLite's own counters do not help: the header change counter is not bumped on every
// commit in WAL mode and data_version is per connection. A fingerprint is only recorded when it is not "racy":
// taken before and after VACUUM INTO it must be identical, and every timestamp must be older than the moment it
// was taken by RACY_MARGIN_MS, so a later write in the same clock tick cannot go unseen.
//
// Trust: what may be reused comes from our own ledger (backup_runs in the global DB), never from an archive's
// manifest, and the copied bytes must hash to the sha256 recorded when they were first written and verified.
import fs from "node:fs";
import { sha256OfRange } from "./hash-range.js";
import type { Compression } from "./compression.js";
import type { WrittenSegment } from "./parallel-compress.js";
import type { ManifestDatabase, ManifestFile } from "./types.js";

/** Writes older than this (ms) before the fingerprint was taken cannot share its clock tick (coarse clocks, FAT's 2 s). */
export const RACY_MARGIN_MS = 3000;
const SIDE_FILES = ["", "-wal", "-journal"] as const;

interface FileStamp {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

/** Stat identity of a database's main file, -wal and -journal (null where absent). */
export interface SourceFingerprint {
  files: Array<FileStamp | null>;
}

/** One database snapshot that a later archive may copy: where its bytes are and what they are. */
export interface ReusableSnapshot {
  sourcePath: string;
  fingerprint: SourceFingerprint;
  /** Compressed bytes of the entry's body (content + tar padding) in the archive. */
  segment: WrittenSegment;
  file: ManifestFile;
  database: ManifestDatabase;
}

/** Stored with a completed, verified run in backup_runs.manifest_json under `reuse`. */
export interface ReuseRecord {
  compression: Compression;
  archiveSize: number;
  snapshots: ReusableSnapshot[];
}

export function sourceFingerprint(dbPath: string): SourceFingerprint {
  return {
    files: SIDE_FILES.map((suffix) => {
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(`${dbPath}${suffix}`, { bigint: true });
      } catch {
        return null;
      }
      return { dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) };
    }),
  };
}

export function sameFingerprint(a: SourceFingerprint, b: SourceFingerprint): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The fingerprint to record for a snapshot taken between `before` (stat'ed at `takenAtMs`) and `after`, or null
 * when the database may have changed meanwhile or a timestamp is too close to `takenAtMs` to prove anything.
 */
export function stableFingerprint(before: SourceFingerprint, after: SourceFingerprint, takenAtMs: number): SourceFingerprint | null {
  if (!sameFingerprint(before, after)) return null;
  const limitNs = (BigInt(Math.floor(takenAtMs)) - BigInt(RACY_MARGIN_MS)) * 1_000_000n;
  for (const f of before.files) {
    if (f && (BigInt(f.mtimeNs) >= limitNs || BigInt(f.ctimeNs) >= limitNs)) return null;
  }
  return before;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isSegment(value: unknown): value is WrittenSegment {
  return isRecord(value) && Number.isSafeInteger(value.start) && Number.isSafeInteger(value.length) && (value.start as number) >= 0 && (value.length as number) > 0 && typeof value.sha256 === "string" && /^[0-9a-f]{64}$/.test(value.sha256);
}

/** The `reuse` part of a ledger row, or null when absent or malformed (then nothing is reused). */
export function parseReuseRecord(json: string | null): ReuseRecord | null {
  if (!json) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  const reuse = isRecord(parsed) ? parsed.reuse : undefined;
  if (!isRecord(reuse) || (reuse.compression !== "gzip" && reuse.compression !== "zstd") || !Number.isSafeInteger(reuse.archiveSize) || !Array.isArray(reuse.snapshots)) return null;
  const snapshots = reuse.snapshots.filter(
    (s): s is ReusableSnapshot =>
      isRecord(s) &&
      typeof s.sourcePath === "string" &&
      isRecord(s.fingerprint) &&
      Array.isArray(s.fingerprint.files) &&
      isSegment(s.segment) &&
      isRecord(s.file) &&
      isRecord(s.database) &&
      typeof s.file.archivePath === "string" &&
      s.file.archivePath === s.database.archivePath &&
      typeof s.file.sha256 === "string" &&
      s.file.sha256 === s.database.sha256,
  );
  return { compression: reuse.compression, archiveSize: reuse.archiveSize as number, snapshots };
}

export interface ReuseCandidate {
  archivePath: string;
  snapshot: ReusableSnapshot;
}

export interface LedgerReuseRow {
  archivePath: string | null;
  status: string;
  manifestJson: string | null;
}

/**
 * For each database source path, the newest recorded snapshot that is still exactly reusable: same compression,
 * archive present with the size recorded, same archive path inside, and the live files' fingerprint unchanged.
 */
export function findReuseCandidates(rows: readonly LedgerReuseRow[], compression: Compression, databases: ReadonlyArray<{ absPath: string; archivePath: string }>): Map<string, ReuseCandidate> {
  const wanted = new Map(databases.map((d) => [d.absPath, { archivePath: d.archivePath, now: sourceFingerprint(d.absPath) }]));
  const found = new Map<string, ReuseCandidate>();
  for (const row of rows) {
    if (found.size === wanted.size) break;
    if (row.status !== "completed" || !row.archivePath) continue;
    const record = parseReuseRecord(row.manifestJson);
    if (!record || record.compression !== compression) continue;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(row.archivePath);
    } catch {
      continue;
    }
    if (!st.isFile() || st.size !== record.archiveSize) continue;
    for (const snapshot of record.snapshots) {
      const want = wanted.get(snapshot.sourcePath);
      if (!want || found.has(snapshot.sourcePath) || snapshot.file.archivePath !== want.archivePath) continue;
      if (snapshot.segment.start + snapshot.segment.length > st.size) continue;
      if (!sameFingerprint(snapshot.fingerprint, want.now)) continue;
      found.set(snapshot.sourcePath, { archivePath: row.archivePath, snapshot });
    }
  }
  return found;
}

/** Hashes the recorded compressed bytes: a candidate whose archive was altered since is not reused. */
export function segmentIntact(archivePath: string, segment: WrittenSegment): boolean {
  let fd: number;
  try {
    // Non-blocking and type-checked: a FIFO or device swapped in at the recorded path cannot hang or feed us.
    fd = fs.openSync(archivePath, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return false;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return false;
    const read = sha256OfRange(fd, segment.start, segment.length);
    return read.bytes === segment.length && read.sha256 === segment.sha256;
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}
