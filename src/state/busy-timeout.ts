// The SQLite busy timeout every connection sets first; its own module so light code (the worker) can use it.

/** Busy timeout in ms; set before anything else so no statement runs unprotected. */
export const BUSY_TIMEOUT_MS = 30_000;
