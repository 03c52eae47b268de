// The injected I/O object: every command writes through it, so tests capture output without spawning.
import { Chalk, type ChalkInstance } from "chalk";

export interface Progress {
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
}

export interface OutputOptions {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
  /** stdout is a terminal: spinners and colour allowed. */
  interactive: boolean;
  /** stdin is a terminal: prompts allowed (never under --json). */
  canPrompt: boolean;
}

export interface Output extends OutputOptions {
  readonly style: ChalkInstance;
  /** Human text: stdout normally, stderr under --json; suppressed by --quiet. */
  log(line: string): void;
  /** Human detail shown only with --verbose. */
  debug(line: string): void;
  /** Warnings and errors: always stderr. */
  warn(line: string): void;
  error(line: string): void;
  /** The one JSON document of a --json run. */
  writeJson(doc: unknown): void;
  /** A spinner on a TTY (never under --json or --quiet); a no-op elsewhere. */
  progress(text: string): Progress;
  /** Yes/no question; only call when `canPrompt`. */
  confirm(question: string): Promise<boolean>;
}

export interface Sink {
  stdout(text: string): void;
  stderr(text: string): void;
}

const noopProgress: Progress = { update() {}, succeed() {}, fail() {}, stop() {} };

export function createOutput(options: OutputOptions, sink: Sink, prompt?: (question: string) => Promise<boolean>): Output {
  const style = new Chalk({ level: options.color ? 1 : 0 });
  const human = (line: string): void => (options.json ? sink.stderr(`${line}\n`) : sink.stdout(`${line}\n`));
  return {
    ...options,
    style,
    log(line) {
      if (!options.quiet) human(line);
    },
    debug(line) {
      if (options.verbose && !options.quiet) sink.stderr(`${line}\n`);
    },
    warn(line) {
      sink.stderr(`${line}\n`);
    },
    error(line) {
      sink.stderr(`${line}\n`);
    },
    writeJson(doc) {
      sink.stdout(`${JSON.stringify(doc, null, 2)}\n`);
    },
    progress(text) {
      if (!options.interactive || options.json || options.quiet) return noopProgress;
      return createSpinner(text);
    },
    async confirm(question) {
      if (!options.canPrompt || !prompt) return false;
      return prompt(question);
    },
  };
}

/** Output for the real process: colour and spinners follow the terminal and NO_COLOR/FORCE_COLOR. */
export function createProcessOutput(flags: { json?: boolean; quiet?: boolean; verbose?: boolean; color?: boolean }): Output {
  // A terminal that reports no width (some ptys) would make the spinner's line clearing run away.
  const interactive = Boolean(process.stdout.isTTY) && !flags.json && (process.stderr.columns ?? 0) > 0;
  const env = process.env;
  let color = interactive;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") color = true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") color = false;
  if (flags.color === false || flags.json) color = false;
  return createOutput(
    {
      json: Boolean(flags.json),
      quiet: Boolean(flags.quiet),
      verbose: Boolean(flags.verbose),
      color,
      interactive,
      canPrompt: Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY) && !flags.json,
    },
    { stdout: (t) => void process.stdout.write(t), stderr: (t) => void process.stderr.write(t) },
    askOnTerminal,
  );
}

async function askOnTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** ora is loaded on first use so that commands without progress never pay for it. */
function createSpinner(text: string): Progress {
  let spinner: { text: string; succeed(t?: string): unknown; fail(t?: string): unknown; stop(): unknown } | undefined;
  let pending = text;
  let done = false;
  void import("ora").then(({ default: ora }) => {
    if (done) return;
    spinner = ora({ text: pending, stream: process.stderr }).start();
  });
  return {
    update(t) {
      pending = t;
      if (spinner) spinner.text = t;
    },
    succeed(t) {
      done = true;
      if (spinner) spinner.succeed(t);
      else if (t) process.stderr.write(`✓ ${t}\n`);
    },
    fail(t) {
      done = true;
      if (spinner) spinner.fail(t);
      else if (t) process.stderr.write(`✗ ${t}\n`);
    },
    stop() {
      done = true;
      spinner?.stop();
    },
  };
}

export interface CapturedOutput {
  output: Output;
  stdout(): string;
  stderr(): string;
}

/** Output for tests: everything captured as strings; prompts answered by `answers`. */
export function createCaptureOutput(options: Partial<OutputOptions> = {}, answers: boolean[] = []): CapturedOutput {
  let out = "";
  let err = "";
  const output = createOutput(
    {
      json: false,
      quiet: false,
      verbose: false,
      color: false,
      interactive: false,
      canPrompt: answers.length > 0,
      ...options,
    },
    { stdout: (t) => void (out += t), stderr: (t) => void (err += t) },
    async () => answers.shift() ?? false,
  );
  return { output, stdout: () => out, stderr: () => err };
}
