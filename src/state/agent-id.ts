// Agent id normalization: ids become path segments, so anything not provably safe is rejected.
import { UsageError } from "../core/errors.js";

const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
const MAX_AGENT_ID_LENGTH = 64;

/** Trimmed, lower-cased id, or null when it is not a safe `[a-z0-9][a-z0-9_-]*` token. */
export function tryNormalizeAgentId(raw: string): string | null {
  const id = raw.trim().toLowerCase();
  if (id.length === 0 || id.length > MAX_AGENT_ID_LENGTH) return null;
  return AGENT_ID_PATTERN.test(id) ? id : null;
}

export function normalizeAgentId(raw: string): string {
  const id = tryNormalizeAgentId(raw);
  if (id === null) {
    throw new UsageError(
      `Invalid agent id ${JSON.stringify(raw)}: use lower-case letters, digits, '-' and '_' (for example "main").`,
      "invalid_agent_id",
    );
  }
  return id;
}
