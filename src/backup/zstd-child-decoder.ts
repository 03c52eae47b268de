// Decodes a zstd stream through a `zstd -d` child process (stdin in, stdout out): how a Node without zstd reads zstd.
//
// Used where node:zlib has no zstd (Node < 22.15: without it such an archive cannot be read at all), and on any Node
// for the long reads of verify and restore when the operator asks (OPENCLAW_STATE_ZSTD_CLI=1). Not the default where
// node:zlib has zstd: measured on Node 24 (docs/performance.md, issue 26, eighth pass) the zstd CLI decodes for less
// CPU than node:zlib's decoder, but receiving its output through a pipe costs Node ~0.25 CPU-s per 168 MB (64 KiB
// reads), so verify / restore took 0.14–0.5 CPU-s more in all (process + child), for less wall on a second core.
// The child only ever sees bytes the ZstdFrameWalker has accepted (frames only, each frame's window bounded), is
// started with `--memory=` at the in-process decoder's window bound (ZSTD_WINDOW_LOG_LIMIT), `-q`, and touches no
// file: stdin and stdout are pipes, stderr is kept (its tail) for the message. It is found on PATH by name, as
// `sync -f` is (file-writer.ts); OPENCLAW_STATE_ZSTD_CLI=0 never starts it. A non-zero exit after data is damage
// (ZstdChildError, classified corrupt), except a signal or an allocation failure (OperationError: not the archive's
// fault). Destroying the stream kills the child (Ctrl-C, an early refusal, a tar-layer error); Node reaps it.
// Backpressure holds both ways: a full stdin pipe holds our writes, a full reader pauses the child's stdout.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { Duplex, type Readable, type Writable } from "node:stream";
import { OperationError } from "../core/errors.js";
import { ZSTD_WINDOW_LOG_LIMIT } from "./zstd-frames.js";

/** 0 (off/false/no): never the zstd CLI; 1 (on/true/yes): also for long reads where node:zlib has zstd; unset: only where it has none. */
export const ZSTD_CLI_ENV = "OPENCLAW_STATE_ZSTD_CLI";

export type ZstdCliMode = "off" | "auto" | "on";

/** What the operator asked of the zstd CLI (ZSTD_CLI_ENV); anything else is "auto". */
export function zstdCliMode(env: NodeJS.ProcessEnv = process.env): ZstdCliMode {
  const value = env[ZSTD_CLI_ENV]?.trim().toLowerCase();
  if (value === "0" || value === "off" || value === "false" || value === "no") return "off";
  if (value === "1" || value === "on" || value === "true" || value === "yes") return "on";
  return "auto";
}

/** The arguments the child gets: decode stdin to stdout, quiet, the same window bound as node:zlib's decoder. */
export const ZSTD_CLI_ARGS: readonly string[] = ["-d", "-q", "-c", `--memory=${2 ** (ZSTD_WINDOW_LOG_LIMIT - 20)}MB`];

/** The child said the compressed data is bad (corrupt, truncated, checksum): its code makes isCorruptStreamError say so. */
export class ZstdChildError extends Error {
  readonly code = "ZSTD_error_cli";
}

const STDERR_KEEP = 2048;
const HIGH_WATER = 1024 * 1024;

type Child = ChildProcessByStdio<Writable, Readable, Readable>;

export class ZstdChildDecoder extends Duplex {
  /** Resolves once the child has exited and been reaped (tests wait on it). */
  readonly exited: Promise<void>;
  private stderrTail = "";
  private written = 0;
  private done = false;
  private pendingWrite: (() => void) | null = null;
  /** _final's callback, held until the child exits: like a Transform's flush, 'finish' means fully decoded. */
  private pendingFinal: ((error?: Error | null) => void) | null = null;

  /** A decoder running `zstd -d`, or null when the CLI is turned off or cannot be started here. */
  static start(env: NodeJS.ProcessEnv = process.env): ZstdChildDecoder | null {
    if (zstdCliMode(env) === "off") return null;
    const child = spawn("zstd", ZSTD_CLI_ARGS, { stdio: ["pipe", "pipe", "pipe"], env });
    // uv_spawn failed (ENOENT, EACCES): the error event follows on the next tick; nothing was started.
    if (child.pid === undefined) {
      child.on("error", () => undefined);
      return null;
    }
    return new ZstdChildDecoder(child);
  }

  private constructor(private readonly child: Child) {
    super({ readableHighWaterMark: HIGH_WATER, writableHighWaterMark: HIGH_WATER });
    this.exited = new Promise((resolve) => child.once("close", () => resolve()));
    child.on("error", () => undefined);
    // EPIPE when the child died early: its exit status (below) is what gets reported.
    child.stdin.on("error", () => undefined);
    child.stdin.on("drain", () => this.releaseWrite());
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    child.stdout.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) child.stdout.pause();
    });
    child.once("close", (code, signal) => this.onClose(code, signal));
  }

  get pid(): number {
    return this.child.pid!;
  }

  override _read(): void {
    this.child.stdout.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.written += chunk.length;
    if (this.child.stdin.write(chunk)) callback();
    else this.pendingWrite = () => callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.written === 0) {
      // An empty stream decodes to nothing (zstd -d would call empty input an unsupported format).
      this.done = true;
      this.child.kill("SIGKILL");
      this.push(null);
      callback();
      return;
    }
    // The child's verdict comes with its exit: finishing before it would let a pipeline (or stream.compose, which
    // watches only this stream's writable side) complete and miss a later error.
    this.pendingFinal = callback;
    this.child.stdin.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.done) {
      this.done = true;
      this.child.kill("SIGKILL");
    }
    this.child.stdin.destroy();
    this.child.stdout.destroy();
    this.child.stderr.destroy();
    this.releaseWrite();
    const final = this.pendingFinal;
    this.pendingFinal = null;
    final?.(error);
    callback(error);
  }

  private releaseWrite(): void {
    const release = this.pendingWrite;
    this.pendingWrite = null;
    release?.();
  }

  private onClose(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.done) return;
    this.done = true;
    const final = this.pendingFinal;
    this.pendingFinal = null;
    if (code === 0) {
      this.push(null);
      final?.();
      return;
    }
    const line = this.stderrTail.trim().split("\n").pop()?.trim() ?? "";
    let error: Error;
    if (signal) error = new OperationError("zstd_cli_failed", `the zstd decoder process (zstd -d) was killed by ${signal}; run it again (on Node >= 22.15, ${ZSTD_CLI_ENV}=0 decodes in-process)`);
    else if (/alloc|not enough memory/i.test(line)) error = new OperationError("zstd_cli_failed", `the zstd decoder process (zstd -d) ran out of memory; run it again with more memory free (on Node >= 22.15, ${ZSTD_CLI_ENV}=0 decodes in-process)`);
    else error = new ZstdChildError(`corrupt zstd data: zstd -d exited with status ${code}${line ? ` (${line})` : ""}`);
    this.releaseWrite();
    if (final) final(error);
    else this.destroy(error);
  }
}
