// streamObjectMembers: members in file order with bounded memory, JSONC always, JSON5 only for small files,
// errors with file:line and the tokenizer's reason (never the text).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { streamObjectMembers, type ObjectMember } from "../../src/migration/json-object-stream.js";
import { makeTempDir } from "../helpers/temp-state.js";

function write(text: string | Buffer): string {
  const file = path.join(makeTempDir(), "index.json");
  fs.writeFileSync(file, text);
  return file;
}

function collect(file: string, options: Partial<Parameters<typeof streamObjectMembers>[2]> = {}): { members: ObjectMember[]; syntax: string } {
  const members: ObjectMember[] = [];
  const result = streamObjectMembers(file, (m) => members.push(m), { expected: "an object", pick: ["sessionId", "updatedAt"], build: () => true, ...options }, () => (members.length = 0));
  return { members, syntax: result.syntax };
}

describe("streamObjectMembers", () => {
  it("builds each member like JSON.parse and picks top-level scalars", () => {
    const value = { a: { sessionId: "s", updatedAt: 5, nested: { list: [1, "two", null, true, { x: -1.5e3 }] }, __proto__x: 1 }, b: [1, 2], c: "text", d: 7 };
    const { members, syntax } = collect(write(JSON.stringify(value, null, 2)));
    expect(syntax).toBe("jsonc");
    expect(members.map((m) => [m.index, m.key, m.kind])).toEqual([[0, "a", "object"], [1, "b", "array"], [2, "c", "scalar"], [3, "d", "scalar"]]);
    expect(members.map((m) => m.value)).toEqual(Object.values(value));
    expect(members[0]!.fields).toEqual({ sessionId: "s", updatedAt: 5 });
    expect(members[0]!.lineNo).toBe(2);
  });

  it("builds only the members asked for, and keeps a __proto__ key an own property", () => {
    const { members } = collect(write('{"a": {"__proto__": {"polluted": true}}, "b": {"sessionId": "x"}}'), { build: (i) => i === 0 });
    expect(members[1]!.value).toBeUndefined();
    expect(members[1]!.fields).toEqual({ sessionId: "x" });
    const built = members[0]!.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(built)).toBe(Object.prototype);
    expect(Object.keys(built)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("re-serializes a member from its tokens: omitted keys out, kept fields built, a tail added", () => {
    const member = { a: 1, drop: { big: [1, 2, { x: "y" }] }, s: 'quote " and \\ and \u00e9 \n', n: -1.5e3, list: [[], {}, [null, true, false]], keep: { deep: ["v"] }, t: "z" };
    const file = write(JSON.stringify({ m: member, other: { a: 2 } }, null, 2));
    const members: ObjectMember[] = [];
    streamObjectMembers(file, (m) => members.push(m), {
      expected: "an object",
      serialize: (i) => (i === 0 ? { omit: new Set(["drop", "t"]), keep: new Set(["keep", "a", "drop"]), tail: (f) => `"added":${JSON.stringify(Object.keys(f).sort())}` } : null),
    });
    const { drop: _drop, t: _t, ...rest } = member;
    expect(JSON.parse(members[0]!.text!.toString("utf8"))).toEqual({ ...rest, added: ["a", "drop", "keep"] });
    expect(members[0]!.fields).toEqual({ a: 1, drop: member.drop, keep: member.keep });
    expect(members[0]!.value).toBeUndefined();
    expect(members[1]!.text).toBeUndefined();
    // Omitting every key leaves a valid object.
    const only: ObjectMember[] = [];
    streamObjectMembers(write('{"m": {"x": [1, {"y": 2}]}}'), (m) => only.push(m), { expected: "an object", serialize: () => ({ omit: new Set(["x"]), keep: new Set(), tail: () => "" }) });
    expect(only[0]!.text!.toString("utf8")).toBe("{}");
  });

  it("streams a string longer than the read chunk: escapes, surrogate pairs and omitted strings stay exact", () => {
    // 2+ MiB of text with escapes and astral characters, crossing the tokenizer's 1 MiB pieces.
    const long = Array.from({ length: 60_000 }, (_, i) => `line ${i} "q" \\ \t é 😀 \u2028;`).join("\n");
    const member = { sessionId: "s", prompt: long, skip: long, list: [long.slice(0, 1000), "x"], keep: "small" };
    const file = write(JSON.stringify({ m: member, n: "top-level scalar" }));
    const members: ObjectMember[] = [];
    streamObjectMembers(file, (m) => members.push(m), { expected: "an object", pick: ["sessionId"], serialize: () => ({ omit: new Set(["skip"]), keep: new Set(["keep"]), tail: () => "" }) });
    const { skip: _skip, ...rest } = member;
    expect(members[0]!.text!.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(JSON.parse(members[0]!.text!.toString("utf8"))).toEqual(rest);
    expect(members[0]!.fields).toEqual({ sessionId: "s", keep: "small" });
    expect(members[1]).toMatchObject({ kind: "scalar", value: "top-level scalar" });
    // Built members get the joined string.
    const built = collect(file).members;
    expect((built[0]!.value as typeof member).prompt).toBe(long);
  });

  it("accepts comments and trailing commas at any size, and a BOM", () => {
    const { members, syntax } = collect(write(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{\n  // c\n  "a": {"sessionId": "s",}, /* b */\n}\n')])), { json5MaxBytes: 0 });
    expect(syntax).toBe("jsonc");
    expect(members.map((m) => m.value)).toEqual([{ sessionId: "s" }]);
  });

  it("reads single quotes and unquoted keys only in files up to the JSON5 limit", () => {
    const text = "{\n  a: {'sessionId': 's'},\n}\n";
    const small = collect(write(text), { json5MaxBytes: 1024 });
    expect(small.syntax).toBe("json5");
    expect(small.members.map((m) => [m.key, m.value])).toEqual([["a", { sessionId: "s" }]]);
    const file = write(text);
    expect(() => collect(file, { json5MaxBytes: 10 })).toThrow(/index\.json:2: invalid JSON: .*\(files over 0 MiB must be JSON; comments and trailing commas are accepted, other JSON5 syntax is not\)/);
  });

  it("fails with file:line and never quotes the text", () => {
    const file = write('{\n  "a": {"sessionId": "SECRET-sk-123"},\n  "b": SECRET-sk-456\n}');
    let message = "";
    try {
      collect(file);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/index\.json:3: invalid JSON: expected a value \(read as JSON, JSONC and JSON5\); the file was left in place\./);
    expect(message).not.toContain("SECRET");
  });

  it("names what the file is when it is not an object, and a truncated file", () => {
    expect(() => collect(write("[1, 2]"))).toThrow(/index\.json:1: expected an object, found an array/);
    expect(() => collect(write('{"a": {"b": 1}'))).toThrow(/index\.json:1: invalid JSON: /);
    expect(() => collect(write("  \n"))).toThrow(/index\.json:2: invalid JSON: expected a value/);
    expect(() => collect(write(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])))).toThrow(/index\.json:1: not valid UTF-8/);
  });

  it("limits nesting depth and one member's size", () => {
    expect(() => collect(write(`{"a":\n${"[".repeat(50)}${"]".repeat(50)}}`), { maxDepth: 20 })).toThrow(/index\.json:2: JSON nested deeper than 20 levels/);
    expect(() => collect(write(`{"a": 1,\n "big": {"s": "${"x".repeat(5000)}"}}`), { maxMemberChars: 1000 })).toThrow(/index\.json:2: member "big" is larger than 0 MiB/);
    // A member under the limit spread over many lines passes (its text is counted once).
    const lines = Array.from({ length: 7 }, (_, i) => `"k${i}": "${"y".repeat(90)}"`).join(",\n");
    expect(collect(write(`{"ok": {\n${lines}\n}}`), { maxMemberChars: 1000 }).members).toHaveLength(1);
  });
});
