// Output.writeJsonStream keeps the one-document contract (also when the rows fail midway) and honours backpressure.
import { describe, expect, it } from "vitest";
import { OperationError } from "../../src/core/errors.js";
import { createCaptureOutput, createOutput } from "../../src/cli/output.js";

describe("writeJsonStream", () => {
  it("writes head fields, the streamed array and ok:true as one JSON document", async () => {
    const cap = createCaptureOutput({ json: true });
    const result = await cap.output.writeJsonStream({ version: 1, command: "x", nested: { a: [1, 2] } }, "rows", [{ id: 1 }, { id: 2, deep: { list: ["a"] } }]);
    expect(result).toEqual({ count: 2 });
    const doc = JSON.parse(cap.stdout());
    expect(doc).toEqual({ version: 1, command: "x", nested: { a: [1, 2] }, rows: [{ id: 1 }, { id: 2, deep: { list: ["a"] } }], ok: true });
    // Same layout as writeJson's two-space pretty print.
    const plain = createCaptureOutput({ json: true });
    plain.output.writeJson(doc);
    expect(cap.stdout()).toBe(plain.stdout());
  });

  it("writes an empty array", async () => {
    const cap = createCaptureOutput({ json: true });
    await cap.output.writeJsonStream({ version: 1 }, "rows", []);
    expect(JSON.parse(cap.stdout())).toEqual({ version: 1, rows: [], ok: true });
  });

  it("ends a failed stream with ok:false and the error, and returns it instead of throwing", async () => {
    const cap = createCaptureOutput({ json: true });
    function* rows() {
      yield { id: 1 };
      throw new OperationError("disk_gone", "The disk went away.");
    }
    const result = await cap.output.writeJsonStream({ version: 1 }, "rows", rows());
    expect(result.count).toBe(1);
    expect(result.error).toBeInstanceOf(OperationError);
    expect(JSON.parse(cap.stdout())).toEqual({ version: 1, rows: [{ id: 1 }], ok: false, error: { code: "disk_gone", message: "The disk went away." } });
  });

  it("waits for the sink to drain when a write reports backpressure", async () => {
    let text = "";
    let drains = 0;
    const output = createOutput(
      { json: true, quiet: false, verbose: false, color: false, interactive: false, canPrompt: false },
      {
        stdout: (t) => {
          text += t;
          return false;
        },
        stderr: () => {},
        drain: async () => {
          drains += 1;
        },
      },
    );
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, pad: "x".repeat(100) }));
    await output.writeJsonStream({ version: 1 }, "rows", rows);
    expect(JSON.parse(text).rows).toHaveLength(2000);
    expect(drains).toBeGreaterThan(1);
  });
});
