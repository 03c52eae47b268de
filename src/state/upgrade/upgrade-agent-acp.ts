// A legacy entry's `acp` metadata -> OpenClaw 2026.9.6's global acp_sessions row (its doctor moves it out of the entry).
import Database from "better-sqlite3";
import type { AcpSessionsTable } from "../generated/openclaw-global-db.js";
import type { DbUpgradeResult } from "./types.js";

export type AcpSessionRow = AcpSessionsTable;

type Obj = Record<string, unknown>;

function isRecord(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): value is string | undefined | null {
  return value === undefined || value === null || typeof value === "string";
}

/**
 * The acp_sessions row 9.6's doctor binds for one entry (`bindAcpSessionMeta`): `session_id` is the entry's
 * lifecycleRevision, else its sessionId; `updated_at` is the time of the migration. Null when the metadata lacks a
 * column that is NOT NULL there (9.6's own insert would fail on it and stop its doctor): the caller keeps such
 * metadata in entry_json instead, so nothing is lost.
 */
export function acpSessionRowFor(sessionKey: string, entry: Obj, now: number): AcpSessionRow | null {
  const meta = entry.acp;
  if (!isRecord(meta)) return null;
  const text = ["backend", "agent", "runtimeSessionName", "mode", "state"] as const;
  if (text.some((field) => typeof meta[field] !== "string")) return null;
  // STRICT INTEGER column: a fractional time would be refused.
  if (typeof meta.lastActivityAt !== "number" || !Number.isInteger(meta.lastActivityAt)) return null;
  if (!optionalString(meta.cwd) || !optionalString(meta.lastError)) return null;
  const binding = typeof entry.lifecycleRevision === "string" ? entry.lifecycleRevision : typeof entry.sessionId === "string" ? entry.sessionId : null;
  return {
    session_key: sessionKey,
    session_id: binding,
    backend: meta.backend as string,
    agent: meta.agent as string,
    runtime_session_name: meta.runtimeSessionName as string,
    // As 9.6: a falsy identity / runtimeOptions is no column value at all.
    identity_json: meta.identity ? JSON.stringify(meta.identity) : null,
    mode: meta.mode as string,
    runtime_options_json: meta.runtimeOptions ? JSON.stringify(meta.runtimeOptions) : null,
    cwd: meta.cwd ?? null,
    state: meta.state as string,
    last_activity_at: meta.lastActivityAt,
    last_error: meta.lastError ?? null,
    updated_at: now,
  };
}

const COLUMNS = [
  "session_key", "session_id", "backend", "agent", "runtime_session_name", "identity_json", "mode",
  "runtime_options_json", "cwd", "state", "last_activity_at", "last_error", "updated_at",
] as const satisfies ReadonlyArray<keyof AcpSessionRow>;

/**
 * Writes the ACP rows the agent upgrades collected into the new global file (the agents' session rows name them by
 * key; 9.6 reads `acp_sessions` by the store's session key). Without a global file in this upgrade the rows stay
 * in the kept design-v1 agent files (their entry_json still holds `acp`), and each agent result says so.
 */
export function writeAcpSessions(globalTmp: string | undefined, globalResult: DbUpgradeResult | undefined, agents: DbUpgradeResult[]): void {
  const pending = agents.filter((a) => (a.acpSessions?.length ?? 0) > 0);
  if (pending.length === 0) return;
  if (!globalTmp || !globalResult) {
    for (const a of pending) {
      a.unmapped.session_entries_acp = a.acpSessions!.length;
      a.notes.push({ code: "agent.entry.acp-no-global", message: `${a.acpSessions!.length} ACP session metadata row(s) have no global database in this upgrade; they stay in the kept design-v1 file (entry_json \`acp\`).` });
    }
    return;
  }
  const db = new Database(globalTmp);
  try {
    const insert = db.prepare(`INSERT INTO acp_sessions (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")}) ON CONFLICT(session_key) DO NOTHING`);
    db.transaction(() => {
      for (const a of pending) {
        for (const row of a.acpSessions!) {
          if (insert.run(...COLUMNS.map((c) => row[c])).changes > 0) {
            globalResult.written.acp_sessions = (globalResult.written.acp_sessions ?? 0) + 1;
          } else {
            globalResult.notes.push({ code: "global.acp-session.duplicate-key", message: `acp_sessions ${row.session_key}: another agent's ACP metadata holds this key; the first was kept (agent "${a.agentId}"'s stays in its kept design-v1 file).` });
          }
        }
      }
    }).immediate();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}
