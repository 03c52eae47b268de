// `--json` off a terminal is one compact line (the same document), on a terminal (or unknown) it is indented.
import { describe, expect, it } from "vitest";
import { createOutput, type OutputOptions } from "../../src/cli/output.js";

function capture(stdoutTTY: boolean | undefined) {
  let out = "";
  const options: OutputOptions = { json: true, quiet: false, verbose: false, color: false, interactive: false, canPrompt: false, ...(stdoutTTY === undefined ? {} : { stdoutTTY }) };
  const output = createOutput(options, { stdout: (t) => void (out += t), stderr: () => undefined });
  return { output, stdout: () => out };
}

const doc = { version: 1, command: "x", nested: { list: [1, { a: "b\nc" }], empty: [], none: {} }, skipped: undefined };

describe("compact JSON off a terminal", () => {
  it("writeJson: one line equal to JSON.stringify; pretty on a terminal and when unknown", async () => {
    const piped = capture(false);
    piped.output.writeJson(doc);
    await piped.output.complete(0);
    expect(piped.stdout()).toBe(`${JSON.stringify({ version: 1, ok: true, command: "x", nested: doc.nested })}\n`);
    for (const tty of [true, undefined]) {
      const shown = capture(tty);
      shown.output.writeJson(doc);
      await shown.output.complete(0);
      expect(shown.stdout()).toBe(`${JSON.stringify({ version: 1, ok: true, command: "x", nested: doc.nested }, null, 2)}\n`);
    }
  });

  it("writeJsonStream: one line, the failure recorded in the same document", async () => {
    const piped = capture(false);
    function* rows() {
      yield { n: 1 };
      yield { n: 2, text: "x\ty" };
      throw new Error("boom");
    }
    const written = await piped.output.writeJsonStream({ version: 1, command: "s" }, "rows", rows());
    expect(written.count).toBe(2);
    await piped.output.complete(1);
    const text = piped.stdout();
    expect(text.trimEnd().split("\n")).toHaveLength(1);
    expect(JSON.parse(text)).toEqual({ version: 1, command: "s", rows: [{ n: 1 }, { n: 2, text: "x\ty" }], ok: false, error: { code: "internal_error", message: "boom" } });
  });
});
