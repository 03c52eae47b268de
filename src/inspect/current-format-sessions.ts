// inspect's session summary of an agent database in OpenClaw's current format, through the session readers' projection.
import type { AgentSessionStats, SessionRef } from "../sessions/session-stats.js";
import { openSessionStore } from "../state/openclaw-session-reader.js";
import type { StatePaths } from "../state/paths.js";

interface EdgeRow {
  key: string;
  sessionId: string;
  updatedAt: number;
}

/**
 * Sessions and their edges come from the projection's `sessions` view (what `sessions list` reads); the event count
 * and bytes from OpenClaw's own `transcript_events`, whose `event_utf8_bytes` sizes a zstd body without decoding it
 * (inspect stays cheap, and works on a Node without zstd). Undefined when the file cannot be read so: the probe
 * already reports what is wrong with it.
 */
export function currentFormatSessionStats(paths: StatePaths, agentId: string): AgentSessionStats | undefined {
  let db: ReturnType<typeof openSessionStore>;
  try {
    db = openSessionStore(paths, agentId);
  } catch {
    return undefined;
  }
  try {
    const snapshot = db.readSnapshot();
    try {
      const h = db.handle;
      const sessions = h.prepare("SELECT count(*) AS n FROM temp.sessions").get() as { n: number };
      const events = h
        .prepare("SELECT count(*) AS n, sum(coalesce(octet_length(event_json), event_utf8_bytes, 0)) AS bytes FROM main.transcript_events")
        .get() as { n: number; bytes: number | null };
      const edge = (direction: "ASC" | "DESC"): SessionRef | null => {
        const row = h
          .prepare(`SELECT session_key AS key, session_id AS sessionId, updated_at AS updatedAt FROM temp.sessions ORDER BY updated_at ${direction}, session_id ${direction} LIMIT 1`)
          .get() as EdgeRow | undefined;
        return row ? { key: row.key, sessionId: row.sessionId, updatedAt: row.updatedAt } : null;
      };
      return { sessionCount: sessions.n, transcriptEvents: events.n, transcriptBytes: events.bytes ?? 0, oldest: edge("ASC"), newest: edge("DESC") };
    } finally {
      snapshot.end();
    }
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}
