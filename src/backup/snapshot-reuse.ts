// Reuse of unchanged database snapshots: a database whose files were not written since an earlier verified archive
// gets that archive's compressed snapshot bytes copied as they are (no VACUUM INTO, no re-compression).
//
// "Unchanged" is decided like restic and git decide it: every commit writes the main file (rollback journal) or
// the -wal (WAL mode), so identical (device, inode, size, mtime, ctime) of the database, its -wal and its -journal
// mean no commit happened; the main file header's change counter and schema version are compared too. SQLite's
// own counters alone do not help: the change counter is not bumped on every commit in WAL mode and data_version is
// per connection. A fingerprint is only recorded when it is not "racy": taken before and after VACUUM INTO it must
// be identical, and every timestamp must be older than the moment it was taken by RACY_MARGIN_MS, so a later
// write in the same clock tick cannot go unseen.
//
// Trust: the backup_runs ledger only says where to look (which archive, which byte range). A segment is accepted
// only when the earlier archive's own manifest (read from the archive, size-bounded) says it is the snapshot of
// this very database — role, agent, source path, the source's fingerprint and header as they are now — in a run
// that verified before publishing, and the bytes at that range hash to the manifest's record of the body. Any
// doubt means a fresh snapshot, never a failed backup.
import fs from "node:fs";
import { describeError } from "../core/errors.js";
import { readLeadingBytes } from "../core/safe-read.js";
import { sha256OfRange } from "./hash-range.js";
import { sniffCompression, type Compression } from "./compression.js";
import type { WrittenSegment } from "./parallel-compress.js";
import { readArchiveManifest } from "./read-archive.js";
import type { BackupManifest, DatabaseRole, ManifestDatabase, ManifestFile, ManifestSourceState } from "./types.js";

/** Writes older than this (ms) before the fingerprint was taken cannot share its clock tick (coarse clocks, FAT's 2 s). */
export const RACY_MARGIN_MS = 3000;
const SIDE_FILES = ["", "-wal", "-journal"] as const;
const SQLITE_MAGIC = Buffer.from("SQLite format 3\u0000", "latin1");

/** Stat identity of a database's main file, -wal and -journal (null where absent), and its header's counters. */
export type SourceFingerprint = ManifestSourceState;

/** One database snapshot that a later archive may copy: where its bytes are and what they are. */
export interface ReusableSnapshot {
  sourcePath: string;
  fingerprint: SourceFingerprint;
  /** Compressed bytes of the entry's body (content + tar padding) in the archive. */
  segment: WrittenSegment;
  file: ManifestFile;
  database: ManifestDatabase;
}

/** Stored with a completed, verified run in backup_runs.manifest_json under `reuse`: hints where to look, no more. */
export interface ReuseRecord {
  compression: Compression;
  archiveSize: number;
  /** Where the payload starts in the archive: plain file bodies' manifest offsets count from here (file-reuse.ts). */
  payloadStart?: number;
  snapshots: ReusableSnapshot[];
}

/** The main file header's change counter (offset 24) and schema version (user_version, offset 60); null when unreadable. */
function readHeader(dbPath: string): ManifestSourceState["header"] {
  const buf = readLeadingBytes(dbPath, 100);
  if (!buf || buf.length !== 100 || !buf.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return null;
  return { changeCounter: buf.readUInt32BE(24), schemaVersion: buf.readUInt32BE(60) };
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
    header: readHeader(dbPath),
  };
}

/** Field by field, so key order (a manifest re-serialized by another writer) does not matter. */
export function sameFingerprint(a: SourceFingerprint, b: SourceFingerprint): boolean {
  if (a.files.length !== b.files.length) return false;
  for (let i = 0; i < a.files.length; i += 1) {
    const x = a.files[i];
    const y = b.files[i];
    if (x === null || y === null || x === undefined || y === undefined) {
      if (x !== y) return false;
      continue;
    }
    if (x.dev !== y.dev || x.ino !== y.ino || x.size !== y.size || x.mtimeNs !== y.mtimeNs || x.ctimeNs !== y.ctimeNs) return false;
  }
  if (a.header === null || b.header === null) return a.header === b.header;
  return a.header.changeCounter === b.header.changeCounter && a.header.schemaVersion === b.header.schemaVersion;
}

/**
 * The fingerprint to record for a snapshot taken between `before` (stat'ed at `takenAtMs`) and `after`, or null
 * when the database may have changed meanwhile or a timestamp is too close to `takenAtMs` to prove anything.
 */
export function stableFingerprint(before: SourceFingerprint, after: SourceFingerprint, takenAtMs: number): SourceFingerprint | null {
  if (!sameFingerprint(before, after) || before.header === null) return null;
  const limitNs = (BigInt(Math.floor(takenAtMs)) - BigInt(RACY_MARGIN_MS)) * 1_000_000n;
  for (const f of before.files) {
    if (f && (BigInt(f.mtimeNs) >= limitNs || BigInt(f.ctimeNs) >= limitNs)) return null;
  }
  return before;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where a ledger row says a database body sits: the archive, the entry inside it, the byte range. Never trusted. */
export interface ReuseHint {
  archivePath: string;
  entryPath: string;
  start: number;
  length: number;
}

/** The hints of a ledger row's `reuse` part; malformed parts are dropped (then nothing is looked up there). */
export function parseReuseHints(archivePath: string, json: string | null): ReuseHint[] {
  if (!json) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return [];
  }
  const reuse = isRecord(parsed) ? parsed.reuse : undefined;
  if (!isRecord(reuse) || !Array.isArray(reuse.snapshots)) return [];
  return reuse.snapshots.flatMap((s): ReuseHint[] => {
    if (!isRecord(s) || !isRecord(s.segment) || !isRecord(s.file) || typeof s.file.archivePath !== "string") return [];
    const { start, length } = s.segment;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(length) || (start as number) < 0 || (length as number) <= 0) return [];
    return [{ archivePath, entryPath: s.file.archivePath, start: start as number, length: length as number }];
  });
}

export interface LedgerReuseRow {
  archivePath: string | null;
  status: string;
  manifestJson: string | null;
}

/** A database of this run that may take an earlier snapshot: who it is, as the walk found it. */
export interface ReuseWanted {
  absPath: string;
  archivePath: string;
  role: DatabaseRole;
  agentId: string | null;
}

export interface ReuseCandidate {
  /** The earlier archive the bytes are copied from. */
  archivePath: string;
  /** Its segment carries the sha256 computed here, from the bytes as they were read (lent: the manifest's record). */
  snapshot: ReusableSnapshot;
  /**
   * Not hashed here: the copy hashes the bytes as it writes them (ParallelCompressor.copySegment) and a mismatch is
   * a LentCopyMismatch, after which the caller searches again with the hashes taken here.
   */
  lent?: boolean;
}

/** A ledger pointer that did not check out: the database is snapshotted afresh. */
export interface ReuseRefusal {
  /** The database's source path. */
  path: string;
  /** The earlier archive the ledger pointed at. */
  archivePath: string;
  reason: string;
  /** True when the ledger and the archive disagree (a forged or stale row, an altered archive): worth a warning. */
  mismatch: boolean;
}

export interface ReuseSearch {
  candidates: Map<string, ReuseCandidate>;
  refused: ReuseRefusal[];
}

/** Byte ranges hashed per database at most (each costs a read of the range): forged rows cannot make a run slow. */
const MAX_BYTE_CHECKS = 2;

function describeDb(d: { role: DatabaseRole; agentId: string | null; sourcePath: string }): string {
  return `${d.role === "agent" ? `agent ${d.agentId ?? "?"}` : d.role} database ${d.sourcePath}`;
}

/**
 * For each database, the newest snapshot the ledger points at that the earlier archive itself vouches for (see the
 * header comment), or nothing. `readManifest` is injectable for tests. Never throws on what it reads.
 */
export async function findReuseCandidates(
  rows: readonly LedgerReuseRow[],
  compression: Compression,
  databases: readonly ReuseWanted[],
  readManifest: (archivePath: string) => Promise<BackupManifest> = (p) => readArchiveManifest(p),
  deferHashes = false,
): Promise<ReuseSearch> {
  const wanted = new Map(databases.map((d) => [d.archivePath, { ...d, now: sourceFingerprint(d.absPath), byteChecks: 0 }]));
  const candidates = new Map<string, ReuseCandidate>();
  const refused: ReuseRefusal[] = [];
  const manifests = new Map<string, BackupManifest | { reason: string; mismatch: boolean }>();
  const refuse = (want: ReuseWanted, archivePath: string, reason: string, mismatch: boolean): void => {
    if (!refused.some((r) => r.path === want.absPath && r.archivePath === archivePath && r.reason === reason)) refused.push({ path: want.absPath, archivePath, reason, mismatch });
  };

  /** The archive's own manifest, or why it cannot be used (cached per archive; a gone archive is no mismatch). */
  const manifestOf = async (archivePath: string): Promise<BackupManifest | { reason: string; mismatch: boolean }> => {
    let known = manifests.get(archivePath);
    if (known !== undefined) return known;
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(archivePath);
    } catch {
      st = undefined;
    }
    if (!st) known = { reason: "the archive is no longer there", mismatch: false };
    else if (!st.isFile()) known = { reason: "it is not a regular file (links are not followed)", mismatch: true };
    else {
      try {
        const found = sniffCompression(archivePath);
        // Another compression is a run with another --compression: normal, and never copied across.
        known = found !== compression ? { reason: `it is not a ${compression} archive`, mismatch: found === null } : await readManifest(archivePath);
      } catch (error) {
        known = { reason: `its manifest cannot be read (${describeError(error)})`, mismatch: true };
      }
    }
    manifests.set(archivePath, known);
    return known;
  };

  for (const row of rows) {
    if (candidates.size === wanted.size) break;
    if (row.status !== "completed" || !row.archivePath) continue;
    for (const hint of parseReuseHints(row.archivePath, row.manifestJson)) {
      const want = wanted.get(hint.entryPath);
      if (!want || candidates.has(want.absPath) || want.now.header === null) continue;
      const manifest = await manifestOf(hint.archivePath);
      if (!("databases" in manifest)) {
        refuse(want, hint.archivePath, manifest.reason, manifest.mismatch);
        continue;
      }
      const db = manifest.databases.find((d) => d.archivePath === want.archivePath);
      if (!db) {
        refuse(want, hint.archivePath, `its manifest lists no database at ${want.archivePath}`, true);
        continue;
      }
      if (db.role !== want.role || db.agentId !== want.agentId || db.sourcePath !== want.absPath) {
        refuse(want, hint.archivePath, `its manifest says that snapshot is of the ${describeDb(db)}, not of the ${describeDb({ ...want, sourcePath: want.absPath })}`, true);
        continue;
      }
      if (manifest.options.verify !== true) {
        refuse(want, hint.archivePath, "it was written without verification (--no-verify)", false);
        continue;
      }
      if (!db.body || !db.sourceState) {
        refuse(want, hint.archivePath, "its manifest records no reusable snapshot (written by an earlier version, or the database was being written during that backup)", false);
        continue;
      }
      // The database changed since that snapshot: the normal case, not a refusal.
      if (!sameFingerprint(db.sourceState, want.now)) continue;
      if (db.body.compression !== compression) continue;
      const file = manifest.files.find((f) => f.archivePath === want.archivePath);
      if (!file || file.sha256 !== db.sha256) {
        refuse(want, hint.archivePath, `its manifest has no matching file entry for ${want.archivePath}`, true);
        continue;
      }
      if (hint.length !== db.body.length) {
        refuse(want, hint.archivePath, `the ledger's byte range is ${hint.length} bytes long but the manifest's body is ${db.body.length}`, true);
        continue;
      }
      if (deferHashes) {
        candidates.set(want.absPath, {
          archivePath: hint.archivePath,
          snapshot: { sourcePath: want.absPath, fingerprint: want.now, segment: { start: hint.start, length: hint.length, sha256: db.body.sha256 }, file, database: db },
          lent: true,
        });
        continue;
      }
      if (want.byteChecks >= MAX_BYTE_CHECKS) continue;
      want.byteChecks += 1;
      const read = hashRange(hint.archivePath, hint.start, hint.length);
      if (read === null || read.bytes !== hint.length || read.sha256 !== db.body.sha256) {
        refuse(want, hint.archivePath, `the bytes at the ledger's range (${hint.start}+${hint.length}) do not hash to the body its manifest records`, true);
        continue;
      }
      candidates.set(want.absPath, {
        archivePath: hint.archivePath,
        snapshot: { sourcePath: want.absPath, fingerprint: want.now, segment: { start: hint.start, length: hint.length, sha256: read.sha256 }, file, database: db },
      });
    }
  }
  return { candidates, refused };
}

/** sha256 of a byte range, read without following a link or blocking on a FIFO; null when unreadable. */
function hashRange(archivePath: string, start: number, length: number): { sha256: string; bytes: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(archivePath, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || start + length > st.size) return null;
    return sha256OfRange(fd, start, length);
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
