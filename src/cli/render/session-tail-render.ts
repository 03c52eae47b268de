// Renders `sessions tail`: one fitted line per message (or whole text with --full), or one JSON line per event with --json.
import type { SessionTranscriptMessageEntry } from "../../runtime/message-rows.js";
import type { TailEvent } from "../../sessions/tail-session.js";
import type { Output } from "../output.js";
import { formatBytes } from "./format.js";
import { isoTime } from "./json-time.js";
import { contentText, fitText, type TextLayout } from "./sessions-render.js";

/** `--json` is the one NDJSON stream of the CLI: each event is a compact line, written as it happens. */
export function renderTailEvent(output: Output, event: TailEvent, layout: TextLayout, follow: boolean): void {
  if (output.json) {
    output.writeJsonLine(jsonLine(event));
    return;
  }
  const s = output.style;
  switch (event.kind) {
    case "session":
      output.log(
        s.dim(
          event.reason === "start"
            ? `Session ${event.sessionKey} (${event.sessionId}), agent ${event.agentId}${follow ? " — following, Ctrl-C to stop" : ""}`
            : `The key ${event.sessionKey} now names session ${event.sessionId} (a reset): following it from its start`,
        ),
      );
      return;
    case "message":
      for (const l of messageLines(event.entry, layout)) output.log(l);
      return;
    case "skipped":
      output.warn(`(a message of ${formatBytes(event.bytes)} is above the 1 MB display budget and was left out; \`sessions show --export\` writes it)`);
      return;
    case "reset":
      output.log(s.yellow(`— the transcript was rewritten (${event.reason}); continuing from its end —`));
      return;
    case "gone":
      output.warn(`Session ${event.sessionId} no longer exists; stopped following.`);
  }
}

function jsonLine(event: TailEvent): Record<string, unknown> {
  if (event.kind === "message") {
    const { entry } = event;
    // An entry's `timestamp` is stored as written (ISO text or epoch ms): the line carries ISO either way; `message` stays as stored.
    const createdAt = typeof entry.createdAt === "number" ? isoTime(entry.createdAt) : entry.createdAt;
    return { version: 1, kind: "message", sessionId: event.sessionId, ...entry, ...(entry.createdAt !== undefined ? { createdAt } : {}) };
  }
  return { version: 1, ...event };
}

function messageLines(entry: SessionTranscriptMessageEntry, layout: TextLayout): string[] {
  const time = typeof entry.createdAt === "string" ? (/T(\d\d:\d\d:\d\d)/.exec(entry.createdAt)?.[1] ?? entry.createdAt) : typeof entry.createdAt === "number" ? new Date(entry.createdAt).toISOString().slice(11, 19) : "--:--:--";
  const message = entry.message as { content?: unknown } | null;
  return fitText(`#${String(entry.seq).padEnd(5)} ${time}  ${entry.role.padEnd(10)} `, contentText(message?.content), layout);
}
