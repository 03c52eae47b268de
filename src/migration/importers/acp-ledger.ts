// Importer for the ACP replay ledger (`acp/event-ledger.json`) → acp_replay_sessions and acp_replay_events.
//
// Shape (OpenClaw src/acp/event-ledger.ts): {version:1, sessions:{<sessionId>:{sessionId, sessionKey, cwd,
// complete, createdAt, updatedAt, nextSeq, events:[{seq, at, sessionId, sessionKey, runId?, update:{sessionUpdate,
// …}}]}}}. Sessions and events the runtime's own reader would drop (wrong types, a key that is not the session's
// id) are skipped and counted, never guessed at.
import { isObject, shapeError } from "../json-source.js";
import { fileSource, jsonRowsImporter, row, type RowSpec } from "./json-rows.js";

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

export const acpEventLedgerImporter = jsonRowsImporter({
  kind: "acp-event-ledger",
  label: { one: "legacy ACP event ledger", many: "legacy ACP event ledgers", records: "sessions" },
  targetTable: "acp_replay_sessions",
  targetTables: ["acp_replay_sessions", "acp_replay_events"],
  detect: (ctx) => fileSource("acp-event-ledger", ctx.root, "acp/event-ledger.json"),
  rows(v, source) {
    if (!isObject(v) || !isObject(v.sessions)) throw shapeError(source.path, 'an object with a "sessions" map', v);
    if (v.version !== 1) throw shapeError(source.path, "a version 1 ledger", v.version);
    const rows: RowSpec[] = [];
    let skippedSessions = 0;
    let skippedEvents = 0;
    for (const [id, s] of Object.entries(v.sessions)) {
      const valid =
        isObject(s) && s.sessionId === id && typeof s.sessionKey === "string" && typeof s.cwd === "string" && finite(s.createdAt) && finite(s.updatedAt) && Number.isInteger(s.nextSeq) && (s.nextSeq as number) >= 1;
      if (!valid) {
        skippedSessions += 1;
        continue;
      }
      rows.push(
        row("acp_replay_sessions", ["session_id"], {
          session_id: id,
          session_key: s.sessionKey as string,
          cwd: s.cwd as string,
          complete: s.complete === true ? 1 : 0,
          created_at: Math.trunc(s.createdAt as number),
          updated_at: Math.trunc(s.updatedAt as number),
          next_seq: s.nextSeq as number,
        }),
      );
      for (const e of Array.isArray(s.events) ? s.events : []) {
        const ok =
          isObject(e) && Number.isInteger(e.seq) && (e.seq as number) >= 0 && finite(e.at) && typeof e.sessionKey === "string" && isObject(e.update) && typeof e.update.sessionUpdate === "string";
        if (!ok) {
          skippedEvents += 1;
          continue;
        }
        rows.push(
          row("acp_replay_events", ["session_id", "seq"], {
            session_id: id,
            seq: e.seq as number,
            at: Math.trunc(e.at as number),
            session_key: e.sessionKey as string,
            run_id: typeof e.runId === "string" && e.runId !== "" ? e.runId : null,
            update_json: JSON.stringify(e.update),
          }),
        );
      }
    }
    const warnings: string[] = [];
    if (skippedSessions > 0) warnings.push(`${skippedSessions} session(s) with missing or mistyped fields were skipped (the runtime ignores them too)`);
    if (skippedEvents > 0) warnings.push(`${skippedEvents} event(s) with missing or mistyped fields were skipped`);
    return { records: Object.keys(v.sessions).length, rows, skipped: skippedSessions + skippedEvents, warnings };
  },
});
