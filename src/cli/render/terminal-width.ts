// The width human renderers fit lines to: the terminal's columns, else $COLUMNS, else 120 (pipes, files, CI logs).
export const DEFAULT_WIDTH = 120;
const MIN_WIDTH = 40;

export function terminalWidth(env: NodeJS.ProcessEnv, stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (stream.isTTY && typeof stream.columns === "number" && stream.columns > 0) return Math.max(MIN_WIDTH, stream.columns);
  const fromEnv = Number(env.COLUMNS?.trim());
  if (Number.isSafeInteger(fromEnv) && fromEnv > 0) return Math.max(MIN_WIDTH, fromEnv);
  return DEFAULT_WIDTH;
}
