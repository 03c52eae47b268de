// Output.writeJsonStream / writeJson keep the one-document contract (also when rows fail midway), honour backpressure,
// and take "ok" from the exit code given to complete(), whatever the renderer claimed.
import { describe, expect, it } from "vitest";
import { OperationError } from "../../src/core/errors.js";
import { createCaptureOutput, createOutput, jsonPieces } from "../../src/cli/output.js";

/** A --json output whose stdout always reports a full pipe: every write is followed by a wait for drain. */
function backedUpOutput(): { output: ReturnType<typeof createOutput>; text: () => string; drains: () => number } {
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
  return { output, text: () => text, drains: () => drains };
}

describe("writeJsonStream", () => {
  it("writes head fields, the streamed array and ok:true as one JSON document", async () => {
    const cap = createCaptureOutput({ json: true });
    const result = await cap.output.writeJsonStream({ version: 1, command: "x", nested: { a: [1, 2] } }, "rows", [{ id: 1 }, { id: 2, deep: { list: ["a"] } }]);
    expect(result).toEqual({ count: 2 });
    await cap.output.complete(0);
    const doc = JSON.parse(cap.stdout());
    expect(doc).toEqual({ version: 1, command: "x", nested: { a: [1, 2] }, rows: [{ id: 1 }, { id: 2, deep: { list: ["a"] } }], ok: true });
    // Same layout as writeJson's two-space pretty print.
    expect(cap.stdout()).toBe(`${JSON.stringify(doc, null, 2)}\n`);
  });

  it("writes an empty array", async () => {
    const cap = createCaptureOutput({ json: true });
    await cap.output.writeJsonStream({ version: 1 }, "rows", []);
    await cap.output.complete(0);
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
    await cap.output.complete(1);
    expect(JSON.parse(cap.stdout())).toEqual({ version: 1, rows: [{ id: 1 }], ok: false, error: { code: "disk_gone", message: "The disk went away." } });
  });

  it("waits for the sink to drain when a write reports backpressure", async () => {
    const { output, text, drains } = backedUpOutput();
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, pad: "x".repeat(100) }));
    await output.writeJsonStream({ version: 1 }, "rows", rows);
    await output.complete(0);
    expect(JSON.parse(text()).rows).toHaveLength(2000);
    expect(drains()).toBeGreaterThan(1);
  });
});

describe("complete(): ok always follows the exit code", () => {
  it("overrides a renderer's ok in either direction and keeps the key order version, ok, …", async () => {
    const a = createCaptureOutput({ json: true });
    a.output.writeJson({ version: 1, ok: true, command: "doctor", findings: [] });
    await a.output.complete(1);
    expect(Object.entries(JSON.parse(a.stdout()))).toEqual([["version", 1], ["ok", false], ["command", "doctor"], ["findings", []]]);
    const b = createCaptureOutput({ json: true });
    b.output.writeJson({ version: 1, ok: false, command: "x", error: { code: "c", message: "m" } });
    await b.output.complete(0);
    expect(JSON.parse(b.stdout())).toEqual({ version: 1, ok: true, command: "x" });
  });

  it("writes nothing before complete(), exactly one document after, and ignores a second complete()", async () => {
    const cap = createCaptureOutput({ json: true });
    cap.output.writeJson({ version: 1, command: "x" });
    expect(cap.stdout()).toBe("");
    await cap.output.complete(0);
    await cap.output.complete(1, { code: "late", message: "too late" });
    expect(JSON.parse(cap.stdout())).toEqual({ version: 1, ok: true, command: "x" });
  });

  it("an error after the document was held turns it into ok:false with the error; with no document, a bare error document", async () => {
    const held = createCaptureOutput({ json: true });
    held.output.writeJson({ version: 1, command: "x", partial: 1 });
    await held.output.complete(75, { code: "state_locked", message: "locked" });
    expect(JSON.parse(held.stdout())).toEqual({ version: 1, ok: false, command: "x", partial: 1, error: { code: "state_locked", message: "locked" } });
    const none = createCaptureOutput({ json: true });
    await none.output.complete(2, { code: "usage", message: "bad flag" });
    expect(JSON.parse(none.stdout())).toEqual({ version: 1, ok: false, error: { code: "usage", message: "bad flag" } });
  });

  it("a streamed document that was cut by an error ends ok:false with that error, never a second document", async () => {
    const cap = createCaptureOutput({ json: true });
    function* rows() {
      yield { id: 1 };
      throw new Error("disk read failed");
    }
    await cap.output.writeJsonStream({ version: 1 }, "rows", rows());
    await cap.output.complete(1, { code: "internal_error", message: "Unexpected failure" });
    const text = cap.stdout();
    expect(JSON.parse(text)).toEqual({ version: 1, rows: [{ id: 1 }], ok: false, error: { code: "internal_error", message: "Unexpected failure" } });
  });

  it("refuses to start a second document", () => {
    const cap = createCaptureOutput({ json: true });
    cap.output.writeJson({ version: 1 });
    expect(() => cap.output.writeJson({ version: 1 })).toThrow(/second JSON document/);
  });

  it("human mode: complete() writes nothing", async () => {
    const cap = createCaptureOutput();
    await cap.output.complete(1, { code: "x", message: "y" });
    expect(cap.stdout()).toBe("");
  });
});

describe("writeJson", () => {
  it("jsonPieces is JSON.stringify(value, null, 2), piece by piece", () => {
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    const values: unknown[] = [
      { version: 1, nested: { list: [1, "two", null, true, { deep: [[]] }], empty: {}, none: [] }, skipped: undefined, fn: () => 1 },
      [undefined, () => 1, Symbol("s"), 3],
      { when: new Date(0), map: new Map([["k", 1]]), nullProto, text: "line\nbreak \u2028 é \ud83d\ude00" },
      "plain",
      42,
      null,
      [],
      {},
    ];
    for (const value of values) expect([...jsonPieces(value, "")].join("")).toBe(JSON.stringify(value, null, 2));
  });

  it("writes a large held document in chunks, the same text as one pretty print", async () => {
    const writes: string[] = [];
    const output = createOutput({ json: true, quiet: false, verbose: false, color: false, interactive: false, canPrompt: false }, { stdout: (t) => void writes.push(t), stderr: () => {} });
    const sources = Array.from({ length: 5000 }, (_, i) => ({ path: `/state/agents/main/sessions/s-${i}.jsonl`, sha256: "f".repeat(64), notes: [], records: i }));
    output.writeJson({ version: 1, migration: { plan: { sources } } });
    await output.complete(0);
    expect(writes.length).toBeGreaterThan(10);
    expect(Math.max(...writes.map((w) => w.length))).toBeLessThan(256 * 1024);
    expect(writes.join("")).toBe(`${JSON.stringify({ version: 1, ok: true, migration: { plan: { sources } } }, null, 2)}\n`);
  });

  it("waits for a full pipe to drain between the pieces of a held document", async () => {
    const { output, text, drains } = backedUpOutput();
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, pad: "x".repeat(100) }));
    output.writeJson({ version: 1, rows });
    await output.complete(0);
    expect(drains()).toBeGreaterThan(1);
    expect(JSON.parse(text())).toEqual({ version: 1, ok: true, rows });
  });
});
