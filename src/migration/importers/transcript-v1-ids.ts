// Ids and parents for version-1 transcript entries, derived exactly as OpenClaw 2026.9.6's doctor derives them.
//
// What 2026.9.6 does (read from its dist: doctor-session-sqlite-readers-*.mjs `createTranscriptEventReader`,
// session-manager-codec-*.mjs `migrateSessionFileEntryToCurrentVersion`, transcript-payload-*.mjs
// `classifySessionFileEntry`, paths-*.mjs, doctor-session-sqlite-retirement-*.mjs; checked against the ids its
// doctor wrote into fixtures/openclaw-2026.9.6/legacy-state-migrated from /work/oc/t1/state):
//
// - Id: `<prefix>-<originalIndex in base 36>`, prefix = the first 16 hex digits of
//   sha256(<source path> NUL <session id>).
// - Source path: the transcript's absolute path under the agent's sessions dir as 9.6 resolves it: the sessions dir
//   through realpath, then the file name (the file itself is not resolved). Root `sessions/` files are first moved by
//   9.6 into `agents/<default agent>/sessions/`, so their path is that one, never `<state>/sessions/<file>`
//   (s-root-dm in the fixture hashes as `…/agents/main/sessions/s-root-dm.jsonl`).
// - Session id: the session index entry's `sessionId` for an indexed transcript; the header id (which must equal the
//   file name) for an unindexed one it recovers. Ours: the session the transcript is imported into.
// - originalIndex: the position among the file's records — non-blank lines, the header included (a header on the
//   first line is 0, so the first entry is 1; in a file without a header the first entry is 0). Blank lines do not
//   count; 9.6 stops at a malformed line, we refuse the file, so no index after one is ever needed.
// - Which entries get one: only entries 9.6 "recognizes" (`isRecognizedV1Entry` below: one of the ten session entry
//   types, and for a message a readable message of a known role). Any id or parentId such an entry carried is
//   replaced. Other records keep their index slot but are stored untouched: no id is given, and they are not in the
//   parent chain. The header is never an entry.
// - parentId: the id of the previous recognized entry; null for the first.
// - firstKeptEntryIndex (a compaction, when it is a number): names an originalIndex. It resolves to that entry's id
//   only when the entry is earlier in the file and recognized (not the header, not an unrecognized record, not a
//   later line); then `firstKeptEntryId` is set. The index field is deleted either way; one that is not a number is
//   left as it is.
// - The assigned keys are set on the entry as it is (an existing `id`/`parentId` keeps its place, a new key goes
//   last), so the stored JSON has 9.6's key order.
// - A file without a header: 9.6 reads it as version 1 too; it imports one only as an indexed session (its recovery
//   of unindexed history needs a header), so its session id is the index entry's. Ours: the file name's session id.
//
// Collisions: within one session two entries never share an id (one index each, base 36 is one-to-one, one prefix).
// A record we store untouched may still carry an id of its own that equals a derived one; the identity table then
// keeps the first and warns (transcript-rows.ts), as for any duplicate id.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

type Obj = Record<string, unknown>;

const PREFIX_HEX = 16;

/** The ten entry types 9.6's session codec knows. */
const ENTRY_TYPES = new Set(["message", "thinking_level_change", "model_change", "compaction", "reset", "branch_summary", "custom", "custom_message", "label", "session_info"]);

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string, or an array of objects each with a string `type`. */
function isReadableContent(value: unknown): boolean {
  return typeof value === "string" || (Array.isArray(value) && value.every((part) => isObj(part) && typeof part.type === "string"));
}

/**
 * 9.6 first turns a string (or a lone object) `content` of assistant and toolResult messages into an array, and gives a
 * `custom` message without `customType` the type "hook"; the checks below see the message after those steps.
 */
function isReadableMessage(message: Obj): boolean {
  switch (message.role) {
    case "user":
    case "hookMessage":
      return isReadableContent(message.content);
    case "assistant":
      return isReadableContent(typeof message.content === "string" ? [{ type: "text" }] : message.content);
    case "toolResult":
      return (
        typeof message.toolCallId === "string" &&
        typeof message.toolName === "string" &&
        typeof message.isError === "boolean" &&
        (Array.isArray(message.content) || typeof message.content === "string" || isObj(message.content))
      );
    case "custom":
      return (message.customType === undefined || typeof message.customType === "string") && isReadableContent(message.content);
    case "bashExecution":
      return typeof message.command === "string" && typeof message.output === "string";
    default:
      return false;
  }
}

/** An entry 9.6's codec migrates (gives an id and a parent); anything else it stores untouched. */
export function isRecognizedV1Entry(entry: Obj): boolean {
  if (typeof entry.type !== "string" || !ENTRY_TYPES.has(entry.type)) return false;
  return entry.type !== "message" || (isObj(entry.message) && isReadableMessage(entry.message));
}

/**
 * `file` with its directory resolved through symlinks (the deepest existing ancestor; missing parts appended as
 * they are), the file name kept: how 9.6 names a transcript under a sessions dir it resolved with realpath.
 */
export function canonicalFilePath(file: string): string {
  const resolved = path.resolve(file);
  const missing: string[] = [];
  let dir = path.dirname(resolved);
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(dir), ...missing, path.basename(resolved));
    } catch {
      const parent = path.dirname(dir);
      if (parent === dir) return resolved;
      missing.unshift(path.basename(dir));
      dir = parent;
    }
  }
}

/** Where 9.6 reads a transcript from: its agent's sessions dir (a root `sessions/` file after 9.6 moved it there). */
export function openclawTranscriptPath(source: { path: string; agentId: string | null; legacyRoot: boolean }): string {
  const name = path.basename(source.path);
  if (!source.legacyRoot || source.agentId === null) return canonicalFilePath(source.path);
  const stateDir = path.dirname(path.dirname(path.resolve(source.path)));
  return canonicalFilePath(path.join(stateDir, "agents", source.agentId, "sessions", name));
}

export function v1IdPrefix(sourcePath: string, sessionId: string): string {
  return crypto.createHash("sha256").update(sourcePath).update("\0").update(sessionId).digest("hex").slice(0, PREFIX_HEX);
}

export function v1EntryId(prefix: string, originalIndex: number): string {
  return `${prefix}-${originalIndex.toString(36)}`;
}

/** The source path and session id a version-1 transcript's ids are derived from. */
export interface V1IdScope {
  sourcePath: string;
  sessionId: string;
}

/**
 * Per file, in order: which records got ids, so `firstKeptEntryIndex` resolves as 9.6 resolves it. Holds only the
 * indexes that did not (normally none), not one id per entry.
 */
export class V1IdCodec {
  private readonly prefix: string;
  private previousId: string | null = null;
  private readonly withoutId = new Set<number>();

  constructor(scope: V1IdScope, headerIndex: number | null) {
    this.prefix = v1IdPrefix(scope.sourcePath, scope.sessionId);
    if (headerIndex !== null) this.withoutId.add(headerIndex);
  }

  /**
   * The entry as 9.6 stores it (a new object when anything changed, else `entry` itself) for record `originalIndex`,
   * and a warning when a `firstKeptEntryIndex` named no earlier entry.
   */
  assign(entry: Obj, originalIndex: number): { entry: Obj; recognized: boolean; warning: string | null } {
    if (!isRecognizedV1Entry(entry)) {
      this.withoutId.add(originalIndex);
      return { entry, recognized: false, warning: null };
    }
    const out: Obj = { ...entry };
    const id = v1EntryId(this.prefix, originalIndex);
    out.id = id;
    out.parentId = this.previousId;
    this.previousId = id;
    let warning: string | null = null;
    if (out.type === "compaction" && typeof out.firstKeptEntryIndex === "number") {
      const target = out.firstKeptEntryIndex;
      if (Number.isInteger(target) && target >= 0 && target < originalIndex && !this.withoutId.has(target)) out.firstKeptEntryId = v1EntryId(this.prefix, target);
      else warning = "firstKeptEntryIndex does not name an earlier entry; dropped (as OpenClaw 2026.9.6 drops it)";
      delete out.firstKeptEntryIndex;
    }
    return { entry: out, recognized: true, warning };
  }
}
