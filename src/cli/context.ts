// What every command action receives: the resolved paths, the global flags and the injected output.
import type { Command } from "commander";
import { resolveStatePaths, type StatePaths } from "../state/paths.js";
import { assertStateDir } from "../state/state-dir.js";
import type { Output } from "./output.js";

export interface GlobalFlags {
  stateDir?: string;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
  /** Never prompt, even on a terminal (global `--non-interactive`): consent must come from `--yes`. */
  nonInteractive: boolean;
}

export interface CliHost {
  env: NodeJS.ProcessEnv;
  /** Builds the output object once the global flags are known. */
  createOutput(flags: GlobalFlags): Output;
  /** Receives each action's exit code; the entry point is the only place that exits. */
  setExitCode(code: number): void;
}

export interface CommandContext {
  output: Output;
  paths: StatePaths;
  flags: GlobalFlags;
  env: NodeJS.ProcessEnv;
}

export function readGlobalFlags(command: Command): GlobalFlags {
  const o = command.optsWithGlobals() as Record<string, unknown>;
  return {
    stateDir: typeof o.stateDir === "string" ? o.stateDir : undefined,
    json: o.json === true,
    quiet: o.quiet === true,
    verbose: o.verbose === true,
    color: o.color !== false,
    nonInteractive: o.nonInteractive === true,
  };
}

/**
 * What a command needs at the state dir: `read` — an existing directory (else exit 1 "no state at <path>");
 * `write` — a directory or nothing yet, never a file/FIFO/… (exit 1, nothing changed); `any` — no check.
 */
export type StateNeed = "read" | "write" | "any";

/** `overrides` lets a command's own flag set a global one (`sessions list --format json` is `--json`). */
export function createCommandContext(command: Command, host: CliHost, need: StateNeed = "any", overrides: Partial<GlobalFlags> = {}): CommandContext {
  const flags = { ...readGlobalFlags(command), ...overrides };
  const made = host.createOutput(flags);
  // Whatever output the host built, --non-interactive means no question is ever asked.
  const output: Output = flags.nonInteractive ? { ...made, canPrompt: false, confirm: async () => false, choose: async () => undefined } : made;
  const paths = resolveStatePaths({ stateDir: flags.stateDir, env: host.env });
  if (need !== "any") assertStateDir(paths, need);
  return { flags, env: host.env, output, paths };
}

/** Wraps a successful command result in the `--json` envelope. */
export function jsonEnvelope(command: string, result: object): Record<string, unknown> {
  return { version: 1, ok: true, command, ...result };
}
