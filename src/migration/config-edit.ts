// Text-preserving edits of a JSON/JSON5 config: a span parser and remove / rename / insert / wrap operations.
//
// The config is the user's file: it is never re-serialized. Each edit replaces the smallest span of text, so
// comments, key order, quoting and indentation elsewhere stay as they were; the caller re-parses the result with
// json5 after every edit and refuses it unless it is exactly the intended change. This parser only finds spans:
// values come from json5 (strings are decoded by it too), so the two cannot disagree on what a key holds.
import JSON5 from "json5";

export class ConfigEditError extends Error {}

export type SpanNode =
  | { kind: "object"; start: number; end: number; props: SpanProp[] }
  | { kind: "array"; start: number; end: number; items: SpanNode[] }
  | { kind: "scalar"; start: number; end: number };

export interface SpanProp {
  key: string;
  keyStart: number;
  keyEnd: number;
  /** `"`, `'` or "" for a bare key. */
  quote: string;
  value: SpanNode;
}

// JSON5 identifiers (ES5 IdentifierName without escapes; a key spelled with `\u` escapes is refused, not guessed).
const IDENT_START = /[\p{L}\p{Nl}$_]/u;
const IDENT_PART = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}$_\u200C\u200D]/u;
// JSON5 numbers: hex, leading or trailing dot, explicit sign, Infinity, NaN.
const NUMBER = /^[-+]?(?:0[xX][0-9a-fA-F]+|Infinity|NaN|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)/;
// JSON5 whitespace: JS's \s covers tab, VT, FF, space, NBSP, BOM, line terminators and the Zs category.
const SPACE = /\s/;

/** 1-based line and column of `offset` in `text` (errors name the position in the file as written). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let from = 0;
  for (let nl = text.indexOf("\n"); nl !== -1 && nl < offset; nl = text.indexOf("\n", nl + 1)) {
    line += 1;
    from = nl + 1;
  }
  return { line, column: offset - from + 1 };
}

/** Parses JSON5 (comments, trailing commas, 'single' strings, bare keys, JSON5 numbers) into spans. */
export function parseSpans(text: string): SpanNode {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const fail = (what: string): never => {
    const at = lineColumn(text, i);
    throw new ConfigEditError(`${what} at line ${at.line}, column ${at.column}`);
  };
  const skip = (): void => {
    for (;;) {
      const ch = text[i];
      if (ch !== undefined && SPACE.test(ch)) i += 1;
      else if (ch === "/" && text[i + 1] === "/") {
        while (i < text.length && text[i] !== "\n") i += 1;
      } else if (ch === "/" && text[i + 1] === "*") {
        const end = text.indexOf("*/", i + 2);
        if (end === -1) fail("unterminated comment");
        i = end + 2;
      } else return;
    }
  };
  const string = (): string => {
    const quote = text[i]!;
    const start = i;
    i += 1;
    while (i < text.length && text[i] !== quote) {
      // A backslash escapes the next character, a line break too (a JSON5 line continuation).
      if (text[i] === "\\") i += text[i + 1] === "\r" && text[i + 2] === "\n" ? 2 : 1;
      else if (text[i] === "\n" || text[i] === "\r") fail("line break in a string");
      i += 1;
    }
    if (i >= text.length) fail("unterminated string");
    i += 1;
    try {
      return JSON5.parse(text.slice(start, i)) as string;
    } catch {
      i = start;
      return fail("invalid string escape");
    }
  };
  const value = (): SpanNode => {
    skip();
    const start = i;
    const ch = text[i];
    if (ch === "{") {
      i += 1;
      const props: SpanProp[] = [];
      for (;;) {
        skip();
        if (text[i] === "}") break;
        const keyStart = i;
        let key: string;
        let quote = "";
        if (text[i] === '"' || text[i] === "'") {
          quote = text[i]!;
          key = string();
        } else if (IDENT_START.test(text[i] ?? "")) {
          while (IDENT_PART.test(text[i] ?? "")) i += 1;
          key = text.slice(keyStart, i);
        } else return fail("expected a key");
        const keyEnd = i;
        skip();
        if (text[i] !== ":") fail("expected ':'");
        i += 1;
        props.push({ key, keyStart, keyEnd, quote, value: value() });
        skip();
        if (text[i] === ",") {
          i += 1;
          continue;
        }
        if (text[i] !== "}") fail("expected ',' or '}'");
      }
      i += 1;
      return { kind: "object", start, end: i, props };
    }
    if (ch === "[") {
      i += 1;
      const items: SpanNode[] = [];
      for (;;) {
        skip();
        if (text[i] === "]") break;
        items.push(value());
        skip();
        if (text[i] === ",") {
          i += 1;
          continue;
        }
        if (text[i] !== "]") fail("expected ',' or ']'");
      }
      i += 1;
      return { kind: "array", start, end: i, items };
    }
    if (ch === '"' || ch === "'") {
      string();
      return { kind: "scalar", start, end: i };
    }
    for (const word of ["true", "false", "null"]) {
      if (text.startsWith(word, i) && !IDENT_PART.test(text[i + word.length] ?? "")) {
        i += word.length;
        return { kind: "scalar", start, end: i };
      }
    }
    const m = NUMBER.exec(text.slice(i, i + 64));
    if (m) {
      i += m[0].length;
      return { kind: "scalar", start, end: i };
    }
    return fail("unexpected character");
  };
  const root = value();
  skip();
  if (i < text.length) fail("text after the document");
  return root;
}

export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Applies non-overlapping edits (any order). */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start);
  let out = text;
  let limit = Infinity;
  for (const e of sorted) {
    if (e.end > limit) throw new ConfigEditError("overlapping edits");
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
    limit = e.start;
  }
  return out;
}

/** The property at a key path (objects only), or null. */
export function findProp(root: SpanNode, keys: readonly string[]): { prop: SpanProp; parent: Extract<SpanNode, { kind: "object" }> } | null {
  let node: SpanNode = root;
  let found: { prop: SpanProp; parent: Extract<SpanNode, { kind: "object" }> } | null = null;
  for (const key of keys) {
    if (node.kind !== "object") return null;
    // The last duplicate wins in JSON.parse: edit that one.
    const prop: SpanProp | undefined = [...node.props].reverse().find((p) => p.key === key);
    if (!prop) return null;
    found = { prop, parent: node };
    node = prop.value;
  }
  return found;
}

function lineStart(text: string, at: number): number {
  const nl = text.lastIndexOf("\n", at - 1);
  return nl === -1 ? 0 : nl + 1;
}

/** Removes a property with its comma; the whole line when nothing else (but a trailing comment) was on it. */
export function removeProp(text: string, parent: Extract<SpanNode, { kind: "object" }>, prop: SpanProp): Edit {
  const index = parent.props.indexOf(prop);
  let end = prop.value.end;
  let j = end;
  while (text[j] === " " || text[j] === "\t") j += 1;
  if (text[j] === ",") end = j + 1;
  let start = prop.keyStart;
  if (end === prop.value.end && index > 0) {
    // Last property without a trailing comma: take the comma after the previous property instead.
    const prevEnd = parent.props[index - 1]!.value.end;
    const between = text.slice(prevEnd, prop.keyStart);
    const comma = between.indexOf(",");
    if (comma === -1) throw new ConfigEditError("no comma before the property");
    start = prevEnd + comma;
  }
  // Whole line: from its start, through a trailing // comment, to the newline.
  const ls = lineStart(text, prop.keyStart);
  const before = text.slice(ls, prop.keyStart);
  let k = end;
  while (text[k] === " " || text[k] === "\t") k += 1;
  if (text.startsWith("//", k)) while (k < text.length && text[k] !== "\n") k += 1;
  if (/^[ \t]*$/.test(before) && (text[k] === "\n" || text[k] === "\r" || k >= text.length) && start === prop.keyStart) {
    if (text[k] === "\r") k += 1;
    if (text[k] === "\n") k += 1;
    return { start: ls, end: k, text: "" };
  }
  // Inline: `{ a: 1, b: 2 }` loses `a: 1, ` (the spaces after its comma), a lone `{ a: 1 }` becomes `{ }`.
  if (end > prop.value.end) while (text[end] === " " || text[end] === "\t") end += 1;
  else if (start === prop.keyStart) while (start > 0 && (text[start - 1] === " " || text[start - 1] === "\t")) start -= 1;
  return { start, end, text: "" };
}

/** A key written in the style of its siblings (always double-quoted in strict-JSON files). */
export function keyText(key: string, styleOf: SpanProp | undefined, strictJson: boolean): string {
  if (!strictJson && styleOf) {
    if (styleOf.quote === "" && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return key;
    if (styleOf.quote === "'") return `'${key.replace(/'/g, "\\'")}'`;
  }
  return JSON.stringify(key);
}

/** Renames a property's key in place. */
export function renameKey(prop: SpanProp, key: string, strictJson: boolean): Edit {
  return { start: prop.keyStart, end: prop.keyEnd, text: keyText(key, prop, strictJson) };
}

/** Inserts `key: valueText` as the last property of an object, indented like its siblings. */
export function insertProp(text: string, object: Extract<SpanNode, { kind: "object" }>, key: string, valueText: string, strictJson: boolean): Edit {
  const last = object.props[object.props.length - 1];
  if (!last) return { start: object.start, end: object.end, text: `{ ${keyText(key, undefined, strictJson)}: ${valueText} }` };
  const ls = lineStart(text, last.keyStart);
  const indent = /^[ \t]*/.exec(text.slice(ls, last.keyStart))![0];
  const sameLine = !/\n/.test(text.slice(object.start, last.keyStart));
  const sep = sameLine ? " " : `\n${indent}`;
  let at = last.value.end;
  let j = at;
  while (text[j] === " " || text[j] === "\t") j += 1;
  const entry = `${keyText(key, last, strictJson)}: ${valueText}`;
  if (text[j] === ",") return { start: j + 1, end: j + 1, text: `${sep}${entry},` };
  return { start: at, end: at, text: `,${sep}${entry}` };
}
