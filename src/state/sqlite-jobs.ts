// Runs backup SQLite jobs (snapshot, describe, finalize) on a worker thread, so checks overlap with streaming.
//
// The worker is the compiled sqlite-worker.js next to this file; when it is absent (tests running the
// TypeScript sources) the same functions run inline on the calling thread, with identical results.
import fs from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import { spawnWorker } from "../core/spawn-worker.js";
import { defaultBusyTimeoutMs } from "./busy-timeout.js";
import { runSqliteJob, type SqliteJob, type SqliteJobResult } from "./sqlite-snapshot.js";

export type { SqliteJob, SqliteJobResult } from "./sqlite-snapshot.js";

interface WorkerReply {
  id: number;
  ok: boolean;
  result?: unknown;
  message?: string;
}

export class SqliteJobError extends Error {}

const WORKER_URL = new URL("./sqlite-worker.js", import.meta.url);

/** Below this a job on a database costs less on the calling thread than a worker's start-up (`inlineBelowBytes`). */
export const SMALL_DATABASE_BYTES = 4 * 1024 * 1024;

/**
 * How long an inline job waits for a lock before it moves to a worker. A job waiting out the full busy timeout on
 * the calling thread (a gateway holding the database) would block that thread's event loop — Ctrl-C's cleanup, the
 * streams — for up to that timeout; on a worker the wait blocks nothing.
 */
export const INLINE_BUSY_TIMEOUT_MS = 200;

/**
 * On one CPU, a runner that inlines small jobs at all (`inlineBelowBytes`) inlines jobs on databases below this too:
 * there a worker cannot run beside the calling thread, so it buys no speed and costs its start-up (0.05–0.1 CPU-s,
 * ~4% of a restore of four 55 MiB agent databases). The price is the calling thread's event loop (Ctrl-C, progress)
 * waiting for one such job: an integrity_check of 64 MiB takes ~0.15–0.3 s.
 */
export const ONE_CPU_INLINE_BYTES = 64 * 1024 * 1024;

function isLockError(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? "");
  return code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED");
}

/** A snapshot may be retried only while VACUUM INTO's destination is absent or empty (it refuses anything else). */
function retryable(job: SqliteJob): boolean {
  if (job.op !== "snapshot") return true;
  const st = fs.statSync(job.dest, { throwIfNoEntry: false });
  return !st || (st.isFile() && st.size === 0);
}

interface PoolWorker {
  worker: Worker;
  busy: number;
}

/**
 * Up to `workers` lazily started worker threads; a job goes to the least busy one. Jobs that depend on
 * each other must be awaited in turn by the caller. Always `close()` the runner (a finally block).
 */
export class SqliteJobRunner {
  private readonly workers: PoolWorker[] = [];
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; owner: PoolWorker }>();
  private nextId = 1;
  private readonly useWorker: boolean;
  private readonly size: number;
  private inlineChain: Promise<unknown> = Promise.resolve();
  private readonly inflight = new Set<Promise<void>>();
  private readonly inlineBelowBytes: number;

  /**
   * `inlineBelowBytes`: any job on a file smaller than this (a snapshot: its source and WAL) runs on the calling
   * thread when no worker is idle, instead of waiting or starting one: a worker's start-up (~0.1–0.15 CPU-s: an
   * isolate, Node's bootstrap, better-sqlite3) costs more than the whole job on a small database (a few ms).
   * `cpus`: the CPUs to size the pool for (default: os.availableParallelism(), which follows the process's affinity);
   * on one CPU `inlineBelowBytes` is raised to ONE_CPU_INLINE_BYTES.
   */
  constructor(options: { worker?: boolean; workers?: number; inlineBelowBytes?: number; cpus?: number } = {}) {
    this.useWorker = options.worker !== false && fs.existsSync(fileURLToPath(WORKER_URL));
    // No more workers than CPUs this process may run on (its affinity: a cpuset, `taskset`): on one CPU a second
    // worker cannot run beside the first and only adds its start-up (~0.1 CPU-s) and the switching between them.
    const cpus = options.cpus ?? os.availableParallelism();
    this.size = Math.max(1, Math.min(options.workers ?? 1, cpus));
    const inline = options.inlineBelowBytes ?? 0;
    this.inlineBelowBytes = inline > 0 && cpus <= 1 ? Math.max(inline, ONE_CPU_INLINE_BYTES) : inline;
  }

  /** The size below which a job runs on the calling thread when no worker is idle (0: never). */
  get inlineLimit(): number {
    return this.inlineBelowBytes;
  }

  /** How many workers this runner may start. */
  get maxWorkers(): number {
    return this.size;
  }

  /** Worker threads started so far (running or idle). */
  get startedWorkers(): number {
    return this.workers.length;
  }

  /** Starts a worker now, so its start-up overlaps with the caller's planning. */
  warm(): void {
    if (this.useWorker && this.workers.length === 0) this.spawn();
  }

  /**
   * Starts a worker now when a job on a database of one of these sizes would need one (not inline), so its start-up
   * overlaps with the caller's planning; when every one would run inline, no worker is started at all. The sizes
   * only decide this head start: each job still goes by its file's real size.
   */
  warmFor(sizes: Iterable<number>): void {
    for (const size of sizes) {
      if (!Number.isFinite(size) || size >= this.inlineBelowBytes) {
        this.warm();
        return;
      }
    }
  }

  run<J extends SqliteJob>(job: J): Promise<SqliteJobResult<J>> {
    if (!this.useWorker || this.runsInline(job)) {
      // Without a worker the job waits out the whole busy timeout here; with one, a locked database moves there.
      const busyTimeoutMs = this.useWorker ? Math.min(INLINE_BUSY_TIMEOUT_MS, defaultBusyTimeoutMs()) : defaultBusyTimeoutMs();
      // Chained so inline jobs run one at a time, like a single worker; setImmediate lets streams breathe.
      const next = this.inlineChain.then(
        () => new Promise<unknown>((resolve, reject) => setImmediate(() => {
          try {
            resolve(runSqliteJob(job, busyTimeoutMs));
          } catch (error) {
            if (this.useWorker && isLockError(error) && retryable(job)) resolve(this.runOnWorker(job));
            else reject(new SqliteJobError((error as Error).message));
          }
        })),
      );
      this.inlineChain = next.catch(() => undefined);
      return next as Promise<SqliteJobResult<J>>;
    }
    return this.runOnWorker(job);
  }

  private runOnWorker<J extends SqliteJob>(job: J): Promise<SqliteJobResult<J>> {
    const owner = this.pick();
    const id = this.nextId++;
    owner.busy += 1;
    const promise = new Promise<SqliteJobResult<J>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, owner });
      owner.worker.postMessage({ id, job, busyTimeoutMs: defaultBusyTimeoutMs() });
    });
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.inflight.add(settled);
    void settled.then(() => this.inflight.delete(settled));
    return promise;
  }

  private runsInline(job: SqliteJob): boolean {
    if (this.inlineBelowBytes <= 0) return false;
    if (this.workers.some((w) => w.busy === 0)) return false;
    let size: number;
    try {
      // A snapshot reads the WAL's pages too (a small file beside a large WAL is not a small job).
      const file = job.op === "snapshot" ? job.source : job.file;
      size = fs.statSync(file).size + (job.op === "snapshot" ? (fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) : 0);
    } catch {
      return false; // The worker reports what is wrong with the file, as before.
    }
    return size < this.inlineBelowBytes;
  }

  private pick(): PoolWorker {
    const idle = this.workers.find((w) => w.busy === 0);
    if (idle) return idle;
    if (this.workers.length < this.size) return this.spawn();
    return this.workers.reduce((a, b) => (b.busy < a.busy ? b : a));
  }

  private spawn(): PoolWorker {
    const worker = spawnWorker(WORKER_URL);
    worker.unref();
    const entry: PoolWorker = { worker, busy: 0 };
    worker.on("message", (reply: WorkerReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      entry.busy -= 1;
      if (reply.ok) waiter.resolve(reply.result ?? null);
      else waiter.reject(new SqliteJobError(reply.message ?? "SQLite job failed"));
    });
    const failAll = (error: Error): void => {
      for (const [id, waiter] of this.pending) {
        if (waiter.owner !== entry) continue;
        this.pending.delete(id);
        waiter.reject(error);
      }
      const index = this.workers.indexOf(entry);
      if (index >= 0) this.workers.splice(index, 1);
    };
    worker.on("error", (error) => failAll(new SqliteJobError(error.message)));
    worker.on("exit", (code) => failAll(new SqliteJobError(`SQLite worker exited with code ${code}`)));
    this.workers.push(entry);
    return entry;
  }

  /** Waits for submitted jobs (a VACUUM INTO is never cut off mid-way), then stops the workers. */
  async close(): Promise<void> {
    await this.inlineChain;
    await Promise.all([...this.inflight]);
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}
