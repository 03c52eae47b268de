// Auth: design-v1 auth_profile_stores/auth_profile_state (one row per agent dir) → where openclaw@2026.9.6 reads them.
//
// 9.6 keeps the main agent's store as the *shared* store in the global DB (config_machine_state `authProfiles.store`,
// `authProfiles.state`, with `auth.sharedStore` = {"location":"state-db"}); every other agent's store lives in its
// own agent DB, table auth_profile_store / auth_profile_state keyed 'primary' (docs/openclaw-format/global-db.md §3).
import path from "node:path";
import { DatabaseError } from "../../core/errors.js";
import { detectFormat } from "../db-format.js";
import { openUpgradeSource } from "./read-source.js";
import { type GlobalUpgradeContext, bump, insertRow, note, parseJsonObject, readAll, type Row } from "./upgrade-global-context.js";

/** The agent whose store 9.6 keeps as the shared store in the global DB. */
export const SHARED_AUTH_AGENT_ID = "main";

/** `<state>/agents/<id>/agent` → id; undefined for any other layout. */
export function agentIdOfAgentDir(agentDir: string): string | undefined {
  const parts = path.resolve(agentDir).split(path.sep);
  const n = parts.length;
  return n >= 3 && parts[n - 1] === "agent" && parts[n - 3] === "agents" && parts[n - 2] ? parts[n - 2] : undefined;
}

function rowAgentId(row: Row): string | undefined {
  return agentIdOfAgentDir(String(row.agent_dir ?? row.store_key ?? ""));
}

export function upgradeMainAuth(ctx: GlobalUpgradeContext): void {
  const stores = readAll(ctx, "auth_profile_stores", "store_key");
  const states = readAll(ctx, "auth_profile_state", "store_key");
  const put = (key: string, value: string, at: number): void => insertRow(ctx, "config_machine_state", { state_key: key, value_json: value, updated_at_ms: at });
  // 9.6 writes this marker in every doctor run; without it its doctor would still want to move the shared store.
  put("auth.sharedStore", JSON.stringify({ location: "state-db" }), ctx.now);
  const others = new Set<string>();
  for (const [table, rows, key, column] of [
    ["auth_profile_stores", stores, "authProfiles.store", "profiles_json"],
    ["auth_profile_state", states, "authProfiles.state", "state_json"],
  ] as const) {
    for (const row of rows) {
      const agentId = rowAgentId(row);
      const value = parseJsonObject(row[column]);
      if (agentId !== SHARED_AUTH_AGENT_ID) {
        bump(ctx.unmapped, table);
        if (agentId) others.add(agentId);
        else note(ctx, "global.auth.unknown-agent-dir", `${table} row for ${String(row.agent_dir)}: not an agents/<id>/agent dir, so no OpenClaw agent owns it; kept in the design-v1 file only.`);
        continue;
      }
      if (!value) {
        bump(ctx.unmapped, table);
        note(ctx, "global.auth.unreadable", `${table} row for agent main: ${column} is not a JSON object; kept in the design-v1 file only.`);
        continue;
      }
      // A store with no profiles and nothing else (`{"profiles":{}}`): 9.6's doctor writes no row for it (doctor differential, old-layout).
      if (table === "auth_profile_stores" && isEmptyStore(value)) {
        note(ctx, "global.auth.empty-store", "auth_profile_stores row for agent main holds no profile: no authProfiles.store row is written, as OpenClaw 2026.9.6 writes none.");
        continue;
      }
      put(key, JSON.stringify(value), typeof row.updated_at === "number" ? row.updated_at : ctx.now);
    }
  }
  for (const agentId of others) {
    note(ctx, "global.auth.agent-db", `auth profiles of agent ${agentId} belong in its agent DB (auth_profile_store/auth_profile_state 'primary'), not the global DB: agentAuthRows(source, "${agentId}") returns them for the agent upgrade.`);
  }
}

/** Only `version` and an empty `profiles` object. */
function isEmptyStore(value: Record<string, unknown>): boolean {
  const profiles = value.profiles;
  const empty = profiles !== null && typeof profiles === "object" && !Array.isArray(profiles) && Object.keys(profiles).length === 0;
  return empty && Object.keys(value).every((k) => k === "version" || k === "profiles");
}

export interface AgentAuthRows {
  /** Rows for the agent DB's auth_profile_store (store_key 'primary'); empty when the agent has no store. */
  auth_profile_store: Array<{ store_key: "primary"; store_json: string; updated_at: number }>;
  /** Rows for the agent DB's auth_profile_state (state_key 'primary'). */
  auth_profile_state: Array<{ state_key: "primary"; state_json: string; updated_at: number }>;
}

/**
 * The auth rows a design-v1 GLOBAL database holds for one non-main agent, shaped for that agent's OpenClaw DB:
 * write them into `auth_profile_store` / `auth_profile_state` of agents/<agentId>/agent/openclaw-agent.sqlite.
 * For the main agent it returns nothing: upgradeGlobalDb already put main's store in config_machine_state, and a
 * second copy in main's agent DB would be moved (and deleted) again by OpenClaw's doctor. Opens `source` read-only.
 */
/** Agent ids (other than main) that own auth rows in a design-v1 global database; opens `source` read-only. */
export function authAgentIds(source: string): string[] {
  const { handle, cleanup } = openUpgradeSource(source, "global");
  try {
    if (detectFormat(handle, "global").id !== "design-v1") return [];
    const ids = new Set<string>();
    for (const table of ["auth_profile_stores", "auth_profile_state"]) {
      for (const row of handle.prepare(`SELECT agent_dir, store_key FROM ${table}`).all() as Row[]) {
        const id = rowAgentId(row);
        if (id && id !== SHARED_AUTH_AGENT_ID) ids.add(id);
      }
    }
    return [...ids].sort();
  } finally {
    handle.close();
    cleanup?.();
  }
}

export function agentAuthRows(source: string, agentId: string): AgentAuthRows {
  const out: AgentAuthRows = { auth_profile_store: [], auth_profile_state: [] };
  if (agentId === SHARED_AUTH_AGENT_ID) return out;
  const { handle, cleanup } = openUpgradeSource(source, "global");
  try {
    const format = detectFormat(handle, "global");
    if (format.id !== "design-v1") throw new DatabaseError(`${source} is ${format.writtenBy}, not a design-v1 global database; no auth rows read.`, { path: source });
    const pick = (table: string, column: string): Array<{ json: string; updated_at: number }> =>
      (handle.prepare(`SELECT * FROM ${table}`).all() as Row[])
        .filter((row) => rowAgentId(row) === agentId)
        .flatMap((row) => {
          const value = parseJsonObject(row[column]);
          return value ? [{ json: JSON.stringify(value), updated_at: typeof row.updated_at === "number" ? row.updated_at : Date.now() }] : [];
        });
    out.auth_profile_store = pick("auth_profile_stores", "profiles_json").map((r) => ({ store_key: "primary", store_json: r.json, updated_at: r.updated_at }));
    out.auth_profile_state = pick("auth_profile_state", "state_json").map((r) => ({ state_key: "primary", state_json: r.json, updated_at: r.updated_at }));
    return out;
  } finally {
    handle.close();
    cleanup?.();
  }
}
