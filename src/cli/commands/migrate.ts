// `migrate plan` (the read-only legacy plan) and `migrate history` (runs from the ledger) → renderers.
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import { createCommandContext, type CliHost } from "../context.js";
import { registerMigrateUpgrade } from "./migrate-upgrade.js";

export interface MigrateHistoryCommandOptions {
  limit: string;
}

export interface MigrateSkipCommandOptions {
  reason?: string;
  dryRun: boolean;
  force: boolean;
}

export function registerMigrateCommand(program: Command, host: CliHost): void {
  const migrate = program
    .command("migrate")
    .description("legacy JSON/JSONL state: show the migration plan or past runs (`doctor --fix` applies it)");
  migrate
    .command("plan")
    .description("the read-only plan: every legacy source with size, sha256, records, target and action")
    .addHelpText("after", "\nExamples:\n  $ openclaw-state migrate plan\n  $ openclaw-state migrate plan --verbose\n  $ openclaw-state migrate plan --json")
    .action(async (_opts: unknown, command: Command) => {
      const ctx = createCommandContext(command, host);
      const { configPathProblem, inspectStateDir, noStateError, notADirectoryError } = await import("../../state/state-dir.js");
      const dir = inspectStateDir(ctx.paths);
      if (dir.status === "not-a-directory") throw notADirectoryError(dir, "there is no state to plan");
      const [{ planMigration }, { renderMigratePlan, formatMigrationProgress }] = await Promise.all([
        import("../../migration/plan-migration.js"),
        import("../render/migration-render.js"),
      ]);
      const progress = ctx.output.progress("planning…");
      try {
        const plan = await planMigration({ paths: ctx.paths, reach: true, onProgress: (e) => progress.update(formatMigrationProgress(e)) });
        progress.stop();
        // Nothing there and no legacy state dir moving in: a mistyped path, not an empty healthy state.
        if (dir.status === "missing" && !plan.layout.some((i) => i.action === "move")) throw noStateError(dir);
        // A FIFO or device at the config path was skipped unread: the plan says so rather than hanging.
        const configProblem = configPathProblem(ctx.paths);
        if (configProblem) plan.notes.push(configProblem);
        renderMigratePlan(ctx.output, plan);
      } finally {
        progress.stop();
      }
      host.setExitCode(0);
    });
  migrate
    .command("history")
    .description("migration runs recorded in the ledger, newest first, with their per-source outcomes")
    .option("--limit <n>", "how many runs to show", "20")
    .addHelpText("after", "\nExamples:\n  $ openclaw-state migrate history\n  $ openclaw-state migrate history --verbose --limit 5\n  $ openclaw-state migrate history --json")
    .action(async (opts: MigrateHistoryCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "read");
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive integer, got ${JSON.stringify(opts.limit)}.`);
      const [{ migrationHistory }, { renderMigrateHistory }] = await Promise.all([
        import("../../migration/migration-history.js"),
        import("../render/migration-render.js"),
      ]);
      renderMigrateHistory(ctx.output, migrationHistory({ paths: ctx.paths, limit }));
      host.setExitCode(0);
    });
  migrate
    .command("skip")
    .description("set one legacy file aside (moved under <stateDir>/migrated/<run id>/skipped/, recorded in the ledger) so `doctor --fix` stops trying it")
    .argument("<path>", "the file as `migrate plan` prints it (relative to the state dir) or an absolute path")
    .option("--reason <text>", "why it is set aside (required; kept in the ledger)")
    .option("--dry-run", "say what would be moved, change nothing", false)
    .option("--force", "take the state lease even if another live process holds it", false)
    .addHelpText(
      "after",
      '\nExamples:\n  $ openclaw-state migrate skip agents/main/sessions/s-bad.jsonl --reason "corrupt since the 2025 disk failure"\n  $ openclaw-state migrate skip cache/openrouter.json --reason "stale cache" --dry-run',
    )
    .action(async (target: string, opts: MigrateSkipCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "write");
      if (opts.reason === undefined || opts.reason.trim() === "") throw new UsageError("migrate skip needs --reason <text>: the ledger records why the file was set aside (nothing was changed).");
      const [{ migrateSkip }, { renderMigrateSkip }] = await Promise.all([import("../../migration/skip-source.js"), import("../render/migration-render.js")]);
      renderMigrateSkip(ctx.output, migrateSkip({ paths: ctx.paths, target, reason: opts.reason, dryRun: opts.dryRun, force: opts.force }));
      host.setExitCode(0);
    });
  registerMigrateUpgrade(migrate, host);
}
