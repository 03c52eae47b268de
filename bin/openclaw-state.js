#!/usr/bin/env node
// The openclaw-state binary: runs the compiled CLI entry (built by `npm install` via the prepare script).
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === "--version") {
  // Fast path: version probes (monitoring, shell prompts) should not load the CLI at all.
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${pkg.version}\n`);
} else {
  import("../dist/cli/main.js").catch((error) => {
    process.stderr.write(
      `openclaw-state: cannot load the compiled CLI (${error && error.message}); run \`npm run build\` in the package directory.\n`,
    );
    process.exitCode = 1;
  });
}
