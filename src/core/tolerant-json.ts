// A small JSON5-ish reader for hand-edited config files: comments, trailing commas, single quotes, bare keys.
//
// Rewrites the text into strict JSON in one pass and hands it to JSON.parse, so numbers, escapes
// and error positions stay JSON's. Chosen over the `json5` package because the config only needs
// these four relaxations and the tool avoids a dependency for them.

export class TolerantJsonError extends SyntaxError {}

const IDENT_START = /[A-Za-z_$]/;
const IDENT_PART = /[A-Za-z0-9_$]/;

/** Parses JSON that may contain `//` and `/* *\/` comments, trailing commas, 'single' strings and bare keys. */
export function parseTolerantJson(text: string): unknown {
  const json = toStrictJson(text.replace(/^\uFEFF/, ""));
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new TolerantJsonError((error as Error).message);
  }
}

/** The same text as strict JSON (comments dropped, trailing commas removed, keys and strings double-quoted). */
export function toStrictJson(src: string): string {
  let out = "";
  let i = 0;
  // Index in `out` of a comma that may turn out to be trailing (only whitespace/comments after it so far).
  let pendingComma = -1;
  while (i < src.length) {
    const ch = src[i]!;
    const next = src[i + 1];
    if (ch === "/" && next === "/") {
      while (i < src.length && src[i] !== "\n") i += 1;
      continue;
    }
    if (ch === "/" && next === "*") {
      const end = src.indexOf("*/", i + 2);
      if (end === -1) throw new TolerantJsonError("Unterminated /* comment");
      i = end + 2;
      continue;
    }
    if (ch === ",") {
      pendingComma = out.length;
      out += ch;
      i += 1;
      continue;
    }
    if (/\s/.test(ch)) {
      out += ch;
      i += 1;
      continue;
    }
    if ((ch === "}" || ch === "]") && pendingComma !== -1) {
      out = out.slice(0, pendingComma) + out.slice(pendingComma + 1);
    }
    pendingComma = -1;
    if (ch === '"' || ch === "'") {
      const [literal, end] = readString(src, i, ch);
      out += literal;
      i = end;
      continue;
    }
    if (IDENT_START.test(ch)) {
      let end = i + 1;
      while (end < src.length && IDENT_PART.test(src[end]!)) end += 1;
      const word = src.slice(i, end);
      let look = end;
      while (look < src.length && /\s/.test(src[look]!)) look += 1;
      // A bare word followed by ':' is a key; true/false/null (and anything else) pass through to JSON.parse.
      out += src[look] === ":" ? JSON.stringify(word) : word;
      i = end;
      continue;
    }
    out += ch;
    i += 1;
  }
  return out;
}

/** Reads a quoted string starting at `start`; returns it as a JSON double-quoted literal and the index after it. */
function readString(src: string, start: number, quote: string): [string, number] {
  let value = "";
  let i = start + 1;
  while (i < src.length) {
    const ch = src[i]!;
    if (ch === quote) return [`"${value}"`, i + 1];
    if (ch === "\\") {
      const esc = src[i + 1];
      if (esc === undefined) break;
      // \' is legal JSON5 but not JSON; every other escape is kept for JSON.parse to judge.
      value += esc === "'" ? "'" : `\\${esc}`;
      i += 2;
      continue;
    }
    if (ch === '"') value += '\\"';
    else if (ch === "\n") throw new TolerantJsonError("Unterminated string literal");
    else value += ch;
    i += 1;
  }
  throw new TolerantJsonError("Unterminated string literal");
}
