// Whether the binary restarts itself (process.execve, same pid) with Node flags a command needs from start-up.
import { accessSync, constants } from "node:fs";

/**
 * V8 sizes the young generation when the process starts (v8.setFlagsFromString later has no effect), and a
 * verified `backup create` lets it grow to 3 × 16 MiB of mostly empty semi-space while its own data lives in
 * Buffers outside the heap. Started with 4 MiB semi-spaces, a create of issue 26's full-size state (552 MiB)
 * peaked 25 MiB lower (160–172 against 185–206 MiB on Node 24) for the same CPU.
 */
export const REEXEC_FLAGS: readonly string[] = ["--max-semi-space-size=4"];

/**
 * An import (`doctor --fix`, `migrate upgrade`) collects garbage between large batches (src/core/heap.ts), which
 * only a process started with --expose-gc can do; turning the flag on at run time is what Node documents as unsafe.
 * Without it V8 let a 300 MB transcript import peak at 270 MiB against 204 MiB with it, for the same CPU (Node 24).
 */
export const IMPORT_REEXEC_FLAGS: readonly string[] = ["--expose-gc"];

/** Set in the restarted process's environment (and removed again there) so it never restarts twice. */
export const REEXEC_MARKER = "OPENCLAW_STATE_REEXECUTED";

/** `OPENCLAW_STATE_REEXEC=0` keeps every command in the process it was started in. */
export const REEXEC_SWITCH = "OPENCLAW_STATE_REEXEC";

export interface ReexecPlan {
  /** The new process's Node flags: the host's, then the command's (REEXEC_FLAGS or IMPORT_REEXEC_FLAGS). */
  execArgv: string[];
  env: Record<string, string>;
}

const COMMANDS = new Set(["backup", "doctor", "migrate", "sessions", "inspect", "reset"]);

/** The command and the word after it (a value of a global option before the command is not taken for it). */
function commandWords(argv: readonly string[]): string[] {
  const words = argv.filter((a) => !a.startsWith("-"));
  const at = words.findIndex((w) => COMMANDS.has(w));
  return at < 0 ? [] : words.slice(at, at + 2);
}

/** The Node flags `argv`'s command needs from start-up, or none. The restart costs one Node start-up (~0.07 CPU-s). */
function flagsFor(argv: readonly string[], execArgv: readonly string[]): readonly string[] {
  const [group, command] = commandWords(argv);
  if (group === "backup" && command === "create") {
    // A host that chose its own young-generation size keeps it.
    return execArgv.some((a) => a.startsWith("--max-semi-space-size") || a.startsWith("--min-semi-space-size")) ? [] : REEXEC_FLAGS;
  }
  const imports = (group === "doctor" && argv.includes("--fix")) || (group === "migrate" && command === "upgrade");
  return imports && !execArgv.includes("--expose-gc") ? IMPORT_REEXEC_FLAGS : [];
}

/**
 * Whether this process can restart itself: Node has process.execve (22.15 and later) and this user may execute
 * Node's own binary by its path. When execve fails Node aborts the process (SIGABRT, no exception to catch), so a
 * binary this user cannot reach must be found out before: Node started through `setpriv`/`sudo -u` from a
 * directory only root can search (CI's Node 24 lives in a `mktemp -d` directory), or a binary removed since start.
 */
export function canRestart(execPath: string, execve: unknown): boolean {
  if (typeof execve !== "function") return false;
  try {
    accessSync(execPath, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The restart to make for `argv` (the CLI's arguments), or null to run here (also where Node has no process.execve, before 22.15). */
export function planReexec(input: { argv: readonly string[]; execArgv: readonly string[]; env: NodeJS.ProcessEnv; canExecve: boolean }): ReexecPlan | null {
  const { argv, execArgv, env } = input;
  if (!input.canExecve || env[REEXEC_MARKER] !== undefined || env[REEXEC_SWITCH] === "0") return null;
  const flags = flagsFor(argv, execArgv);
  if (flags.length === 0) return null;
  const next: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) next[key] = value;
  next[REEXEC_MARKER] = "1";
  return { execArgv: [...execArgv, ...flags], env: next };
}
