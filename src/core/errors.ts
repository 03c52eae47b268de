// The small set of error classes the tool raises: each has a stable code and the exit code the CLI uses.

/** Exit codes documented in docs/cli.md. */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  locked: 75,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface OpenclawStateErrorOptions {
  cause?: unknown;
  /** Path the error is about, repeated in JSON output. */
  path?: string;
}

/** Base class: `code` is stable across releases and appears in `--json` errors. */
export class OpenclawStateError extends Error {
  readonly code: string;
  readonly exitCode: ExitCodeValue;
  readonly path: string | undefined;

  constructor(code: string, message: string, exitCode: ExitCodeValue = ExitCode.failed, options: OpenclawStateErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.path = options.path;
  }
}

/** Bad flags or arguments: exit 2. */
export class UsageError extends OpenclawStateError {
  constructor(message: string, code = "usage", options: OpenclawStateErrorOptions = {}) {
    super(code, message, ExitCode.usage, options);
  }
}

/** A command needs consent (`--yes`) and cannot prompt: exit 2. */
export class ConsentRequiredError extends UsageError {
  constructor(message: string) {
    super(message, "consent_required");
  }
}

/** Another live process holds the state lease: exit 75 (retry later). */
export class StateLockedError extends OpenclawStateError {
  constructor(message: string, options: OpenclawStateErrorOptions = {}) {
    super("state_locked", message, ExitCode.locked, options);
  }
}

/** Something the user named does not exist: exit 1. */
export class NotFoundError extends OpenclawStateError {
  constructor(message: string, options: OpenclawStateErrorOptions = {}) {
    super("not_found", message, ExitCode.failed, options);
  }
}

/** Options of the format errors: who wrote the database, for callers that report it (never parsed from the message). */
export interface SchemaErrorOptions extends OpenclawStateErrorOptions {
  writtenBy?: string;
}

/** A database written by a newer tool: refused, never touched. */
export class SchemaVersionError extends OpenclawStateError {
  readonly writtenBy: string | undefined;
  constructor(message: string, options: SchemaErrorOptions = {}) {
    super("schema_too_new", message, ExitCode.failed, options);
    this.writtenBy = options.writtenBy;
  }
}

/** A database in another program's format (a released OpenClaw's): refused by the code that interprets rows, never touched. */
export class SchemaFormatError extends OpenclawStateError {
  readonly writtenBy: string | undefined;
  constructor(message: string, options: SchemaErrorOptions = {}) {
    super("schema_format", message, ExitCode.failed, options);
    this.writtenBy = options.writtenBy;
  }
}

/** A database that cannot be opened or is not ours. */
export class DatabaseError extends OpenclawStateError {
  constructor(message: string, options: OpenclawStateErrorOptions = {}) {
    super("database_error", message, ExitCode.failed, options);
  }
}

/** Anything else that failed with a known cause. */
export class OperationError extends OpenclawStateError {
  constructor(code: string, message: string, options: OpenclawStateErrorOptions = {}) {
    super(code, message, ExitCode.failed, options);
  }
}

export function isOpenclawStateError(value: unknown): value is OpenclawStateError {
  return value instanceof OpenclawStateError;
}

/** One-line description of an unknown thrown value, for messages. */
export function describeError(error: unknown): string {
  // better-sqlite3's bare "database is locked" names neither the cause nor the next step.
  if (isSqliteBusy(error)) return SQLITE_BUSY_MESSAGE;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** describeError's text for SQLITE_BUSY. */
export const SQLITE_BUSY_MESSAGE = "the database is locked by another process (still locked when the busy timeout ran out); retry when that process finishes";

/** SQLITE_BUSY (or an extended BUSY code) from better-sqlite3: another connection held the lock past busy_timeout. */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}
