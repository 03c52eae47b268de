// Builds dist/ once before any test runs, when it is missing or older than src/: no test builds inside its own time limit.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The first src/**\/*.ts whose compiled dist/**\/*.js is missing or older, or null when dist is current. */
export function staleSource(root = repoRoot): string | null {
  const src = path.join(root, "src");
  const walk = (dir: string): string | null => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        const found = walk(full);
        if (found) return found;
      } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
        const out = path.join(root, "dist", path.relative(src, full).replace(/\.ts$/, ".js"));
        if (!fs.existsSync(out) || fs.statSync(out).mtimeMs < fs.statSync(full).mtimeMs) return full;
      }
    }
    return null;
  };
  return walk(src);
}

export default function setup(): void {
  // `npm test` builds first, so this is a no-op there; `npx vitest run test/x.test.ts` on a fresh edit builds here.
  const stale = staleSource();
  if (!stale) return;
  const started = Date.now();
  try {
    execFileSync(process.execPath, [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    // tsc still emits on type errors: the typecheck step of `npm test` reports those. Say so and go on.
    const out = `${(error as { stdout?: Buffer }).stdout ?? ""}`.trim().split("\n").slice(0, 5).join("\n");
    process.stderr.write(`global setup: \`tsc -p tsconfig.build.json\` reported errors (dist/ was still written):\n${out}\n`);
  }
  if (!fs.existsSync(path.join(repoRoot, "dist", "cli", "main.js"))) throw new Error("global setup: the build did not produce dist/cli/main.js; run `npm run build` to see why.");
  process.stderr.write(`global setup: rebuilt dist/ (${path.relative(repoRoot, stale)} was newer) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
