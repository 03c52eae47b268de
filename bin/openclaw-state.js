#!/usr/bin/env node
// The openclaw-state binary: runs the compiled CLI entry (built by `npm install` via the prepare script).
import("../dist/cli/main.js").catch((error) => {
  process.stderr.write(
    `openclaw-state: cannot load the compiled CLI (${error && error.message}); run \`npm run build\` in the package directory.\n`,
  );
  process.exitCode = 1;
});
