// JSON5 text through the `json5` package (the parser OpenClaw's gateway reads its config with); errors carry the original text's line and column.
import JSON5 from "json5";

/** A JSON5 syntax error: `line` and `column` (1-based) point into the text as given, never into a rewrite of it. */
export class Json5SyntaxError extends SyntaxError {
  constructor(
    readonly line: number,
    readonly column: number,
    /** What is wrong, without the offending text (config files can hold credentials). */
    readonly reason: string,
  ) {
    super(`line ${line}, column ${column}: ${reason}`);
    this.name = "Json5SyntaxError";
  }
}

/**
 * Parses JSON5: comments, trailing commas, single quotes, bare keys, hex numbers, `.5`, `+1`, `Infinity`, `NaN`,
 * line continuations and a leading BOM. A `__proto__` key is an own property (json5 ≥ 2.2.2), as with JSON.parse.
 */
export function parseJson5(text: string): unknown {
  try {
    return JSON5.parse(text);
  } catch (error) {
    const e = error as SyntaxError & { lineNumber?: unknown; columnNumber?: unknown };
    if (!(e instanceof SyntaxError) || typeof e.lineNumber !== "number") throw error;
    // "JSON5: invalid character 'x' at 3:7" → "invalid character": the position is kept apart, the character dropped.
    const reason = e.message
      .replace(/^JSON5:\s*/, "")
      .replace(/\s+at \d+:\d+$/, "")
      .replace(/ character .*$/, " character");
    throw new Json5SyntaxError(e.lineNumber, typeof e.columnNumber === "number" ? e.columnNumber : 0, reason || "syntax error");
  }
}
