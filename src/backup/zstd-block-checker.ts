// Decode-and-compare of a create's zstd blocks through one long-lived decoder instead of a fresh one per block.
//
// A fresh node:zlib decoder per 4 MiB block allocates a new zstd context each time, counted by V8 as external
// memory: on issue 26's full-size state that started about half of a create's 19–22 full collections, and the shared
// decoder saves ~8% of the create's CPU (docs/performance.md, twelfth pass). zstd decodes concatenated frames as one
// stream, so each block is written to the same decoder in turn; what makes the answer per block exact:
// - the block must be whole frames and nothing else (isWholeZstdFrames), so after it the decoder is at a frame
//   boundary and holds nothing of it back (every frame carries its checksum, which the decoder checks at its end);
// - the decoder's output for a block is pushed before its write callback runs, and compared with that block's input
//   as it arrives; any output while no block is being checked fails the next check;
// - checks run one at a time, and after any failure the decoder is dropped and the next check starts a fresh one.
import type { Duplex } from "node:stream";
import { createOwnZstdDecoder, releaseDecodedChunk, zstdSupported } from "./compression.js";
import { isWholeZstdFrames } from "./zstd-frames.js";

interface Expectation {
  expected: Buffer;
  offset: number;
  same: boolean;
}

export class ZstdBlockChecker {
  private decoder: Duplex | null = null;
  private current: Expectation | null = null;
  /** Output arrived with no block being checked, or the decoder failed: the decoder is not trusted any more. */
  private broken = false;
  private chain: Promise<unknown> = Promise.resolve();
  /** Settles the check in progress: its write's callback, or the decoder failing (a destroyed stream may never call it). */
  private settle: ((error: Error | null | undefined) => void) | null = null;

  /** A checker, or null when this Node's zlib has no zstd (the caller decodes each block on its own). */
  static create(): ZstdBlockChecker | null {
    return zstdSupported() ? new ZstdBlockChecker() : null;
  }

  /** Whether `block` (zstd frames this tool wrote) decodes to exactly `expected`; checks run in the order called. */
  decodesTo(block: Buffer, expected: Buffer): Promise<boolean> {
    const run = this.chain.then(() => this.checkOne(block, expected));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Drops the decoder (after the last block, or after a failure); a later check opens a new one. */
  close(): void {
    const decoder = this.decoder;
    this.decoder = null;
    decoder?.removeAllListeners("close");
    decoder?.destroy();
    this.broken = false;
  }

  private checkOne(block: Buffer, expected: Buffer): Promise<boolean> {
    if (!isWholeZstdFrames(block)) return Promise.resolve(false);
    const decoder = this.decoder ?? this.open();
    if (!decoder) return Promise.resolve(false);
    const state: Expectation = { expected, offset: 0, same: true };
    this.current = state;
    return new Promise<boolean>((resolve) => {
      const done = (error: Error | null | undefined): void => {
        if (this.settle !== done) return;
        this.settle = null;
        // Output is pushed before the write callback; setImmediate lets any chunk queued for this tick arrive first.
        setImmediate(() => {
          this.current = null;
          const same = !error && !this.broken && state.same && state.offset === expected.length;
          if (!same) this.close();
          resolve(same);
        });
      };
      this.settle = done;
      decoder.write(block, done);
    });
  }

  private open(): Duplex | null {
    const decoder = createOwnZstdDecoder();
    if (!decoder) return null;
    // A dropped decoder's late events concern no check any more.
    decoder.on("data", (chunk: Buffer) => {
      if (this.decoder !== decoder) return;
      const state = this.current;
      if (!state) this.broken = true;
      else {
        if (state.offset + chunk.length > state.expected.length || !chunk.equals(state.expected.subarray(state.offset, state.offset + chunk.length))) state.same = false;
        state.offset += chunk.length;
      }
      releaseDecodedChunk(decoder, chunk);
    });
    decoder.on("error", (error: Error) => {
      if (this.decoder !== decoder) return;
      this.broken = true;
      this.settle?.(error);
    });
    decoder.on("close", () => {
      if (this.decoder !== decoder) return;
      this.broken = true;
      this.settle?.(new Error("the decoder closed"));
    });
    this.decoder = decoder;
    return decoder;
  }
}
