// The words for Ctrl-C: what the first one is cleaning up, and what a second one leaves behind (src/core/interrupt.ts acts).
import { setInterruptHooks, type Leftover } from "../core/interrupt.js";

/** Test hook: cleanup after the first signal waits this long, so a test can land the second signal inside it. */
export const CLEANUP_DELAY_ENV = "OPENCLAW_STATE_TEST_INTERRUPT_DELAY_MS";

/** The line the first signal prints (only when something is being removed). */
export function cleanupLine(pending: readonly Leftover[]): string {
  const n = pending.length;
  return `interrupted: removing ${n === 1 ? "the unfinished run's temporary data" : `${n} temporary dirs of the unfinished run`} (Ctrl-C again to quit at once)`;
}

/** One line per leftover a second signal abandons: where it is, what it is, and that nothing needs it. */
export function leftoverLines(left: readonly Leftover[]): string[] {
  return left.map((l) => `left behind: ${l.path} (${l.what}) — safe to delete`);
}

/** Installs the CLI's words on the core's interrupt handling; called once by the entry point. */
export function installInterruptReporting(stderr: { write(text: string): unknown }, env: NodeJS.ProcessEnv): void {
  const delay = Number(env[CLEANUP_DELAY_ENV]);
  setInterruptHooks({
    // A leading newline: the signal may land in the middle of a spinner or a prompt line.
    onCleanup: (pending) => {
      if (pending.length > 0) stderr.write(`\n${cleanupLine(pending)}\n`);
    },
    // Synchronous on purpose: the process dies right after this returns.
    onAbandon: (left) => {
      for (const line of leftoverLines(left)) stderr.write(`${line}\n`);
    },
    ...(Number.isFinite(delay) && delay > 0 ? { cleanupDelayMs: delay } : {}),
  });
}
