// The injected I/O object: every command writes through it, so tests capture output without spawning.
import { Chalk, type ChalkInstance } from "chalk";
import { OpenclawStateError, describeError } from "../core/errors.js";

export interface Progress {
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
}

/** One option of a `choose` prompt. */
export interface Choice<T extends string = string> {
  value: T;
  label: string;
  /** One line saying what picking it means. */
  hint?: string;
}

export type ConfirmPrompt = (question: string) => Promise<boolean>;
export type ChoosePrompt = (question: string, choices: readonly Choice[]) => Promise<string | undefined>;

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
  /** One compact JSON line on stdout: only for the documented NDJSON stream (`sessions tail --json`). */
  writeJsonLine(doc: unknown): void;
  /**
   * The one JSON document of a --json run, with the `arrayKey` array written item by item (bounded memory
   * for huge listings). `"ok"` comes last: true, or false plus `"error"` when `items` threw midway — the
   * error is then returned (not thrown) because the document already reports it.
   */
  writeJsonStream(head: Record<string, unknown>, arrayKey: string, items: Iterable<unknown>): Promise<JsonStreamResult>;
  /** Resolves once stdout has drained what earlier writes queued (call between big batches of lines). */
  flush(): Promise<void>;
  /** A spinner on a TTY (never under --json or --quiet); a no-op elsewhere. */
  progress(text: string): Progress;
  /** Yes/no question; only call when `canPrompt`. */
  confirm(question: string): Promise<boolean>;
  /** Pick one of `choices`; only call when `canPrompt`. Undefined when the operator cancels. */
  choose<T extends string>(question: string, choices: readonly Choice<T>[]): Promise<T | undefined>;
}

export interface Sink {
  /** `false` means the text was queued behind a full pipe: wait for `drain` before writing more. */
  stdout(text: string): boolean | void;
  stderr(text: string): void;
  drain?(): Promise<void>;
}

export interface JsonStreamResult {
  count: number;
  /** What cut the array short (already recorded in the document). */
  error?: unknown;
}

/** Streamed documents flush in chunks of this size, so pipes see few large writes. */
const JSON_STREAM_CHUNK = 64 * 1024;

const noopProgress: Progress = { update() {}, succeed() {}, fail() {}, stop() {} };

export function createOutput(options: OutputOptions, sink: Sink, prompt?: ConfirmPrompt, choosePrompt?: ChoosePrompt): Output {
  const style = new Chalk({ level: options.color ? 1 : 0 });
  let backedUp = false;
  const out = (text: string): void => {
    if (sink.stdout(text) === false) backedUp = true;
  };
  const flush = async (): Promise<void> => {
    if (!backedUp) return;
    backedUp = false;
    if (sink.drain) await sink.drain();
  };
  const human = (line: string): void => (options.json ? sink.stderr(`${line}\n`) : out(`${line}\n`));
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
      out(`${JSON.stringify(doc, null, 2)}\n`);
    },
    writeJsonLine(doc) {
      out(`${JSON.stringify(doc)}\n`);
    },
    async writeJsonStream(head, arrayKey, items) {
      let buffer = "{";
      let first = true;
      const emit = async (force: boolean): Promise<void> => {
        if (!force && buffer.length < JSON_STREAM_CHUNK) return;
        out(buffer);
        buffer = "";
        await flush();
      };
      const field = (key: string, value: unknown): void => {
        buffer += `${first ? "" : ","}\n  ${JSON.stringify(key)}: ${indentJson(value, "  ")}`;
        first = false;
      };
      for (const [key, value] of Object.entries(head)) field(key, value);
      buffer += `${first ? "" : ","}\n  ${JSON.stringify(arrayKey)}: [`;
      first = false;
      let count = 0;
      let failure: unknown;
      try {
        for (const item of items) {
          buffer += `${count === 0 ? "" : ","}\n    ${indentJson(item, "    ")}`;
          count += 1;
          await emit(false);
        }
      } catch (error) {
        failure = error;
      }
      buffer += count === 0 ? "]" : "\n  ]";
      if (failure === undefined) {
        field("ok", true);
      } else {
        field("ok", false);
        const code = failure instanceof OpenclawStateError ? failure.code : "internal_error";
        field("error", { code, message: describeError(failure) });
      }
      buffer += "\n}\n";
      await emit(true);
      return failure === undefined ? { count } : { count, error: failure };
    },
    flush,
    progress(text) {
      if (!options.interactive || options.json || options.quiet) return noopProgress;
      return createSpinner(text);
    },
    async confirm(question) {
      if (!options.canPrompt || !prompt) return false;
      return prompt(question);
    },
    async choose<T extends string>(question: string, choices: readonly Choice<T>[]): Promise<T | undefined> {
      if (!options.canPrompt || !choosePrompt) return undefined;
      const picked = await choosePrompt(question, choices);
      // Only a listed value counts: a prompt implementation can never smuggle in another one.
      return choices.find((c) => c.value === picked)?.value;
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
    {
      // A reader that went away (`| head`) must not crash or stall a streamed listing.
      stdout: (t) => (process.stdout.destroyed ? true : process.stdout.write(t)),
      stderr: (t) => void process.stderr.write(t),
      drain: () => waitForStdout(),
    },
    askOnTerminal,
    chooseOnTerminal,
  );
}

function waitForStdout(): Promise<void> {
  const stdout = process.stdout;
  if (stdout.writableLength === 0 || stdout.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stdout.off("drain", done);
      stdout.off("error", done);
      stdout.off("close", done);
      resolve();
    };
    stdout.once("drain", done);
    stdout.once("error", done);
    stdout.once("close", done);
  });
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

/** Numbered list on stderr; the answer is a number or a value, empty cancels. */
async function chooseOnTerminal(question: string, choices: readonly Choice[]): Promise<string | undefined> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`${question}\n`);
    choices.forEach((c, i) => process.stderr.write(`  ${i + 1}) ${c.label}${c.hint ? ` — ${c.hint}` : ""}\n`));
    const answer = (await rl.question(`Choose 1-${choices.length} (empty to cancel): `)).trim();
    if (answer === "") return undefined;
    const n = Number(answer);
    if (Number.isInteger(n) && n >= 1 && n <= choices.length) return choices[n - 1]!.value;
    return choices.find((c) => c.value === answer)?.value;
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

/** Output for tests: everything captured as strings; prompts answered in order by `answers` (booleans for confirm, values for choose). */
export function createCaptureOutput(options: Partial<OutputOptions> = {}, answers: Array<boolean | string> = []): CapturedOutput {
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
    async () => answers.shift() === true,
    async () => {
      const answer = answers.shift();
      return typeof answer === "string" ? answer : undefined;
    },
  );
  return { output, stdout: () => out, stderr: () => err };
}

/** JSON.stringify(value, null, 2) re-indented to sit `indent` deep inside a streamed document. */
function indentJson(value: unknown, indent: string): string {
  return (JSON.stringify(value, null, 2) ?? "null").replace(/\n/g, `\n${indent}`);
}
