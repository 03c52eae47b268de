// Starts a worker thread with the host's Node flags where a worker accepts them.
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * --input-type (a host started with `node --input-type=module -e`) makes a file-based worker fail to start,
 * and heap flags such as --max-old-space-size are refused in a worker's execArgv (the constructor throws):
 * those hosts get a worker with no extra flags rather than a crash. The semi-space flags the binary restarts
 * `backup create` with (cli/plan-reexec.ts) are refused the same way; they are left out up front so the
 * host's other flags still reach the worker.
 */
export function spawnWorker(url: URL, options: Omit<WorkerOptions, "execArgv"> = {}): Worker {
  const execArgv = process.execArgv.filter((a) => !a.startsWith("--input-type") && !/^--(max|min)-semi-space-size/.test(a));
  try {
    return new Worker(url, { ...options, execArgv });
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
    return new Worker(url, { ...options, execArgv: [] });
  }
}
