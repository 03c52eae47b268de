// Nesting-depth guard for legacy JSON text: deeper input fails with file:line instead of overflowing the stack later.

/**
 * Deepest nesting an imported value may have. JSON.parse itself copes with any depth, but normalizing,
 * re-serializing or redacting such a value recurses and dies with "Maximum call stack size exceeded".
 * Real legacy records nest a few dozen levels at most.
 */
export const MAX_JSON_DEPTH = 1000;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

/** Count of `byte` in `view`, stopping once it passes `limit` (native memchr steps: cheap on text-heavy lines). */
function countUpTo(view: Uint8Array, byte: number, limit: number): number {
  let n = 0;
  let pos = view.indexOf(byte);
  while (pos !== -1 && n <= limit) {
    n += 1;
    pos = view.indexOf(byte, pos + 1);
  }
  return n;
}

/**
 * The 1-based line (counted from `start`) where nesting first exceeds `limit`, or 0 when it never does.
 * Brackets inside strings do not count. Lines with few brackets are ruled out without a byte-by-byte scan.
 */
export function findExcessDepth(buf: Uint8Array, start = 0, end = buf.length, limit = MAX_JSON_DEPTH): number {
  const view = buf.subarray(start, end);
  if (view.length <= 2 * limit) return 0;
  const braces = countUpTo(view, OPEN_BRACE, limit);
  if (braces + countUpTo(view, OPEN_BRACKET, limit - braces) <= limit) return 0;
  let depth = 0;
  let line = 1;
  let inString = false;
  for (let i = 0; i < view.length; i += 1) {
    const c = view[i];
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
      else if (c === NEWLINE) line += 1;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > limit) return line;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth -= 1;
    else if (c === NEWLINE) line += 1;
  }
  return 0;
}

export function depthMessage(limit = MAX_JSON_DEPTH): string {
  return `JSON nested deeper than ${limit} levels`;
}
