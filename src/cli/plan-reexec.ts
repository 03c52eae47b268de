// Whether the binary restarts itself (process.execve, same pid) with Node flags a command needs from start-up.

/**
 * V8 sizes the young generation when the process starts (v8.setFlagsFromString later has no effect), and a
 * verified `backup create` lets it grow to 3 × 16 MiB of mostly empty semi-space while its own data lives in
 * Buffers outside the heap. Started with 4 MiB semi-spaces, a create of issue 26's full-size state (552 MiB)
 * peaked 25 MiB lower (160–172 against 185–206 MiB on Node 24) for the same CPU. The restart costs one Node
 * start-up (~0.07 CPU-s), so only `backup create` takes it; where Node has no process.execve (before 22.15)
 * nothing changes.
 */
export const REEXEC_FLAGS: readonly string[] = ["--max-semi-space-size=4"];

/** Set in the restarted process's environment (and removed again there) so it never restarts twice. */
export const REEXEC_MARKER = "OPENCLAW_STATE_REEXECUTED";

/** `OPENCLAW_STATE_REEXEC=0` keeps every command in the process it was started in. */
export const REEXEC_SWITCH = "OPENCLAW_STATE_REEXEC";

export interface ReexecPlan {
  /** The new process's Node flags: the host's, then REEXEC_FLAGS. */
  execArgv: string[];
  env: Record<string, string>;
}

/** The first two words that are not options: the command (the global options before it take no values). */
function commandWords(argv: readonly string[]): string[] {
  return argv.filter((a) => !a.startsWith("-")).slice(0, 2);
}

/** The restart to make for `argv` (the CLI's arguments), or null to run here. */
export function planReexec(input: { argv: readonly string[]; execArgv: readonly string[]; env: NodeJS.ProcessEnv; canExecve: boolean }): ReexecPlan | null {
  const { argv, execArgv, env } = input;
  if (!input.canExecve || env[REEXEC_MARKER] !== undefined || env[REEXEC_SWITCH] === "0") return null;
  const [group, command] = commandWords(argv);
  if (group !== "backup" || command !== "create") return null;
  // A host that chose its own young-generation size keeps it.
  if (execArgv.some((a) => a.startsWith("--max-semi-space-size") || a.startsWith("--min-semi-space-size"))) return null;
  const next: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) next[key] = value;
  next[REEXEC_MARKER] = "1";
  return { execArgv: [...execArgv, ...REEXEC_FLAGS], env: next };
}
