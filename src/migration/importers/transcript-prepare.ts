// Parses small transcripts on a worker thread ahead of their transaction, so the main thread only writes rows.
//
// The worker is the compiled transcript-prepare-worker.js next to this file; when it is absent (tests running
// the TypeScript sources) or fails, the same parse runs inline when its source is taken, with identical results.
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import { spawnWorker } from "../../core/spawn-worker.js";
import type { PlannedSource } from "../types.js";
import { prepareTranscript, type IdSource, type PreparedTranscript } from "./transcript-parse.js";
import { openclawTranscriptPath } from "./transcript-v1-ids.js";

/** Larger transcripts stream through the import instead: memory stays bounded by the chunk size. */
export const PREPARE_MAX_FILE_BYTES = 4 * 1024 * 1024;
/** At most this many sources / bytes parsed ahead of the one being imported. */
const AHEAD_SOURCES = 8;
const AHEAD_BYTES = 8 * 1024 * 1024;

const WORKER_URL = new URL("./transcript-prepare-worker.js", import.meta.url);

/** `worker` (default; inline when the compiled worker is absent), `inline`, or `off` (every transcript streams). */
export type TranscriptPrepareMode = "worker" | "inline" | "off";

/** One worker thread shared by every agent's pass of a run; always `close()` it (a finally block). */
export class TranscriptPreparer {
  private readonly pending = new Map<number, (result: PreparedTranscript | null) => void>();
  private worker: Worker | null = null;
  private failed = false;
  private ready = false;
  private nextId = 1;
  readonly useWorker: boolean;

  constructor(readonly mode: TranscriptPrepareMode = "worker") {
    this.useWorker = mode === "worker" && fs.existsSync(fileURLToPath(WORKER_URL));
  }

  /** Starts the worker now, so its start-up overlaps with the caller's planning. */
  warm(): void {
    if (!this.useWorker || this.failed || this.worker !== null) return;
    try {
      this.spawn();
    } catch {
      this.failed = true; // no worker, same results: every transcript is parsed inline
    }
  }

  /** Whether `prepare` runs on the worker (else callers parse inline, when the source is taken). */
  get offThread(): boolean {
    return this.useWorker && !this.failed && this.ready;
  }

  /** `ids`: where a version-1 file's ids derive from (transcript-v1-ids.ts); the import checks it used the same. */
  prepare(file: string, ids: IdSource = {}): Promise<PreparedTranscript | null> {
    if (!this.offThread) {
      this.warm();
      return Promise.resolve(prepareTranscript(file, undefined, ids));
    }
    const worker = this.worker!;
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, file, ids });
    });
  }

  /** After its rows are written (SQLite copied the bound bytes): the buffer goes back to the worker for reuse. */
  recycle(prepared: PreparedTranscript | null): void {
    const bytes = prepared?.bytes;
    if (!bytes || !this.worker || bytes.byteLength === 0) return;
    prepared.bytes = null;
    this.worker.postMessage({ recycle: bytes }, [bytes]);
  }

  async close(): Promise<void> {
    this.release();
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private release(): void {
    for (const resolve of this.pending.values()) resolve(null);
    this.pending.clear();
  }

  private spawn(): Worker {
    // A small young generation keeps the worker's footprint at ~15 MB instead of ~60 (peak RSS target: 256 MB);
    // the old-generation cap is a safety valve: a worker that runs out dies, and the import goes on inline.
    const resourceLimits = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 };
    const worker = spawnWorker(WORKER_URL, { resourceLimits });
    worker.unref();
    worker.on("message", (reply: { ready: true } | { id: number; result: PreparedTranscript }) => {
      if ("ready" in reply) {
        this.ready = true;
        return;
      }
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      resolve?.(reply.result);
    });
    // A worker that fails only costs speed: waiting sources stream through the import, later ones parse inline.
    const fallBack = (): void => {
      if (this.worker !== worker) return;
      this.release();
      this.worker = null;
      this.ready = false;
      this.failed = true;
    };
    worker.on("error", fallBack);
    worker.on("exit", fallBack);
    this.worker = worker;
    return worker;
  }
}

/** Takes prepared transcripts in source order, keeping a bounded number parsing ahead on the worker. */
export class TranscriptPrepareAhead {
  private readonly started = new Map<number, Promise<PreparedTranscript | null>>();
  private cursor = 0;
  private bytesAhead = 0;

  constructor(
    private readonly sources: readonly PlannedSource[],
    private readonly preparer: TranscriptPreparer,
  ) {}

  /** The parsed transcript for `sources[index]`, or null when that source streams through the import. */
  take(index: number): Promise<PreparedTranscript | null> {
    const source = this.sources[index];
    if (this.preparer.mode === "off") return Promise.resolve(null);
    if (!this.preparer.offThread) return source && isPreparable(source) ? this.preparer.prepare(source.path, idSource(source)) : Promise.resolve(null);
    this.fill(index);
    const result = this.started.get(index) ?? Promise.resolve(null);
    if (this.started.delete(index)) this.bytesAhead -= source!.sizeBytes;
    this.fill(index + 1);
    return result;
  }

  private fill(from: number): void {
    this.cursor = Math.max(this.cursor, from);
    while (this.cursor < this.sources.length && this.started.size < AHEAD_SOURCES && this.bytesAhead < AHEAD_BYTES) {
      const s = this.sources[this.cursor]!;
      if (isPreparable(s)) {
        this.started.set(this.cursor, this.preparer.prepare(s.path, idSource(s)));
        this.bytesAhead += s.sizeBytes;
      }
      this.cursor += 1;
    }
  }
}

/** The planned session and OpenClaw's path for the file: what the import derives v1 ids from, unless it links the file elsewhere. */
function idSource(s: PlannedSource): IdSource {
  return { sourcePath: openclawTranscriptPath(s), ...(s.sessionId ? { sessionId: s.sessionId } : {}) };
}

function isPreparable(s: PlannedSource): boolean {
  return s.kind === "transcript" && (s.action === "import" || s.action === "changed-since-import") && s.sizeBytes <= PREPARE_MAX_FILE_BYTES;
}
