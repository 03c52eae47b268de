// normalizeEntry's delivery fold on every recorded shape: the answers are OpenClaw 2026.9.6's own (legacy-delivery-shapes.ts).
import { describe, expect, it } from "vitest";
import { normalizeEntry } from "../../../src/state/upgrade/agent-entry-shape.js";
import { LEGACY_DELIVERY_KEYS } from "../../../src/state/upgrade/legacy-delivery.js";
import { LEGACY_DELIVERY_SHAPES } from "./legacy-delivery-shapes.js";

describe("legacy route fields folded into delivery", () => {
  it.each(Object.entries(LEGACY_DELIVERY_SHAPES))("%s", (_name, shape) => {
    const { entry } = normalizeEntry(structuredClone(shape.entry), "s-1", 1000);
    expect(entry.delivery).toEqual(shape.delivery);
    // Every legacy route key is gone once folded; the entry's identity is the row's.
    for (const key of LEGACY_DELIVERY_KEYS) expect(entry).not.toHaveProperty(key);
    expect(entry).toMatchObject({ sessionId: "s-1", updatedAt: 1000 });
  });

  it("copies a bare origin's chat type when the entry has none, never over the entry's own", () => {
    const origin = { provider: "discord", from: "user:1", chatType: "group" };
    expect(normalizeEntry({ origin }, "s-1", 1).entry.chatType).toBe("group");
    expect(normalizeEntry({ origin, chatType: "direct" }, "s-1", 1).entry.chatType).toBe("direct");
  });

  it("drops the skills snapshot's runtime cache (resolvedSkills) and keeps the rest of the snapshot", () => {
    const { entry } = normalizeEntry({ skillsSnapshot: { prompt: "p", skills: [{ name: "a" }], resolvedSkills: [{ name: "a", path: "/x" }] } }, "s-1", 1);
    expect(entry.skillsSnapshot).toEqual({ prompt: "p", skills: [{ name: "a" }] });
  });
});
