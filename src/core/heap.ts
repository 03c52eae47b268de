// Full garbage collections between large batches of work, when the process was started with --expose-gc.

type GcFunction = (options?: { type: string; execution: string; flavor: string }) => void;

/**
 * V8 lets garbage pile up in the old generation until a limit sized for a multi-GB heap: a migration of ~10k
 * files holds ~6 MB of live data but can peak far higher in RSS. Collecting between batches keeps the peak near
 * the live data, but only a process started with `node --expose-gc` has a `gc()` to call. Turning the flag on
 * at run time (v8.setFlagsFromString) is what Node documents as able to crash the process, so this never does:
 * without the flag these calls do nothing and V8's own heuristics decide (correct results, a higher peak).
 */
function exposedGc(): GcFunction | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === "function" ? (gc as GcFunction) : undefined;
}

/** A full collection, when the process has `gc()` (`node --expose-gc`); otherwise nothing. */
export function collectGarbage(): void {
  exposedGc()?.();
}

/**
 * A full collection that also hands freed heap pages back to the system (V8's "last resort" flavour, the one
 * it runs under memory pressure): a plain collection leaves them committed, so RSS keeps the high-water mark
 * of every earlier phase. A few times per command, between phases; slower than collectGarbage(). Nothing
 * without `--expose-gc`.
 */
export function releaseMemory(): void {
  exposedGc()?.({ type: "major", execution: "sync", flavor: "last-resort" });
}
