// The injected I/O object: every command writes through it, so tests capture output without spawning.
import { Chalk, type ChalkInstance } from "chalk";
import { OpenclawStateError, describeError } from "../core/errors.js";
import { DEFAULT_WIDTH, terminalWidth } from "./render/terminal-width.js";

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
  /** Width human tables fit: the terminal's, else $COLUMNS, else DEFAULT_COLUMNS. */
  columns?: number;
  /**
   * Whether stdout is a terminal. False (a pipe, a file): `--json` documents are one compact line and listings
   * default to tab-separated rows. Unset (tests, embedders) counts as a terminal: pretty JSON, tables.
   */
  stdoutTTY?: boolean;
}

/** Table width when stdout is not a terminal and $COLUMNS is unset (mail, logs, pipes). */
export const DEFAULT_COLUMNS = DEFAULT_WIDTH;

/** The terminal's width; off a terminal $COLUMNS (at least 40), else DEFAULT_COLUMNS (one rule: terminal-width.ts). */
export function outputColumns(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv): number {
  return terminalWidth(env, stream);
}

export interface Output extends OutputOptions {
  readonly style: ChalkInstance;
  /** Human text (progress, success, the report): stdout normally, stderr under --json; dropped by --quiet. */
  log(line: string): void;
  /**
   * A report line that needs action (an error or warning finding, a failed item): printed like `log`, but
   * under --quiet it still goes out, on stderr — cron mails only what is printed.
   */
  notice(line: string): void;
  /** Human detail shown only with --verbose. */
  debug(line: string): void;
  /** Warnings and errors: always stderr. */
  warn(line: string): void;
  error(line: string): void;
  /**
   * The one JSON document of a --json run. It is held until `complete()`, which sets its `"ok"` from the
   * exit code: a renderer cannot print an `ok` that disagrees with how the process ends.
   */
  writeJson(doc: Record<string, unknown>): void;
  /**
   * One compact JSON line on stdout: only for the documented NDJSON stream (`sessions tail --json`). Once used,
   * `complete()` writes no document: a failure becomes one more compact `{"ok":false,"error"}` line.
   */
  writeJsonLine(doc: Record<string, unknown>): void;
  /**
   * The one JSON document of a --json run, with the `arrayKey` array written item by item (bounded memory
   * for huge listings). The closing `"ok"` (and `"error"` when `items` threw midway — returned, not thrown)
   * is written by `complete()`.
   */
  writeJsonStream(head: Record<string, unknown>, arrayKey: string, items: Iterable<unknown>): Promise<JsonStreamResult>;
  /**
   * Called once by the code that ends the command (run-cli): under --json it finishes the one document with
   * `"ok": exitCode === 0` (and `error` when given), or writes an error/bare document when none was started.
   */
  complete(exitCode: number, error?: JsonError): Promise<void>;
  /** True once stdout's reader went away (`| head`): long listings stop early, nothing more is written. */
  isClosed(): boolean;
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
  /** True when stdout's reader has gone away. */
  closed?(): boolean;
}

export interface JsonError {
  code: string;
  message: string;
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
  // Off a terminal the document is one line (`| jq`, log files, `grep`); on one it is indented for reading.
  const compact = options.stdoutTTY === false;
  const nl = compact ? "" : "\n";
  const sep = compact ? ":" : ": ";
  const jsonText = (value: unknown, indent: string): string => (compact ? (JSON.stringify(value) ?? "null") : indentJson(value, indent));
  // The JSON document's state: held whole (writeJson) or streamed up to its tail (writeJsonStream).
  let held: Record<string, unknown> | undefined;
  let stream: { failure: unknown } | undefined;
  let ndjson = false;
  let completed = false;
  const startDocument = (): void => {
    if (held !== undefined || stream !== undefined || ndjson || completed) throw new Error("internal: a second JSON document was started; --json prints exactly one");
  };
  return {
    ...options,
    style,
    log(line) {
      if (!options.quiet) human(line);
    },
    notice(line) {
      if (options.quiet) sink.stderr(`${line}\n`);
      else human(line);
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
      startDocument();
      held = doc;
    },
    writeJsonLine(doc) {
      if (held !== undefined || stream !== undefined) throw new Error("internal: a JSON line after a JSON document; --json prints exactly one");
      ndjson = true;
      out(`${JSON.stringify(doc)}\n`);
    },
    async writeJsonStream(head, arrayKey, items) {
      startDocument();
      stream = { failure: undefined };
      let buffer = "{";
      let first = true;
      const emit = async (force: boolean): Promise<void> => {
        if (!force && buffer.length < JSON_STREAM_CHUNK) return;
        out(buffer);
        buffer = "";
        await flush();
      };
      for (const [key, value] of Object.entries(head)) {
        buffer += `${first ? "" : ","}${nl}${compact ? "" : "  "}${JSON.stringify(key)}${sep}${jsonText(value, "  ")}`;
        first = false;
      }
      buffer += `${first ? "" : ","}${nl}${compact ? "" : "  "}${JSON.stringify(arrayKey)}${sep}[`;
      let count = 0;
      try {
        for (const item of items) {
          buffer += `${count === 0 ? "" : ","}${nl}${compact ? "" : "    "}${jsonText(item, "    ")}`;
          count += 1;
          await emit(false);
          // Nobody reads any more (`| head`): stop walking rows that would be thrown away.
          if (sink.closed?.()) break;
        }
      } catch (error) {
        stream.failure = error;
      }
      buffer += count === 0 || compact ? "]" : "\n  ]";
      await emit(true);
      return stream.failure === undefined ? { count } : { count, error: stream.failure };
    },
    async complete(exitCode, error) {
      if (completed) return;
      completed = true;
      if (!options.json) return;
      const ok = exitCode === 0;
      const failure = error ?? (stream?.failure !== undefined ? jsonErrorOf(stream.failure) : undefined);
      if (ndjson) {
        if (!ok) out(`${JSON.stringify({ version: 1, ok: false, ...(failure ? { error: failure } : {}) })}\n`);
        return;
      }
      if (stream !== undefined) {
        const tail = compact
          ? `,"ok":${ok}${!ok && failure ? `,"error":${JSON.stringify(failure)}` : ""}}\n`
          : `,\n  "ok": ${ok}${!ok && failure ? `,\n  "error": ${indentJson(failure, "  ")}` : ""}\n}\n`;
        out(tail);
        return;
      }
      const { version, ok: _claimed, error: ownError, ...rest } = held ?? {};
      const doc: Record<string, unknown> = { version: version ?? 1, ok, ...rest };
      if (!ok && (ownError !== undefined || failure !== undefined)) doc.error = failure ?? ownError;
      // In pieces, waiting for a full pipe to drain: a --fix over 20k sources is a 40 MB document, which as one
      // string (or queued behind a slow reader) doubled the run's peak RSS. Without backpressure nothing awaits.
      let buffer = "";
      for (const piece of compact ? compactJsonPieces(doc) : jsonPieces(doc, "")) {
        buffer += piece;
        if (buffer.length < JSON_STREAM_CHUNK) continue;
        out(buffer);
        buffer = "";
        if (backedUp) await flush();
      }
      out(`${buffer}\n`);
    },
    isClosed() {
      return sink.closed?.() ?? false;
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

/** The `{code, message}` of a thrown value, as --json reports it. */
export function jsonErrorOf(error: unknown): JsonError {
  return { code: error instanceof OpenclawStateError ? error.code : "internal_error", message: describeError(error) };
}

/** Output for the real process: colour and spinners follow the terminal and NO_COLOR/FORCE_COLOR. */
export function createProcessOutput(flags: { json?: boolean; quiet?: boolean; verbose?: boolean; color?: boolean; nonInteractive?: boolean }): Output {
  installPipeGuards();
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
      canPrompt: Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY) && !flags.json && !flags.nonInteractive,
      columns: outputColumns(process.stdout, env),
      stdoutTTY: Boolean(process.stdout.isTTY),
    },
    {
      // A reader that went away (`| head`) must not crash or stall the command: later writes are dropped.
      stdout: (t) => (stdoutGone() ? true : process.stdout.write(t)),
      stderr: (t) => void (stderrGone() ? undefined : process.stderr.write(t)),
      drain: () => waitForStdout(),
      closed: stdoutGone,
    },
    askOnTerminal,
    chooseOnTerminal,
  );
}

/**
 * EPIPE (the reader closed the pipe) arrives as an 'error' event after a write; unhandled, it kills the
 * process with a stack trace. Listening marks the stream gone instead, so the command ends quietly.
 */
const gone = { stdout: false, stderr: false };
let pipeGuardsInstalled = false;
function installPipeGuards(): void {
  if (pipeGuardsInstalled) return;
  pipeGuardsInstalled = true;
  process.stdout.on("error", () => {
    gone.stdout = true;
  });
  process.stderr.on("error", () => {
    gone.stderr = true;
  });
}

function stdoutGone(): boolean {
  installPipeGuards();
  return gone.stdout || process.stdout.destroyed || !process.stdout.writable;
}

function stderrGone(): boolean {
  installPipeGuards();
  return gone.stderr || process.stderr.destroyed || !process.stderr.writable;
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
  interruptOnCtrlC(rl);
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/**
 * A prompt reads the terminal in raw mode, so Ctrl-C reaches readline as a byte (by default it would reject the
 * question and the command would fail with exit 1). It ends the run as Ctrl-C does elsewhere: the terminal
 * is given back, then the process re-signals itself with no JS listener in the way and dies by SIGINT (130).
 */
function interruptOnCtrlC(rl: { on(event: "SIGINT", listener: () => void): unknown; close(): void }): void {
  rl.on("SIGINT", () => {
    rl.close();
    process.stderr.write("\n");
    process.kill(process.pid, "SIGINT");
  });
}

/** Numbered list on stderr; the answer is a number or a value, empty cancels. */
async function chooseOnTerminal(question: string, choices: readonly Choice[]): Promise<string | undefined> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  interruptOnCtrlC(rl);
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

/**
 * The spinner never touches the terminal's input or installs a signal handler, so Ctrl-C keeps the kernel's
 * default action and kills the process at once (the shell reports 130), even inside a long synchronous SQLite
 * step. ora's defaults broke both: `discardStdin` puts the tty in raw mode (ISIG off: ^C is a byte, no SIGINT),
 * and `hideCursor` loads signal-exit, whose JS SIGINT listener waits for a free event loop. Without hiding the
 * cursor there is nothing to restore after a kill; a killed run's staging dir is swept by the next create.
 */
export const SPINNER_OPTIONS = { discardStdin: false, hideCursor: false } as const;

/** ora is loaded on first use so that commands without progress never pay for it. */
function createSpinner(text: string): Progress {
  let spinner: { text: string; succeed(t?: string): unknown; fail(t?: string): unknown; stop(): unknown } | undefined;
  let pending = text;
  let done = false;
  void import("ora").then(({ default: ora }) => {
    if (done) return;
    spinner = ora({ ...SPINNER_OPTIONS, text: pending, stream: process.stderr }).start();
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

/**
 * `JSON.stringify(value, null, 2)` as a sequence of pieces, the same text: plain objects and arrays are walked,
 * everything else (and anything with toJSON) is stringified whole.
 */
export function* jsonPieces(value: unknown, indent: string): Generator<string> {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      yield "[]";
      return;
    }
    for (let i = 0; i < value.length; i += 1) {
      yield `${i === 0 ? "[" : ","}\n${inner}`;
      const item: unknown = value[i];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") yield "null";
      else yield* jsonPieces(item, inner);
    }
    yield `\n${indent}]`;
    return;
  }
  if (isPlainObject(value)) {
    let first = true;
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      yield `${first ? "{" : ","}\n${inner}${JSON.stringify(key)}: `;
      first = false;
      yield* jsonPieces(item, inner);
    }
    yield first ? "{}" : `\n${indent}}`;
    return;
  }
  yield indentJson(value, indent);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

/** `JSON.stringify(value)` in pieces (the same text), so a huge document is never one string. */
export function* compactJsonPieces(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    yield "[";
    for (let i = 0; i < value.length; i += 1) {
      if (i > 0) yield ",";
      const item: unknown = value[i];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") yield "null";
      else yield* compactJsonPieces(item);
    }
    yield "]";
    return;
  }
  if (isPlainObject(value)) {
    let first = true;
    yield "{";
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      yield `${first ? "" : ","}${JSON.stringify(key)}:`;
      first = false;
      yield* compactJsonPieces(item);
    }
    yield "}";
    return;
  }
  yield JSON.stringify(value) ?? "null";
}

/** JSON.stringify(value, null, 2) re-indented to sit `indent` deep inside a streamed document. */
function indentJson(value: unknown, indent: string): string {
  return (JSON.stringify(value, null, 2) ?? "null").replace(/\n/g, `\n${indent}`);
}
