#!/usr/bin/env node
// Installs the pinned OpenClaw releases (scripts/compat/versions.json) from the npm registry into a cache outside the tree.
//
// Usage: node scripts/compat/install-openclaw.mjs [--json] [<version>…]   (no version: every pinned one)
// Cache: ${OPENCLAW_STATE_COMPAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/openclaw-state-compat}/openclaw-<version>
// Exit: 0 every version ready; 3 at least one could not be installed (the compat suite skips it, loudly);
//       2 refused (Node older than versions.json's minNode, or a cache inside the source tree).
// Each install runs in a private `.openclaw-<v>.partial-<pid>` dir, writes its marker file last and is renamed into
// place, so an interrupted or concurrent install never leaves a half-filled `openclaw-<v>` that looks ready.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..");
export const MARKER = ".openclaw-state-compat.json";
const DEFAULT_TIMEOUT_MS = 15 * 60_000;

/** versions.json as parsed: the single list of pinned releases. */
export function readPinnedVersions() {
  return JSON.parse(readFileSync(join(here, "versions.json"), "utf8"));
}

/** The cache root; env overrides first, never inside the source tree. */
export function compatCacheRoot(env = process.env) {
  if (env.OPENCLAW_STATE_COMPAT_CACHE) return resolve(env.OPENCLAW_STATE_COMPAT_CACHE);
  const xdg = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(env.HOME || homedir(), ".cache");
  return resolve(xdg, "openclaw-state-compat");
}

/** Null when this Node may run OpenClaw, else the reason it may not. */
export function nodeRefusal(minNode, version = process.versions.node) {
  const have = version.split(".").map(Number);
  const need = minNode.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > (need[i] ?? 0)) return null;
    if ((have[i] ?? 0) < (need[i] ?? 0)) {
      return `OpenClaw needs Node >= ${minNode}; this is Node ${version} (${process.execPath}). Run the suite as \`bash .ci/with-node24 npm run test:compat\``;
    }
  }
  return null;
}

/** Where a version lives once installed, and the file its CLI starts from. */
export function installPaths(root, version) {
  const dir = join(root, `openclaw-${version}`);
  return { dir, marker: join(dir, MARKER), entry: join(dir, "node_modules", "openclaw", "openclaw.mjs") };
}

/** The marker's contents when `dir` holds a finished install of `version`, else null. */
function readyInstall(dir, version) {
  try {
    const marker = JSON.parse(readFileSync(join(dir, MARKER), "utf8"));
    const pkg = JSON.parse(readFileSync(join(dir, "node_modules", "openclaw", "package.json"), "utf8"));
    if (marker.version !== version || pkg.version !== version) return null;
    if (!existsSync(join(dir, "node_modules", "openclaw", "openclaw.mjs"))) return null;
    return marker;
  } catch {
    return null;
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** Removes partial installs of `version` whose installer is gone (a crash or a kill left them). */
function removeStalePartials(root, version) {
  const prefix = `.openclaw-${version}.partial-`;
  for (const name of readdirSync(root)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (Number.isInteger(pid) && pid > 0 && pidAlive(pid) && pid !== process.pid) continue;
    rmSync(join(root, name), { recursive: true, force: true });
  }
}

/** Runs a command in its own process group, killed as a group at the deadline; resolves with code and output. */
function run(command, args, options) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (chunk) => (stdout = (stdout + chunk).slice(-64_000)));
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-64_000)));
    const killGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup("SIGTERM");
      setTimeout(() => killGroup("SIGKILL"), 10_000).unref();
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, stdout, stderr: `${stderr}\n${error.message}`, timedOut });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : null), stdout, stderr, timedOut });
    });
  });
}

/** npm's own summary of a failure (its first "npm error" lines carry the code and message), else the output's tail. */
function failureSummary(text) {
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  const npmLines = lines.filter((l) => /^npm (error|ERR!) \S/.test(l) && !/complete log of this run/.test(l));
  return (npmLines.length > 0 ? npmLines.slice(0, 4) : lines.slice(-6)).join(" | ").slice(0, 1000) || "(no output)";
}

/** A failure that says the registry is unreachable, so the next installs would only wait for the same timeouts. */
const NETWORK_FAILURE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|FetchError|socket hang up|timed out/;

/** The environment npm runs in: this Node first on PATH (npm's shebang picks it), no inherited npm-run package vars. */
function npmEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith("npm_package_") || key.startsWith("npm_lifecycle_")) delete env[key];
  }
  env.PATH = `${dirname(process.execPath)}${delimiter}${env.PATH ?? ""}`;
  env.OPENCLAW_DISABLE_UPDATE_CHECK = "1";
  env.npm_config_update_notifier = "false";
  return env;
}

/**
 * Installs one version unless a finished install is cached. Never throws for registry or npm failures: returns
 * { ok: false, reason } so the suite can skip loudly.
 */
export async function installOpenClaw(version, { root = compatCacheRoot(), timeoutMs = DEFAULT_TIMEOUT_MS, log = () => {} } = {}) {
  const paths = installPaths(root, version);
  const reused = readyInstall(paths.dir, version);
  if (reused) return { ok: true, version, ...paths, reused: true };
  try {
    mkdirSync(root, { recursive: true });
    removeStalePartials(root, version);
    if (existsSync(paths.dir)) {
      log(`compat: openclaw@${version}: ${paths.dir} has no finished install (no valid ${MARKER}); reinstalling`);
      rmSync(paths.dir, { recursive: true, force: true });
    }
  } catch (error) {
    return { ok: false, version, ...paths, reason: `cache ${root} is not usable: ${error.message}` };
  }
  const partial = join(root, `.openclaw-${version}.partial-${process.pid}`);
  const fail = (reason) => {
    rmSync(partial, { recursive: true, force: true });
    return { ok: false, version, ...paths, reason };
  };
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  writeFileSync(join(partial, "package.json"), `${JSON.stringify({ name: `openclaw-state-compat-${version}`, private: true }, null, 2)}\n`);
  const args = ["install", `openclaw@${version}`, "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact", "--prefix", partial];
  log(`compat: openclaw@${version}: npm ${args.join(" ")} (Node ${process.versions.node}, timeout ${Math.round(timeoutMs / 1000)}s)`);
  const started = Date.now();
  const result = await run("npm", args, { cwd: partial, env: npmEnv(), timeoutMs });
  if (result.timedOut) return fail(`npm install timed out after ${Math.round(timeoutMs / 1000)}s`);
  if (result.code !== 0) return fail(`npm install exited ${result.code}: ${failureSummary(result.stderr || result.stdout)}`);
  let installed;
  try {
    installed = JSON.parse(readFileSync(join(partial, "node_modules", "openclaw", "package.json"), "utf8")).version;
  } catch (error) {
    return fail(`npm install succeeded but node_modules/openclaw/package.json is unreadable: ${error.message}`);
  }
  if (installed !== version) return fail(`npm installed openclaw ${installed}, not the pinned ${version}`);
  if (!existsSync(join(partial, "node_modules", "openclaw", "openclaw.mjs"))) return fail("the package has no openclaw.mjs entry");
  // The marker goes last: its presence is what makes the install reusable.
  const marker = { version, installedAt: new Date().toISOString(), node: process.versions.node, seconds: Math.round((Date.now() - started) / 1000) };
  writeFileSync(join(partial, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
  try {
    renameSync(partial, paths.dir);
  } catch (error) {
    // A concurrent installer may have finished first; its install is as good as ours.
    if (readyInstall(paths.dir, version)) {
      rmSync(partial, { recursive: true, force: true });
      return { ok: true, version, ...paths, reused: true };
    }
    return fail(`could not move the install into ${paths.dir}: ${error.message}`);
  }
  return { ok: true, version, ...paths, reused: false };
}

/** Installs every requested version (default: all pinned), one at a time (each npm install is heavy). */
export async function installAll(versions, options = {}) {
  const results = [];
  let outage = null;
  for (const version of versions) {
    const root = options.root ?? compatCacheRoot();
    // In an outage, cached versions still count; the others are not tried (each would wait out its timeout).
    if (outage && !readyInstall(installPaths(root, version).dir, version)) {
      results.push({ ok: false, version, ...installPaths(root, version), reason: `not attempted: the registry failed for openclaw@${outage.version} (${outage.reason})` });
      continue;
    }
    const result = await installOpenClaw(version, options);
    if (!result.ok && NETWORK_FAILURE.test(result.reason)) outage = result;
    results.push(result);
  }
  return results;
}

async function main(argv) {
  const json = argv.includes("--json");
  const requested = argv.filter((a) => !a.startsWith("--"));
  const pinned = readPinnedVersions();
  const versions = requested.length > 0 ? requested : pinned.versions.map((v) => v.version);
  const root = compatCacheRoot();
  const log = (line) => process.stderr.write(`${line}\n`);
  const report = (summary, code) => {
    if (json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    process.exitCode = code;
  };

  const refusal = nodeRefusal(pinned.minNode);
  if (refusal) {
    log(`compat: REFUSED — ${refusal}`);
    return report({ ok: false, refused: refusal, root, node: process.versions.node, results: [] }, 2);
  }
  const rel = relative(repoRoot, root);
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) {
    const why = `the cache ${root} is inside the source tree ${repoRoot}; point OPENCLAW_STATE_COMPAT_CACHE outside it`;
    log(`compat: REFUSED — ${why}`);
    return report({ ok: false, refused: why, root, node: process.versions.node, results: [] }, 2);
  }

  const timeoutMs = Number(process.env.OPENCLAW_STATE_COMPAT_INSTALL_TIMEOUT_MS) || DEFAULT_TIMEOUT_MS;
  const results = await installAll(versions, { root, timeoutMs, log });
  for (const r of results) {
    if (r.ok) log(`compat: openclaw@${r.version} ${r.reused ? "cached" : "installed"} at ${r.dir}`);
    else log(`compat: SKIPPED — could not install openclaw@${r.version}: ${r.reason}`);
  }
  const ok = results.every((r) => r.ok);
  report({ ok, root, node: process.versions.node, results }, ok ? 0 : 3);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error) => {
    process.stderr.write(`compat: install-openclaw failed: ${error.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
