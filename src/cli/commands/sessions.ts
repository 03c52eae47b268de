// `sessions list | show | tail | delete`: options → core (the runtime library for show/tail/delete) → renderer.
import path from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import { consentRequired } from "../consent.js";
import { expandUserPath } from "../../state/paths.js";
import { createCommandContext, readGlobalFlags, type CliHost } from "../context.js";
import { parseLimit, parseWholeNumber } from "../parse-options.js";
import { terminalWidth } from "../render/terminal-width.js";

export interface SessionsListCommandOptions {
  agent?: string;
  allAgents: boolean;
  active?: string;
  limit: string;
  format?: string;
}

export interface SessionsShowCommandOptions {
  agent?: string;
  events: string;
  maxBytes: string;
  export?: string;
  full: boolean;
}

export interface SessionsTailCommandOptions {
  agent?: string;
  lines: string;
  follow: boolean;
  interval: string;
  full: boolean;
}

export interface SessionsDeleteCommandOptions {
  agent?: string;
  backupDir?: string;
  backup: boolean;
  dryRun: boolean;
  yes: boolean;
  force: boolean;
}

/** `--format`: table, tsv or json; `--json` is `--format json`, and contradicting it is a usage error. */
function parseListFormat(raw: string | undefined, json: boolean): "table" | "tsv" | "json" | undefined {
  const value = raw?.trim().toLowerCase();
  if (value !== undefined && value !== "table" && value !== "tsv" && value !== "json") {
    throw new UsageError(`Invalid --format value ${JSON.stringify(raw)}: use table, tsv or json (for example --format tsv).`, "invalid_option");
  }
  if (json && value !== undefined && value !== "json") throw new UsageError(`--json and --format ${value} contradict each other; pass one of them.`, "invalid_option");
  return json ? "json" : value;
}

/** Caps repeated from the transcript reader, so commander's help needs no storage import. */
const MAX_EVENTS = 10_000;
const MAX_BYTES = 64 * 1024 * 1024;

export function registerSessionsCommand(program: Command, host: CliHost): void {
  const sessions = program
    .command("sessions")
    .description("list, show, follow (tail) and delete sessions")
    .addHelpText(
      "after",
      "\nExamples:\n  $ openclaw-state sessions list --active 60\n  $ openclaw-state sessions show agent:main:main --events 50\n  $ openclaw-state sessions tail main --follow\n  $ openclaw-state sessions delete agent:main:old-task --dry-run",
    );

  sessions
    .command("list")
    .description("sessions newest first, from the session rows only (never transcripts)")
    .option("--agent <id>", "agent whose sessions to list (default: main)")
    .option("--all-agents", "list the sessions of every known agent", false)
    .option("--active <minutes>", "only sessions updated within the last N minutes")
    .option("--limit <n|all>", "how many rows to print, or all", "100")
    .option("--format <table|tsv|json>", "table (default on a terminal), tsv (default when piped: one tab-separated row per session) or json (= --json)")
    .addHelpText(
      "after",
      "\nExamples:\n  $ openclaw-state sessions list\n  $ openclaw-state sessions list --all-agents --active 120\n  $ openclaw-state sessions list --limit all --format tsv | cut -f1\n  $ openclaw-state sessions list --agent work --limit all --json",
    )
    .action(async (opts: SessionsListCommandOptions, command: Command) => {
      const format = parseListFormat(opts.format, readGlobalFlags(command).json);
      const ctx = createCommandContext(command, host, "read", format === "json" ? { json: true } : {});
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
        // Off a terminal (a pipe, a file, cron) rows are tab-separated unless --format says otherwise.
        host.setExitCode(await renderSessionList(ctx.output, list, format ?? (ctx.output.stdoutTTY === false ? "tsv" : "table")));
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
    .option("--full", "print each event's whole text (default: one line fitted to the terminal width)", false)
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
      host.setExitCode(renderSessionShow(ctx.output, showSession(options), { width: terminalWidth(ctx.env), full: opts.full }));
    });

  registerTail(sessions, host);
  registerDelete(sessions, host);
}

function registerTail(sessions: Command, host: CliHost): void {
  sessions
    .command("tail")
    .description("the newest messages of a session; with --follow, new messages as they are appended (read-only)")
    .argument("<key|sessionId>", "session key (or agent-relative key like main) or session id")
    .option("--agent <id>", "agent that owns the session (default: main)")
    .option("-n, --lines <n>", "newest messages to print first (0 to 1000)", "10")
    .option("-f, --follow", "keep printing new messages until Ctrl-C (exit 0)", false)
    .option("--interval <ms>", "with --follow: how often to poll the transcript cursor (100 to 60000)", "1000")
    .option("--full", "print each message's whole text (default: one line fitted to the terminal width)", false)
    .addHelpText(
      "after",
      "\nWith --json, prints one JSON object per line (NDJSON: session, message, reset, gone), the one exception to the\nsingle-document rule, so a follower can stream it.\n\nExamples:\n  $ openclaw-state sessions tail main\n  $ openclaw-state sessions tail agent:main:main --follow --full\n  $ openclaw-state sessions tail s-1234 -f --json | jq -c .",
    )
    .action(async (ref: string, opts: SessionsTailCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "read");
      const options = {
        paths: ctx.paths,
        agentId: opts.agent,
        ref,
        lines: parseWholeNumber(opts.lines, "--lines", { min: 0, max: 1_000 }, "20"),
        follow: opts.follow,
        intervalMs: parseWholeNumber(opts.interval, "--interval", { min: 100, max: 60_000 }, "500"),
      };
      if (ref.trim() === "") throw new UsageError("Name the session to follow: a session key or id (for example `sessions tail agent:main:main`).");
      const [{ tailSession }, { renderTailEvent }] = await Promise.all([import("../../sessions/tail-session.js"), import("../render/session-tail-render.js")]);
      const layout = { width: terminalWidth(ctx.env), full: opts.full };
      // Ctrl-C, SIGTERM or a closed stdout end a follow cleanly: the loop stops and the command exits 0.
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      const signals = opts.follow ? (["SIGINT", "SIGTERM"] as const) : [];
      for (const signal of signals) process.on(signal, stop);
      process.stdout.once("close", stop);
      let code = 0;
      try {
        for await (const event of tailSession({ ...options, signal: controller.signal })) {
          renderTailEvent(ctx.output, event, layout, opts.follow);
          if (event.kind === "gone") code = 1;
          await ctx.output.flush();
        }
      } finally {
        for (const signal of signals) process.off(signal, stop);
        process.stdout.off("close", stop);
      }
      host.setExitCode(code);
    });
}

function registerDelete(sessions: Command, host: CliHost): void {
  sessions
    .command("delete")
    .description("delete one session and everything it owns, after a verified standalone copy (under the state lease)")
    .argument("<key>", "session key (or agent-relative key like main)")
    .option("--agent <id>", "agent that owns the session (default: main)")
    .option("--backup-dir <dir>", "directory for the session's standalone copy (default: <backup dir>/sessions/<time>/)")
    .option("--no-backup", "delete without writing a copy first")
    .option("--dry-run", "show what would be deleted; change nothing", false)
    .option("-y, --yes", "do not ask for confirmation (required without a terminal)", false)
    .option("--force", "take the state lease even if another live process holds it", false)
    .addHelpText(
      "after",
      "\nExamples:\n  $ openclaw-state sessions delete agent:main:old-task --dry-run\n  $ openclaw-state sessions delete agent:main:old-task --yes\n  $ openclaw-state sessions delete old-task --backup-dir ~/session-copies/2026-05 --yes --json",
    )
    .action(async (key: string, opts: SessionsDeleteCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, "write");
      if (key.trim() === "") throw new UsageError("Name the session to delete by its key (for example `sessions delete agent:main:old-task`).");
      if (opts.backupDir !== undefined && !opts.backup) throw new UsageError("--backup-dir and --no-backup contradict each other; pass one of them.");
      if (opts.backupDir !== undefined && opts.backupDir.trim() === "") throw new UsageError("--backup-dir is empty; name a directory outside the state dir.", "invalid_backup_dir");
      const backupDir = !opts.backup
        ? null
        : opts.backupDir !== undefined
          ? expandUserPath(opts.backupDir, ctx.paths.homeDir)
          : path.join(ctx.paths.backupDir, "sessions", new Date().toISOString().replace(/:/g, "-"));
      if (!opts.yes && !opts.dryRun && !ctx.output.canPrompt) {
        throw consentRequired({ what: `sessions delete would delete ${key}`, dryRun: true });
      }
      const [{ deleteSessionEntrySync }, render] = await Promise.all([import("../../runtime/delete-session.js"), import("../render/session-delete-render.js")]);
      const base = {
        stateDir: ctx.paths.stateDir,
        env: ctx.env,
        agentId: opts.agent ?? "main",
        sessionKey: key,
        backupDir: backupDir ?? undefined,
        relativeKey: true,
        force: opts.force,
        command: "sessions delete",
      };
      const view = { backupDir };
      if (opts.dryRun) {
        render.renderDelete(ctx.output, deleteSessionEntrySync({ ...base, dryRun: true }), view);
        host.setExitCode(0);
        return;
      }
      let expectedSessionId: string | undefined;
      if (!opts.yes) {
        const plan = deleteSessionEntrySync({ ...base, dryRun: true });
        render.renderDeletePlan(ctx.output, plan, view);
        if (!(await render.confirmDelete(ctx.output, plan, view))) {
          ctx.output.log("Nothing was deleted.");
          host.setExitCode(1);
          return;
        }
        // What was confirmed is what gets deleted: a key that moved to another session meanwhile is refused.
        expectedSessionId = plan.sessionId;
      }
      render.renderDelete(ctx.output, deleteSessionEntrySync({ ...base, expectedSessionId }), view);
      host.setExitCode(0);
    });
}
