// `sessions list` and `sessions show`: options → list/show core → renderer (read-only; --export writes one named file).
import type { Command } from "commander";
import { expandUserPath } from "../../state/paths.js";
import { createCommandContext, type CliHost } from "../context.js";
import { parseLimit, parseWholeNumber } from "../parse-options.js";

export interface SessionsListCommandOptions {
  agent?: string;
  allAgents: boolean;
  active?: string;
  limit: string;
}

export interface SessionsShowCommandOptions {
  agent?: string;
  events: string;
  maxBytes: string;
  export?: string;
}

/** Caps repeated from the transcript reader, so commander's help needs no storage import. */
const MAX_EVENTS = 10_000;
const MAX_BYTES = 64 * 1024 * 1024;

export function registerSessionsCommand(program: Command, host: CliHost): void {
  const sessions = program
    .command("sessions")
    .description("list sessions and show one session with its last transcript events (read-only)")
    .addHelpText("after", "\nExamples:\n  $ openclaw-state sessions list --active 60\n  $ openclaw-state sessions show agent:main:main --events 50");

  sessions
    .command("list")
    .description("sessions newest first, from the session rows only (never transcripts)")
    .option("--agent <id>", "agent whose sessions to list (default: main)")
    .option("--all-agents", "list the sessions of every known agent", false)
    .option("--active <minutes>", "only sessions updated within the last N minutes")
    .option("--limit <n|all>", "how many rows to print, or all", "100")
    .addHelpText(
      "after",
      "\nExamples:\n  $ openclaw-state sessions list\n  $ openclaw-state sessions list --all-agents --active 120\n  $ openclaw-state sessions list --agent work --limit all --json",
    )
    .action(async (opts: SessionsListCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "read");
      const options = {
        paths: ctx.paths,
        agentId: opts.agent,
        allAgents: opts.allAgents,
        activeMinutes: opts.active === undefined ? null : parseWholeNumber(opts.active, "--active", { min: 1 }, "60"),
        limit: parseLimit(opts.limit),
      };
      const [{ openSessionList }, { renderSessionList }] = await Promise.all([
        import("../../sessions/list-sessions.js"),
        import("../render/sessions-render.js"),
      ]);
      const list = openSessionList(options);
      try {
        host.setExitCode(await renderSessionList(ctx.output, list));
      } finally {
        list.close();
      }
    });

  sessions
    .command("show")
    .description("one session: row, routes, conversations, entry, transcript stats and its last events")
    .argument("<key|sessionId>", "session key (or agent-relative key like main) or session id")
    .option("--agent <id>", "agent that owns the session (default: main)")
    .option("--events <n>", `last N transcript events to show (0 to ${MAX_EVENTS})`, "20")
    .option("--max-bytes <n>", "byte budget for those events", "1000000")
    .option("--export <file>", "also write the whole transcript to <file> as JSONL (0600; refuses an existing file)")
    .addHelpText(
      "after",
      "\nExamples:\n  $ openclaw-state sessions show agent:main:main\n  $ openclaw-state sessions show s-main --events 0 --json\n  $ openclaw-state sessions show main --export ./main-transcript.jsonl",
    )
    .action(async (ref: string, opts: SessionsShowCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "read");
      const options = {
        paths: ctx.paths,
        agentId: opts.agent,
        ref,
        events: parseWholeNumber(opts.events, "--events", { min: 0, max: MAX_EVENTS }, "50"),
        maxBytes: parseWholeNumber(opts.maxBytes, "--max-bytes", { min: 1, max: MAX_BYTES }, "4000000"),
        exportPath: opts.export === undefined ? undefined : expandUserPath(opts.export, ctx.paths.homeDir),
      };
      const [{ showSession }, { renderSessionShow }] = await Promise.all([
        import("../../sessions/show-session.js"),
        import("../render/sessions-render.js"),
      ]);
      host.setExitCode(renderSessionShow(ctx.output, showSession(options)));
    });
}
