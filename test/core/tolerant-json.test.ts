// parseTolerantJson: the JSON5-ish relaxations hand-edited configs use, and clear failures otherwise.
import { describe, expect, it } from "vitest";
import { parseTolerantJson, TolerantJsonError } from "../../src/core/tolerant-json.js";

describe("parseTolerantJson", () => {
  it("reads strict JSON unchanged", () => {
    expect(parseTolerantJson('{"a": [1, 2.5, "x", true, null]}')).toEqual({ a: [1, 2.5, "x", true, null] });
  });

  it("accepts comments, trailing commas, single quotes and bare keys", () => {
    const text = `{
      // line comment
      agents: {
        /* block
           comment */
        defaults: { workspace: '~/work', },
        list: [ { id: "a", workspace: "/w/a" }, ],
      },
      "url": "http://example.com//not-a-comment",
      'it\\'s': 'say "hi"',
    }`;
    expect(parseTolerantJson(text)).toEqual({
      agents: { defaults: { workspace: "~/work" }, list: [{ id: "a", workspace: "/w/a" }] },
      url: "http://example.com//not-a-comment",
      "it's": 'say "hi"',
    });
  });

  it("keeps commas and comment markers inside strings", () => {
    expect(parseTolerantJson('{"a": "x, ]", "b": "/* no */"}')).toEqual({ a: "x, ]", b: "/* no */" });
  });

  it("rejects broken input with a TolerantJsonError", () => {
    expect(() => parseTolerantJson('{"a": ')).toThrow(TolerantJsonError);
    expect(() => parseTolerantJson('{"a": "unterminated}')).toThrow(TolerantJsonError);
    expect(() => parseTolerantJson("{ /* open")).toThrow(TolerantJsonError);
  });
});
