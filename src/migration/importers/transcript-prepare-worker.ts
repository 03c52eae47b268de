// Worker thread body for TranscriptPreparer: reads, hashes and parses each posted transcript.
import { parentPort } from "node:worker_threads";
import { prepareTranscript } from "./transcript-parse.js";

parentPort?.on("message", (message: { id: number; file: string }) => {
  const result = prepareTranscript(message.file);
  // The file's bytes move to the main thread instead of being copied.
  parentPort?.postMessage({ id: message.id, result }, result.bytes ? [result.bytes] : []);
});
// Loaded: the main thread parses inline until this arrives, so start-up never stalls the import.
parentPort?.postMessage({ ready: true });
