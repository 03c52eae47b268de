// The one width every human renderer fits: the terminal's columns, else $COLUMNS, else 120 (pipes, files, CI logs);
// never below 40, where no table is readable anyway.
export const DEFAULT_WIDTH = 120;
const MIN_WIDTH = 40;

export function terminalWidth(env: NodeJS.ProcessEnv, stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (stream.isTTY && typeof stream.columns === "number" && stream.columns > 0) return Math.max(MIN_WIDTH, stream.columns);
  const fromEnv = Number(env.COLUMNS?.trim());
  return Number.isSafeInteger(fromEnv) && fromEnv > 0 ? Math.max(MIN_WIDTH, fromEnv) : DEFAULT_WIDTH;
}
