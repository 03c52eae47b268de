// `inspect [--check]`: read-only inventory of every database → renderer.
import type { Command } from "commander";
import { createCommandContext, type CliHost } from "../context.js";

export interface InspectCommandOptions {
  check: boolean;
}

export function registerInspectCommand(program: Command, host: CliHost): void {
  program
    .command("inspect")
    .description("show every database: path, size, WAL, schema, row counts, leases, last runs (read-only)")
    .option("--check", "also run integrity_check on every database", false)
    .addHelpText("after", "\nExamples:\n  $ openclaw-state inspect\n  $ openclaw-state inspect --check --json")
    .action(async (opts: InspectCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "read");
      const [{ inspectState }, { renderInspect, inspectExitCode }] = await Promise.all([
        import("../../inspect/inspect-state.js"),
        import("../render/inspect-render.js"),
      ]);
      const result = inspectState({ paths: ctx.paths, check: opts.check });
      renderInspect(ctx.output, result);
      host.setExitCode(inspectExitCode(result));
    });
}
