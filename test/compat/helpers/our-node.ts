// The Node that runs openclaw-state's own side of a compat test: the first one that loads node_modules' better-sqlite3.
import { spawnSync } from "node:child_process";
import fs, { existsSync } from "node:fs";
import path, { delimiter, join } from "node:path";
import { REPO_ROOT } from "./openclaw.js";

/**
 * Under `.ci/with-node24` better-sqlite3 is built for Node 24 (this process); run by hand with only PATH pointing at
 * Node 24 it is the machine's Node 20 build. Either way: this process's Node first, then the others on the machine.
 * OPENCLAW_STATE_COMPAT_OUR_NODE wins. Null (the caller skips loudly) when none loads it.
 */
export function ourNode(): string | null {
  const candidates = [
    process.env.OPENCLAW_STATE_COMPAT_OUR_NODE,
    process.execPath,
    ...(process.env.PATH ?? "").split(delimiter).map((d) => join(d, "node")),
    "/usr/local/bin/node",
    "/usr/bin/node",
  ].filter((c): c is string => !!c && existsSync(c));
  for (const candidate of new Set(candidates)) {
    const probe = spawnSync(candidate, ["-e", "new (require('better-sqlite3'))(':memory:').close()"], { cwd: REPO_ROOT, timeout: 30_000 });
    if (probe.status === 0) return candidate;
  }
  return null;
}

/**
 * The design-v1 file our `doctor --fix` imported into, which its last step replaced with OpenClaw's format and kept
 * under migrated/format-upgrade-<time>/ (`rel` relative to the state dir).
 */
export function keptDesignV1(stateDir: string, rel: string): string {
  const migrated = path.join(stateDir, "migrated");
  const dir = fs.readdirSync(migrated).filter((d) => d.startsWith("format-upgrade-")).sort().at(-1);
  if (!dir) throw new Error(`no migrated/format-upgrade-*/ under ${stateDir}: did doctor --fix run its format upgrade?`);
  return path.join(migrated, dir, rel);
}

/** Runs this tool's CLI (bin/ from dist/) under `node` with only the given environment on top of a minimal PATH. */
export function runOurCli(node: string, args: string[], env: Record<string, string>): { code: number | null; out: string } {
  const r = spawnSync(node, [join(REPO_ROOT, "bin", "openclaw-state.js"), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: `${path.dirname(node)}${delimiter}/usr/bin:/bin`, TZ: "UTC", ...env },
    encoding: "utf8",
    timeout: 300_000,
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}
