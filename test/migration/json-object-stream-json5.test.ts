// The JSON5 pass of streamObjectMembers goes through the json5 package: hex, .5, Infinity and line continuations
// in a small hand-edited index are read (the hand-written rewrite rejected them); a __proto__ key stays an own key.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { streamObjectMembers, type ObjectMember } from "../../src/migration/json-object-stream.js";
import { makeTempDir } from "../helpers/temp-state.js";

function collect(text: string): { members: ObjectMember[]; syntax: string } {
  const file = path.join(makeTempDir(), "sessions.json");
  fs.writeFileSync(file, text);
  const members: ObjectMember[] = [];
  const result = streamObjectMembers(file, (m) => members.push(m), { expected: "an object", pick: ["sessionId", "updatedAt"], build: () => true }, () => (members.length = 0));
  return { members, syntax: result.syntax };
}

describe("streamObjectMembers, JSON5 pass", () => {
  it("reads hex, .5, +1, Infinity and a line continuation; members in file order with their picked fields", () => {
    const text = "{\n  // hand-edited\n  'agent:main:a': { sessionId: 's-a', updatedAt: 0x10, ratio: .5, up: +1, note: 'one \\\ntwo', },\n  \"agent:main:b\": { sessionId: 's-b', updatedAt: 17, cap: Infinity },\n}\n";
    const { members, syntax } = collect(text);
    expect(syntax).toBe("json5");
    expect(members.map((m) => [m.index, m.key, m.fields])).toEqual([
      [0, "agent:main:a", { sessionId: "s-a", updatedAt: 16 }],
      [1, "agent:main:b", { sessionId: "s-b", updatedAt: 17 }],
    ]);
    expect(members[0]!.value).toEqual({ sessionId: "s-a", updatedAt: 16, ratio: 0.5, up: 1, note: "one two" });
    // JSON has no Infinity: the member is re-serialized as JSON, where it becomes null (as JSON.stringify writes it).
    expect(members[1]!.value).toEqual({ sessionId: "s-b", updatedAt: 17, cap: null });
  });

  it("keeps a __proto__ key an own property in the JSON5 pass too", () => {
    const { members, syntax } = collect("{\n  a: { __proto__: { polluted: true }, sessionId: 'x' },\n}\n");
    expect(syntax).toBe("json5");
    const built = members[0]!.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(built)).toBe(Object.prototype);
    expect(Object.keys(built)).toEqual(["__proto__", "sessionId"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
