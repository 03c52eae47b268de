// Collects text as UTF-8 bytes with a peak of about one copy of the result, however large it grows.
import { Buffer } from "node:buffer";
import { TextEncoder } from "node:util";

/** Text buffered as JS strings before it is encoded (encoding many tiny strings one by one is slow). */
const PART_CHARS = 64 * 1024;
/** Up to this size the bytes are kept as chunks and joined at the end; beyond it they grow in place. */
const CHUNKED_MAX_BYTES = 1024 * 1024;
/** Address space reserved for a growing sink (only written pages take memory). */
const RESERVE_BYTES = 512 * 1024 * 1024;

/**
 * Small results are chunks joined once (a copy of a few KiB). A large one grows inside a resizable
 * ArrayBuffer: V8 reserves the address space and commits pages as it grows, so a 50 MB text costs 50 MB,
 * not the chunks plus their concatenation (2x) or a doubling buffer (up to 3x during a copy).
 */
export class ByteSink {
  private parts: string[] = [];
  private partsLength = 0;
  private chunks: Buffer[] = [];
  private chunkBytes = 0;
  private grown: ResizableArrayBuffer | null = null;
  private length = 0;

  write(text: string): void {
    this.parts.push(text);
    this.partsLength += text.length;
    if (this.partsLength >= PART_CHARS) this.flush();
  }

  /** The bytes written, once; a large result is a view on the memory the sink grew (the sink is empty after). */
  finish(): Buffer {
    this.flush();
    if (this.grown) {
      // The sink lets go of its memory: the returned view is then the only way to it (collectable once dropped).
      const out = Buffer.from(this.grown, 0, this.length);
      this.grown = null;
      this.length = 0;
      return out;
    }
    const out = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    return out;
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    const text = this.parts.join("");
    this.parts = [];
    this.partsLength = 0;
    if (this.grown === null) {
      const bytes = Buffer.from(text, "utf8");
      if (this.chunkBytes + bytes.length <= CHUNKED_MAX_BYTES) {
        this.chunks.push(bytes);
        this.chunkBytes += bytes.length;
        return;
      }
      this.startGrowing();
      this.append(bytes);
      return;
    }
    // Encoded straight into the sink: no intermediate Buffer per flush (those pile up in malloc's heap).
    this.reserve(text.length * 3);
    const { written } = encoder.encodeInto(text, new Uint8Array(this.grown, this.length));
    this.length += written;
  }

  private startGrowing(): void {
    this.grown = new (ArrayBuffer as unknown as ResizableArrayBufferConstructor)(0, { maxByteLength: RESERVE_BYTES });
    const chunks = this.chunks;
    this.chunks = [];
    for (const chunk of chunks) this.append(chunk);
  }

  private append(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    new Uint8Array(this.grown!, this.length, bytes.length).set(bytes);
    this.length += bytes.length;
  }

  /** Room for `bytes` more; grows by at least 1/8 so resizes stay few (untouched pages take no memory). */
  private reserve(bytes: number): void {
    const grown = this.grown!;
    const needed = this.length + bytes;
    if (needed <= grown.byteLength) return;
    if (needed > RESERVE_BYTES) throw new RangeError(`text larger than ${RESERVE_BYTES / 1048576} MiB`);
    grown.resize(Math.min(RESERVE_BYTES, Math.max(needed, Math.floor(grown.byteLength * 1.125))));
  }
}

const encoder = new TextEncoder();

/** ES2024 resizable ArrayBuffer (Node 20+); the typings this project builds against predate it. */
type ResizableArrayBuffer = ArrayBuffer & { resize(length: number): void };
type ResizableArrayBufferConstructor = new (length: number, options: { maxByteLength: number }) => ResizableArrayBuffer;
