// Session reads by format: our design-v1 tables as they are, OpenClaw's current agent format through a read-only projection, advice for the rest.
import zlib from "node:zlib";
import { DatabaseError, OperationError, SchemaFormatError, SchemaVersionError } from "../core/errors.js";
import { normalizeAgentId } from "./agent-id.js";
import { openDatabase } from "./database.js";
import { OPENCLAW_CURRENT, OPENCLAW_FIRST_SQLITE_RELEASE, hasCurrentSessionTables, isOurFormat, type DbFormat } from "./db-format.js";
import type { AgentDB } from "./generated/agent-db.js";
import type { GlobalDB } from "./generated/global-db.js";
import { agentDbPath, type StatePaths } from "./paths.js";
import type { AgentDatabase, GlobalDatabase } from "./state-databases.js";

/** The SQL function the projection decodes OpenClaw's compressed events with (registered per connection). */
const DECODE_FUNCTION = "openclaw_state_event_text";

type ZstdDecompress = (buf: Buffer) => Buffer;

/** node:zlib has zstd from Node 22.15 / 23.8; Node 20 has none. */
function zstdDecoder(): ZstdDecompress | null {
  const candidate = (zlib as unknown as { zstdDecompressSync?: unknown }).zstdDecompressSync;
  return typeof candidate === "function" ? (candidate as ZstdDecompress) : null;
}

/**
 * Temp views under the names of our design-v1 tables (temp shadows main for unqualified names), so every
 * session and transcript reader runs unchanged on OpenClaw's current agent format:
 * - `sessions`: one row per `session_windows` row; the key's current window takes the node's `updated_at`
 *   (what `openclaw sessions` reports), and a node whose current window row is missing still appears.
 * - `session_routes` / `session_entries`: the node's `current_session_id` and its `entry_json`.
 * - `transcript_events`: `event_json`, or the `event_zstd` body decoded (verified against `event_utf8_bytes`).
 * `conversations`, `session_conversations` and `transcript_event_identities` carry the columns the readers use
 * under the same names, so they are read directly. Nothing is written to the database file.
 */
const CURRENT_FORMAT_PROJECTION = `
CREATE TEMP VIEW sessions AS
  SELECT w.session_id, w.session_key, w.session_scope, w.created_at,
         CASE WHEN n.current_session_id = w.session_id THEN n.updated_at ELSE w.updated_at END AS updated_at,
         w.started_at, w.ended_at,
         CASE WHEN n.current_session_id = w.session_id THEN coalesce(w.status, n.status) ELSE w.status END AS status,
         w.chat_type, w.channel, w.account_id, w.primary_conversation_id, w.model_provider, w.model, w.agent_harness_id,
         coalesce(w.parent_session_key, CASE WHEN n.current_session_id = w.session_id THEN n.parent_session_key END) AS parent_session_key,
         coalesce(w.spawned_by, CASE WHEN n.current_session_id = w.session_id THEN n.spawned_by END) AS spawned_by,
         coalesce(w.display_name, CASE WHEN n.current_session_id = w.session_id THEN n.display_name END) AS display_name
  FROM main.session_windows AS w LEFT JOIN main.session_nodes AS n ON n.session_key = w.session_key
  UNION ALL
  SELECT n.current_session_id, n.session_key, 'conversation', coalesce(n.created_at, n.updated_at), n.updated_at,
         NULL, NULL, n.status, NULL, NULL, NULL, NULL, NULL, NULL, NULL, n.parent_session_key, n.spawned_by, n.display_name
  FROM main.session_nodes AS n
  WHERE NOT EXISTS (SELECT 1 FROM main.session_windows AS w WHERE w.session_id = n.current_session_id);
CREATE TEMP VIEW session_routes AS
  SELECT session_key, current_session_id AS session_id, updated_at FROM main.session_nodes;
CREATE TEMP VIEW session_entries AS
  SELECT current_session_id AS session_id, session_key, entry_json, updated_at FROM main.session_nodes;
CREATE TEMP VIEW transcript_events AS
  SELECT session_id, seq,
         CASE WHEN event_json IS NOT NULL THEN event_json ELSE ${DECODE_FUNCTION}(session_id, seq, event_zstd, event_utf8_bytes) END AS event_json,
         created_at
  FROM main.transcript_events;
`;

/**
 * Opens an agent DB read-only for session and transcript reads, whatever format it is in: our design-v1 as
 * it is, OpenClaw's current format through the projection; any other format is refused with what to run.
 */
export function openSessionStore(paths: StatePaths, rawAgentId: string): AgentDatabase {
  const agentId = normalizeAgentId(rawAgentId);
  const db = openDatabase<AgentDB>({ path: agentDbPath(paths, agentId), role: "agent", agentId, mode: "read", formats: "any", root: paths.stateDir });
  try {
    prepareSessionReads(db, agentId);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Makes an open read handle readable by the session readers, or throws the advice for its format. */
export function prepareSessionReads(db: AgentDatabase, agentId: string): void {
  const format = db.format;
  if (isOurFormat(format)) return;
  if (hasCurrentSessionTables(format)) {
    installCurrentFormatProjection(db);
    return;
  }
  throw sessionFormatRefusal(format, db.path, agentId);
}

/** What to run instead, per format: the error `sessions` and the runtime readers give for a store they cannot read. */
export function sessionFormatRefusal(format: DbFormat, file: string, agentId: string): Error {
  const untouched = "the file was not touched";
  switch (format.id) {
    case "openclaw-v1":
      return new SchemaFormatError(
        `Database ${file} was written by ${format.writtenBy}: that release keeps sessions and transcripts in its legacy files under agents/${agentId}/sessions/, not in the database. ` +
          `Run \`openclaw doctor --fix\` of OpenClaw ${OPENCLAW_CURRENT.release} or newer to import them into its current format, which \`openclaw-state sessions\` reads; ` +
          `openclaw-state's own \`doctor --fix\` cannot yet write into OpenClaw's format. ${untouched}.`,
        { path: file },
      );
    case "openclaw":
      return new SchemaFormatError(
        `Database ${file} was written by ${format.writtenBy}, an older OpenClaw format than the current one (agent format v${OPENCLAW_CURRENT.agent}) that openclaw-state reads sessions from. ` +
          `Run \`openclaw doctor --fix\` of OpenClaw ${OPENCLAW_CURRENT.release} to upgrade it, then re-run; ${untouched}.`,
        { path: file },
      );
    case "openclaw-newer":
      return new SchemaVersionError(
        `Database ${file} was written by ${format.writtenBy}; this openclaw-state cannot interpret its sessions: upgrade openclaw-state (\`inspect\`, \`doctor\` and \`backup\` still work on it); ${untouched}.`,
        { path: file },
      );
    case "new":
      return new DatabaseError(`Database ${file} has no openclaw schema (user_version 0); run \`openclaw-state doctor\` to see why.`, { path: file });
    default:
      return new SchemaFormatError(
        `Database ${file} was written by ${format.writtenBy}; openclaw-state cannot read sessions from it (formats it reads: its own design-document v1 and OpenClaw ${OPENCLAW_CURRENT.release}'s; ${OPENCLAW_FIRST_SQLITE_RELEASE} and later OpenClaw formats are upgraded by \`openclaw doctor --fix\`); ${untouched}.`,
        { path: file },
      );
  }
}

/**
 * The global DB for what `sessions list` takes from it (the agent registry, cron-run session ids): only in our
 * format. OpenClaw's global format keeps cron history in `task_runs` without session ids and registers agents by
 * relative path, so listing then finds agents by their folders alone (undefined, no warning).
 */
export function openGlobalForSessionReads(paths: StatePaths): GlobalDatabase | undefined {
  const db = openDatabase<GlobalDB>({ path: paths.globalDbPath, role: "global", mode: "read", formats: "any", root: paths.stateDir });
  if (isOurFormat(db.format)) return db;
  const format = db.format;
  db.close();
  if (format.id === "openclaw" || format.id === "openclaw-v1") return undefined;
  throw format.id === "openclaw-newer"
    ? new SchemaVersionError(`Database ${paths.globalDbPath} was written by ${format.writtenBy}; upgrade openclaw-state.`, { path: paths.globalDbPath })
    : new SchemaFormatError(`Database ${paths.globalDbPath} was written by ${format.writtenBy}; openclaw-state cannot interpret it.`, { path: paths.globalDbPath });
}

function installCurrentFormatProjection(db: AgentDatabase): void {
  const handle = db.handle;
  const decode = zstdDecoder();
  handle.function(DECODE_FUNCTION, { deterministic: true }, (sessionId: unknown, seq: unknown, body: unknown, utf8Bytes: unknown) => {
    const where = `Transcript event seq ${String(seq)} of session ${String(sessionId)} (${db.path})`;
    if (!decode) {
      throw new OperationError(
        "event_undecodable",
        `${where} is stored zstd-compressed by OpenClaw (event_zstd), and this Node.js ${process.version} has no zstd decoder (node:zlib zstdDecompressSync needs Node.js 22.15 or newer): run openclaw-state with Node.js >= 22.15 to read it; nothing of it was shown.`,
      );
    }
    if (!Buffer.isBuffer(body)) throw new OperationError("event_undecodable", `${where} has neither event_json nor an event_zstd body; nothing of it was shown.`);
    let text: Buffer;
    try {
      text = decode(body);
    } catch (error) {
      throw new OperationError("event_undecodable", `${where} could not be decompressed (${(error as Error).message}); nothing of it was shown.`);
    }
    if (typeof utf8Bytes === "number" && text.length !== utf8Bytes) {
      throw new OperationError("event_undecodable", `${where} decompressed to ${text.length} bytes, not the ${utf8Bytes} its row records; nothing of it was shown.`);
    }
    return text.toString("utf8");
  });
  // The projection lives in the connection's temp schema; query_only (read mode) would refuse even that.
  const queryOnly = handle.pragma("query_only", { simple: true }) as number;
  if (queryOnly) handle.pragma("query_only = OFF");
  try {
    handle.exec(CURRENT_FORMAT_PROJECTION);
  } finally {
    if (queryOnly) handle.pragma("query_only = ON");
  }
}

/**
 * Session deletes write only our own format. OpenClaw's agent DB keeps a session across `session_nodes`,
 * `session_windows` and tables kept in step by its triggers; a delete there is not verified against the real
 * runtime yet, so it is refused before any lock, backup or write (the file is opened read-only to tell).
 */
export function assertSessionsDeletable(paths: StatePaths, rawAgentId: string): void {
  const agentId = normalizeAgentId(rawAgentId);
  const file = agentDbPath(paths, agentId);
  const db = openDatabase<AgentDB>({ path: file, role: "agent", agentId, mode: "read", formats: "any", root: paths.stateDir });
  const format = db.format;
  db.close();
  if (isOurFormat(format) || format.id === "new") return;
  if (format.id === "openclaw-newer") throw sessionFormatRefusal(format, file, agentId);
  throw new SchemaFormatError(
    `Database ${file} was written by ${format.writtenBy}; openclaw-state deletes sessions only in its own format so far, so nothing was deleted and no file was touched. ` +
      `Delete it with OpenClaw itself: \`openclaw sessions delete\` (OpenClaw ${OPENCLAW_CURRENT.release} or newer, through its running gateway); see docs/sessions.md.`,
    { path: file },
  );
}
