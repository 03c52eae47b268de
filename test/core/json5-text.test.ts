// parseJson5: the json5 package reads what OpenClaw's gateway accepts; errors point into the text as written.
import { describe, expect, it } from "vitest";
import { Json5SyntaxError, parseJson5 } from "../../src/core/json5-text.js";

describe("parseJson5", () => {
  it("reads strict JSON unchanged", () => {
    expect(parseJson5('{"a": [1, 2.5, "x", true, null]}')).toEqual({ a: [1, 2.5, "x", true, null] });
  });

  it("accepts the JSON5 the hand-written reader rejected: hex, .5, +1, Infinity, NaN, line continuations", () => {
    const text = "{\n  port: 0x4A55,\n  ratio: .5,\n  trailing: 5.,\n  up: +1,\n  max: Infinity,\n  low: -Infinity,\n  nan: NaN,\n  long: 'first \\\n second',\n}";
    const value = parseJson5(text) as Record<string, number | string>;
    expect(value).toMatchObject({ port: 0x4a55, ratio: 0.5, trailing: 5, up: 1, max: Infinity, low: -Infinity, long: "first  second" });
    expect(Number.isNaN(value.nan)).toBe(true);
  });

  it("accepts comments, trailing commas, single quotes, bare keys and a BOM", () => {
    const text = `\uFEFF{
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
    expect(parseJson5(text)).toEqual({
      agents: { defaults: { workspace: "~/work" }, list: [{ id: "a", workspace: "/w/a" }] },
      url: "http://example.com//not-a-comment",
      "it's": 'say "hi"',
    });
  });

  it("keeps a __proto__ key as an own property (no prototype change)", () => {
    const value = parseJson5('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(value)).toEqual(["__proto__"]);
  });

  it("fails with the line and column of the original text, without quoting it", () => {
    // A block comment spanning lines before the error: a rewrite that drops comments would shift the line.
    const text = "{\n  /* one\n     two\n     three */\n  secret: 'hunter2' x\n}";
    let caught: unknown;
    try {
      parseJson5(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(Json5SyntaxError);
    expect(caught).toMatchObject({ line: 5, column: 21, reason: "invalid character" });
    expect((caught as Error).message).toBe("line 5, column 21: invalid character");
    expect((caught as Error).message).not.toMatch(/x|hunter2/);
    expect(() => parseJson5('{"a": ')).toThrow(/line 1, column 7: invalid end of input/);
    expect(() => parseJson5("{ /* open")).toThrow(Json5SyntaxError);
  });
});
