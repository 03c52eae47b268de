// Reuse of unchanged plain files: a file whose stat identity is the one the last verified archive recorded gets that archive's compressed body copied, unread.
//
// "Unchanged" is restic's rule: same path, device, inode, size, mtime and ctime (nanoseconds). A stamp is only
// recorded when the file was provably not written while it was read (fstat before and after identical) and its
// timestamps are older than the read by RACY_MARGIN_MS (snapshot-reuse.ts), so a write in the same clock tick as the
// read cannot go unseen. Only files of at least PLAIN_SEGMENT_MIN bytes get a body of their own (whole gzip members /
// zstd frames, see write-archive.ts); smaller ones share blocks and are always read.
//
// Trust, as for database snapshots: the backup_runs ledger only names the archive and where its payload starts. The
// archive's own manifest (read from it, size-bounded, validated) must list the file at the same archive path, under
// the same asset source, with the same stamp and size, in a run that verified before publishing; the compressed
// bytes at the recorded range must hash to the manifest's body record before they are used. Any doubt means the
// file is read afresh, never a failed backup.
//
// Hashed once: when the new archive is verified before it is published (`deferHashes`), a held body is copied
// unhashed and marked lent; the verify hashes the new archive's copy against the same manifest record, which
// proves the same thing about the same bytes before anything trusts them. A lent body that does not hash fails
// that verify as a LentBodyMismatch, and the caller writes the archive again with a new PlainFileReuse that hashes
// here (a fresh read of whatever does not match): a damaged earlier archive costs a second write, never a failed backup.
import crypto from "node:crypto";
import fs from "node:fs";
import { archivePathInside } from "./manifest.js";
import type { Compression } from "./compression.js";
import { sha256OfRange } from "./hash-range.js";
import { RACY_MARGIN_MS } from "./snapshot-reuse.js";
import type { BackupAsset, BackupManifest, ManifestFile, ManifestFileStamp } from "./types.js";
import type { WalkFile } from "./walk-assets.js";

/** Plain files from this size get a body segment of their own (smaller ones would cost more in codec resets than they save). */
export const PLAIN_SEGMENT_MIN = 16 * 1024;
/** Bodies up to this many compressed bytes are read once into memory, hashed and written; larger ones are hashed, then copied. */
const HOLD_MAX = 4 * 1024 * 1024;
/** After this many bodies that do not hash, the archive lends nothing more (a damaged or forged one cannot make a run slow). */
export const MAX_MISMATCHES = 8;

export function fileStamp(st: fs.BigIntStats): ManifestFileStamp {
  return { dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) };
}

function sameStamp(a: ManifestFileStamp, b: ManifestFileStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * The stamp to record for a file read between `before` and `after` (fstat of the open file; the read started at
 * `takenAtMs`), or null when it may have changed meanwhile or a timestamp is too recent to prove anything.
 */
export function stableStamp(before: fs.BigIntStats, after: fs.BigIntStats, takenAtMs: number): ManifestFileStamp | null {
  const a = fileStamp(before);
  if (!sameStamp(a, fileStamp(after))) return null;
  const limitNs = (BigInt(Math.floor(takenAtMs)) - BigInt(RACY_MARGIN_MS)) * 1_000_000n;
  return before.mtimeNs < limitNs && before.ctimeNs < limitNs ? a : null;
}

/** Where the ledger says an earlier archive's payload starts (its `reuse.payloadStart`); null when absent or malformed. */
export function payloadStartHint(json: string | null): number | null {
  if (!json) return null;
  try {
    const start = (JSON.parse(json) as { reuse?: { payloadStart?: unknown } } | null)?.reuse?.payloadStart;
    return Number.isSafeInteger(start) && (start as number) >= 0 ? (start as number) : null;
  } catch {
    return null;
  }
}

/**
 * An unchanged file's earlier body: in memory (`bytes`), or a range of the earlier archive hashed just now. `lent`:
 * the bytes were not hashed here (deferred to the verify of the archive they are copied into).
 */
export type ReusedBody = { file: ManifestFile; stamp: ManifestFileStamp; sha256: string; lent?: boolean } & ({ bytes: Buffer } | { range: { archivePath: string; start: number; length: number } });

export class PlainFileReuse {
  private readonly byPath = new Map<string, ManifestFile & Required<Pick<ManifestFile, "body" | "sourceState">>>();
  private fd: number | null | undefined;
  private archiveSize = 0;
  /** Files whose earlier body did not check out (each was read afresh): named in a warning by the caller. */
  readonly mismatches: string[] = [];
  reusedCount = 0;
  /** Held bodies are copied unhashed, their check left to the verify that follows (see the file header). */
  deferHashes = false;

  /**
   * `manifest` is the earlier archive's own (read from `archivePath`); `assets` are this run's: a file is only
   * matched under an asset of the same kind, source path and archive path.
   */
  constructor(
    readonly archivePath: string,
    private readonly payloadStart: number,
    manifest: BackupManifest,
    compression: Compression,
    assets: readonly Pick<BackupAsset, "kind" | "sourcePath" | "archivePath">[],
  ) {
    if (manifest.options.verify !== true) return;
    const sameAsset = (p: string): boolean => {
      const then = manifest.assets.find((a) => archivePathInside(a.archivePath, p));
      const now = assets.find((a) => archivePathInside(a.archivePath, p));
      return then !== undefined && now !== undefined && then.archivePath === now.archivePath && then.kind === now.kind && then.sourcePath === now.sourcePath;
    };
    for (const f of manifest.files) {
      if (!f.body || !f.sourceState || f.body.compression !== compression || String(f.size) !== f.sourceState.size) continue;
      if (sameAsset(f.archivePath)) this.byPath.set(f.archivePath, f as ManifestFile & Required<Pick<ManifestFile, "body" | "sourceState">>);
    }
  }

  get size(): number {
    return this.byPath.size;
  }

  /** The earlier body of `entry` when the file is provably unchanged and the bytes hash to the manifest's record; else null (read it). */
  take(entry: WalkFile): ReusedBody | null {
    const f = this.byPath.get(entry.archivePath);
    if (!f || f.size !== entry.size || f.mode !== entry.mode || this.mismatches.length >= MAX_MISMATCHES) return null;
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(entry.absPath, { bigint: true });
    } catch {
      return null;
    }
    if (!st.isFile() || !sameStamp(fileStamp(st), f.sourceState)) return null;
    const fd = this.open();
    if (fd === null) return null;
    const { length, sha256 } = f.body;
    const start = this.payloadStart + f.body.offset;
    try {
      if (start + length > this.archiveSize) throw new Error("the range lies past the archive's end");
      if (length <= HOLD_MAX) {
        const bytes = Buffer.allocUnsafe(length);
        let done = 0;
        while (done < length) {
          const n = fs.readSync(fd, bytes, done, length - done, start + done);
          if (n === 0) break;
          done += n;
        }
        if (done === length && this.deferHashes) return this.reused({ file: f, stamp: f.sourceState, sha256, bytes, lent: true });
        if (done === length && crypto.createHash("sha256").update(bytes).digest("hex") === sha256) return this.reused({ file: f, stamp: f.sourceState, sha256, bytes });
      } else {
        const read = sha256OfRange(fd, start, length);
        if (read.bytes === length && read.sha256 === sha256) return this.reused({ file: f, stamp: f.sourceState, sha256, range: { archivePath: this.archivePath, start, length } });
      }
    } catch {
      // Unreadable: the same as a mismatch.
    }
    this.mismatches.push(entry.absPath);
    return null;
  }

  close(): void {
    if (typeof this.fd === "number") fs.closeSync(this.fd);
    this.fd = null;
  }

  private reused(body: ReusedBody): ReusedBody {
    this.reusedCount += 1;
    // The file record as that manifest has it: same path, size, content hash, mode, mtime (the body is re-recorded where it lands).
    const { body: _b, sourceState: _s, ...file } = body.file;
    return { ...body, file };
  }

  /** The earlier archive, opened once without following a link or blocking; null when it cannot be (nothing is reused then). */
  private open(): number | null {
    if (this.fd !== undefined) return this.fd;
    this.fd = null;
    try {
      const fd = fs.openSync(this.archivePath, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
      const st = fs.fstatSync(fd);
      if (st.isFile()) {
        this.fd = fd;
        this.archiveSize = st.size;
      } else fs.closeSync(fd);
    } catch {
      this.fd = null;
    }
    return this.fd;
  }
}
