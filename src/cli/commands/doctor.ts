// `doctor [--fix] [--dry-run] [--yes] [--deep] [--strict] [--force] [--no-backup] [--backup-dir] [--remove-sources]`: options → runDoctor → renderer.
import type { Command } from "commander";
import { consentRequired } from "../consent.js";
import { expandUserPath } from "../../state/paths.js";
import { createCommandContext, type CliHost } from "../context.js";
import type { Progress } from "../output.js";
import { createProgressMeter, showsProgressStats } from "../render/progress-stats.js";

export interface DoctorCommandOptions {
  fix: boolean;
  dryRun: boolean;
  yes: boolean;
  deep: boolean;
  strict: boolean;
  force: boolean;
  /** false with --no-backup. */
  backup: boolean;
  backupDir?: string;
  removeSources: boolean;
}

export function registerDoctorCommand(program: Command, host: CliHost): void {
  program
    .command("doctor")
    .description("check the state directory and plan the legacy migration; with --fix apply the safe repairs and the migration")
    .option("--fix", "apply the planned repairs and migration (asks on a terminal, needs --yes otherwise)", false)
    .option("--dry-run", "show exactly what --fix would do (repairs, backup, every legacy file and where it goes) and change nothing", false)
    .option("-y, --yes", "do not ask for confirmation", false)
    .option("--deep", "run integrity_check and foreign_key_check instead of quick_check", false)
    .option("--strict", "exit 1 on warnings too", false)
    .option("--force", "take the state lease even if another live process holds it", false)
    .option("--no-backup", "migrate without the verified pre-migration backup (not recommended)")
    .option("--backup-dir <dir>", "where the pre-migration backup goes (default: <stateDir>-backups)")
    .option("--remove-sources", "delete migrated legacy files instead of moving them under <stateDir>/migrated/<run id>/", false)
    .addHelpText(
      "after",
      "\nExamples:\n  $ openclaw-state doctor\n  $ openclaw-state doctor --verbose            # the legacy plan file by file\n  $ openclaw-state doctor --fix --dry-run      # what --fix would touch, nothing changed\n  $ openclaw-state doctor --fix --yes --json\n  $ openclaw-state doctor --fix --yes --backup-dir /mnt/backups",
    )
    .action(async (opts: DoctorCommandOptions, command: Command) => {
      // Check mode reports a missing or non-directory state as a finding; --fix refuses a non-directory.
      // --dry-run plans --fix (with or without --fix on the line) and writes nothing.
      const fix = opts.fix || opts.dryRun;
      const ctx = createCommandContext(command, host, fix && !opts.dryRun ? "write" : "any");
      const [{ runDoctor }, { doctorVerdict }, { renderDoctor }, { formatMigrationProgress, migrationProgressStats }] = await Promise.all([
        import("../../doctor/run-doctor.js"),
        import("../../doctor/doctor-verdict.js"),
        import("../render/doctor-render.js"),
        import("../render/migration-render.js"),
      ]);
      if (fix && !opts.dryRun && !opts.backup) ctx.output.warn("WARNING: --no-backup: the legacy migration will run WITHOUT a pre-migration backup; there will be no archive to roll back to.");
      let spinner: Progress | undefined;
      const meter = showsProgressStats(ctx.output) ? createProgressMeter() : undefined;
      const result = await runDoctor({
        paths: ctx.paths,
        fix,
        dryRun: opts.dryRun,
        deep: opts.deep,
        force: opts.force,
        verbose: ctx.flags.verbose,
        migration: {
          backup: opts.backup,
          removeSources: opts.removeSources,
          ...(opts.backupDir ? { backupDir: expandUserPath(opts.backupDir, ctx.paths.homeDir) } : {}),
        },
        onProgress: (e) => {
          const line = formatMigrationProgress(e, meter ? migrationProgressStats(meter, e) : "");
          spinner ??= ctx.output.progress(line);
          spinner.update(line);
        },
        confirm: async (repairs) => {
          spinner?.stop();
          spinner = undefined;
          if (opts.yes) return true;
          if (!ctx.output.canPrompt) {
            throw consentRequired({ what: `doctor --fix would apply ${repairs.length} repair(s) to ${ctx.paths.stateDir}`, dryRun: true });
          }
          ctx.output.log("doctor --fix will:");
          for (const r of repairs) ctx.output.log(`  - ${r.description}`);
          if (repairs.some((r) => r.id === "legacy.migrate")) {
            ctx.output.log(opts.backup ? `  - first, a verified backup of the whole state into ${opts.backupDir ?? ctx.paths.backupDir}` : "  ! WITHOUT a pre-migration backup (--no-backup)");
          }
          if (opts.removeSources && repairs.some((r) => r.id === "legacy.migrate")) ctx.output.log("  ! and DELETE the migrated legacy files (--remove-sources)");
          return ctx.output.confirm("Apply these repairs?");
        },
      }).finally(() => spinner?.stop());
      // One verdict: the exit code, the JSON status/ok and the last line cannot disagree.
      const verdict = doctorVerdict(result, opts.strict);
      renderDoctor(ctx.output, result, verdict);
      host.setExitCode(verdict.exitCode);
    });
}
