// Compat suite global setup: installs (or reuses) every pinned OpenClaw release once, before any test file runs.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
// Type only: helpers/openclaw.ts imports vitest's test API, which has no place in the main process.
import type { CompatSetup } from "./helpers/openclaw.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

const banner = (lines: string[]): string => `\n${"=".repeat(100)}\n${lines.join("\n")}\n${"=".repeat(100)}\n\n`;

export default function setup(project: TestProject): void {
  const script = join(REPO_ROOT, "scripts", "compat", "install-openclaw.mjs");
  // Progress goes straight to our stderr; the summary comes back as one JSON line on stdout.
  // Only the releases a test runs: today the current one. 2026.6.33's and 2026.3.28's output is read from committed
  // fixtures (fixtures/openclaw-2026.6.33/), so their ~900 MB are not downloaded on every CI run.
  const pinned = JSON.parse(readFileSync(join(REPO_ROOT, "scripts", "compat", "versions.json"), "utf8")) as { versions: Array<{ version: string; role: string }> };
  const wanted = pinned.versions.filter((v) => v.role === "current").map((v) => v.version);
  const run = spawnSync(process.execPath, [script, "--json", ...wanted], { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 60 * 60_000 });
  let summary: (CompatSetup & { ok: boolean; refused?: string }) | undefined;
  try {
    summary = JSON.parse(run.stdout.trim().split("\n").pop() ?? "") as CompatSetup & { ok: boolean; refused?: string };
  } catch {
    summary = undefined;
  }
  if (!summary) {
    throw new Error(`compat: scripts/compat/install-openclaw.mjs gave no summary (exit ${run.status}, ${run.error?.message ?? run.signal ?? "no error"})`);
  }
  // A wrong Node or a cache inside the tree is a setup mistake, not an outage: fail rather than skip.
  if (summary.refused) throw new Error(`compat: refused — ${summary.refused}`);

  const failed = summary.results.filter((r) => !r.ok);
  if (failed.length > 0) {
    const lines = failed.map((r) => `compat: SKIPPED — could not install openclaw@${r.version}: ${r.reason}`);
    if (process.env.OPENCLAW_STATE_COMPAT_REQUIRED === "1") throw new Error(`${lines.join("\n")}\n(OPENCLAW_STATE_COMPAT_REQUIRED=1: a skip is a failure)`);
    process.stderr.write(banner([...lines, "compat: the tests that need these releases are SKIPPED, not passed (set OPENCLAW_STATE_COMPAT_REQUIRED=1 to fail instead)."]));
  }
  project.provide("openclawCompat", { root: summary.root, node: summary.node, results: summary.results });
}
