// `doctor [--fix] [--yes] [--deep] [--strict] [--force]`: options → runDoctor → renderer.
import type { Command } from "commander";
import { ConsentRequiredError } from "../../core/errors.js";
import { createCommandContext, type CliHost } from "../context.js";

export interface DoctorCommandOptions {
  fix: boolean;
  yes: boolean;
  deep: boolean;
  strict: boolean;
  force: boolean;
}

export function registerDoctorCommand(program: Command, host: CliHost): void {
  program
    .command("doctor")
    .description("check the state directory; with --fix apply the safe repairs")
    .option("--fix", "apply the planned repairs (asks on a terminal, needs --yes otherwise)", false)
    .option("-y, --yes", "do not ask for confirmation", false)
    .option("--deep", "run integrity_check and foreign_key_check instead of quick_check", false)
    .option("--strict", "exit 1 on warnings too", false)
    .option("--force", "take the state lease even if another live process holds it", false)
    .addHelpText("after", "\nExamples:\n  $ openclaw-state doctor\n  $ openclaw-state doctor --fix --yes --json")
    .action(async (opts: DoctorCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host);
      const [{ runDoctor, doctorExitCode }, { renderDoctor }] = await Promise.all([
        import("../../doctor/run-doctor.js"),
        import("../render/doctor-render.js"),
      ]);
      const result = await runDoctor({
        paths: ctx.paths,
        fix: opts.fix,
        deep: opts.deep,
        force: opts.force,
        verbose: ctx.flags.verbose,
        confirm: async (repairs) => {
          if (opts.yes) return true;
          if (!ctx.output.canPrompt) {
            throw new ConsentRequiredError(
              `doctor --fix would apply ${repairs.length} repair(s) to ${ctx.paths.stateDir} and needs consent: re-run with --yes (nothing was changed).`,
            );
          }
          ctx.output.log("doctor --fix will:");
          for (const r of repairs) ctx.output.log(`  - ${r.description}`);
          return ctx.output.confirm("Apply these repairs?");
        },
      });
      renderDoctor(ctx.output, result);
      host.setExitCode(doctorExitCode(result, opts.strict));
    });
}
