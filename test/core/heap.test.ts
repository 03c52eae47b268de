// collectGarbage really runs a full collection (an unreachable object behind a WeakRef is gone afterwards).
import { describe, expect, it } from "vitest";
import { collectGarbage } from "../../src/core/heap.js";

describe("collectGarbage", () => {
  it("collects an unreachable object", async () => {
    let target: object | null = { payload: new Array(1000).fill("x") };
    const ref = new WeakRef(target);
    target = null;
    // WeakRefs are cleared only after the current job: let it end, collect, let it end again.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
    expect(ref.deref()).toBeUndefined();
  });

  it("can be called repeatedly", () => {
    expect(() => {
      collectGarbage();
      collectGarbage();
    }).not.toThrow();
  });
});
