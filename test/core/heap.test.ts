// collectGarbage runs a full collection only in a process started with --expose-gc, and never turns the flag on itself.
import { execFileSync } from "node:child_process";
import path from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { collectGarbage, releaseMemory } from "../../src/core/heap.js";
import { repoRoot } from "../helpers/temp-state.js";

/** Runs a module snippet in a fresh node with the given flags (the compiled heap module, as the binary loads it). */
function node(flags: string[], body: string): string {
  const heap = JSON.stringify(path.join(repoRoot, "dist", "core", "heap.js"));
  return execFileSync(process.execPath, [...flags, "--input-type=module", "-e", `import { collectGarbage, releaseMemory } from ${heap};\n${body}`], { encoding: "utf8" }).trim();
}

// An unreachable object behind a WeakRef: gone after a full collection (WeakRefs clear only after the job ends).
const COLLECTS = `
let target = { payload: new Array(1000).fill("x") };
const ref = new WeakRef(target);
target = null;
await new Promise((r) => setImmediate(r));
collectGarbage();
await new Promise((r) => setImmediate(r));
const first = ref.deref() === undefined;
releaseMemory();
process.stdout.write(String(first));`;

describe("collectGarbage", () => {
  it("collects an unreachable object when node runs with --expose-gc", () => {
    expect(node(["--expose-gc"], COLLECTS)).toBe("true");
  });

  it("without --expose-gc does nothing and leaves V8's flags alone (no run-time setFlagsFromString)", () => {
    expect(() => {
      collectGarbage();
      releaseMemory();
    }).not.toThrow();
    // Had it turned --expose-gc on, a new context would now see a global gc.
    expect(vm.runInNewContext("typeof gc")).toBe("undefined");
    expect(node([], `collectGarbage(); releaseMemory(); process.stdout.write(typeof globalThis.gc + " " + (await import("node:vm")).runInNewContext("typeof gc"));`)).toBe("undefined undefined");
  });
});
