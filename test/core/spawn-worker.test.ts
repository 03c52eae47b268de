// spawnWorker passes the host's Node flags on to the worker, except those a worker refuses.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { spawnWorker } from "../../src/core/spawn-worker.js";
import { REEXEC_FLAGS } from "../../src/cli/plan-reexec.js";
import { makeTempDir } from "../helpers/temp-state.js";

const original = [...process.execArgv];

afterEach(() => {
  process.execArgv.splice(0, process.execArgv.length, ...original);
});

function workerExecArgv(): Promise<string[]> {
  const file = path.join(makeTempDir(), "report-exec-argv.mjs");
  fs.writeFileSync(file, 'import { parentPort } from "node:worker_threads";\nparentPort.postMessage(process.execArgv);\n');
  const worker = spawnWorker(pathToFileURL(file));
  return new Promise((resolve, reject) => {
    worker.once("message", (argv: string[]) => void worker.terminate().then(() => resolve(argv)));
    worker.once("error", reject);
  });
}

describe("spawnWorker", () => {
  it("leaves out the semi-space flags `backup create` restarts with, and keeps the host's other flags", async () => {
    process.execArgv.push(...REEXEC_FLAGS, "--no-deprecation");
    const argv = await workerExecArgv();
    expect(argv).toContain("--no-deprecation");
    expect(argv.some((a) => a.includes("semi-space"))).toBe(false);
  });
});
