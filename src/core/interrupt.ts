// What a run may leave behind on Ctrl-C (staging dirs, partial archives): removed on the first signal, named on a second.
import fs from "node:fs";
import os from "node:os";

/** Something on disk a run would leave behind if it were killed now, and what it is (for the operator). */
export interface Leftover {
  path: string;
  what: string;
}

interface Entry extends Leftover {
  remove: () => unknown;
}

/** Settings the CLI provides: core code never prints, so the words for the terminal come from there. */
export interface InterruptHooks {
  /** The first signal arrived while something is registered: cleanup starts now. */
  onCleanup?(pending: readonly Leftover[]): void;
  /** A second signal ended the run before cleanup finished: what is still on disk. Must be synchronous. */
  onAbandon?(left: readonly Leftover[]): void;
  /** Test hook: how long cleanup waits before it starts, so a test can land a second signal inside it. */
  cleanupDelayMs?: number;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const entries = new Set<Entry>();
const listeners = new Map<NodeJS.Signals, () => void>();
let hooks: InterruptHooks = {};
/** The first signal, once one arrived: the run is being cleaned up and then ends by it. */
let interruptedBy: NodeJS.Signals | null = null;

export function setInterruptHooks(next: InterruptHooks): void {
  hooks = next;
}

/** The signal that interrupted this run, or null. Commit points (publish, swap, stream) check it before they act. */
export function interruptSignal(): NodeJS.Signals | null {
  return interruptedBy;
}

/**
 * Registers `path` as something this run would leave behind; `remove` (default: delete it recursively) runs on the
 * first SIGINT/SIGTERM/SIGHUP, after which the process dies by that signal (130 for Ctrl-C). The returned function
 * unregisters it (the run removed or published it itself). While nothing is registered no listener is installed,
 * so a signal keeps the kernel's default action: it kills at once even inside a long synchronous step.
 */
export function registerLeftover(leftover: Leftover, remove?: () => unknown): () => void {
  const entry: Entry = { ...leftover, remove: remove ?? (() => fs.promises.rm(leftover.path, { recursive: true, force: true })) };
  entries.add(entry);
  hook();
  return () => {
    entries.delete(entry);
    if (entries.size === 0 && interruptedBy === null) unhook();
  };
}

/** What is registered now (tests, and the CLI's messages). */
export function pendingLeftovers(): Leftover[] {
  return [...entries].map(({ path, what }) => ({ path, what }));
}

function hook(): void {
  if (listeners.size > 0) return;
  for (const signal of SIGNALS) {
    const listener = (): void => onSignal(signal);
    listeners.set(signal, listener);
    process.on(signal, listener);
  }
}

function unhook(): void {
  for (const [signal, listener] of listeners) process.removeListener(signal, listener);
  listeners.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  if (interruptedBy === null) {
    interruptedBy = signal;
    void cleanUp(signal);
    return;
  }
  // A second signal: no more cleanup, no waiting. Whatever is still on disk is named, then the process goes.
  const left = pendingLeftovers().filter((l) => exists(l.path));
  try {
    hooks.onAbandon?.(left);
  } finally {
    die(signal);
  }
}

/** Removes every registered leftover (asynchronously, so a second signal is heard meanwhile), then dies by `signal`. */
async function cleanUp(signal: NodeJS.Signals): Promise<void> {
  try {
    hooks.onCleanup?.(pendingLeftovers());
  } catch {
    // Words only; cleanup goes on.
  }
  if (hooks.cleanupDelayMs) await new Promise((r) => setTimeout(r, hooks.cleanupDelayMs));
  // The command runs on meanwhile and may register more (or remove its own): each entry is tried once.
  const tried = new Set<Entry>();
  for (let next = [...entries].find((e) => !tried.has(e)); next; next = [...entries].find((e) => !tried.has(e))) {
    tried.add(next);
    try {
      await next.remove();
      entries.delete(next);
    } catch {
      // Stays registered: a second signal names it; otherwise the next run's sweep (or `doctor`) finds it.
    }
  }
  die(signal);
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends the process by `signal` with our listeners gone, so it dies as it would have without them (the shell reports
 * 128+n, 130 for SIGINT). Another listener for that signal (none in the CLI) would swallow it: then exit with 128+n.
 */
function die(signal: NodeJS.Signals): void {
  unhook();
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  else process.exit(128 + (os.constants.signals[signal] ?? 2));
}
