// Full garbage collections between large batches of work, so peak RSS follows live data, not V8's lazy growth.
import v8 from "node:v8";
import vm from "node:vm";

let collect: (() => void) | null | undefined;

/**
 * V8 lets garbage pile up in the old generation until a limit sized for a multi-GB heap: a migration of
 * ~10k files held ~6 MB of live data but peaked at 270 MB RSS. `--expose-gc` is turned on at run time
 * (the pattern jest's leak detector uses); where that is refused this is a no-op.
 */
export function collectGarbage(): void {
  if (collect === undefined) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    try {
      if (exposed) collect = exposed;
      else {
        v8.setFlagsFromString("--expose-gc");
        collect = vm.runInNewContext("gc") as () => void;
      }
    } catch {
      collect = null;
    }
  }
  collect?.();
}

/**
 * A full collection that also hands freed heap pages back to the system (V8's "last resort" flavour, the one
 * it runs under memory pressure): a plain collection leaves them committed, so RSS keeps the high-water mark
 * of every earlier phase. A few times per command, between phases; slower than collectGarbage().
 */
export function releaseMemory(): void {
  collectGarbage();
  (collect as ((options?: { type: string; execution: string; flavor: string }) => void) | null | undefined)?.({ type: "major", execution: "sync", flavor: "last-resort" });
}
