// What a session index reaches beyond session rows: ACP metadata (the global acp_sessions) and delivery routes (conversations), read as its import reads them.
import { acpSessionRowFor } from "../../state/upgrade/upgrade-agent-acp.js";
import { streamObjectMembers, type SerializeSpec } from "../json-object-stream.js";
import type { SourceReach } from "../types.js";
import { keysOfMember, type IndexScan, type ScanOptions } from "./session-index-scan.js";
import { deliveryRouteOf, normalizeLegacyEntry, PROJECTED_FIELDS } from "./session-projection.js";

/** The plan reads an index a second time only up to this size; past it those destinations stay `(if …)`. */
export const REACH_MAX_BYTES = 64 * 1024 * 1024;

// The fields the import projects, and `acp` (the format upgrade moves it from entry_json to acp_sessions).
const SPEC: SerializeSpec = { omit: new Set(), keep: new Set<string>([...PROJECTED_FIELDS, "acp"]), tail: () => "" };

/**
 * A second streamed pass over the winning entries (as the import's writing pass): whether one has ACP metadata
 * acp_sessions can hold (the upgrade's own test), and whether one has a delivery route (a conversation and its link).
 * Keyed by staging table: `session_entries` for its `acp_sessions (if ACP metadata)`, the optional conversation tables.
 */
export function sessionIndexReach(file: string, index: IndexScan, options: Pick<ScanOptions, "agentId" | "mainKey">): SourceReach {
  if (index.sizeBytes > REACH_MAX_BYTES) return { tables: {}, unknown: `the index is over ${REACH_MAX_BYTES / 1024 / 1024} MiB, not read a second time to plan` };
  let acp = false;
  let route = false;
  const read = streamObjectMembers(
    file,
    (m) => {
      if (m.text === undefined) return;
      m.text = undefined;
      const keys = keysOfMember(index, m.index, m.key, options);
      const entry = normalizeLegacyEntry({ ...m.fields, sessionId: String(m.fields.sessionId).trim() });
      route ||= deliveryRouteOf(entry) !== null;
      acp ||= keys.some((key) => acpSessionRowFor(key, entry, 0) !== null);
    },
    {
      expected: "an object mapping session keys to entries",
      // Only the members the import writes (a winner under some key); the others are skipped unbuilt.
      serialize: (i, rawKey) => (keysOfMember(index, i, rawKey, options).length === 0 ? null : SPEC),
    },
  );
  if (read.sha256 !== index.sha256) return { tables: {}, unknown: "the file changed while it was planned" };
  return { tables: { session_entries: acp, conversations: route, session_conversations: route } };
}
