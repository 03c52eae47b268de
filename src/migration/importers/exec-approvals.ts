// Importer for `exec-approvals.json` → the exec_approvals_config singleton row (typed counts/defaults + raw_json).
//
// Shape (OpenClaw src/infra/exec-approvals.ts): {"version":1,"socket":{"path","token"},"defaults":{"security",
// "ask","askFallback","autoAllowSkills"},"agents":{"<id>":{…defaults,"allowlist":[{"id","pattern",…}]}}}.
// The runtime reads `<home>/.openclaw/exec-approvals.json`; with a state dir elsewhere both places are
// checked, and two different copies are not merged: the state dir's is left for the operator. A legacy
// `agents.default` entry is moved to `main` as OpenClaw 2026.9.6's normalizer does (merged when `main` exists).
import fs from "node:fs";
import path from "node:path";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { assertUnchanged, inspectJsonSource, sha256Of } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource } from "../types.js";
import { bool, flag, obj, str } from "./coerce.js";
import { objectOf, readSecretJson, scrubbed } from "../json-source.js";

export const EXEC_APPROVALS_FILE = "exec-approvals.json";
/** The singleton's key. */
export const EXEC_APPROVALS_CONFIG_KEY = "default";

interface Typed {
  socket_path: string | null;
  has_socket_token: 0 | 1;
  default_security: string | null;
  default_ask: string | null;
  default_ask_fallback: string | null;
  auto_allow_skills: 0 | 1 | null;
  agent_count: number;
  allowlist_count: number;
}

function typed(file: string, value: unknown): Typed {
  const o = objectOf(file, value, 'an exec approvals file ({"version":1,"defaults":{…},"agents":{…}})');
  const socket = obj(o.socket);
  const defaults = obj(o.defaults) ?? {};
  const agents = obj(o.agents) ?? {};
  let allowlist = 0;
  for (const agent of Object.values(agents)) {
    const list = obj(agent)?.allowlist;
    if (Array.isArray(list)) allowlist += list.length;
  }
  return {
    socket_path: str(socket?.path),
    has_socket_token: str(socket?.token) !== null ? 1 : 0,
    default_security: str(defaults.security),
    default_ask: str(defaults.ask),
    default_ask_fallback: str(defaults.askFallback),
    auto_allow_skills: flag(bool(defaults.autoAllowSkills)),
    agent_count: Object.keys(agents).length,
    allowlist_count: allowlist,
  };
}

/** The agent id the runtime's approvals resolve for the default agent (OpenClaw's DEFAULT_AGENT_ID). */
const MAIN_AGENT = "main";

type Obj = Record<string, unknown>;

/** A pattern's identity when merging (trimmed, lower-cased), null for a blank or missing pattern. */
function patternKey(entry: Obj): string | null {
  const p = typeof entry.pattern === "string" ? entry.pattern.trim() : "";
  return p === "" ? null : p.toLowerCase();
}

/**
 * `agents.default` merged into an existing `agents.main`, as OpenClaw 2026.9.6's `mergeLegacyAgent` does: main's
 * fields win (a null/missing policy field falls back to the legacy one); allowlists are concatenated main first and
 * de-duplicated by (pattern ignoring case, argPattern); MCP tool grants are unioned by (server, tool).
 */
function mergeLegacyAgent(current: Obj, legacy: Obj): Obj {
  const allowlist: Obj[] = [];
  const seen = new Set<string>();
  const push = (entry: unknown): void => {
    const e = obj(entry);
    const key = e ? patternKey(e) : null;
    if (!e || key === null) return;
    const full = `${key}\u0000${typeof e.argPattern === "string" ? e.argPattern.trim() : ""}`;
    if (seen.has(full)) return;
    seen.add(full);
    allowlist.push(e);
  };
  for (const e of Array.isArray(current.allowlist) ? current.allowlist : []) push(e);
  for (const e of Array.isArray(legacy.allowlist) ? legacy.allowlist : []) push(e);
  const currentTools = Array.isArray(current.mcpTools) ? current.mcpTools : null;
  const legacyTools = Array.isArray(legacy.mcpTools) ? legacy.mcpTools : null;
  const sameGrant = (a: unknown, b: unknown): boolean => obj(a)?.server === obj(b)?.server && obj(a)?.tool === obj(b)?.tool;
  const merged: Obj = {
    ...legacy,
    ...current,
    security: current.security ?? legacy.security,
    ask: current.ask ?? legacy.ask,
    askFallback: current.askFallback ?? legacy.askFallback,
    autoAllowSkills: current.autoAllowSkills ?? legacy.autoAllowSkills,
    allowlist: allowlist.length > 0 ? allowlist : undefined,
    mcpTools: current.mcpTools || legacy.mcpTools ? [...(currentTools ?? []), ...(legacyTools ?? []).filter((g) => !currentTools?.some((c) => sameGrant(c, g)))] : undefined,
  };
  // JSON has no undefined: drop those keys so the stored text says what the runtime will read.
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
  return merged;
}

/**
 * The file with `agents.default` moved to `agents.main` (merged into an existing one), or null when the file has
 * no object `agents.default` (its text is then kept byte for byte).
 */
export function withDefaultAgentMoved(value: unknown): { value: Obj; merged: boolean } | null {
  const file = obj(value);
  const agents = obj(file?.agents);
  const legacy = obj(agents?.default);
  if (!file || !agents || !legacy) return null;
  const main = obj(agents[MAIN_AGENT]);
  const next: Obj = { ...agents };
  next[MAIN_AGENT] = main ? mergeLegacyAgent(main, legacy) : legacy;
  delete next.default;
  return { value: { ...file, agents: next }, merged: main !== null };
}

function detect(ctx: DetectContext): DetectedSource[] {
  const candidates = [path.join(ctx.root, EXEC_APPROVALS_FILE), path.join(ctx.paths.homeDir, ".openclaw", EXEC_APPROVALS_FILE)];
  const seen = new Set<string>();
  return candidates
    .map((f) => path.resolve(f))
    .filter((f) => !seen.has(f) && (seen.add(f), isRegularFile(f)))
    .map((file) => ({ kind: "exec-approvals" as const, agentId: null, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false }));
}

function inspect(source: DetectedSource) {
  return inspectJsonSource(source, (value) => {
    const t = typed(source.path, withDefaultAgentMoved(value)?.value ?? value);
    return { records: 1, notes: [`${t.agent_count} agent(s), ${t.allowlist_count} allowlist entr${t.allowlist_count === 1 ? "y" : "ies"}`] };
  });
}

/** Two different copies (state dir and `<home>/.openclaw`): the runtime's copy is imported, the other waits for a human. */
function finalize(own: PlannedSource[]): void {
  const live = own.filter((s) => s.action !== "skip");
  if (live.length < 2 || live.every((s) => s.sha256 === live[0]!.sha256)) return;
  for (const s of live) {
    if (s.relativePath !== EXEC_APPROVALS_FILE) continue;
    s.action = "skip";
    s.attention = true;
    s.reason = `another, different ${EXEC_APPROVALS_FILE} is in <home>/.openclaw (the one the runtime reads) and is imported instead; compare the two and remove this one by hand`;
  }
}

function importApprovals(db: GlobalDatabase, source: PlannedSource): ImportCounts {
  const { value, sha256, scrubber } = readSecretJson(source.path);
  assertUnchanged(source, sha256);
  const moved = withDefaultAgentMoved(value);
  const t = typed(source.path, moved?.value ?? value);
  // Rewritten only when the legacy key moved, in OpenClaw's own serialization (2-space JSON and a newline).
  const raw = moved ? `${JSON.stringify(moved.value, null, 2)}\n` : fs.readFileSync(source.path, "utf8");
  const notes = [`${t.agent_count} agent(s), ${t.allowlist_count} allowlist entr${t.allowlist_count === 1 ? "y" : "ies"}`];
  if (moved) notes.push(`legacy agents.default moved to agents.${MAIN_AGENT}${moved.merged ? ` (merged into the existing ${MAIN_AGENT} entry; ${MAIN_AGENT}'s settings win, allowlists combined)` : ""}`);
  const updatedAt = Math.trunc(fs.statSync(source.path).mtimeMs);
  db.prepare(
    `INSERT INTO exec_approvals_config (config_key, raw_json, socket_path, has_socket_token, default_security, default_ask, default_ask_fallback, auto_allow_skills, agent_count, allowlist_count, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (config_key) DO UPDATE SET raw_json = excluded.raw_json, socket_path = excluded.socket_path, has_socket_token = excluded.has_socket_token, default_security = excluded.default_security, default_ask = excluded.default_ask, default_ask_fallback = excluded.default_ask_fallback, auto_allow_skills = excluded.auto_allow_skills, agent_count = excluded.agent_count, allowlist_count = excluded.allowlist_count, updated_at_ms = excluded.updated_at_ms`,
  ).run(EXEC_APPROVALS_CONFIG_KEY, raw, t.socket_path, t.has_socket_token, t.default_security, t.default_ask, t.default_ask_fallback, t.auto_allow_skills, t.agent_count, t.allowlist_count, updatedAt);
  return scrubbed(
    { records: 1, rows: { exec_approvals_config: 1 }, skipped: 0, warnings: [], notes, expect: { sha256: sha256Of(raw) } },
    scrubber,
  );
}

/** The singleton holds the text written (compared by hash: the text may hold the socket token). */
function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const raw = db.prepare("SELECT raw_json FROM exec_approvals_config WHERE config_key = ?").pluck().get(EXEC_APPROVALS_CONFIG_KEY) as string | undefined;
  if (raw === undefined) return "the exec_approvals_config row is missing after commit";
  return sha256Of(raw) === expected.expect.sha256 ? null : "exec_approvals_config holds another file's content";
}

export const execApprovalsImporter: GlobalSourceImporter = {
  kind: "exec-approvals",
  target: "global",
  label: { one: "legacy exec approvals file", many: "legacy exec approvals files", records: "configs" },
  targetTable: "exec_approvals_config",
  targetTables: ["exec_approvals_config"],
  detect,
  inspect,
  finalize,
  import: importApprovals,
  verify,
};
