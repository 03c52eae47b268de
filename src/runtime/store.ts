// Store selection for the runtime helpers: { stateDir?, env? } → paths, and read-only agent DB access that never creates anything.
import fs from "node:fs";
import { UsageError } from "../core/errors.js";
import { normalizeAgentId } from "../state/agent-id.js";
import { agentDbPath, resolveStatePaths, type StatePaths } from "../state/paths.js";
import { openSessionStore } from "../state/openclaw-session-reader.js";
import type { AgentDatabase } from "../state/state-databases.js";

/** Which state the helpers read: the same resolution as the CLI (`stateDir`, else OPENCLAW_STATE_DIR, else ~/.openclaw). */
export interface RuntimeStoreParams {
  /** State directory; omitted = `OPENCLAW_STATE_DIR` or `<home>/.openclaw` from `env`. An empty string is refused. */
  stateDir?: string | undefined;
  /** Environment for the default resolution (default `process.env`). */
  env?: NodeJS.ProcessEnv | undefined;
}

export interface AgentParams extends RuntimeStoreParams {
  agentId: string;
}

export function resolveRuntimePaths(params: RuntimeStoreParams): StatePaths {
  if (params.stateDir !== undefined && params.stateDir.trim() === "") {
    // "" must never mean "the default state": a script with an unset variable would read (or delete in) the wrong place.
    throw new UsageError("stateDir is empty; pass a state directory or omit it to use OPENCLAW_STATE_DIR / ~/.openclaw.", "invalid_state_dir");
  }
  return resolveStatePaths({ stateDir: params.stateDir, env: params.env ?? process.env });
}

/**
 * Runs `read` on the agent DB opened read-only inside one read snapshot; `ifMissing` when the database file
 * does not exist. Readers never create a database or repair a schema. OpenClaw's current format is read through
 * the projection in state/openclaw-session-reader.ts; another format fails with the command that upgrades it.
 */
export function readAgentDb<T>(params: AgentParams, read: (db: AgentDatabase, agentId: string) => T, ifMissing: () => T): T {
  const paths = resolveRuntimePaths(params);
  const agentId = normalizeAgentId(params.agentId);
  if (!fs.existsSync(agentDbPath(paths, agentId))) return ifMissing();
  const db = openSessionStore(paths, agentId);
  try {
    const snapshot = db.readSnapshot();
    try {
      return read(db, agentId);
    } finally {
      snapshot.end();
    }
  } finally {
    db.close();
  }
}

/**
 * True when `sessionId` is a session of `sessionKey`: its row carries the key, or a route maps the key to it.
 * A transcript identity is the triple (agent, key, id); an id under another key is not this identity.
 */
export function sessionMatchesKey(db: AgentDatabase, sessionKey: string, sessionId: string): boolean {
  const row = db.first(db.q.selectFrom("sessions").select("session_key").where("session_id", "=", sessionId));
  if (!row) return false;
  if (row.session_key === sessionKey) return true;
  return db.first(db.q.selectFrom("session_routes").select("session_id").where("session_key", "=", sessionKey).where("session_id", "=", sessionId)) !== undefined;
}

export function requireString(value: unknown, name: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`${name} must be a non-empty string.`, "invalid_argument");
  return value;
}
