// Runs backup SQLite jobs (snapshot, describe, finalize) on a worker thread, so checks overlap with streaming.
//
// The worker is the compiled sqlite-worker.js next to this file; when it is absent (tests running the
// TypeScript sources) the same functions run inline on the calling thread, with identical results.
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
  describeDatabaseFile,
  finalizeRestoredDatabase,
  snapshotDatabase,
  type DatabaseFileInfo,
  type FinalizeRestoredOptions,
  type FinalizeRestoredResult,
} from "./sqlite-snapshot.js";

export type SqliteJob =
  | { op: "snapshot"; source: string; dest: string }
  | { op: "describe"; file: string; check: "integrity_check" | "quick_check" | "none" }
  | { op: "finalize"; file: string; options: FinalizeRestoredOptions };

export type SqliteJobResult<J extends SqliteJob> = J extends { op: "describe" }
  ? DatabaseFileInfo
  : J extends { op: "finalize" }
    ? FinalizeRestoredResult
    : null;

/** Runs one job synchronously (the worker's body, and the inline fallback). */
export function runSqliteJob(job: SqliteJob): unknown {
  switch (job.op) {
    case "snapshot":
      snapshotDatabase(job.source, job.dest);
      return null;
    case "describe":
      return describeDatabaseFile(job.file, job.check);
    case "finalize":
      return finalizeRestoredDatabase(job.file, job.options);
  }
}

interface WorkerReply {
  id: number;
  ok: boolean;
  result?: unknown;
  message?: string;
}

export class SqliteJobError extends Error {}

const WORKER_URL = new URL("./sqlite-worker.js", import.meta.url);

/** One lazily started worker; jobs run in submission order. Always `close()` it (a finally block). */
export class SqliteJobRunner {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private readonly useWorker: boolean;
  private inlineChain: Promise<unknown> = Promise.resolve();
  private readonly inflight = new Set<Promise<void>>();

  constructor(options: { worker?: boolean } = {}) {
    this.useWorker = options.worker !== false && fs.existsSync(fileURLToPath(WORKER_URL));
  }

  run<J extends SqliteJob>(job: J): Promise<SqliteJobResult<J>> {
    if (!this.useWorker) {
      // Chained so inline jobs keep the same one-at-a-time order as the worker; setImmediate lets streams breathe.
      const next = this.inlineChain.then(
        () => new Promise((resolve, reject) => setImmediate(() => {
          try {
            resolve(runSqliteJob(job));
          } catch (error) {
            reject(new SqliteJobError((error as Error).message));
          }
        })),
      );
      this.inlineChain = next.catch(() => undefined);
      return next as Promise<SqliteJobResult<J>>;
    }
    const worker = this.start();
    const id = this.nextId++;
    const promise = new Promise<SqliteJobResult<J>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, job });
    });
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.inflight.add(settled);
    void settled.then(() => this.inflight.delete(settled));
    return promise;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_URL);
    worker.unref();
    worker.on("message", (reply: WorkerReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.result ?? null);
      else waiter.reject(new SqliteJobError(reply.message ?? "SQLite job failed"));
    });
    const failAll = (error: Error): void => {
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
      this.worker = undefined;
    };
    worker.on("error", (error) => failAll(new SqliteJobError(error.message)));
    worker.on("exit", (code) => {
      if (this.pending.size > 0) failAll(new SqliteJobError(`SQLite worker exited with code ${code}`));
      this.worker = undefined;
    });
    this.worker = worker;
    return worker;
  }

  /** Waits for submitted jobs (a VACUUM INTO is never cut off mid-way), then stops the worker. */
  async close(): Promise<void> {
    await this.inlineChain;
    await Promise.all([...this.inflight]);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }
}
