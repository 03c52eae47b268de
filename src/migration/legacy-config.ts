// The legacy config as the migration reads it (`openclaw.json`, JSON5 via the json5 package), its retired keys, and their rewrite.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { describeError, isOpenclawStateError } from "../core/errors.js";
import { readRegularTextSync } from "../core/safe-read.js";
import { Json5SyntaxError, parseJson5 } from "../core/json5-text.js";
import type { StatePaths } from "../state/paths.js";
import { cronStores } from "./importers/cron-jobs.js";
import { ensurePrivateDir, fsyncDir } from "../state/private-fs.js";
import { applyEdits, ConfigEditError, findProp, insertProp, parseSpans, removeProp, renameKey, type Edit, type SpanNode } from "./config-edit.js";

/** Configs are small; a bigger file is not read (and never blocks: FIFOs and devices are refused). */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

export interface ConfigRead {
  path: string;
  text: string | null;
  value: Record<string, unknown> | null;
  /** Why the config could not be used (not a regular file, too large, does not parse); null when fine or absent. */
  problem: string | null;
}

/** The config's text through the shared non-blocking reader; null when absent, else the problem as a sentence naming the file. */
function readConfigText(file: string): { text: string } | { problem: string } | null {
  try {
    return { text: readRegularTextSync(file, { what: "config file", maxBytes: MAX_CONFIG_BYTES }) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    return { problem: isOpenclawStateError(error) ? error.message : `${file} cannot be read (${describeError(error)})` };
  }
}

/** The config file in use: `OPENCLAW_CONFIG_PATH`, else `<root>/openclaw.json` (the state dir, or a legacy dir about to move). */
export function configPathFor(paths: StatePaths, root: string): string {
  const inState = path.join(paths.stateDir, "openclaw.json");
  return path.resolve(paths.configPath) === path.resolve(inState) ? path.join(root, "openclaw.json") : paths.configPath;
}

export function readConfig(paths: StatePaths, root: string): ConfigRead {
  const file = configPathFor(paths, root);
  const read = readConfigText(file);
  if (read === null) return { path: file, text: null, value: null, problem: null };
  if ("problem" in read) return { path: file, text: null, value: null, problem: read.problem };
  try {
    const value = parseJson5(read.text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { path: file, text: read.text, value: null, problem: `${file} does not hold a JSON object` };
    return { path: file, text: read.text, value: value as Record<string, unknown>, problem: null };
  } catch (error) {
    // The position is in the file as written (json5 parses the text itself, nothing rewritten before it).
    const where = error instanceof Json5SyntaxError ? `${file}:${error.line}:${error.column}` : file;
    return { path: file, text: read.text, value: null, problem: `${where} does not parse as JSON5 (${error instanceof Json5SyntaxError ? error.reason : describeError(error)})` };
  }
}

/** The config (JSON5); null when absent, unreadable, not a regular file or not an object. */
export function readLegacyConfig(paths: StatePaths, root: string): Record<string, unknown> | null {
  return readConfig(paths, root).value;
}

/** `session.mainKey` from the config, lower-cased; "main" when absent. */
export function configuredMainKey(config: Record<string, unknown> | null): string {
  const key = (config?.session as { mainKey?: unknown } | undefined)?.mainKey;
  return typeof key === "string" && key.trim() !== "" ? key.trim().toLowerCase() : "main";
}

/** `session.mainKey` from the config (JSON5), lower-cased; "main" when absent or unreadable. */
export function readConfiguredMainKey(paths: StatePaths, root: string): string {
  return configuredMainKey(readLegacyConfig(paths, root));
}

// ---------------------------------------------------------------------------------------------------------
// Retired config keys (seed: the doctor's config migration owns them; the runtime no longer reads them)
// ---------------------------------------------------------------------------------------------------------

export interface LegacyConfigKey {
  /** Where it is: `session.idleMinutes`, `agents.list[2].memorySearch.store.path`. */
  key: string;
  /** What replaces it. */
  replacement: string;
  /** What `--fix` does: move the value, drop the key, or write it out as a legacy file the importers read. */
  action: "move" | "remove" | "extract";
  /** Null when `--fix` can rewrite it; otherwise why not (left in place). */
  blocked: string | null;
}

type Obj = Record<string, unknown>;
type KeyPath = ReadonlyArray<string>;

interface KeyRule {
  /** Relative to an object holding it (the config root, or `agents.defaults` / `agents.list[i]` for memorySearch). */
  path: KeyPath;
  scopes: "root" | "agents";
  action: LegacyConfigKey["action"];
  to?: KeyPath;
  replacement: string;
  /** An input of the cron import: removed only once the cron store it points at has been imported (retired). */
  afterCronImport?: boolean;
}

const KEY_RULES: readonly KeyRule[] = [
  { path: ["session", "idleMinutes"], scopes: "root", action: "move", to: ["session", "reset", "idleMinutes"], replacement: "session.reset.idleMinutes" },
  { path: ["session", "resetByType", "dm"], scopes: "root", action: "move", to: ["session", "resetByType", "direct"], replacement: "session.resetByType.direct" },
  { path: ["session", "writeLock"], scopes: "root", action: "remove", replacement: "nothing: SQLite is the session concurrency boundary (the key is removed)" },
  { path: ["hooks", "internal", "handlers"], scopes: "root", action: "remove", replacement: "hook directories with HOOK.md metadata (the runtime no longer loads hooks.internal.handlers; the key is removed)" },
  { path: ["memorySearch", "store", "path"], scopes: "agents", action: "remove", replacement: "nothing: the memory index lives in the agent database (the key is removed)" },
  { path: ["plugins", "installs"], scopes: "root", action: "extract", replacement: "the installed-plugin index in the database (written to plugins/installs.json and imported in the same run)" },
  { path: ["diagnostics", "cacheTrace", "filePath"], scopes: "root", action: "remove", replacement: "nothing: cache traces are diagnostic rows in SQLite (the key is removed)" },
  { path: ["memory", "qmd", "sessions"], scopes: "root", action: "remove", replacement: "nothing: QMD no longer exports session transcripts (the key is removed)" },
  // Doctor import inputs only (seed): the cron importer reads them, so they go once the store is in SQLite.
  { path: ["cron", "store"], scopes: "root", action: "remove", replacement: "nothing: cron jobs live in the database (the key is removed once the store it names is imported)", afterCronImport: true },
  { path: ["cron", "webhook"], scopes: "root", action: "remove", replacement: "per-job webhook delivery, written by the cron import (the key is removed once the jobs are imported)", afterCronImport: true },
];

/** A legacy cron store (jobs, state sidecar or run logs) is still on disk: the cron import has not retired it yet. */
function cronStorePending(config: Obj, paths: StatePaths, root: string): boolean {
  for (const store of cronStores(root, paths, config)) {
    if (fs.existsSync(store.storePath) || fs.existsSync(store.statePath)) return true;
    try {
      if (fs.readdirSync(store.runsDir).some((n) => !n.startsWith("."))) return true;
    } catch {
      // No runs dir: nothing pending there.
    }
  }
  return false;
}

function get(obj: unknown, keys: KeyPath): unknown {
  let node = obj;
  for (const k of keys) {
    if (typeof node !== "object" || node === null || !Object.prototype.hasOwnProperty.call(node, k)) return undefined;
    node = (node as Obj)[k];
  }
  return node;
}

interface Located {
  rule: KeyRule;
  /** Full path from the config root. */
  at: KeyPath;
  label: string;
}

function locate(config: Obj): Located[] {
  const out: Located[] = [];
  for (const rule of KEY_RULES) {
    const bases: Array<{ at: string[]; label: string }> = [{ at: [], label: "" }];
    if (rule.scopes === "agents") {
      bases.push({ at: ["agents", "defaults"], label: "agents.defaults." });
      const list = get(config, ["agents", "list"]);
      if (Array.isArray(list)) list.forEach((_, n) => bases.push({ at: ["agents", "list", String(n)], label: `agents.list[${n}].` }));
    }
    for (const base of bases) {
      const at = [...base.at, ...rule.path];
      if (get(config, at) !== undefined) out.push({ rule, at, label: `${base.label}${rule.path.join(".")}` });
    }
  }
  return out;
}

/** `agents.list.2` in a key path means array index 2: the span tree and the value tree both follow it. */
function spanAt(root: SpanNode, keys: KeyPath): ReturnType<typeof findProp> {
  let node: SpanNode = root;
  let found: ReturnType<typeof findProp> = null;
  for (const k of keys) {
    if (node.kind === "array") {
      const item = node.items[Number(k)];
      if (!item) return null;
      node = item;
      continue;
    }
    found = findProp(node, [k]);
    if (!found) return null;
    node = found.prop.value;
  }
  return found;
}

/** The intended result of rewriting `located` keys, computed on the parsed value (the edit must produce exactly this). */
function transform(config: Obj, located: readonly Located[]): Obj {
  const copy = structuredClone(config) as Obj;
  for (const l of located) {
    const parent = get(copy, l.at.slice(0, -1)) as Obj;
    const value = parent[l.at[l.at.length - 1]!];
    delete parent[l.at[l.at.length - 1]!];
    if (l.rule.action === "move") {
      let node = copy;
      for (const k of l.rule.to!.slice(0, -1)) {
        if (typeof node[k] !== "object" || node[k] === null) node[k] = {};
        node = node[k] as Obj;
      }
      node[l.rule.to![l.rule.to!.length - 1]!] = value;
    }
  }
  return copy;
}

export interface ConfigPlan {
  path: string;
  /** Why the config could not be read or checked (FIFO, does not parse, …); null when fine or absent. */
  problem: string | null;
  keys: LegacyConfigKey[];
}

export interface ConfigRewrite {
  /** The new text; null when no key can be rewritten. */
  text: string | null;
  /** Keys rewritten, and `plugins.installs` to write out: the value for plugins/installs.json. */
  done: LegacyConfigKey[];
  extracted: unknown;
  /** Why the text could not be rewritten safely (then nothing is written). */
  refused: string | null;
}

/** Plans the rewrite: the text edits for every unblocked key, checked by re-parsing. */
function computeRewrite(read: ConfigRead, paths: StatePaths, root: string): { keys: LegacyConfigKey[]; rewrite: ConfigRewrite; after?: Obj } {
  const empty: ConfigRewrite = { text: null, done: [], extracted: undefined, refused: null };
  if (!read.value || read.text === null) return { keys: [], rewrite: empty };
  const config = read.value;
  const located = locate(config);
  const keys: LegacyConfigKey[] = [];
  const doable: Located[] = [];
  for (const l of located) {
    let blocked: string | null = null;
    if (l.rule.action === "move") {
      const existing = get(config, l.rule.to!);
      if (existing !== undefined && !isDeepStrictEqual(existing, get(config, l.at))) blocked = `${l.rule.replacement} is also set, to another value: keep the one you want and delete ${l.label} by hand`;
      const parentOfTarget = get(config, l.rule.to!.slice(0, -1));
      if (!blocked && parentOfTarget !== undefined && (typeof parentOfTarget !== "object" || parentOfTarget === null || Array.isArray(parentOfTarget))) blocked = `${l.rule.to!.slice(0, -1).join(".")} is not an object: fix it by hand`;
    }
    if (l.rule.action === "extract" && fs.existsSync(path.join(root, "plugins", "installs.json"))) {
      blocked = "plugins/installs.json exists too: `doctor --fix` imports that file first; run it again to move this key";
    }
    if (l.rule.action === "extract" && (typeof get(config, l.at) !== "object" || get(config, l.at) === null)) blocked = "plugins.installs is not an object: fix it by hand";
    if (l.rule.afterCronImport && cronStorePending(config, paths, root)) {
      blocked = "the cron import still reads it: `doctor --fix` imports the cron store first; run `openclaw-state doctor --fix` once more afterwards to remove the key";
    }
    keys.push({ key: l.label, replacement: l.rule.replacement, action: l.rule.action, blocked });
    if (!blocked) doable.push(l);
  }
  if (doable.length === 0) return { keys, rewrite: empty };
  const strictJson = (() => {
    try {
      JSON.parse(read.text!.replace(/^\uFEFF/, ""));
      return true;
    } catch {
      return false;
    }
  })();
  const refuse = (why: string): { keys: LegacyConfigKey[]; rewrite: ConfigRewrite } => {
    const reason = `${read.path} cannot be rewritten without losing its formatting (${why}); change it by hand`;
    for (const k of keys) if (!k.blocked) k.blocked = reason;
    return { keys, rewrite: { ...empty, refused: reason } };
  };
  let text = read.text;
  try {
    // One key at a time, re-parsing the spans in between: edits never overlap.
    for (const [n, l] of doable.entries()) {
      const spans = parseSpans(text);
      const here = spanAt(spans, l.at);
      if (!here) return refuse(`${l.label} not found in the text`);
      const edits: Edit[] = [];
      if (l.rule.action === "move") {
        const to = l.rule.to!;
        const sameParent = to.length === l.at.length && to.slice(0, -1).every((k, n) => k === l.at[n]);
        const target = spanAt(spans, to);
        if (target) edits.push(removeProp(text, here.parent, here.prop));
        else if (sameParent) edits.push(renameKey(here.prop, to[to.length - 1]!, strictJson));
        else {
          const valueText = text.slice(here.prop.value.start, here.prop.value.end);
          const targetParent = spanAt(spans, to.slice(0, -1));
          if (targetParent && targetParent.prop.value.kind === "object") {
            edits.push(insertProp(text, targetParent.prop.value, to[to.length - 1]!, valueText, strictJson));
            edits.push(removeProp(text, here.parent, here.prop));
          } else if (!targetParent && to.length === l.at.length + 1 && to.slice(0, -2).every((k, n) => k === l.at[n])) {
            // session.idleMinutes → session.reset.idleMinutes: `idleMinutes: 30` becomes `reset: { idleMinutes: 30 }`.
            const inner = `${JSON.stringify(to[to.length - 1])}: ${valueText}`;
            const innerKey = strictJson || here.prop.quote === '"' ? inner : inner.replace(/^"([A-Za-z_$][A-Za-z0-9_$]*)"/, here.prop.quote === "'" ? "'$1'" : "$1");
            edits.push(renameKey(here.prop, to[to.length - 2]!, strictJson));
            edits.push({ start: here.prop.value.start, end: here.prop.value.end, text: `{ ${innerKey} }` });
          } else return refuse(`no place to put ${l.rule.replacement}`);
        }
      } else {
        edits.push(removeProp(text, here.parent, here.prop));
      }
      text = applyEdits(text, edits);
      // Checked after every edit: the text must still parse and hold exactly the keys changed so far.
      const wrong = editProblem(text, strictJson, transform(config, doable.slice(0, n + 1)), l.label);
      if (wrong) return refuse(wrong);
    }
  } catch (error) {
    return refuse(error instanceof ConfigEditError ? error.message : describeError(error));
  }
  const extract = doable.find((l) => l.rule.action === "extract");
  return { keys, rewrite: { text, done: keys.filter((k) => !k.blocked), extracted: extract ? get(config, extract.at) : undefined, refused: null }, after: transform(config, doable) };
}

/**
 * Null when `text` (an edited config, never on disk) parses — as strict JSON when the file was strict JSON, else with
 * json5 — to exactly `intended`; otherwise why not. The edited text has no position worth naming: only the reason.
 */
export function editProblem(text: string, strictJson: boolean, intended: unknown, label: string): string | null {
  let after: unknown;
  try {
    after = strictJson ? JSON.parse(text.replace(/^\uFEFF/, "")) : parseJson5(text);
  } catch (error) {
    const why = error instanceof Json5SyntaxError ? error.reason : describeError(error);
    return `the edit of ${label} left text that does not parse as ${strictJson ? "JSON" : "JSON5"} (${why})`;
  }
  if (!isDeepStrictEqual(after, intended)) return `the edit of ${label} changed more than that key`;
  return null;
}

/** The config as read, and as `--fix` would leave it (the same object when nothing can be rewritten). */
export function configBeforeAndAfterFix(paths: StatePaths, root: string): { read: ConfigRead; keys: LegacyConfigKey[]; after: Obj | null } {
  const read = readConfig(paths, root);
  const { keys, after } = computeRewrite(read, paths, root);
  return { read, keys, after: after ?? read.value };
}

/** The read-only part: every retired key with its replacement, and whether `--fix` can rewrite it. */
export function planConfig(paths: StatePaths, root: string): ConfigPlan {
  const read = readConfig(paths, root);
  return { path: read.path, problem: read.problem, keys: computeRewrite(read, paths, root).keys };
}

export interface ConfigFixResult {
  changes: string[];
  warnings: string[];
  /** `plugins.installs` was written to plugins/installs.json: the caller plans the tree again to import it. */
  extracted: boolean;
}

/**
 * After the verified backup: writes the rewritten config (temp file, same mode, rename) and `plugins/installs.json`
 * when `plugins.installs` moved out. Re-reads the file first; a config that changed since the plan is re-planned.
 */
export function applyConfigFix(paths: StatePaths, root: string): ConfigFixResult {
  const read = readConfig(paths, root);
  const { keys, rewrite } = computeRewrite(read, paths, root);
  const warnings = keys.filter((k) => k.blocked).map((k) => `config ${read.path}: ${k.key} left as is: ${k.blocked}`);
  if (rewrite.text === null) return { changes: [], warnings, extracted: false };
  const changes: string[] = [];
  if (rewrite.extracted !== undefined) {
    const file = path.join(root, "plugins", "installs.json");
    ensurePrivateDir(path.dirname(file));
    writeAtomic(file, `${JSON.stringify({ version: 1, installs: rewrite.extracted }, null, 2)}\n`, 0o600, true);
    changes.push(`config: wrote plugins.installs to ${file} (imported below)`);
  }
  // A symlinked config (dotfiles) stays a link: the file it points at is rewritten.
  const target = fs.realpathSync(read.path);
  const mode = fs.statSync(target).mode & 0o777;
  writeAtomic(target, rewrite.text, mode, false);
  for (const k of rewrite.done) {
    changes.push(`config ${read.path}: ${k.key} → ${k.action === "move" ? k.replacement : k.action === "extract" ? "plugins/installs.json" : "removed"}`);
  }
  return { changes, warnings, extracted: rewrite.extracted !== undefined };
}

/** Temp file beside the target, fsync, rename, fsync the dir: the config is never half-written. */
function writeAtomic(file: string, text: string, mode: number, exclusive: boolean): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.tmp-${crypto.randomBytes(6).toString("hex")}`);
  const fd = fs.openSync(temp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, mode);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    if (exclusive) {
      fs.linkSync(temp, file);
      fs.rmSync(temp, { force: true });
    } else fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fsyncDir(dir);
}
