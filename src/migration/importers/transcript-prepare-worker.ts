// Worker thread body for TranscriptPreparer: reads, hashes and parses each posted transcript.
import { parentPort } from "node:worker_threads";
import { prepareTranscript, type IdSource } from "./transcript-parse.js";

/** Buffers the main thread gave back once their rows were written: reused so memory stays flat. */
const spare: ArrayBuffer[] = [];
const MAX_SPARE = 4;

function allocate(size: number): Buffer {
  const index = spare.findIndex((b) => b.byteLength >= size);
  if (index === -1) return Buffer.allocUnsafeSlow(size);
  const [buffer] = spare.splice(index, 1);
  return Buffer.from(buffer!, 0, size);
}

parentPort?.on("message", (message: { id: number; file: string; ids?: IdSource } | { recycle: ArrayBuffer }) => {
  if ("recycle" in message) {
    if (spare.length < MAX_SPARE) spare.push(message.recycle);
    return;
  }
  const result = prepareTranscript(message.file, allocate, message.ids);
  // The file's bytes move to the main thread instead of being copied.
  parentPort?.postMessage({ id: message.id, result }, result.bytes ? [result.bytes] : []);
});
// Loaded: the main thread parses inline until this arrives, so start-up never stalls the import.
parentPort?.postMessage({ ready: true });
