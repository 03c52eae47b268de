// Help's "Docs:" lines name files the installed package really has: docs/ is in the package and the paths are absolute.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, repoRoot, runBin } from "../helpers/temp-state.js";

/** Every file `npm pack` would put in the package (scripts off: no build, nothing written). */
function packedFiles(): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: repoRoot, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
  return (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
}

describe("help links", () => {
  it("every doc help names exists, is absolute and ships in the package", async () => {
    const packed = new Set(packedFiles());
    // The docs the examples and help point at ship with the binary.
    for (const doc of ["docs/cli.md", "docs/backup.md", "docs/operator-guide.md", "README.md"]) expect(packed.has(doc), doc).toBe(true);

    const { env } = makeTempState();
    const links: string[] = [];
    for (const args of [["--help"], ["backup", "--help"], ["backup", "create", "--help"], ["doctor", "--help"], ["sessions", "--help"], ["reset", "--help"]]) {
      const run = await runBin(args, env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      for (const m of run.stdout.matchAll(/^Docs: (.+)$/gm)) links.push(m[1]!.trim());
      // No relative docs/… path left in help: it would only resolve inside a clone.
      expect(run.stdout, args.join(" ")).not.toMatch(/(^|\s)docs\/\S+\.md/);
    }
    expect(links.length).toBeGreaterThanOrEqual(2);
    for (const link of links) {
      expect(path.isAbsolute(link), link).toBe(true);
      expect(fs.existsSync(link), link).toBe(true);
      expect(packed.has(path.relative(repoRoot, link)), `${link} is not in the package`).toBe(true);
    }
  }, 120_000);
});
