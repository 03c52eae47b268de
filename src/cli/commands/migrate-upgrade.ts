// `migrate upgrade [--dry-run] [--yes] [--no-backup] [--backup-dir] [--force]`: options → upgradeFormat → renderer.
import type { Command } from "commander";
import { consentRequired } from "../consent.js";
import { createCommandContext, type CliHost } from "../context.js";

interface MigrateUpgradeOptions {
  dryRun: boolean;
  yes: boolean;
  backup: boolean;
  backupDir?: string;
  force: boolean;
}

export function registerMigrateUpgrade(migrate: Command, host: CliHost): void {
  migrate
    .command("upgrade")
    .description("rewrite this tool's earlier (design-document v1) databases in the current OpenClaw format, behind a verified backup; the replaced files are kept under migrated/")
    .option("--dry-run", "show each database, who wrote it and what would happen; change nothing", false)
    .option("-y, --yes", "do not ask for confirmation (required when not on a terminal)", false)
    .option("--no-backup", "skip the verified backup (the replaced files are still kept)")
    .option("--backup-dir <path>", "where the backup archive goes (default: <stateDir>-backups/)")
    .option("--force", "take the state lease even if another live process holds it", false)
    .addHelpText("after", "\nExamples:\n  $ openclaw-state migrate upgrade --dry-run\n  $ openclaw-state migrate upgrade --yes --json")
    .action(async (opts: MigrateUpgradeOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "write");
      const [{ upgradeFormat, planFormatUpgrade }, render] = await Promise.all([import("../../migration/upgrade-format.js"), import("../render/upgrade-render.js")]);
      if (!opts.dryRun && !opts.yes) {
        if (!ctx.output.canPrompt) {
          throw consentRequired({ what: `migrate upgrade would rewrite the databases under ${ctx.paths.stateDir} in OpenClaw's format`, dryRun: true });
        }
        const plan = planFormatUpgrade(ctx.paths);
        render.renderUpgradePlan(ctx.output, plan);
        if (!plan.some((p) => p.action === "upgrade") || !(await ctx.output.confirm("Rewrite these databases in OpenClaw's format (the old files are kept)?"))) {
          ctx.output.log("Nothing was changed.");
          host.setExitCode(plan.some((p) => p.action === "blocked") ? 1 : 0);
          return;
        }
      }
      const progress = ctx.output.progress("upgrading…");
      try {
        const result = await upgradeFormat({
          paths: ctx.paths,
          dryRun: opts.dryRun,
          backup: opts.backup,
          force: opts.force,
          ...(opts.backupDir ? { backupDir: opts.backupDir } : {}),
          onProgress: (message) => progress.update(message),
        });
        progress.stop();
        render.renderUpgrade(ctx.output, result);
      } finally {
        progress.stop();
      }
      host.setExitCode(0);
    });
}
