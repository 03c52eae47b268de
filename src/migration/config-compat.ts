// Which keys of openclaw.json the current OpenClaw rejects, and who fixes each: our `doctor --fix` or `openclaw doctor --fix`.
import type { StatePaths } from "../state/paths.js";
import { REJECTED_KEY_PATTERNS } from "./config-rejected-keys.js";
import { configBeforeAndAfterFix } from "./legacy-config.js";

/** The OpenClaw release whose config validation this table follows (`openclaw config validate`). */
export const CURRENT_OPENCLAW_VERSION = "2026.9.6";

/** The command that rewrites what our migration does not own; `openclaw config set|unset` refuse while the config is invalid. */
export const OPENCLAW_FIX_COMMAND = "openclaw doctor --fix";
export const OUR_FIX_COMMAND = "openclaw-state doctor --fix";

export interface RejectedConfigKey {
  /** Where it is: `session.idleMinutes`, `agents.list[1].memorySearch`, `agents.ownership` (missing). */
  key: string;
  /** What the current OpenClaw wants instead. */
  wants: string;
  /** `openclaw-state`: the seed's migration owns it and our `--fix` rewrites it; `openclaw`: named with its command. */
  fixedBy: "openclaw-state" | "openclaw";
  command: string;
  /** Why our `--fix` leaves a key it owns as is (this run), else null. */
  blocked: string | null;
}

export interface ConfigCompat {
  path: string;
  /** Set when the config could not be read or parsed (then nothing is checked). */
  problem: string | null;
  rejected: RejectedConfigKey[];
}

type Obj = Record<string, unknown>;

/** What 2026.9.6 wants instead, by key pattern (its doctor's own wording where it says more than "removed"). */
const WANTS: ReadonlyArray<[RegExp, string]> = [
  [/^session\.idleMinutes$/, "session.reset.idleMinutes"],
  [/^session\.resetByType\.dm$/, "session.resetByType.direct"],
  [/^session\.writeLock$/, "nothing: SQLite is the session concurrency boundary"],
  [/^hooks\.internal\.handlers$/, "hook directories with HOOK.md metadata"],
  [/^plugins\.installs$/, "the installed-plugin index in the database"],
  [/^diagnostics\.cacheTrace\./, "diagnostics.cacheTrace.enabled only (traces are diagnostic rows in SQLite)"],
  [/^cron\.store$/, "nothing: cron jobs live in the database"],
  [/^cron\.webhook$/, "per-job webhook delivery (cron jobs' delivery.to)"],
  [/^cron\.runLog$/, "nothing: cron history keeps 2000 runs per job"],
  [/(^|\.)memorySearch$/, "memory.search (the memory index lives in the agent database; memorySearch.store.path goes)"],
  [/^memory\.(qmd|backend)$/, "memory.search: the builtin engine is the only one (memory.qmd.sessions → memory.search.experimental.sessionMemory)"],
  [/^agents\.ownership$/, 'agents.ownership: "explicit" with the roster keyed as agents.entries (a multi-agent agents.list without one default: true)'],
  [/^meta\.lastTouchedAt$/, "nothing: kept in the shared SQLite state"],
  [/^commands\.ownerDisplay$/, "nothing: owner ids render raw"],
  [/^gateway\.tailscale\.resetOnExit$/, "nothing: Tailscale routes end with the gateway"],
];

function wantsFor(pattern: string): string {
  return WANTS.find(([re]) => re.test(pattern))?.[1] ?? `nothing under this name: OpenClaw ${CURRENT_OPENCLAW_VERSION} removed or renamed it`;
}

const PATTERNS: ReadonlyArray<{ pattern: string; segments: string[] }> = REJECTED_KEY_PATTERNS.map((pattern) => ({
  pattern,
  segments: pattern.replace(/\[\]/g, ".[]").split("."),
}));

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function walk(node: unknown, segments: readonly string[], label: string, out: string[]): void {
  const [head, ...rest] = segments;
  if (head === undefined) {
    out.push(label);
    return;
  }
  if (head === "[]") {
    if (Array.isArray(node)) node.forEach((item, n) => walk(item, rest, `${label}[${n}]`, out));
    return;
  }
  if (!isObj(node)) return;
  const keys = head === "*" ? Object.keys(node) : Object.prototype.hasOwnProperty.call(node, head) ? [head] : [];
  for (const k of keys) walk(node[k], rest, label === "" ? k : `${label}.${k}`, out);
}

/** Every key of `config` the current OpenClaw rejects, with what it wants instead (pure: the parsed value only). */
export function rejectedConfigKeys(config: Obj): Array<{ key: string; wants: string }> {
  const found: Array<{ key: string; wants: string }> = [];
  for (const { pattern, segments } of PATTERNS) {
    const at: string[] = [];
    walk(config, segments, "", at);
    for (const key of at) found.push({ key, wants: wantsFor(pattern) });
  }
  // A multi-agent roster needs explicit ownership (or exactly one legacy `default: true` marker).
  const agents = config.agents;
  if (isObj(agents) && Array.isArray(agents.list) && agents.list.length > 1 && agents.ownership === undefined) {
    const defaults = agents.list.filter((a) => isObj(a) && a.default === true).length;
    if (defaults !== 1) found.push({ key: "agents.ownership", wants: wantsFor("agents.ownership") });
  }
  return found;
}

/**
 * The config's rejected keys, each with who fixes it: the ones our `--fix` rewrites (the seed's migration owns
 * them), else `openclaw doctor --fix`. Decided on the value our `--fix` would leave, so partial rewrites
 * (memorySearch.store.path out, the rest of memorySearch still there) name what remains.
 */
export function checkConfigCompat(paths: StatePaths, root: string): ConfigCompat {
  const { read, keys, after } = configBeforeAndAfterFix(paths, root);
  if (!read.value) return { path: read.path, problem: read.problem, rejected: [] };
  const remaining = new Set(after ? rejectedConfigKeys(after).map((k) => k.key) : []);
  const blockedOwn = new Map(keys.filter((k) => k.blocked).map((k) => [k.key, k.blocked!]));
  const rejected = rejectedConfigKeys(read.value).map(({ key, wants }): RejectedConfigKey => {
    if (!remaining.has(key)) return { key, wants, fixedBy: "openclaw-state", command: OUR_FIX_COMMAND, blocked: null };
    const blocked = blockedOwn.get(key);
    if (blocked !== undefined) return { key, wants, fixedBy: "openclaw-state", command: OUR_FIX_COMMAND, blocked };
    return { key, wants, fixedBy: "openclaw", command: OPENCLAW_FIX_COMMAND, blocked: null };
  });
  return { path: read.path, problem: null, rejected };
}
