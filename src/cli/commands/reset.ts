// `reset --scope <scope> [--dry-run] [--yes] [--backup] [--force]` (and the global --non-interactive): options → runReset → renderer.
import type { Command } from "commander";
import { choiceRequired, consentRequired } from "../consent.js";
import { createCommandContext, type CliHost } from "../context.js";

export interface ResetCommandOptions {
  scope?: string;
  dryRun: boolean;
  yes: boolean;
  backup: boolean;
  force: boolean;
}

const SCOPES_TEXT = "config | config+creds+sessions | full";

export function registerResetCommand(program: Command, host: CliHost): void {
  program
    .command("reset")
    .description("remove state by scope (config, config+creds+sessions, full); backups and archives this tool wrote are never removed")
    .option("--scope <scope>", SCOPES_TEXT)
    .option("--dry-run", "list every path that would be removed and every archive folder kept; remove nothing", false)
    .option("-y, --yes", "do not ask for confirmation", false)
    .option("--backup", "write a verified backup first and print its path", false)
    .option("--force", "take the state lease even if another live process holds it", false)
    .addHelpText(
      "after",
      "\nWithout a terminal, with --json or with the global --non-interactive it never prompts: --scope and --yes are then required.\n\nExamples:\n  $ openclaw-state reset                                   # on a terminal: choose, review, confirm\n  $ openclaw-state reset --scope config+creds+sessions --dry-run\n  $ openclaw-state reset --scope full --backup --yes --json",
    )
    .action(async (opts: ResetCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "write");
      const [{ runReset, resetExitCode }, { parseResetScope }, render] = await Promise.all([
        import("../../reset/apply-reset.js"),
        import("../../reset/plan-reset.js"),
        import("../render/reset-render.js"),
      ]);
      // --non-interactive is global: the context has already turned prompting off for it.
      const canPrompt = ctx.output.canPrompt;
      const given = opts.scope === undefined ? undefined : parseResetScope(opts.scope);
      if (!canPrompt) {
        const missing = [given ? null : `--scope <${SCOPES_TEXT}>`, opts.yes || opts.dryRun ? null : "--yes"].filter((m): m is string => m !== null);
        const need = { what: given ? `reset --scope ${opts.scope} would remove state under ${ctx.paths.stateDir}` : "reset has no scope", needs: missing, dryRun: true };
        if (!given) throw choiceRequired(need, "missing_scope");
        if (missing.length > 0) throw consentRequired(need);
      }
      const scope = given ?? (await render.chooseResetScope(ctx.output));
      if (!scope) {
        ctx.output.log("Nothing was removed (no scope chosen).");
        host.setExitCode(1);
        return;
      }
      render.renderResetStart(ctx.output, scope, ctx.paths.stateDir, opts.dryRun);
      const result = await runReset({
        paths: ctx.paths,
        scope,
        dryRun: opts.dryRun,
        force: opts.force,
        backup: opts.backup,
        confirm: opts.yes ? undefined : (plan) => render.confirmReset(ctx.output, plan, { backup: opts.backup }),
        onEvent: (event) => render.renderResetEvent(ctx.output, event),
      });
      render.renderReset(ctx.output, result);
      host.setExitCode(resetExitCode(result));
    });
}
