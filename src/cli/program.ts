// Builds the commander program: global flags, help with examples, and lazily loaded command actions.
import { Command, Option } from "commander";
import { toolVersion } from "../core/version.js";
import { docsLink } from "./docs-link.js";
import { createProcessOutput, type Output } from "./output.js";
import type { CliHost } from "./context.js";
import { registerBackupCommand } from "./commands/backup.js";
import { registerDoctorCommand } from "./commands/doctor.js";
import { registerInspectCommand } from "./commands/inspect.js";
import { registerMigrateCommand } from "./commands/migrate.js";
import { registerSessionsCommand } from "./commands/sessions.js";
import { registerResetCommand } from "./commands/reset.js";

export interface CreateProgramOptions {
  host?: Partial<CliHost>;
}

const EXAMPLES = `
Examples:
  $ openclaw-state doctor                      # read-only health check and legacy inventory
  $ openclaw-state doctor --fix --yes          # apply the safe fixes and the legacy migration
  $ openclaw-state migrate plan                # the read-only legacy migration plan
  $ openclaw-state inspect --json              # every database, sizes, row counts, leases
  $ openclaw-state sessions list --all-agents  # newest sessions of every agent
  $ openclaw-state backup create               # verified .tar.zst (.tar.gz on Node < 22.15) in <stateDir>-backups/
  $ openclaw-state --state-dir /srv/openclaw/.openclaw inspect --check
  $ openclaw-state reset --scope config+creds+sessions --dry-run

Exit codes: 0 ok, 1 failed or error findings, 2 usage error, 75 state locked by another process.
Docs: ${docsLink("cli.md")}`;

/** For a host CLI mounting our commands: the exit code goes to process.exitCode and finishes the --json document. */
export function defaultHost(): CliHost {
  let last: Output | undefined;
  return {
    env: process.env,
    createOutput: (flags) => (last = createProcessOutput(flags)),
    setExitCode: (code) => {
      process.exitCode = code;
      void last?.complete(code);
    },
  };
}

/** The full program; a host CLI can mount its commands. Actions report exit codes through the host. */
export function createProgram(options: CreateProgramOptions = {}): Command {
  const host: CliHost = { ...defaultHost(), ...options.host };
  const program = new Command("openclaw-state");
  program
    .description("Doctor, migration, backup, sessions and inspection for OpenClaw's on-disk state.")
    .version(toolVersion(), "--version", "print the version")
    .helpOption("-h, --help", "show help")
    .addOption(new Option("--state-dir <dir>", "state directory (default: $OPENCLAW_STATE_DIR or ~/.openclaw)"))
    .option("--json", "print one JSON document on stdout; human text goes to stderr")
    .option("--no-color", "disable colour (also NO_COLOR)")
    .option("-q, --quiet", "no progress or success lines; errors and warnings that need action still print (stderr)")
    .option("-v, --verbose", "more detail, stack traces on errors")
    .option("--non-interactive", "never prompt, even on a terminal: commands that need consent then need --yes (exit 2 without it)")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXAMPLES);
  registerDoctorCommand(program, host);
  registerInspectCommand(program, host);
  registerMigrateCommand(program, host);
  registerSessionsCommand(program, host);
  registerBackupCommand(program, host);
  registerResetCommand(program, host);
  return program;
}
