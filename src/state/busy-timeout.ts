// The SQLite busy timeout every connection sets first; its own module so light code (the worker) can use it.

/** Default busy timeout in ms; set before anything else so no statement runs unprotected. */
export const BUSY_TIMEOUT_MS = 30_000;

/**
 * The busy timeout connections use: OPENCLAW_STATE_BUSY_TIMEOUT_MS (a whole number of ms, 0 allowed) when set,
 * else BUSY_TIMEOUT_MS. Read here only, so every connection (main thread and worker) agrees.
 */
export function defaultBusyTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.OPENCLAW_STATE_BUSY_TIMEOUT_MS?.trim();
  if (raw === undefined || raw === "") return BUSY_TIMEOUT_MS;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : BUSY_TIMEOUT_MS;
}
