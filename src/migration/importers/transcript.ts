// Importer for legacy JSONL transcripts (SPEC §4.2): streamed line by line into transcript_events and identities.
import crypto from "node:crypto";
import path from "node:path";
import { OperationError } from "../../core/errors.js";
import type { AgentDatabase } from "../../state/state-databases.js";
import { isBlankLine, skipBom, streamLines, withOpenFile } from "../line-stream.js";
import { compareText } from "../inventory.js";
import type { AgentImportContext, AgentSourceImporter, DetectContext, DetectedSource, ImportCounts, PlanFacts, PlannedSource, SourceInspection } from "../types.js";
import { isOrphanSessionKey, recoveredSessionKey } from "./session-keys.js";
import { headerVersion, isSessionHeader, normalizeHeader } from "./transcript-normalize.js";
import { missingHeaderError, preparedEvent, TranscriptLineParser, unsupportedVersion, type TranscriptLineSink } from "./transcript-parse.js";
import { duplicateIdWarning, EVENT_ROW, NewSessionRows, reusedKeyWarning } from "./transcript-rows.js";
import { openclawTranscriptPath } from "./transcript-v1-ids.js";
import { SIDECAR_SUFFIXES } from "./trajectory.js";

export const TRANSCRIPT_SUFFIX = ".jsonl";
/** The planner keeps at most this much of the first line to read the header. */
const HEADER_PEEK_BYTES = 1024 * 1024;
const MAX_LISTED_WARNINGS = 20;

type Obj = Record<string, unknown>;

function fileStem(file: string): string {
  return path.basename(file, TRANSCRIPT_SUFFIX);
}

function detect(ctx: DetectContext): DetectedSource[] {
  const found: DetectedSource[] = [];
  for (const dir of ctx.sessionsDirs) {
    for (const name of dir.files) {
      // Trajectory and ACP-stream sidecars end in .jsonl too: they are not transcripts (importers/trajectory.ts).
      if (!name.endsWith(TRANSCRIPT_SUFFIX) || name === TRANSCRIPT_SUFFIX || SIDECAR_SUFFIXES.some((suffix) => name.endsWith(suffix))) continue;
      const rel = dir.legacyRoot ? `sessions/${name}` : `agents/${dir.agentId}/sessions/${name}`;
      found.push({ kind: "transcript", agentId: dir.agentId, path: `${dir.dir}/${name}`, relativePath: rel, legacyRoot: dir.legacyRoot });
    }
  }
  return found;
}

/** First and last non-blank bytes are `{` and `}` (a BOM before the first is allowed). */
function framedAsObject(buf: Buffer, start: number, end: number): boolean {
  let a = start;
  let b = end - 1;
  if (buf[a] === 0xef && buf[a + 1] === 0xbb && buf[a + 2] === 0xbf) a += 3;
  while (a <= b && (buf[a] === 0x20 || buf[a] === 0x09)) a += 1;
  while (b >= a && (buf[b] === 0x20 || buf[b] === 0x09)) b -= 1;
  return buf[a] === 0x7b && buf[b] === 0x7d;
}

/** One streamed pass: sha256, non-blank line count and the header. */
function inspect(source: DetectedSource): SourceInspection {
  const hash = crypto.createHash("sha256");
  let records = 0;
  let first: string | null = null;
  let firstLine = 0;
  // Cheap shape check (no JSON.parse): a line not framed by { } fails the import unless it is the last one.
  let badLine = 0;
  let lastLine = 0;
  const result = withOpenFile(source.path, (fd) =>
    streamLines(
      fd,
      source.path,
      (buf, lineStart, end, lineNo) => {
        const start = skipBom(buf, lineStart, end, lineNo);
        if (isBlankLine(buf, start, end)) return;
        records += 1;
        lastLine = lineNo;
        if (badLine === 0 && !framedAsObject(buf, start, end)) badLine = lineNo;
        if (first === null) {
          first = buf.toString("utf8", start, Math.min(end, start + HEADER_PEEK_BYTES));
          firstLine = lineNo;
        }
      },
      { onChunk: (chunk) => hash.update(chunk) },
    ),
  );
  const sha256 = hash.digest("hex");
  const stem = fileStem(source.path);
  if (records === 0) return { sha256, sizeBytes: result.bytes, records: 0, notes: [], sessionId: stem, skipReason: "empty file (nothing to import; left in place)" };
  const notes: string[] = [];
  let sessionId = stem;
  let header: Obj | null = null;
  let firstIsObject = false;
  try {
    const parsed = JSON.parse(first!) as unknown;
    firstIsObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
    if (firstIsObject && isSessionHeader(parsed as Obj)) header = parsed as Obj;
  } catch {
    // Reported below.
  }
  if (!header && looksLikeRunEvent(first!)) {
    // Classified by shape: a trajectory sidecar under a transcript's name is not a transcript that failed.
    return { sha256, sizeBytes: result.bytes, records, notes: [], sessionId: stem, skipReason: "not a transcript: its first line is a run event (trajectory data, no session header); left in place — rename it to <sessionId>.trajectory.jsonl to import it as run events" };
  }
  if (badLine !== 0 && badLine !== lastLine && badLine !== firstLine) notes.push(`will fail: ${source.path}:${badLine}: not a JSON object line`);
  if (!header && !firstIsObject) {
    notes.push(`will fail: ${source.path}:${firstLine}: ${firstLine === lastLine ? "missing session header" : "not a JSON object line"}`);
  } else if (!header) {
    notes.push(`no session header: read as version 1 under the file name's session id ${stem}, with a version 3 header added (as OpenClaw 2026.9.6's doctor imports it)`);
  } else {
    const version = headerVersion(header);
    const normalized = normalizeHeader(header, version ?? 0);
    if (normalized.sessionId) sessionId = normalized.sessionId;
    if (version === null) notes.push(`will fail: ${unsupportedVersion(header.version)}`);
    else if (version < 3) notes.push(`version ${version}: normalized to 3 on import`);
  }
  return { sha256, sizeBytes: result.bytes, records, notes, sessionId };
}

/** A trajectory event line: `{"type":"session.started", "ts":…, "runId":…}` (dotted event types, never "session"). */
function looksLikeRunEvent(line: string): boolean {
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as Obj).type === "string" && /^[a-z]+(\.[a-z_]+)+$/.test((v as Obj).type as string) && ("ts" in (v as Obj) || "runId" in (v as Obj));
  } catch {
    return false;
  }
}

/**
 * The session a transcript belongs to, from what the plan's indexes reference: its header id; else its file name,
 * when an index entry names the file's session and the header says otherwise (OpenClaw resolves an entry's
 * transcript by file name and imports it under the entry's session id); else nothing (an orphan).
 */
function linkedSessionId(s: PlannedSource, referenced: Set<string> | undefined): { sessionId: string; linkedFrom?: string } | null {
  const headerId = s.sessionId!;
  if (referenced?.has(headerId)) return { sessionId: headerId };
  const stem = fileStem(s.path);
  if (stem !== headerId && referenced?.has(stem)) return { sessionId: stem, linkedFrom: headerId };
  return null;
}

/**
 * A transcript whose session the store's keys file under another agent (`agent:<other>:…`) goes to that agent's
 * database with it, as OpenClaw 2026.9.6's doctor moves both; the file itself stays where it is until retired.
 */
function routeToKeyAgent(s: PlannedSource, routed: Map<string, string> | undefined): void {
  if (routed === undefined) return;
  const target = routed.get(s.sessionId!) ?? routed.get(fileStem(s.path));
  if (target === undefined || target === s.agentId) return;
  s.notes.push(`filed under agent "${target}": the session index of agent "${s.agentId}" names its session with a key of that agent`);
  s.agentId = target;
}

/** Index links, duplicate session ids within an agent, and transcripts nothing in this plan references. */
function finalize(own: PlannedSource[], facts: PlanFacts): void {
  const orphans = new Set<PlannedSource>();
  for (const s of own) {
    if (s.action === "skip" || !s.sessionId) continue;
    // Detected from an agent's sessions dir: always has an agent.
    routeToKeyAgent(s, facts.routedSessions.get(s.agentId!));
    const link = linkedSessionId(s, facts.referencedSessionIds.get(s.agentId!));
    if (link === null) orphans.add(s);
    else if (link.linkedFrom !== undefined) {
      s.notes.push(`linked by file name: an index references session ${link.sessionId} (this file's name) while the header id is ${link.linkedFrom}; imported into session ${link.sessionId}, the stored header's id rewritten to it`);
      s.sessionId = link.sessionId;
    }
  }
  const groups = new Map<string, PlannedSource[]>();
  for (const s of own) {
    if (s.action === "skip" || !s.sessionId) continue;
    const k = `${s.agentId}\u0000${s.sessionId}`;
    const list = groups.get(k);
    if (list) list.push(s);
    else groups.set(k, [s]);
  }
  for (const list of groups.values()) {
    if (list.length < 2) continue;
    // The agent's own store beats the old root store; a file named after its session beats one that is not.
    const sorted = [...list].sort(
      (a, b) =>
        Number(a.legacyRoot) - Number(b.legacyRoot) ||
        Number(fileStem(b.path) === b.sessionId) - Number(fileStem(a.path) === a.sessionId) ||
        compareText(a.relativePath, b.relativePath),
    );
    const keeper = sorted[0]!;
    for (const other of sorted.slice(1)) {
      if (other.sha256 !== null && other.sha256 === keeper.sha256) {
        other.notes.push(`same content as ${keeper.relativePath} (session ${keeper.sessionId}); importing it again changes nothing`);
      } else {
        other.action = "skip";
        other.attention = true;
        other.reason = `session ${other.sessionId} is already imported from ${keeper.relativePath} with different content; left in place for manual review`;
      }
    }
  }
  for (const s of orphans) {
    if (s.action === "skip") continue;
    const stem = fileStem(s.path);
    s.notes.push(`orphan: no session index in this plan references session ${s.sessionId}${stem !== s.sessionId ? ` or the file name ${stem}` : ""}; it gets the session ${recoveredSessionKey(s.agentId!, s.sessionId!)} (a warning) unless the database already has the session`);
  }
}

/** The header line as stored under another session id: its `id` becomes that id (what OpenClaw 2026.9.6 stores). */
function headerUnder(json: string, sessionId: string): string {
  return JSON.stringify({ ...(JSON.parse(json) as Obj), id: sessionId });
}

function importTranscript(db: AgentDatabase, source: PlannedSource, ctx: AgentImportContext): ImportCounts {
  // Raw prepared statements (cached per connection): this is the hot path, measured by bench/migrate.mjs.
  const insertEvent = db.prepare(
    `INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ${EVENT_ROW} ON CONFLICT (session_id, seq) DO UPDATE SET event_json = excluded.event_json, created_at = excluded.created_at`,
  );
  const insertIdentity = db.prepare(
    "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, has_parent, parent_id, message_idempotency_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, event_id) DO NOTHING",
  );
  const clearIdentityAt = db.prepare("DELETE FROM transcript_event_identities WHERE session_id = ? AND seq = ?");
  // A re-import of the same content (a run killed after the agent database committed but before the ledger
  // did) keeps identical identity rows: deleting and re-inserting them would count as a rewrite and bump the
  // transcript generation, resetting every runtime cursor on that session.
  const sameIdentityAt = db
    .prepare(
      "SELECT 1 FROM transcript_event_identities WHERE session_id = ? AND event_id = ? AND seq = ? AND event_type IS ? AND has_parent = ? AND parent_id IS ? AND message_idempotency_key IS ? AND created_at IS ?",
    )
    .pluck();
  const sessionKeyOf = db.prepare("SELECT session_key FROM sessions WHERE session_id = ?").pluck();
  const hasEvents = db.prepare("SELECT 1 FROM transcript_events WHERE session_id = ? LIMIT 1").pluck();
  const insertOrphan = db.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', ?, ?)");
  const upsertRecoveredEntry = db.prepare(
    "INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, entry_json = excluded.entry_json, updated_at = excluded.updated_at",
  );
  const upsertRecoveredRoute = db.prepare(
    "INSERT INTO session_routes (session_key, session_id, updated_at) VALUES (?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at",
  );

  const file = source.path;
  // The planned mtime: the content is checked against the planned sha256 below anyway.
  const mtime = source.mtimeMs;
  const warnings: string[] = [];
  const notes: string[] = [];
  let extraWarnings = 0;
  const warn = (text: string): void => {
    if (warnings.length < MAX_LISTED_WARNINGS) warnings.push(text);
    else extraWarnings += 1;
  };

  let sessionId = "";
  let headerId = "";
  /** Set when the transcript is attached by its file name to an indexed session whose id its header does not carry. */
  let linkedKey: string | null = null;
  let reimport = false;
  let orphan = false;
  /** Set when this import wrote the recovered session (its row, entry and route). */
  let recovered: string | null = null;
  let seq = 0;
  let identities = 0;
  let skipped = 0;
  let lastTs = mtime;
  let newRows: NewSessionRows | null = null;

  const sink: TranscriptLineSink = {
    header(line) {
      const stem = fileStem(file);
      headerId = line.sessionId ?? stem;
      // The plan named the header id, or the file name when an index links the file by its name.
      if (source.sessionId && source.sessionId !== headerId && source.sessionId !== stem) throw changedError(source);
      sessionId = headerId;
      if (line.timestamp !== null) lastTs = line.timestamp;
      let key = sessionKeyOf.get(sessionId) as string | undefined;
      if (key === undefined && stem !== headerId) {
        // Nothing knows the header id, but an indexed session is named like the file: the history is that session's.
        const byName = sessionKeyOf.get(stem) as string | undefined;
        if (byName !== undefined && !isOrphanSessionKey(byName)) {
          sessionId = stem;
          key = byName;
          linkedKey = byName;
        }
      }
      if (key === undefined) {
        // An unreferenced transcript is data, never garbage: it gets a session of its own, keyed and dated as
        // OpenClaw 2026.9.6's doctor recovers unregistered history (by the file's mtime), with an index row.
        orphan = true;
        recovered = recoveredSessionKey(ctx.agentId, sessionId);
        const at = Math.max(0, Math.trunc(mtime));
        insertOrphan.run(sessionId, recovered, at, at);
        upsertRecoveredEntry.run(recovered, sessionId, JSON.stringify({ sessionId, updatedAt: at, archivedAt: at || 1 }), at);
        upsertRecoveredRoute.run(recovered, sessionId, at);
      } else {
        orphan = isOrphanSessionKey(key);
      }
      reimport = hasEvents.get(sessionId) !== undefined;
      insertEvent.run(sessionId, 0, linkedKey === null ? line.json : headerUnder(line.json, sessionId), lastTs);
      if (reimport) clearIdentityAt.run(sessionId, 0);
      else newRows = new NewSessionRows(db, sessionId, file, warn);
      seq = 1;
      // Version-1 ids derive from the session the file goes into (transcript-v1-ids.ts).
      return sessionId;
    },
    event(event) {
      if (event.timestamp !== null) lastTs = event.timestamp;
      if (newRows) {
        newRows.add(seq, event.json, lastTs, event);
        seq += 1;
        return;
      }
      // A re-import overwrites rows one at a time: earlier identities may hold these ids and keys.
      insertEvent.run(sessionId, seq, event.json, lastTs);
      const identity: IdentityParams | null = event.id === null ? null : [sessionId, event.id, seq, event.type, event.parentId === null ? 0 : 1, event.parentId, event.idempotencyKey, lastTs];
      if (reimport && identity !== null && sameIdentityAt.get(...identity) !== undefined) {
        identities += 1;
      } else {
        if (reimport) clearIdentityAt.run(sessionId, seq);
        if (identity !== null) identities += insertIdentityRow(insertIdentity, identity, file, event.lineNo, warn);
      }
      seq += 1;
    },
    dropped(lineNo) {
      skipped += 1;
      warn(`${file}:${lineNo}: truncated final line dropped`);
    },
  };

  // A transcript parsed ahead on the worker (small files) is written from memory; others stream from disk.
  // Both run the same parser and report the same errors in the same order (header first, then the bad line).
  const prepared = ctx.prepared?.file === file && ctx.prepared.error?.code !== "read_failed" ? ctx.prepared : null;
  let records = 0;
  let normalizerWarnings: readonly string[] = [];
  let headerDone = false;
  let streamed = prepared === null;
  if (prepared) {
    if (prepared.header) {
      sink.header(prepared.header);
      headerDone = true;
    }
    if (prepared.error) throw new OperationError(prepared.error.code, prepared.error.message, { path: file });
    if (source.sha256 !== null && prepared.sha256 !== source.sha256) throw changedError(source);
    // v1 ids parsed ahead under the planned session: another session here (linked by file name) means other ids.
    if (prepared.idSessionId !== null && (prepared.idSessionId !== sessionId || prepared.idSourcePath !== openclawTranscriptPath(source))) streamed = true;
    else {
      const bytes = prepared.bytes ? Buffer.from(prepared.bytes) : Buffer.alloc(0);
      for (let i = 0; i < prepared.events.lineNo.length; i += 1) sink.event(preparedEvent(prepared.events, bytes, i), null);
      for (const lineNo of prepared.dropped) sink.dropped(lineNo);
      if (!prepared.header) throw missingHeaderError(file);
      records = prepared.records;
      normalizerWarnings = prepared.normalizerWarnings;
    }
  }
  if (streamed) {
    const hash = crypto.createHash("sha256");
    // When the prepared header was already written, the re-read only needs the session it named.
    const lines: TranscriptLineSink = headerDone ? { ...sink, header: () => sessionId } : sink;
    const parser = new TranscriptLineParser(file, lines, { sourcePath: openclawTranscriptPath(source) });
    withOpenFile(file, (fd) => streamLines(fd, file, (buf, start, end, lineNo, terminated) => parser.line(buf, start, end, lineNo, terminated), { onChunk: (chunk) => hash.update(chunk) }));
    if (source.sha256 !== null && hash.digest("hex") !== source.sha256) throw changedError(source);
    normalizerWarnings = parser.finish();
    records = parser.records;
  }
  // Assigned in the header callback, which TypeScript cannot see from here.
  const batched = newRows as NewSessionRows | null;
  if (batched) {
    batched.flush();
    identities += batched.identities;
  }
  for (const w of normalizerWarnings) warn(w);
  if (orphan) {
    // A placeholder an earlier release wrote (`orphan:`, no index row) is dated by its events, as it was then.
    const placeholder = sessionKeyOf.get(sessionId) as string;
    if (recovered === null && !placeholder.includes(":recovered:")) db.prepare("UPDATE sessions SET updated_at = max(updated_at, ?) WHERE session_id = ?").run(lastTs, sessionId);
    // Always a warning: a history nothing points at is one the operator may be looking for under another key.
    // The "orphan transcript:" prefix is what merge-legacy.ts's amendAdopted recognizes.
    const stem = fileStem(file);
    warnings.push(
      `orphan transcript: no session index references session ${sessionId}${stem !== sessionId ? ` or the file name ${stem}` : ""}; stored under ${placeholder}, as OpenClaw 2026.9.6 recovers unregistered history (an index imported later takes it over)`,
    );
  }
  if (linkedKey !== null) {
    notes.push(`${file}: header id ${headerId} differs from the file name; attached to the indexed session ${sessionId} (${linkedKey}), as OpenClaw 2026.9.6 does, and the stored header's id is ${sessionId}`);
  }
  if (extraWarnings > 0) warnings.push(`… and ${extraWarnings} more warning(s)`);
  return {
    records,
    rows: { transcript_events: seq, transcript_event_identities: identities, sessions: orphan ? 1 : 0, ...(recovered !== null ? { session_entries: 1, session_routes: 1 } : {}) },
    skipped,
    warnings,
    notes,
    expect: { sessionId, events: seq, identities },
  };
}

type IdentityParams = [string, string, number, string | null, number, string | null, string | null, number];

/** 1 when written; a duplicate id keeps the first; a re-used idempotency key is kept on the first message only. */
function insertIdentityRow(stmt: ReturnType<AgentDatabase["prepare"]>, params: IdentityParams, file: string, lineNo: number, warn: (t: string) => void): number {
  try {
    const changes = stmt.run(...params).changes;
    if (changes === 0) warn(duplicateIdWarning(file, lineNo));
    return changes;
  } catch (error) {
    if ((error as { code?: string }).code !== "SQLITE_CONSTRAINT_UNIQUE" || params[6] === null) throw error;
    warn(reusedKeyWarning(file, lineNo));
    const retry: IdentityParams = [...params];
    retry[6] = null;
    return stmt.run(...retry).changes;
  }
}

function changedError(source: PlannedSource): OperationError {
  return new OperationError("source_changed", `${source.path} changed since it was planned; re-run \`doctor --fix\` to import the new content.`, { path: source.path });
}

/** Committed counts for the rows this file wrote (seq below its line count), compared with what was parsed. */
function verify(db: AgentDatabase, source: PlannedSource, expected: ImportCounts): string | null {
  const sessionId = String(expected.expect.sessionId ?? source.sessionId ?? "");
  const events = Number(expected.expect.events ?? 0);
  const identities = Number(expected.expect.identities ?? 0);
  const gotEvents = (db.prepare("SELECT count(*) AS n FROM transcript_events WHERE session_id = ? AND seq < ?").get(sessionId, events) as { n: number }).n;
  const gotIdentities = (db.prepare("SELECT count(*) AS n FROM transcript_event_identities WHERE session_id = ? AND seq < ?").get(sessionId, events) as { n: number }).n;
  if (gotEvents === events && gotIdentities === identities) return null;
  return `session ${sessionId}: expected ${events} event(s) and ${identities} identit(ies), found ${gotEvents} and ${gotIdentities}`;
}

export const transcriptImporter: AgentSourceImporter = {
  kind: "transcript",
  target: "agent",
  label: { one: "legacy transcript", many: "legacy transcripts", records: "lines" },
  targetTable: "transcript_events",
  targetTables: ["transcript_events", "transcript_event_identities"],
  detect,
  inspect,
  finalize,
  import: importTranscript,
  verify,
};
