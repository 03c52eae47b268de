// Writes extracted files: created exclusive with their final mode, never through a symlink, fsynced before use.
import fs from "node:fs";
import type { FileSink } from "./read-archive.js";

const CREATE_FLAGS = fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0);
/** How many finished files may still be fsyncing in the background before the next one waits. */
const MAX_PENDING_SYNCS = 16;
const MAX_WRITES_IN_FLIGHT = 4;

/** Writes all of `chunk` at `position` (null: the current file position), looping over short writes. */
export async function writeFully(handle: fs.promises.FileHandle, chunk: Buffer, position: number | null): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset, position === null ? null : position + offset);
    offset += bytesWritten;
  }
}

export interface FileWriterOptions {
  mode: number;
  mtimeMs?: number;
  /** fsync before close (restore: the file must be durable before it is swapped in). */
  sync: boolean;
}

/**
 * Tracks background fsync+close work so extraction overlaps with it; `drain()` waits for all of it and
 * surfaces the first error.
 */
export class FileWriterPool {
  private readonly pending = new Set<Promise<void>>();
  private firstError: unknown;

  async open(file: string, options: FileWriterOptions): Promise<FileSink & { readonly path: string; closed: Promise<void> }> {
    const handle = await fs.promises.open(file, CREATE_FLAGS, options.mode);
    let finished = false;
    let position = 0;
    const writes = new Set<Promise<void>>();
    let resolveClosed!: () => void;
    let rejectClosed!: (error: unknown) => void;
    const closed = new Promise<void>((resolve, reject) => {
      resolveClosed = resolve;
      rejectClosed = reject;
    });
    closed.catch(() => undefined);
    return {
      path: file,
      closed,
      write: async (chunk) => {
        // Positional writes overlap with the next inflate/hash step; a few per file may be in flight.
        const at = position;
        position += chunk.length;
        const write = writeFully(handle, chunk, at);
        writes.add(write);
        void write.then(
          () => writes.delete(write),
          () => writes.delete(write),
        );
        while (writes.size >= MAX_WRITES_IN_FLIGHT) await Promise.race(writes);
      },
      finish: async () => {
        finished = true;
        await Promise.all(writes);
        const work = (async () => {
          if (options.mtimeMs !== undefined && options.mtimeMs > 0) {
            const t = new Date(options.mtimeMs);
            await handle.utimes(t, t);
          }
          if (options.sync) await handle.sync();
          await handle.close();
        })();
        this.track(work);
        work.then(resolveClosed, rejectClosed);
        while (this.pending.size > MAX_PENDING_SYNCS) await Promise.race(this.pending);
      },
      abort: async () => {
        await Promise.allSettled(writes);
        if (!finished) await handle.close().catch(() => undefined);
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
