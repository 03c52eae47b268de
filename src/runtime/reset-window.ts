// Reset rows and the preserve-tail a reset-window drain returns first (retained user/assistant messages + paired tool results).
import type { TranscriptTree } from "./transcript-tree.js";
import { MESSAGE_TYPE } from "./transcript-tree.js";

export interface TailItem {
  seq: number;
  /** The message's original active-path ordinal (ordinals skip the excluded pre-reset messages). */
  ordinal: number;
}

interface ResetRow {
  mode: unknown;
  firstKept: unknown;
}

interface TailFacts {
  role: unknown;
  toolCallId: unknown;
  callIds: string | null;
}

/**
 * The retained tail of the reset row at `resetSeq` (`wo` = path messages before it). A reset row is
 * `{"type":"session_reset","mode":"clear"|"preserve-tail","firstKeptEntryId":…}`: a preserve-tail reset keeps
 * the active-path entries from firstKeptEntryId up to the reset, of which the tail returns the user and
 * assistant messages plus the tool results whose call a retained assistant message made. A clear reset, a
 * missing or off-path firstKeptEntryId, keeps nothing. Cost ∝ the tail; bodies are inspected inside SQLite.
 */
export function retainedTail(tree: TranscriptTree, resetSeq: number, wo: number): TailItem[] {
  const { db, sessionId } = tree;
  const reset = tree.at(resetSeq);
  if (!reset) return [];
  const facts = db.handle
    .prepare("SELECT json_extract(event_json, '$.mode') AS mode, json_extract(event_json, '$.firstKeptEntryId') AS firstKept FROM transcript_events WHERE session_id = ? AND seq = ?")
    .get(sessionId, resetSeq) as ResetRow | undefined;
  if (!facts || facts.mode !== "preserve-tail" || typeof facts.firstKept !== "string") return [];
  const first = tree.byId(facts.firstKept);
  if (!first || first.seq >= resetSeq || reset.parent === null) return [];
  const parent = tree.byId(reset.parent);
  if (!parent || parent.seq >= resetSeq) return [];
  const region = [...tree.ancestors(parent, first.seq)];
  if (region.length === 0 || region[region.length - 1]!.seq !== first.seq) return []; // not an ancestor: nothing kept
  region.reverse();
  const messages = region.filter((r) => r.type === MESSAGE_TYPE);
  const base = wo - messages.length;
  const read = db.handle.prepare(
    `SELECT json_extract(event_json, '$.message.role') AS role,
       coalesce(json_extract(event_json, '$.message.toolCallId'), json_extract(event_json, '$.message.toolUseId'), json_extract(event_json, '$.message.tool_call_id')) AS toolCallId,
       CASE WHEN json_type(event_json, '$.message.content') = 'array' THEN
         (SELECT json_group_array(CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.id') END) FROM json_each(event_json, '$.message.content') AS b
            WHERE b.type = 'object' AND CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END IN ('toolCall', 'tool_use', 'toolUse', 'function_call')
              AND CASE WHEN b.type = 'object' THEN json_type(b.value, '$.id') END = 'text')
       END AS callIds
     FROM transcript_events WHERE session_id = ? AND seq = ?`,
  );
  const calls = new Set<string>();
  const kept: TailItem[] = [];
  messages.forEach((m, i) => {
    const f = read.get(sessionId, m.seq) as TailFacts | undefined;
    if (!f) return;
    const ordinal = base + i + 1;
    if (f.role === "user" || f.role === "assistant") {
      kept.push({ seq: m.seq, ordinal });
      if (f.role === "assistant" && f.callIds) for (const id of JSON.parse(f.callIds) as string[]) calls.add(id);
    } else if (f.role === "toolResult" && typeof f.toolCallId === "string" && calls.has(f.toolCallId)) {
      kept.push({ seq: m.seq, ordinal });
    }
  });
  return kept;
}
