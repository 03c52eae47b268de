// Text-preserving config edits on JSON5 the gateway accepts (hex, .5, Infinity, line continuations): spans found,
// each edit re-parsed with json5 and refused unless exactly the intended key changed; positions in the file as written.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseJson5 } from "../../src/core/json5-text.js";
import { ConfigEditError, parseSpans } from "../../src/migration/config-edit.js";
import { applyConfigFix, editProblem, planConfig, readConfig } from "../../src/migration/legacy-config.js";
import { makeTempState } from "../helpers/temp-state.js";

const GATEWAY_JSON5 = `{
  // hand-edited, as the gateway accepts it
  gateway: { port: 0x4A55, ratio: .5, retries: +3, timeout: Infinity, floor: -Infinity, spare: NaN, },
  motd: 'first line \\
second line',
  session: {
    idleMinutes: 45, /* legacy */
    writeLock: { timeoutMs: 5e3 },
  },
}
`;

function stateWithConfig(text: string): ReturnType<typeof makeTempState> {
  const state = makeTempState();
  fs.mkdirSync(state.stateDir, { recursive: true });
  fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), text, { mode: 0o600 });
  return state;
}

describe("config edits on JSON5", () => {
  it("reads and rewrites a config with hex, .5, Infinity, NaN and a line continuation, keeping every other byte", () => {
    const { paths, stateDir } = stateWithConfig(GATEWAY_JSON5);
    const read = readConfig(paths, stateDir);
    expect(read.problem).toBeNull();
    expect(read.value).toMatchObject({ gateway: { port: 0x4a55, ratio: 0.5, retries: 3, timeout: Infinity }, motd: "first line second line" });
    expect(planConfig(paths, stateDir).keys.map((k) => [k.key, k.blocked])).toEqual([
      ["session.idleMinutes", null],
      ["session.writeLock", null],
    ]);
    const result = applyConfigFix(paths, stateDir);
    expect(result.warnings).toEqual([]);
    const text = fs.readFileSync(path.join(stateDir, "openclaw.json"), "utf8");
    expect(text).toBe(GATEWAY_JSON5.replace("idleMinutes: 45,", "reset: { idleMinutes: 45 },").replace("    writeLock: { timeoutMs: 5e3 },\n", ""));
    const after = parseJson5(text) as Record<string, any>;
    expect(after.session).toEqual({ reset: { idleMinutes: 45 } });
    expect(Number.isNaN(after.gateway.spare)).toBe(true);
  });

  it("names the line and column of a syntax error in the file as written", () => {
    const { paths, stateDir } = stateWithConfig("{\n  /* a\n     b */\n  port: 0x4A55,\n  bad: 'x' y,\n}\n");
    expect(readConfig(paths, stateDir).problem).toMatch(/openclaw\.json:5:12 does not parse as JSON5 \(invalid character\)$/);
    expect(() => parseSpans("{\n  a: 1,\n  b: @\n}")).toThrow(new ConfigEditError("unexpected character at line 3, column 6"));
  });

  it("refuses an edit whose text does not parse, or that changes more than the intended key", () => {
    expect(editProblem("{ a: 1, }", false, { a: 1 }, "x")).toBeNull();
    expect(editProblem("{ a: 1,, }", false, { a: 1 }, "session.writeLock")).toMatch(/^the edit of session\.writeLock left text that does not parse as JSON5 \(invalid character\)$/);
    expect(editProblem("{ a: 1, }", true, { a: 1 }, "k")).toMatch(/does not parse as JSON \(/);
    expect(editProblem("{ a: 2 }", false, { a: 1 }, "session.writeLock")).toBe("the edit of session.writeLock changed more than that key");
  });

  it("a key written with an escape it cannot reproduce is left for the operator, the file untouched", () => {
    const text = "{\n  session: { \\u0069dleMinutes: 45 },\n}\n";
    const { paths, stateDir } = stateWithConfig(text);
    expect(readConfig(paths, stateDir).value).toEqual({ session: { idleMinutes: 45 } });
    const result = applyConfigFix(paths, stateDir);
    expect(result.changes).toEqual([]);
    expect(result.warnings.join("\n")).toMatch(/session\.idleMinutes left as is: .*cannot be rewritten without losing its formatting .*line 2, column 14/);
    expect(fs.readFileSync(path.join(stateDir, "openclaw.json"), "utf8")).toBe(text);
  });
});
