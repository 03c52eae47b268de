// Parses argv, runs the command, and turns every outcome (result, error, usage error) into an exit code.
import { CommanderError, type Command } from "commander";
import { ExitCode, OpenclawStateError, describeError, isSqliteBusy } from "../core/errors.js";
import { createProcessOutput, type Output } from "./output.js";
import type { CliHost, GlobalFlags } from "./context.js";
import { createProgram } from "./program.js";

export interface RunCliOptions {
  /** User arguments (without node and script). */
  argv: string[];
  env?: NodeJS.ProcessEnv;
  /** Test hook: build the output from the flags (defaults to the real process streams). */
  createOutput?: (flags: GlobalFlags) => Output;
}

/** Flags needed before commander runs, so usage errors can be rendered as JSON too. */
function prescanFlags(argv: string[]): GlobalFlags {
  const before = argv.indexOf("--");
  const args = before === -1 ? argv : argv.slice(0, before);
  return {
    json: args.includes("--json"),
    quiet: args.includes("--quiet") || args.includes("-q"),
    verbose: args.includes("--verbose") || args.includes("-v"),
    color: !args.includes("--no-color"),
    nonInteractive: args.includes("--non-interactive"),
  };
}

export async function runCli(options: RunCliOptions): Promise<number> {
  const makeOutput = options.createOutput ?? createProcessOutput;
  const early = makeOutput(prescanFlags(options.argv));
  let exitCode: number = ExitCode.ok;
  let lastOutput: Output = early;
  const host: CliHost = {
    env: options.env ?? process.env,
    createOutput: (flags) => (lastOutput = makeOutput(flags)),
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  const program = createProgram({ host });
  let commanderMessage = "";
  program.exitOverride();
  program.configureOutput({
    writeOut: (text) => early.json ? early.warn(text.trimEnd()) : process.stdout.write(text),
    writeErr: (text) => {
      commanderMessage += text;
    },
    outputError: (text) => {
      commanderMessage += text;
    },
  });
  // Nested groups (`sessions list`, `backup create`) need the same treatment, or commander would exit the process itself.
  const override = (parent: Command): void => {
    for (const sub of parent.commands) {
      sub.exitOverride().configureOutput(program.configureOutput());
      override(sub);
    }
  };
  override(program);
  try {
    await program.parseAsync(options.argv, { from: "user" });
    await lastOutput.complete(exitCode);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help") {
        if (commanderMessage) early.log(commanderMessage.trimEnd());
        return ExitCode.ok;
      }
      const message = (commanderMessage || error.message).replace(/^error: /, "").trim();
      return await renderError(early, "usage", message.split("\n")[0] ?? message, ExitCode.usage, undefined, message);
    }
    if (error instanceof OpenclawStateError) {
      return await renderError(lastOutput, error.code, error.message, error.exitCode, error);
    }
    // A write lock held past the busy timeout is "locked, retry later" (75) wherever it surfaced.
    if (isSqliteBusy(error)) {
      return await renderError(lastOutput, "state_locked", `State is locked: ${describeError(error)}.`, ExitCode.locked, error);
    }
    const fsText = describeFsError(error);
    if (fsText) return await renderError(lastOutput, "filesystem_error", fsText, ExitCode.failed, error);
    return await renderError(lastOutput, "internal_error", `Unexpected failure: ${describeError(error)}`, ExitCode.failed, error);
  }
}

const ERRNO_TEXT: Record<string, string> = {
  EROFS: "read-only filesystem; read commands work on it, commands that write state or backups do not",
  EACCES: "permission denied; run as the user that owns the state, or fix the permissions",
  EPERM: "operation not permitted; run as the user that owns the state, or fix the permissions",
  ENOSPC: "no space left on the device; free some space and retry",
  EDQUOT: "disk quota exceeded; free some space and retry",
  ENOENT: "no such file or directory",
  ENOTDIR: "a part of the path is not a directory",
  EISDIR: "it is a directory",
  EEXIST: "it already exists",
  EMFILE: "too many open files; raise the limit (ulimit -n) and retry",
  EIO: "I/O error from the device",
};

/** A Node file-system error (code + syscall + path) as one sentence, instead of "Unexpected failure". */
function describeFsError(error: unknown): string | null {
  const e = error as { code?: unknown; syscall?: unknown; path?: unknown } | null;
  if (!e || typeof e.code !== "string" || !/^E[A-Z]+$/.test(e.code)) return null;
  const what = ERRNO_TEXT[e.code] ?? describeError(error);
  const op = typeof e.syscall === "string" ? e.syscall : "access";
  return typeof e.path === "string" ? `Cannot ${op} ${e.path}: ${what} (${e.code}).` : `File system error: ${what} (${e.code}).`;
}

/** The one place an error becomes output: the --json document (via complete) or one line on stderr. */
async function renderError(output: Output, code: string, message: string, exitCode: number, error?: unknown, detail?: string): Promise<number> {
  if (output.json) await output.complete(exitCode, { code, message });
  else output.error(`error: ${detail ?? message}`);
  if (output.verbose && error instanceof Error && error.stack) output.error(error.stack);
  return exitCode;
}
