// Sidecar JSONL files in a sessions dir that are not transcripts: `<sessionId>.trajectory.jsonl` (run timing events:
// {type:"session.started"|"model.completed"|…, ts, runId, data}) → trajectory_runtime_events, streamed line by line;
// `*.acp-stream.jsonl` (ACP parent-stream debug logs, for which the design names no table) → reported, not imported.
// OpenClaw 2026.9.6's doctor imports no trajectory file: it archives one beside the transcript it belongs to (under
// that session's key, `agent:<id>:recovered:<sessionId>` for unregistered history) and one with no transcript as
// unreferenced history (doctor-session-sqlite: planImportedTranscriptArtifactsToArchive, archiveLegacyArtifacts).
// We keep the events, under the session upstream names, and say so in docs/migration.md.
import crypto from "node:crypto";
import path from "node:path";
import { isUtf8 } from "node:buffer";
import { OperationError } from "../../core/errors.js";
import { describeLineParseError } from "../../core/redact.js";
import type { AgentDatabase } from "../../state/state-databases.js";
import { depthMessage, findExcessDepth } from "../json-depth.js";
import { hashFile, isBlankLine, skipBom, streamLines, withOpenFile } from "../line-stream.js";
import type { AgentImportContext, AgentSourceImporter, DetectContext, DetectedSource, ImportCounts, PlannedSource, SourceInspection, SourceKind } from "../types.js";
import { parseTimestamp } from "./transcript-normalize.js";
import { isOrphanSessionKey, recoveredSessionKey } from "./session-keys.js";

export const TRAJECTORY_SUFFIX = ".trajectory.jsonl";
export const ACP_STREAM_SUFFIX = ".acp-stream.jsonl";
/** Sidecar suffixes: a `*.jsonl` ending in one of these is never a transcript. */
export const SIDECAR_SUFFIXES = [TRAJECTORY_SUFFIX, ACP_STREAM_SUFFIX] as const;

function sidecars(kind: SourceKind, suffix: string, ctx: DetectContext): DetectedSource[] {
  const found: DetectedSource[] = [];
  for (const dir of ctx.sessionsDirs) {
    for (const name of dir.files) {
      if (!name.endsWith(suffix) || name === suffix) continue;
      const rel = dir.legacyRoot ? `sessions/${name}` : `agents/${dir.agentId}/sessions/${name}`;
      found.push({ kind, agentId: dir.agentId, path: path.join(dir.dir, name), relativePath: rel, legacyRoot: dir.legacyRoot });
    }
  }
  return found;
}

function sessionIdOf(file: string): string {
  return path.basename(file).slice(0, -TRAJECTORY_SUFFIX.length);
}

function lineError(file: string, lineNo: number, what: string): OperationError {
  return new OperationError("invalid_trajectory", `${file}:${lineNo}: ${what}; the file was left in place.`, { path: file });
}

interface TrajectoryLine {
  seq: number;
  runId: string;
  json: string;
  at: number | null;
}

/** Streams the file: each non-blank line an event (seq = its position among them); a bad line fails the file. */
function readTrajectory(file: string, onLine: (line: TrajectoryLine) => void, warn: (w: string) => void): { sha256: string; sizeBytes: number; records: number; dropped: number } {
  const hash = crypto.createHash("sha256");
  let seq = 0;
  let dropped = 0;
  const read = withOpenFile(file, (fd) =>
    streamLines(
      fd,
      file,
      (buf, lineStart, end, lineNo, terminated) => {
        const start = skipBom(buf, lineStart, end, lineNo);
        if (isBlankLine(buf, start, end)) return;
        if (findExcessDepth(buf, start, end) !== 0) throw lineError(file, lineNo, depthMessage());
        let value: unknown;
        const text = isUtf8(buf.subarray(start, end)) ? buf.toString("utf8", start, end) : null;
        try {
          if (text === null) throw new Error("invalid UTF-8");
          value = JSON.parse(text);
        } catch (error) {
          if (!terminated) {
            dropped += 1;
            warn(`${file}:${lineNo}: truncated final line dropped`);
            return;
          }
          throw lineError(file, lineNo, text === null ? "invalid UTF-8" : describeLineParseError(error, text));
        }
        if (typeof value !== "object" || value === null || Array.isArray(value)) throw lineError(file, lineNo, "expected a JSON object");
        const event = value as Record<string, unknown>;
        seq += 1;
        onLine({ seq, runId: typeof event.runId === "string" ? event.runId : "", json: text!, at: parseTimestamp(event.ts) ?? parseTimestamp(event.timestamp) });
      },
      { onChunk: (chunk) => hash.update(chunk) },
    ),
  );
  return { sha256: hash.digest("hex"), sizeBytes: read.bytes, records: seq, dropped };
}

function inspectTrajectory(source: DetectedSource): SourceInspection {
  try {
    const read = readTrajectory(source.path, () => {}, () => {});
    if (read.records === 0) return { sha256: read.sha256, sizeBytes: read.sizeBytes, records: 0, notes: [], skipReason: "empty file (nothing to import; left in place)" };
    return { sha256: read.sha256, sizeBytes: read.sizeBytes, records: read.records, notes: [], sessionId: sessionIdOf(source.path) };
  } catch (error) {
    const { sha256, sizeBytes } = hashFile(source.path);
    return { sha256, sizeBytes, records: 0, notes: [`will fail: ${error instanceof Error ? error.message : String(error)}`] };
  }
}

function importTrajectory(db: AgentDatabase, source: PlannedSource, ctx: AgentImportContext): ImportCounts {
  const sessionId = sessionIdOf(source.path);
  const warnings: string[] = [];
  const notes: string[] = [];
  let orphan = false;
  const existing = db.prepare("SELECT session_key FROM sessions WHERE session_id = ?").pluck().get(sessionId) as string | undefined;
  if (existing === undefined) {
    // Run events of a session no index or transcript named: kept under the key 2026.9.6 gives unregistered history
    // (a bare sessions row, dated by the file's mtime: upstream makes no session of a trajectory alone, so no entry).
    orphan = true;
    const key = recoveredSessionKey(ctx.agentId, sessionId);
    const at = Math.max(0, Math.trunc(source.mtimeMs));
    db.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', ?, ?)").run(sessionId, key, at, at);
    // A later run that brings the session's index moves the session (events included) under the index's key.
    notes.push(`no session ${sessionId} in the index or transcripts: its run events are kept under ${key} (if its index turns up later, \`doctor --fix\` moves them to the key it names)`);
  } else if (isOrphanSessionKey(existing)) {
    // A recovered transcript's session, or the `orphan:` placeholder an earlier release wrote: the events join it.
    notes.push(`session ${sessionId} is unindexed: its run events are kept under ${existing}`);
  }
  const insert = db.prepare(
    "INSERT INTO trajectory_runtime_events (session_id, run_id, seq, event_json, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, run_id, seq) DO UPDATE SET event_json = excluded.event_json, created_at = excluded.created_at",
  );
  let last = source.mtimeMs;
  const read = readTrajectory(
    source.path,
    (line) => {
      if (line.at !== null) last = line.at;
      insert.run(sessionId, line.runId, line.seq, line.json, last);
    },
    (w) => warnings.push(w),
  );
  if (source.sha256 !== null && read.sha256 !== source.sha256) {
    throw new OperationError("source_changed", `${source.path} changed since it was planned; re-run \`doctor --fix\` to import the new content.`, { path: source.path });
  }
  return { records: read.records, rows: { trajectory_runtime_events: read.records, sessions: orphan ? 1 : 0 }, skipped: read.dropped, warnings, notes, expect: { sessionId, events: read.records } };
}

function verifyTrajectory(db: AgentDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const n = (db.prepare("SELECT count(*) AS n FROM trajectory_runtime_events WHERE session_id = ? AND seq <= ?").get(expected.expect.sessionId, expected.expect.events) as { n: number }).n;
  return n >= Number(expected.expect.events) ? null : `session ${String(expected.expect.sessionId)}: expected ${String(expected.expect.events)} run event(s), found ${n}`;
}

export const trajectoryImporter: AgentSourceImporter = {
  kind: "trajectory",
  target: "agent",
  label: { one: "legacy trajectory sidecar", many: "legacy trajectory sidecars", records: "events" },
  targetTable: "trajectory_runtime_events",
  targetTables: ["trajectory_runtime_events"],
  detect: (ctx) => sidecars("trajectory", TRAJECTORY_SUFFIX, ctx),
  inspect: inspectTrajectory,
  import: importTrajectory,
  verify: verifyTrajectory,
};

/** Reported, never imported: the design keeps ACP parent streams as rows now, but names no table for old logs. */
export const acpStreamImporter: AgentSourceImporter = {
  kind: "acp-stream",
  target: "agent",
  label: { one: "legacy ACP stream log", many: "legacy ACP stream logs", records: "lines" },
  targetTable: "(not imported)",
  targetTables: [],
  detect: (ctx) => sidecars("acp-stream", ACP_STREAM_SUFFIX, ctx),
  inspect(source) {
    const { sha256, sizeBytes } = hashFile(source.path);
    return { sha256, sizeBytes, records: 0, notes: [], skipReason: "ACP parent-stream debug log: not a transcript and not imported (the design keeps no table for old stream logs); left in place — delete it once it is no longer needed" };
  },
  import() {
    throw new Error("ACP stream logs are never imported");
  },
  verify: () => null,
};
