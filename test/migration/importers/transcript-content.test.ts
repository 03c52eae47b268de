// Message content as OpenClaw 2026.9.6's codec reads it (string → one text part), on every recorded shape and through the normalizer of every version.
import { describe, expect, it } from "vitest";
import { loadedContentShape, TranscriptNormalizer } from "../../../src/migration/importers/transcript-normalize.js";
import { TRANSCRIPT_CONTENT_SHAPES } from "./transcript-content-shapes.js";

describe("message content shaped as OpenClaw's codec reads it", () => {
  it.each(Object.entries(TRANSCRIPT_CONTENT_SHAPES))("%s", (_name, shape) => {
    const input = structuredClone(shape.entry);
    const out = loadedContentShape(input);
    // Same keys in the same order as 9.6's in-place rewrite, and the input is never mutated.
    expect(JSON.stringify(out)).toBe(JSON.stringify(shape.stored));
    expect(input).toEqual(shape.entry);
  });

  it("a v3 line is stored reshaped; an unchanged v3 line stays byte for byte", () => {
    const normalizer = new TranscriptNormalizer(3);
    const line = '{"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":"hi"}}';
    expect(JSON.parse(normalizer.entry(JSON.parse(line) as Record<string, unknown>, line, 2).json)).toEqual({ type: "message", id: "a1", parentId: null, message: { role: "assistant", content: [{ type: "text", text: "hi" }] } });
    const same = '{"type":"message", "id":"u1","parentId":"a1","message":{"role":"user","content":"hi"}}';
    expect(normalizer.entry(JSON.parse(same) as Record<string, unknown>, same, 3).json).toBe(same);
  });

  it("a v1 assistant line with string content gets its id and the array content, as 9.6 stores it", () => {
    const normalizer = new TranscriptNormalizer(1, { ids: { sourcePath: "/s/agents/main/sessions/s1.jsonl", sessionId: "s1" } });
    const line = '{"type":"message","message":{"role":"assistant","content":"hi"}}';
    const event = JSON.parse(normalizer.entry(JSON.parse(line) as Record<string, unknown>, line, 2).json) as { id: string; message: unknown };
    expect(event.id).toMatch(/^[0-9a-f]{16}-1$/);
    expect(event.message).toEqual({ role: "assistant", content: [{ type: "text", text: "hi" }] });
  });

  it("a v1 record 9.6's codec does not recognize is stored as written, even when it carries an id of its own", () => {
    const normalizer = new TranscriptNormalizer(1, { ids: { sourcePath: "/s/agents/main/sessions/s1.jsonl", sessionId: "s1" } });
    const line = '{"type":"message","id":"own","message":{"role":"hookMessage","content":42}}';
    expect(normalizer.entry(JSON.parse(line) as Record<string, unknown>, line, 2).json).toBe(line);
  });
});
