#!/usr/bin/env node
// The openclaw-state binary: runs the compiled CLI entry (built by `npm install` via the prepare script).
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === "--version") {
  // Fast path: version probes (monitoring, shell prompts) should not load the CLI at all.
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${pkg.version}\n`);
} else {
  await restartWithNodeFlags();
  import("../dist/cli/main.js").catch((error) => {
    process.stderr.write(
      `openclaw-state: cannot load the compiled CLI (${error && error.message}); run \`npm run build\` in the package directory.\n`,
    );
    process.exitCode = 1;
  });
}

/** Replaces this process (same pid, stdio and signals) with one started with the Node flags the command needs (dist/cli/plan-reexec.js says which); on any failure the command runs here. */
async function restartWithNodeFlags() {
  try {
    const { canRestart, planReexec, REEXEC_MARKER } = await import("../dist/cli/plan-reexec.js");
    if (process.env[REEXEC_MARKER] !== undefined) {
      delete process.env[REEXEC_MARKER];
      return;
    }
    const plan = planReexec({ argv: args, execArgv: process.execArgv, env: process.env, canExecve: canRestart(process.execPath, process.execve) });
    if (plan) process.execve(process.execPath, [process.execPath, ...plan.execArgv, ...process.argv.slice(1)], plan.env);
  } catch {
    // No dist yet (the import below reports it): run in this process. A failed execve is not caught here (Node
    // aborts the process), which is why canRestart checks the binary can be executed first.
  }
}
