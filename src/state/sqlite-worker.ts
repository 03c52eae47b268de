// Worker thread body for SqliteJobRunner: runs each posted SQLite job and replies with its result or error.
import { parentPort } from "node:worker_threads";
import { runSqliteJob, type SqliteJob } from "./sqlite-snapshot.js";

parentPort?.on("message", (message: { id: number; job: SqliteJob; busyTimeoutMs: number }) => {
  try {
    parentPort?.postMessage({ id: message.id, ok: true, result: runSqliteJob(message.job, message.busyTimeoutMs) });
  } catch (error) {
    parentPort?.postMessage({ id: message.id, ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
