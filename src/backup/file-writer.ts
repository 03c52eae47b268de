// Writes extracted files (created exclusive with their final mode, never through a symlink) and makes them durable.
//
// Durability before use: restore writes every file without fsync and then makes the whole staged tree durable in one
// pass (syncStagedFiles), before anything is swapped in. One fsync per file cost ~1.8 ms of wall each on ext4 (a
// journal commit apiece; 3,000 retired JSONL files: 5.3–6.5 s, 0.35–0.53 CPU-s; eight in parallel 2.2–2.9 s) against
// 0.65–0.84 s and ~7 ms of CPU for one `sync -f` (coreutils: syncfs(2) on the file system holding the staging dir)
// after the same writes. Node has no syncfs binding, so the restore spawns `sync -f` once per file system. syncfs
// reports writeback errors only from Linux 5.8 on (errseq on the superblock; an error nobody has seen yet is reported
// to the next caller, as it is to an fsync on a newly opened descriptor); on older kernels, other systems, or when
// `sync -f` is missing or fails, every file is fsynced instead, a few at a time, in one pass at the end.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import type { FileSink } from "./read-archive.js";

const CREATE_FLAGS = fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0);
/** How many finished files may still be fsyncing in the background before the next one waits. */
const MAX_PENDING_SYNCS = 16;

/** Writes all of `chunk` at `position` (null: the current file position), looping over short writes. */
export async function writeFully(handle: fs.promises.FileHandle, chunk: Buffer, position: number | null): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset, position === null ? null : position + offset);
    offset += bytesWritten;
  }
}

/** writeFully for a descriptor, synchronously (page-cache writes: no pool round trip). */
function writeFullySync(fd: number, chunk: Buffer, position: number): void {
  let offset = 0;
  while (offset < chunk.length) offset += fs.writeSync(fd, chunk, offset, chunk.length - offset, position + offset);
}

export interface FileWriterOptions {
  mode: number;
  mtimeMs?: number;
  /** fsync before close (every caller now syncs in one pass at the end instead: see syncStagedFiles). */
  sync: boolean;
}

/**
 * Opens the extracted files and tracks each one's closing work (utimes, optional fsync, close); `drain()` waits for
 * all of it and surfaces the first error.
 */
export class FileWriterPool {
  private readonly pending = new Set<Promise<void>>();
  private firstError: unknown;

  async open(file: string, options: FileWriterOptions): Promise<FileSink & { readonly path: string; closed: Promise<void> }> {
    // Synchronous open/write/utimes/close, on purpose: these are page-cache operations of a few microseconds, and
    // each async one was a round trip through the libuv pool plus a FileHandle and its promises, per file (a
    // restore of many small plain files spent more CPU on that plumbing than on the bytes). Inflate still runs on
    // the pool meanwhile; nothing here waits for the disk (durability is one pass at the end: syncStagedFiles).
    const fd = fs.openSync(file, CREATE_FLAGS, options.mode);
    let finished = false;
    let closedFd = false;
    let position = 0;
    let resolveClosed!: () => void;
    let rejectClosed!: (error: unknown) => void;
    const closed = new Promise<void>((resolve, reject) => {
      resolveClosed = resolve;
      rejectClosed = reject;
    });
    closed.catch(() => undefined);
    const close = (): void => {
      if (closedFd) return;
      closedFd = true;
      fs.closeSync(fd);
    };
    return {
      path: file,
      closed,
      write: async (chunk) => {
        writeFullySync(fd, chunk, position);
        position += chunk.length;
      },
      finish: async () => {
        finished = true;
        const work = (async () => {
          try {
            if (options.mtimeMs !== undefined && options.mtimeMs > 0) {
              const t = new Date(options.mtimeMs);
              fs.futimesSync(fd, t, t);
            }
            if (options.sync) fs.fsyncSync(fd);
          } finally {
            close();
          }
        })();
        this.track(work);
        work.then(resolveClosed, rejectClosed);
        while (this.pending.size > MAX_PENDING_SYNCS) await Promise.race(this.pending);
      },
      abort: async () => {
        if (!finished) {
          try {
            close();
          } catch {
            // Already failing: the file is removed next either way.
          }
        }
        await fs.promises.rm(file, { force: true });
        resolveClosed();
      },
    };
  }

  private track(work: Promise<void>): void {
    const settled = work.then(
      () => undefined,
      (error) => {
        this.firstError ??= error;
      },
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
  }

  /** Waits for every background fsync/close; throws the first failure. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    if (this.firstError !== undefined) throw this.firstError;
  }
}

/** Descriptors fsynced at once by the fallback pass (each fsync mostly waits for the disk). */
const FSYNC_PARALLEL = 8;

/** True where `sync -f` (syncfs) reports writeback errors: Linux 5.8 and newer. */
export function syncfsReportsErrors(platform = process.platform, release = os.release()): boolean {
  if (platform !== "linux") return false;
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 5 || (major === 5 && minor >= 8);
}

function syncFileSystemOf(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("sync", ["-f", dir], { timeout: 10 * 60 * 1000 }, (error) => (error ? reject(error) : resolve()));
  });
}

/** fsync of every file, FSYNC_PARALLEL at a time; throws the first failure. */
async function fsyncEach(files: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++]!;
      // Read-only and O_NOFOLLOW: fsync flushes the file's data whatever the descriptor's mode.
      const handle = await fs.promises.open(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FSYNC_PARALLEL, files.length) }, worker));
}

/**
 * Makes `files` (every one closed, all of them below `roots`: the staging dirs this restore created, so each file is on
 * its root's file system) durable in one pass: one syncfs per file system where it reports errors, else an fsync of
 * each file. Directory entries are the caller's (fsyncDir of each created dir). Returns how it was done.
 */
export async function syncStagedFiles(files: readonly string[], roots: readonly string[], options: { syncfs?: boolean } = {}): Promise<"none" | "syncfs" | "fsync"> {
  if (files.length === 0) return "none";
  if (options.syncfs ?? syncfsReportsErrors()) {
    const byDevice = new Map<number, string>();
    for (const root of roots) {
      const dev = fs.statSync(root).dev;
      if (!byDevice.has(dev)) byDevice.set(dev, root);
    }
    try {
      for (const root of byDevice.values()) await syncFileSystemOf(root);
      return "syncfs";
    } catch {
      // No `sync -f` here (busybox without -f, a trimmed image) or it failed: the per-file pass decides.
    }
  }
  await fsyncEach(files);
  return "fsync";
}
