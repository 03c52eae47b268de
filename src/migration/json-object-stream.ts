// Streams the members of a top-level JSON object with bounded memory: stream-json's tokenizer, fed line by line.
//
// Syntax: JSON with comments and trailing commas (stream-json's JSONC tokenizer) for any size. Files that the
// tokenizer rejects and that are at most JSON5_MAX_BYTES are parsed whole once more with the `json5` package
// (single quotes, unquoted keys, hex, …), re-serialized as JSON and tokenized again; bigger files must be JSON
// or JSONC. Errors name the file, the line and the tokenizer's reason, never the text.
import crypto from "node:crypto";
import fs from "node:fs";
import { TextDecoder } from "node:util";
import { none, type Many } from "stream-chain/defs.js";
import { jsoncParser } from "stream-json/core/jsonc/parser.js";
import { jsonParser, type Token } from "stream-json/core/parser.js";
import { ByteSink } from "../core/byte-sink.js";
import { OperationError } from "../core/errors.js";
import { collectGarbage, releaseMemory } from "../core/heap.js";
import { parseJson5 } from "../core/json5-text.js";
import { depthMessage, MAX_JSON_DEPTH } from "./json-depth.js";
import { CHUNK_BYTES, withOpenFile } from "./line-stream.js";

/** Files up to this size may use JSON5 syntax the JSONC tokenizer does not know (read whole for that). */
export const JSON5_MAX_BYTES = 16 * 1024 * 1024;
/** Text read between full garbage collections: V8 otherwise lets the tokens' garbage grow the heap to ~5x the live data. */
const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;
/** A member at least this big is followed by a collection that also returns freed pages to the system. */
const RELEASE_MEMBER_CHARS = 16 * 1024 * 1024;
/** One member's value larger than this (characters of its text) fails the file: a member is built whole. */
export const MAX_MEMBER_CHARS = 64 * 1024 * 1024;

export type MemberKind = "object" | "array" | "scalar";

export interface ObjectMember {
  /** Position among the object's members (0-based, file order). */
  index: number;
  key: string;
  /** Line where the member's value starts. */
  lineNo: number;
  kind: MemberKind;
  /** The picked top-level fields of an object member, scalars only (objects/arrays there are not collected). */
  fields: Record<string, unknown>;
  /** The whole value: always for scalars, for objects/arrays only when `build` said so. */
  value?: unknown;
  /** An object member re-serialized as UTF-8 JSON when `serialize` said so (keys in `omit` left out, `tail` added). */
  text?: Buffer;
}

/**
 * Re-serializes an object member straight from its tokens into UTF-8 bytes, never holding it as objects: how a
 * 50 MB entry is stored without building it and running JSON.stringify over it. `keep` values are built (into
 * `fields`) for the caller's own use; `omit` keys are left out of the text; `tail` adds keys at the end.
 */
export interface SerializeSpec {
  omit: ReadonlySet<string>;
  keep: ReadonlySet<string>;
  /** Text placed before the closing brace (`"updatedAt":5`), "" for none; sees the kept fields. */
  tail(fields: Record<string, unknown>): string;
}

export interface ObjectStreamOptions {
  /** What the file must be, for the error when it is not an object ("an object mapping session keys to entries"). */
  expected: string;
  /** Top-level scalar fields of each object member to collect without building it. */
  pick?: readonly string[];
  /** Whether member `index` (named `key`) is built whole; default never. */
  build?: (index: number, key: string) => boolean;
  /** Whether (and how) object member `index` is re-serialized into `text`; wins over `build`. */
  serialize?: (index: number, key: string) => SerializeSpec | null;
  maxDepth?: number;
  maxMemberChars?: number;
  json5MaxBytes?: number;
}

export interface ObjectStreamResult {
  sha256: string;
  sizeBytes: number;
  members: number;
  /** `json5`: the JSONC tokenizer rejected the file and the tolerant reader's rewrite was tokenized instead. */
  syntax: "jsonc" | "json5";
}

type Parser = (chunk: string | typeof none) => Many<Token> | typeof none;

class SyntaxFailure extends Error {
  constructor(
    readonly lineNo: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

type Container = Record<string, unknown> | unknown[];

/** The serializing side of a member: containers open in the text, an omitted value being skipped. */
interface TextState {
  spec: SerializeSpec;
  sink: ByteSink;
  /** Open containers of the text (the member's own object first): array or object, and whether it has items. */
  open: Array<{ array: boolean; items: boolean }>;
  /** The next value belongs to an omitted key. */
  skipNext: boolean;
  /** > 0 while inside an omitted container value. */
  skipDepth: number;
  /** Inside a string value: its chunks go to the text (or nowhere, when it is an omitted key's value). */
  inString: boolean;
  skipString: boolean;
}

/** Turns the token stream into members; values are built only for the members asked for. */
class MemberCollector {
  lineNo = 1;
  members = 0;
  private depth = 0;
  private key: string | null = null;
  private member: ObjectMember | null = null;
  private memberChars = 0;
  private field: string | null = null;
  // Builder state (the member being built): the open containers and the key each one is stored under.
  private building = false;
  private stack: Container[] = [];
  private keys: Array<string | null> = [];
  private current: Container | null = null;
  private currentKey: string | null = null;
  private text: TextState | null = null;
  /** The kept top-level field whose container value is being built (serialize mode). */
  private buildingField: string | null = null;
  private readonly pick: Set<string>;
  private readonly maxDepth: number;
  private readonly maxMemberChars: number;

  constructor(
    private readonly options: ObjectStreamOptions,
    private readonly onMember: (member: ObjectMember) => void,
  ) {
    this.pick = new Set(options.pick ?? []);
    this.maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
    this.maxMemberChars = options.maxMemberChars ?? MAX_MEMBER_CHARS;
  }

  /**
   * Text fed since the last token while a member is open: the tokenizer buffers a long string across pieces
   * before it emits its token, so a huge value is refused before it is whole in memory. (Tokens count the
   * member's own size: counting the fed text too would count everything twice.)
   */
  fed(chars: number): void {
    this.pendingChars += chars;
    if (this.member !== null && this.memberChars + this.pendingChars > this.maxMemberChars) this.grow(this.pendingChars);
  }

  private pendingChars = 0;

  private grow(chars: number): void {
    this.memberChars += chars;
    if (this.memberChars > this.maxMemberChars) {
      throw new SyntaxFailure(this.member!.lineNo, `member ${JSON.stringify(this.member!.key)} is larger than ${Math.round(this.maxMemberChars / 1048576)} MiB`);
    }
  }

  tokens(result: Many<Token> | typeof none): void {
    if (result === none) return;
    for (const token of result.values) this.token(token);
  }

  finish(): void {
    if (!this.sawObject || this.depth !== 0) throw new SyntaxFailure(this.lineNo, "invalid JSON: the text ends early");
  }

  private sawObject = false;

  private token(t: Token): void {
    const name = t.name;
    this.pendingChars = 0;
    if (this.depth === 0) {
      if (name !== "startObject" || this.sawObject) throw new SyntaxFailure(this.lineNo, `expected ${this.options.expected}, found ${this.sawObject ? "more than one value" : foundWhat(name)}`);
      this.sawObject = true;
      this.depth = 1;
      return;
    }
    // Strings arrive as chunks (a 25 MB string never becomes one token): built only where their value is needed.
    if (name === "startString" || name === "stringChunk" || name === "endString") return this.stringToken(t);
    if (this.depth === 1) return this.topLevel(t);
    // Inside a member's object or array value (depth >= 2).
    if (name === "startObject" || name === "startArray") {
      this.depth += 1;
      if (this.depth > this.maxDepth) throw new SyntaxFailure(this.lineNo, depthMessage(this.maxDepth));
      if (this.text) this.textToken(t);
      if (this.text && this.depth === 3 && this.field !== null && this.text.spec.keep.has(this.field)) {
        // A kept field's own container: built on its own (the member itself is not).
        this.buildingField = this.field;
        this.building = true;
        this.stack = [];
        this.keys = [];
        this.current = name === "startObject" ? {} : [];
        this.currentKey = null;
      } else if (this.building) this.open(name === "startObject" ? {} : []);
      this.field = null;
      return;
    }
    if (name === "endObject" || name === "endArray") {
      this.depth -= 1;
      if (this.buildingField !== null && this.stack.length === 0) {
        this.member!.fields[this.buildingField] = this.current;
        this.buildingField = null;
        this.building = false;
        this.current = null;
      } else if (this.building) this.close();
      if (this.depth === 1) this.complete();
      else if (this.text) this.textToken(t);
      return;
    }
    if (this.text) this.textToken(t);
    // The member's text as tokens carry it (also within one piece, where fed() ran before the member opened).
    if (name === "keyValue" || name === "stringValue" || name === "numberValue") this.grow(t.value.length);
    if (name === "keyValue") {
      if (this.depth === 2) this.field = t.value;
      if (this.building) this.currentKey = t.value;
      return;
    }
    const value = scalarOf(t);
    if (value === NOT_A_VALUE) return;
    this.scalarValue(value);
  }

  private stringParts: string[] | null = null;

  private stringToken(t: Token): void {
    const inMember = this.depth >= 2;
    if (t.name === "startString") {
      this.stringParts = this.wantsString() ? [] : null;
      if (this.text && inMember) this.textToken(t);
      return;
    }
    if (t.name === "stringChunk") {
      if (inMember) this.grow(t.value.length);
      this.stringParts?.push(t.value);
      if (this.text && inMember) this.textToken(t);
      return;
    }
    if (this.text && inMember) this.textToken(t);
    const parts = this.stringParts;
    this.stringParts = null;
    this.scalarValue(parts === null ? "" : parts.length === 1 ? parts[0]! : parts.join(""));
  }

  /** A top-level scalar member, a picked or kept field, or a value inside a member being built. */
  private wantsString(): boolean {
    if (this.depth === 1 || this.building) return true;
    return this.depth === 2 && this.field !== null && (this.pick.has(this.field) || Boolean(this.text?.spec.keep.has(this.field)));
  }

  private scalarValue(value: unknown): void {
    if (this.depth === 1) {
      this.member = { index: this.members, key: this.key ?? "", lineNo: this.lineNo, kind: "scalar", fields: {}, value };
      this.complete();
      return;
    }
    if (this.depth === 2 && this.field !== null) {
      if (this.pick.has(this.field) || this.text?.spec.keep.has(this.field)) this.member!.fields[this.field] = value;
      this.field = null;
    }
    if (this.building) this.put(value);
  }

  private topLevel(t: Token): void {
    switch (t.name) {
      case "keyValue":
        this.key = t.value;
        return;
      case "endObject":
        this.depth = 0;
        return;
      case "startObject":
      case "startArray": {
        const index = this.members;
        const key = this.key ?? "";
        this.member = { index, key, lineNo: this.lineNo, kind: t.name === "startObject" ? "object" : "array", fields: {} };
        this.memberChars = 0;
        this.depth = 2;
        this.field = null;
        const spec = t.name === "startObject" ? (this.options.serialize?.(index, key) ?? null) : null;
        this.text = spec ? { spec, sink: new ByteSink(), open: [{ array: false, items: false }], skipNext: false, skipDepth: 0, inString: false, skipString: false } : null;
        this.text?.sink.write("{");
        this.building = spec ? false : (this.options.build?.(index, key) ?? false);
        if (this.building) {
          this.stack = [];
          this.keys = [];
          this.current = t.name === "startObject" ? {} : [];
          this.currentKey = null;
        }
        return;
      }
      default: {
        const value = scalarOf(t);
        if (value !== NOT_A_VALUE) this.scalarValue(value);
      }
    }
  }

  private complete(): void {
    const member = this.member!;
    if (this.building) member.value = this.current;
    if (this.text) {
      this.finishText(member, this.text);
      this.text = null;
    }
    // A big member leaves its tokens and text chunks behind as garbage: freed before the caller stores it.
    // A very big one (a 50 MB entry) also hands the freed pages back: the caller's insert needs two more copies.
    if (this.memberChars >= RELEASE_MEMBER_CHARS) releaseMemory();
    else if (this.memberChars >= COLLECT_EVERY_BYTES) collectGarbage();
    this.building = false;
    this.current = null;
    this.member = null;
    this.key = null;
    this.members += 1;
    this.onMember(member);
  }

  /**
   * The member's text, closed with its tail. In a frame of its own: a stack slot left holding the bytes would
   * keep a 50 MB text alive while the caller hands it to SQLite and collects.
   */
  private finishText(member: ObjectMember, text: TextState): void {
    const tail = text.spec.tail(member.fields);
    text.sink.write(tail === "" ? "}" : `${text.open[0]!.items ? "," : ""}${tail}}`);
    member.text = text.sink.finish();
  }

  /** One token of the member's value into its text (called with the depth already updated for containers). */
  private textToken(t: Token): void {
    const text = this.text!;
    const name = t.name;
    if (text.skipDepth > 0) {
      if (name === "startObject" || name === "startArray") text.skipDepth += 1;
      else if (name === "endObject" || name === "endArray") text.skipDepth -= 1;
      return;
    }
    if (text.skipString) {
      if (name === "endString") text.skipString = false;
      return;
    }
    if (text.inString) {
      if (name === "stringChunk") text.sink.write(JSON.stringify(t.value).slice(1, -1));
      else if (name === "endString") {
        text.sink.write('"');
        text.inString = false;
      }
      return;
    }
    const top = text.open[text.open.length - 1]!;
    if (name === "keyValue") {
      if (text.open.length === 1 && text.spec.omit.has(t.value)) {
        text.skipNext = true;
        return;
      }
      text.sink.write(`${top.items ? "," : ""}${JSON.stringify(t.value)}:`);
      top.items = true;
      return;
    }
    if (name === "endObject" || name === "endArray") {
      text.open.pop();
      text.sink.write(name === "endObject" ? "}" : "]");
      return;
    }
    if (text.skipNext) {
      text.skipNext = false;
      if (name === "startObject" || name === "startArray") text.skipDepth = 1;
      else if (name === "startString") text.skipString = true;
      return;
    }
    if (top.array) {
      if (top.items) text.sink.write(",");
      top.items = true;
    }
    switch (name) {
      case "startObject":
      case "startArray":
        text.sink.write(name === "startObject" ? "{" : "[");
        text.open.push({ array: name === "startArray", items: false });
        return;
      case "startString":
        text.sink.write('"');
        text.inString = true;
        return;
      case "stringValue":
        text.sink.write(JSON.stringify(t.value));
        return;
      case "numberValue":
        text.sink.write(t.value);
        return;
      case "nullValue":
        text.sink.write("null");
        return;
      case "trueValue":
        text.sink.write("true");
        return;
      case "falseValue":
        text.sink.write("false");
        return;
      default:
        return;
    }
  }

  private open(container: Container): void {
    this.stack.push(this.current!);
    this.keys.push(this.currentKey);
    this.current = container;
    this.currentKey = null;
  }

  private close(): void {
    if (this.stack.length === 0) return; // the member's own value: complete() takes it
    const done = this.current!;
    this.current = this.stack.pop()!;
    this.currentKey = this.keys.pop() ?? null;
    this.put(done);
  }

  private put(value: unknown): void {
    const target = this.current!;
    if (Array.isArray(target)) {
      target.push(value);
      return;
    }
    const key = this.currentKey ?? "";
    // As JSON.parse does: an own property, never the inherited __proto__ setter.
    if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
    else target[key] = value;
    this.currentKey = null;
  }
}

const NOT_A_VALUE = Symbol("not a value");

/**
 * A copy of `text` that shares no memory with it. Token strings are slices of the tokenizer's 1 MiB input
 * strings, and a slice kept alive keeps its whole parent alive: strings a caller holds on to across a file
 * (keys, ids) must be detached, or every chunk of the file stays in memory.
 */
export function detachString(text: string): string {
  return Buffer.from(text, "utf8").toString("utf8");
}

function foundWhat(name: Token["name"]): string {
  if (name === "startArray") return "an array";
  if (name === "stringValue" || name === "startString") return "a string";
  if (name === "numberValue") return "a number";
  if (name === "nullValue") return "null";
  return "a boolean";
}

function scalarOf(t: Token): unknown {
  switch (t.name) {
    case "stringValue":
      return t.value;
    case "numberValue":
      return Number(t.value);
    case "nullValue":
      return null;
    case "trueValue":
      return true;
    case "falseValue":
      return false;
    default:
      return NOT_A_VALUE;
  }
}

/** Feeds `text` to the tokenizer one line at a time (so a failure knows its line). */
function feedLines(text: string, parser: Parser, collector: MemberCollector): void {
  let from = 0;
  while (from < text.length) {
    const nl = text.indexOf("\n", from);
    const to = nl === -1 ? text.length : nl + 1;
    const piece = from === 0 && to === text.length ? text : text.slice(from, to);
    collector.fed(piece.length);
    collector.tokens(tokenize(parser, piece, collector.lineNo));
    if (nl !== -1) collector.lineNo += 1;
    from = to;
  }
}

function tokenize(parser: Parser, piece: string | typeof none, lineNo: number): Many<Token> | typeof none {
  try {
    return parser(piece);
  } catch (error) {
    if (error instanceof SyntaxFailure) throw error;
    const message = error instanceof Error ? error.message : String(error);
    // stream-json's reasons name what was expected, never the input ("Parser cannot parse input: expected ','").
    throw new SyntaxFailure(lineNo, `invalid JSON: ${message.replace(/^Parser cannot parse input:\s*/, "").replace(/^Parser has expected/, "expected").trim() || "syntax error"}`);
  }
}

/** Keys and numbers whole; strings as chunks (startString, stringChunk…, endString). */
const TOKEN_OPTIONS = { packKeys: true, streamKeys: false, packNumbers: true, streamNumbers: false, packStrings: false, streamStrings: true } as const;

function jsoncTokenizer(): Parser {
  return jsoncParser({ ...TOKEN_OPTIONS, streamWhitespace: false, streamComments: false, packComments: false }) as Parser;
}

function jsonTokenizer(): Parser {
  return jsonParser(TOKEN_OPTIONS) as Parser;
}

function failure(file: string, code: string, error: SyntaxFailure, hint = ""): OperationError {
  return new OperationError(code, `${file}:${error.lineNo}: ${error.reason}${hint}; the file was left in place.`, { path: file });
}

/** Streams the file once: chunks hashed, decoded (UTF-8, a leading BOM dropped) and tokenized line by line. */
function streamPass(file: string, options: ObjectStreamOptions, onMember: (m: ObjectMember) => void): { sha256: string; sizeBytes: number; members: number } {
  const collector = new MemberCollector(options, onMember);
  const parser = jsoncTokenizer();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const hash = crypto.createHash("sha256");
  let sizeBytes = 0;
  withOpenFile(file, (fd) => {
    const buf = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      if (Math.floor(sizeBytes / COLLECT_EVERY_BYTES) !== Math.floor((sizeBytes + n) / COLLECT_EVERY_BYTES)) collectGarbage();
      sizeBytes += n;
      const view = buf.subarray(0, n);
      hash.update(view);
      feedLines(decode(decoder, view, file, collector.lineNo, true), parser, collector);
    }
    feedLines(decode(decoder, undefined, file, collector.lineNo, false), parser, collector);
  });
  collector.tokens(tokenize(parser, none, collector.lineNo));
  collector.finish();
  return { sha256: hash.digest("hex"), sizeBytes, members: collector.members };
}

function decode(decoder: TextDecoder, bytes: Uint8Array | undefined, file: string, lineNo: number, stream: boolean): string {
  try {
    return decoder.decode(bytes, { stream });
  } catch {
    throw new OperationError("invalid_utf8", `${file}:${lineNo}: not valid UTF-8; the file was left in place.`, { path: file });
  }
}

/**
 * The whole (small) file through json5, re-serialized as JSON for the strict tokenizer. Measured on a 16 MiB
 * index: json5 ~10 s, the hand-written rewrite it replaces ~5 s; both build the whole text, so memory is alike.
 * Member lines are then the JSON's (one member per line: the n-th member, 1-based, is on line n + 1), not the file's.
 */
function json5Pass(file: string, options: ObjectStreamOptions, onMember: (m: ObjectMember) => void): { sha256: string; sizeBytes: number; members: number } {
  const bytes = fs.readFileSync(file);
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  let value: unknown;
  try {
    value = parseJson5(text);
  } catch {
    throw new SyntaxFailure(1, "invalid JSON5");
  }
  const collector = new MemberCollector(options, onMember);
  const parser = jsonTokenizer();
  feedLines(json5AsJsonLines(value, options.maxDepth ?? MAX_JSON_DEPTH), parser, collector);
  collector.tokens(tokenize(parser, none, collector.lineNo));
  collector.finish();
  return { sha256: crypto.createHash("sha256").update(bytes).digest("hex"), sizeBytes: bytes.length, members: collector.members };
}

/** A parsed JSON5 value as JSON text, a top-level object's members one per line; nesting past `maxDepth` fails. */
function json5AsJsonLines(value: unknown, maxDepth: number): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return JSON.stringify(value) ?? "null";
  const members = Object.entries(value as Record<string, unknown>);
  try {
    return `{\n${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",\n")}\n}\n`;
  } catch (error) {
    // JSON.stringify recurses: a value nested deep enough overflows the stack (the tokenizer would refuse it anyway).
    if (error instanceof RangeError) throw new SyntaxFailure(1, depthMessage(maxDepth));
    throw error;
  }
}

/**
 * Calls `onMember` for each member of the file's top-level object, in file order. Memory: one chunk, the
 * tokenizer's carry, and the members asked to be built (one at a time). A file the JSONC tokenizer rejects is
 * re-read through the JSON5 reader when it is small enough; `onMember` then sees the members again from the
 * start, so callers collect into fresh state per attempt (`reset`).
 */
export function streamObjectMembers(file: string, onMember: (member: ObjectMember) => void, options: ObjectStreamOptions, reset?: () => void): ObjectStreamResult {
  try {
    return { ...streamPass(file, options, onMember), syntax: "jsonc" };
  } catch (error) {
    if (!(error instanceof SyntaxFailure)) throw error;
    const json5Max = options.json5MaxBytes ?? JSON5_MAX_BYTES;
    const size = fs.statSync(file).size;
    if (error.reason.startsWith("invalid JSON") && size <= json5Max) {
      reset?.();
      try {
        return { ...json5Pass(file, options, onMember), syntax: "json5" };
      } catch (json5Error) {
        if (!(json5Error instanceof SyntaxFailure)) throw json5Error;
        // The first reading's line and reason: the JSON5 rewrite shifts lines where block comments were.
        throw failure(file, "invalid_json", error, " (read as JSON, JSONC and JSON5)");
      }
    }
    const hint = error.reason.startsWith("invalid JSON") ? ` (files over ${Math.round(json5Max / 1048576)} MiB must be JSON; comments and trailing commas are accepted, other JSON5 syntax is not)` : "";
    throw failure(file, error.reason.startsWith("invalid JSON") ? "invalid_json" : "invalid_shape", error, hint);
  }
}
