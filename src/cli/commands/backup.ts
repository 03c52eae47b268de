// `backup create|verify|restore|list|prune`: options → core backup functions → renderer.
import type { Command } from "commander";
import { parseCompression } from "../../backup/compression.js";
import { parseRetentionDuration, type RetentionPolicy } from "../../backup/retention.js";
import type { BackupProgressEvent } from "../../backup/types.js";
import path from "node:path";
import { UsageError } from "../../core/errors.js";
import { consentRequired } from "../consent.js";
import { parseWholeNumber } from "../parse-options.js";
import { docsLink } from "../docs-link.js";
import { createCommandContext, type CliHost, type CommandContext } from "../context.js";
import type { Progress } from "../output.js";

export interface BackupCreateCommandOptions {
  output?: string;
  compression?: string;
  reuse: boolean;
  verify: boolean;
  dryRun: boolean;
  onlyConfig: boolean;
  includeWorkspace: boolean;
}

export interface BackupRestoreCommandOptions {
  dryRun: boolean;
  yes: boolean;
  target?: string;
  force: boolean;
  includeWorkspace: boolean;
  backup: boolean;
  workspace: string[];
}

export interface BackupPruneCommandOptions {
  keep?: string;
  keepLast?: string;
  keepDaily?: string;
  keepWeekly?: string;
  keepMonthly?: string;
  keepWithin?: string;
  includeMigrationBackups: boolean;
  preRestore: boolean;
  olderThan?: string;
  dir?: string;
  dryRun: boolean;
  yes: boolean;
}

/** `--pre-restore` is its own mode: archive retention flags with it are ambiguous and refused (exit 2). */
function checkPreRestoreMode(opts: BackupPruneCommandOptions): void {
  if (!opts.preRestore) {
    if (opts.olderThan !== undefined) throw new UsageError("--older-than applies only with --pre-restore; for archives use --keep-within <duration>.", "invalid_option");
    return;
  }
  const archiveFlags = [
    [opts.keep, "--keep"],
    [opts.keepLast, "--keep-last"],
    [opts.keepDaily, "--keep-daily"],
    [opts.keepWeekly, "--keep-weekly"],
    [opts.keepMonthly, "--keep-monthly"],
    [opts.keepWithin, "--keep-within"],
    [opts.dir, "--dir"],
    [opts.includeMigrationBackups ? true : undefined, "--include-migration-backups"],
  ] as const;
  const given = archiveFlags.filter(([v]) => v !== undefined).map(([, f]) => f);
  if (given.length > 0) {
    throw new UsageError(`--pre-restore removes only the copies restores kept; ${given.join(", ")} ${given.length === 1 ? "applies" : "apply"} to archives: run them as two commands.`, "invalid_option");
  }
  if (opts.olderThan !== undefined) parseRetentionDuration(opts.olderThan, "--older-than");
}

/** The retention flags as a policy; every value is checked here so a typo is a usage error naming the flag. */
function prunePolicy(opts: BackupPruneCommandOptions): RetentionPolicy {
  if (opts.keep !== undefined && opts.keepLast !== undefined) throw new UsageError("--keep is another name for --keep-last; give only one of them.", "invalid_option");
  const count = (raw: string | undefined, flag: string): number | undefined => (raw === undefined ? undefined : parseWholeNumber(raw, flag, { min: 1 }, "7"));
  const policy: RetentionPolicy = {
    last: count(opts.keepLast, "--keep-last") ?? count(opts.keep, "--keep"),
    daily: count(opts.keepDaily, "--keep-daily"),
    weekly: count(opts.keepWeekly, "--keep-weekly"),
    monthly: count(opts.keepMonthly, "--keep-monthly"),
  };
  if (opts.keepWithin !== undefined) {
    parseRetentionDuration(opts.keepWithin);
    policy.within = opts.keepWithin.trim().toLowerCase();
  }
  for (const key of Object.keys(policy) as Array<keyof RetentionPolicy>) if (policy[key] === undefined) delete policy[key];
  return policy;
}

const render = () => import("../render/backup-render.js");

/**
 * Runs `fn` with a spinner fed by progress events (a no-op off a TTY or under --json/--quiet). `pause()`
 * clears it before a prompt; the next event starts a new one.
 */
async function withProgress<T>(
  ctx: CommandContext,
  text: string,
  fn: (onProgress: (e: BackupProgressEvent) => void, pause: () => void) => Promise<T>,
): Promise<T> {
  const [{ backupProgressText }, { createProgressMeter, showsProgressStats }] = await Promise.all([render(), import("../render/progress-stats.js")]);
  let progress: Progress | null = ctx.output.progress(text);
  const meter = showsProgressStats(ctx.output) ? createProgressMeter() : undefined;
  const onProgress = (event: BackupProgressEvent): void => {
    const line = backupProgressText(event, meter ? meter(event.phase, event.bytesDone, event.bytesTotal, "bytes") : "");
    if (progress) progress.update(line);
    else progress = ctx.output.progress(line);
  };
  const pause = (): void => {
    progress?.stop();
    progress = null;
  };
  try {
    return await fn(onProgress, pause);
  } finally {
    pause();
  }
}

/**
 * `--output -`: refused on a terminal (archive bytes would flood it) and with --json (the one JSON document would
 * follow the archive on stdout). Exit 2 before anything is read.
 */
function checkStreamOutput(command: Command): void {
  if (process.stdout.isTTY) throw new UsageError("--output - writes the archive to stdout, which is a terminal here; pipe it (`| restic backup --stdin …`) or redirect it (`> file.tar`).", "invalid_option");
  const o = command.optsWithGlobals() as Record<string, unknown>;
  if (o.json === true) throw new UsageError("--json does not go with --output -: stdout carries only the archive; the summary goes to stderr (use --quiet in cron).", "invalid_option");
}

/** `-` as the archive: stdin must not be a terminal (nobody types an archive). */
function checkStdinInput(): void {
  if (process.stdin.isTTY) throw new UsageError("`-` reads the archive from stdin, which is a terminal here; pipe one in (`restic dump latest openclaw.tar | openclaw-state backup restore - …`).", "invalid_option");
}

/** `--workspace <recorded>=<dir>`, repeatable; a value without '=' is kept whole and refused as usage. */
function collectWorkspace(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseWorkspaceDestinations(values: readonly string[], cwd: string): Array<{ from: string; to: string }> {
  return values.map((value) => {
    const at = value.lastIndexOf("=");
    if (at <= 0 || at === value.length - 1) throw new UsageError(`--workspace ${JSON.stringify(value)} must be <recorded path or archive name>=<destination dir>.`, "usage");
    const to = value.slice(at + 1);
    return { from: value.slice(0, at), to: path.resolve(cwd, to) };
  });
}

/**
 * `backup list` reads the backup dir, which outlives the state (`reset --scope full` keeps it): a missing
 * state dir is fine while that dir exists; with neither, it is a mistyped path and says so (exit 1).
 */
async function requireStateOrBackups(ctx: CommandContext, dir: string | undefined): Promise<void> {
  const { inspectStateDir, noStateError, notADirectoryError } = await import("../../state/state-dir.js");
  const info = inspectStateDir(ctx.paths);
  if (info.status === "not-a-directory" && dir === undefined) throw notADirectoryError(info, "there is no state to read");
  if (info.status !== "missing" || dir !== undefined) return;
  const { pathExists } = await import("../../state/private-fs.js");
  if (!pathExists(ctx.paths.backupDir)) throw noStateError(info);
  ctx.output.warn(`warning: no state dir at ${ctx.paths.stateDir} (removed by a reset?); listing the backups in ${ctx.paths.backupDir}.`);
}

/**
 * An archive argument as a path: `latest` or an id (prefix) from `backup list` is looked up among this state's listed
 * archives and the path it stands for is said once; anything else is a path, used as given.
 */
async function resolveArchiveArgument(ctx: CommandContext, ref: string): Promise<string> {
  const { resolveArchiveRef } = await import("../../backup/resolve-archive-ref.js");
  const resolved = await resolveArchiveRef({ paths: ctx.paths, ref });
  if (resolved.via !== "path") ctx.output.log(ctx.output.style.dim(`${ref} is ${resolved.shortId ? `${resolved.shortId} ` : ""}${resolved.archivePath}`));
  return resolved.archivePath;
}

export function registerBackupCommand(program: Command, host: CliHost): void {
  const backup = program
    .command("backup")
    .description("create, verify, restore, list and prune verified archives of the state")
    .addHelpText("after", `\nDocs: ${docsLink("backup.md")}`);

  backup
    .command("create")
    .description("write a verified .tar.zst/.tar.gz of the state dir (SQLite snapshots via VACUUM INTO), config, credentials and workspaces")
    .option("--output <file|dir/|->", "archive file (.tar.zst, .tar.gz or .tar), a directory for the default name (default: <stateDir>-backups/), or - for stdout (verified first; not a terminal, not with --json)")
    .option("--compression <zstd|gzip|none>", "archive compression (default: zstd on Node >= 22.15, else gzip; or the --output name's); none: a plain tar for deduplicating stores (restic)")
    .option("--no-reuse", "snapshot every database afresh, even one unchanged since the last verified archive")
    .option("--no-verify", "skip re-reading and verifying the finished archive")
    .option("--dry-run", "plan and check everything, write nothing", false)
    .option("--only-config", "back up only the config file", false)
    .option("--no-include-workspace", "leave the agent workspaces out")
    .addHelpText("after", "\nExamples:\n  $ openclaw-state backup create\n  $ openclaw-state backup create --output /mnt/backups/ --json\n  $ openclaw-state backup create --compression gzip   # readable by Node 20 and plain tar xzf")
    .action(async (opts: BackupCreateCommandOptions, command: Command) => {
      const toStdout = opts.output === "-";
      if (toStdout) checkStreamOutput(command);
      const base = createCommandContext(command, host, opts.onlyConfig ? "write" : "read");
      // stdout carries only archive bytes: every human line goes to stderr.
      const ctx: CommandContext = toStdout ? { ...base, output: { ...base.output, log: (line) => (base.output.quiet ? undefined : base.output.warn(line)), notice: (line) => base.output.warn(line) } } : base;
      const [{ createBackup }, { renderBackupCreate }] = await Promise.all([import("../../backup/create-backup.js"), render()]);
      const result = await withProgress(ctx, "Planning backup", (onProgress) =>
        createBackup({
          paths: ctx.paths,
          output: toStdout ? undefined : opts.output,
          stream: toStdout ? process.stdout : undefined,
          compression: opts.compression === undefined ? undefined : parseCompression(opts.compression),
          reuse: opts.reuse,
          verify: opts.verify,
          dryRun: opts.dryRun,
          onlyConfig: opts.onlyConfig,
          includeWorkspace: opts.includeWorkspace,
          onProgress,
        }),
      );
      renderBackupCreate(ctx.output, toStdout && result.status === "completed" ? { ...result, archivePath: "stdout" } : result);
      if (result.streamed) ctx.output.log(`  streamed ${result.streamed.bytes} bytes, sha256 ${result.streamed.sha256}`);
      host.setExitCode(0);
    });

  backup
    .command("verify")
    .description("check an archive in one streaming pass: entries, sizes, sha256, database integrity and row counts")
    .argument("<archive>", "the archive to check: a path, an id from `backup list` (or a unique prefix), or latest")
    .addHelpText("after", "\nExamples:\n  $ openclaw-state backup verify latest\n  $ openclaw-state backup verify 3f9a2c1e   # an ID from `backup list`\n  $ openclaw-state backup verify ~/.openclaw-backups/2025-01-02T03-04-05.678Z-openclaw-backup.tar.gz")
    .action(async (ref: string, _opts: unknown, command: Command) => {
      const ctx = createCommandContext(command, host);
      const [{ verifyBackup, verifyBackupFromStream }, { renderBackupVerify, verifyExitCode }] = await Promise.all([import("../../backup/verify-archive.js"), render()]);
      if (ref === "-") checkStdinInput();
      const archive = ref === "-" ? "-" : await resolveArchiveArgument(ctx, ref);
      const result = await withProgress(ctx, "Verifying", (onProgress) => (archive === "-" ? verifyBackupFromStream(process.stdin, { onProgress }) : verifyBackup(archive, { onProgress })));
      renderBackupVerify(ctx.output, result);
      host.setExitCode(verifyExitCode(result));
    });

  backup
    .command("restore")
    .description("verify an archive, then replace the state with it, keeping each replaced path as <path>.pre-restore-<ts> (asks on a terminal, needs --yes otherwise)")
    .argument("<archive>", "the archive to restore: a path, an id from `backup list` (or a unique prefix), or latest")
    .option("--dry-run", "verify and print what would be replaced (and where each current copy is kept) or created", false)
    .option("-y, --yes", "do not ask for confirmation", false)
    .option("--target <dir>", "restore into this new or empty directory instead of the live paths")
    .option("--force", "take the state lease even if another live process holds it", false)
    .option("--no-include-workspace", "do not restore workspaces")
    .option("--workspace <recorded=dir>", "restore the archived workspace <recorded> (its recorded path or archive name) to <dir>; repeatable", collectWorkspace, [])
    .option("--backup", "also take a verified backup of the current state before replacing it (the replaced paths are kept either way)", false)
    .addHelpText(
      "after",
      "\nWorkspaces go only where the current config names them, or where --workspace says.\nEvery replaced path is kept as <path>.pre-restore-<ts>; `backup prune --pre-restore` removes those copies.\n\nExamples:\n  $ openclaw-state backup restore latest --dry-run\n  $ openclaw-state backup restore <archive> --dry-run\n  $ openclaw-state backup restore <archive> --backup --yes\n  $ openclaw-state backup restore <archive> --workspace /old/home/project=/home/me/project --yes\n  $ openclaw-state backup restore <archive> --target /tmp/inspect --yes",
    )
    .action(async (ref: string, opts: BackupRestoreCommandOptions, command: Command) => {
      const ctx = createCommandContext(command, host, opts.target ? "any" : "write");
      if (ref === "-") checkStdinInput();
      const archive = ref === "-" ? "-" : await resolveArchiveArgument(ctx, ref);
      const [{ restoreBackup, restoreBackupFromStream }, { renderBackupRestore, renderRestoreConsent, restoreConsentSummary }] = await Promise.all([import("../../backup/restore-backup.js"), render()]);
      const workspaceDestinations = parseWorkspaceDestinations(opts.workspace, process.cwd());
      const result = await withProgress(ctx, "Reading archive", (onProgress, pauseProgress) =>
        (archive === "-" ? (o: Parameters<typeof restoreBackup>[0]) => restoreBackupFromStream(process.stdin, o) : restoreBackup)({
          paths: ctx.paths,
          archivePath: archive,
          dryRun: opts.dryRun,
          target: opts.target,
          force: opts.force,
          includeWorkspace: opts.includeWorkspace,
          workspaceDestinations,
          backup: opts.backup,
          onProgress,
          confirm: async (plan) => {
            if (opts.yes) return true;
            if (!ctx.output.canPrompt) {
              throw consentRequired({ what: restoreConsentSummary(plan, opts.backup), dryRun: true });
            }
            pauseProgress();
            renderRestoreConsent(ctx.output, plan, opts.backup);
            return ctx.output.confirm(plan.items.some((i) => i.action === "replace") ? "Replace the current state now?" : "Restore now?");
          },
        }),
      );
      renderBackupRestore(ctx.output, result);
      host.setExitCode(result.status === "declined" ? 1 : 0);
    });

  backup
    .command("list")
    .description("recorded backup runs and the archives in the backup directory (read-only)")
    .option("--dir <dir>", "backup directory to scan (default: <stateDir>-backups)")
    .option("--all", "also list recorded runs whose archive is gone (hidden by default; `backup prune` forgets them)", false)
    .addHelpText("after", "\nThe ID column names an archive in `backup verify|restore` (so does `latest`).\n\nExamples:\n  $ openclaw-state backup list\n  $ openclaw-state backup list --all --json")
    .action(async (opts: { dir?: string; all: boolean }, command: Command) => {
      const ctx = createCommandContext(command, host);
      await requireStateOrBackups(ctx, opts.dir);
      const [{ listBackups }, { renderBackupList }] = await Promise.all([import("../../backup/list-backups.js"), import("../render/backup-list-render.js")]);
      renderBackupList(ctx.output, await listBackups({ paths: ctx.paths, dir: opts.dir, all: opts.all }));
      host.setExitCode(0);
    });

  backup
    .command("prune")
    .description("delete the archives no retention rule keeps (restic forget semantics; only archives this tool wrote for this state dir)")
    .option("--keep-last <n>", "keep the n newest archives")
    .option("--keep-daily <n>", "keep the newest archive of each of the last n days that have one")
    .option("--keep-weekly <n>", "keep the newest archive of each of the last n ISO weeks that have one")
    .option("--keep-monthly <n>", "keep the newest archive of each of the last n months that have one")
    .option("--keep-within <duration>", "keep every archive within this long of the newest one (y, m=months, w, d, h: 30d, 1y6m)")
    .option("--keep <n>", "same as --keep-last")
    .option("--include-migration-backups", "let the rules remove pre-migration archives (by their manifest or a migration run; kept otherwise)", false)
    .option("--pre-restore", "instead of archives, remove the <path>.pre-restore-<ts> copies `backup restore` kept", false)
    .option("--older-than <duration>", "with --pre-restore: only copies older than this (y, m=months, w, d, h: 30d)")
    .option("--dir <dir>", "backup directory (default: <stateDir>-backups)")
    .option("--dry-run", "list what would be kept (and by which rule) and removed", false)
    .option("-y, --yes", "do not ask for confirmation", false)
    .addHelpText(
      "after",
      "\nExamples:\n  $ openclaw-state backup prune --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --dry-run\n  $ openclaw-state backup prune --keep-last 3 --keep-within 14d --yes\n  $ openclaw-state backup prune --pre-restore --older-than 30d --dry-run\n\nAn archive kept by any rule stays; the newest archive always matches every rule. Only archives this tool\nwrote for this state dir are counted or deleted; everything else is listed as not ours, kept.",
    )
    .action(async (opts: BackupPruneCommandOptions, command: Command) => {
      checkPreRestoreMode(opts);
      const ctx = createCommandContext(command, host, opts.dir ? "any" : "write");
      if (opts.preRestore) {
        const [{ prunePreRestoreCopies }, { renderPreRestorePrune }] = await Promise.all([import("../../backup/pre-restore-copies.js"), render()]);
        const result = await prunePreRestoreCopies({
          paths: ctx.paths,
          olderThan: opts.olderThan,
          dryRun: opts.dryRun,
          confirm: async (remove) => {
            if (opts.yes) return true;
            if (!ctx.output.canPrompt) {
              throw consentRequired({ what: `backup prune --pre-restore would delete ${remove.length} previous cop${remove.length === 1 ? "y" : "ies"} kept by restore (${remove.map((r) => r.path).join(", ")})`, dryRun: true });
            }
            for (const r of remove) ctx.output.log(`  delete ${r.path}`);
            return ctx.output.confirm(`Delete these ${remove.length} previous cop${remove.length === 1 ? "y" : "ies"}?`);
          },
        });
        renderPreRestorePrune(ctx.output, result);
        host.setExitCode(result.status === "declined" ? 1 : 0);
        return;
      }
      const policy = prunePolicy(opts);
      const [{ pruneBackups }, { renderBackupPrune }] = await Promise.all([import("../../backup/prune-backups.js"), render()]);
      const result = await pruneBackups({
        paths: ctx.paths,
        policy,
        dir: opts.dir,
        dryRun: opts.dryRun,
        includeMigrationBackups: opts.includeMigrationBackups,
        confirm: async (remove) => {
          if (opts.yes) return true;
          if (!ctx.output.canPrompt) {
            throw consentRequired({ what: `backup prune would delete ${remove.length} archive(s) from ${remove[0] ? remove[0].archivePath.replace(/[\\/][^\\/]*$/, "") : "the backup directory"}`, dryRun: true });
          }
          for (const r of remove) ctx.output.log(`  delete ${r.archivePath}`);
          return ctx.output.confirm(`Delete these ${remove.length} archive(s)?`);
        },
      });
      renderBackupPrune(ctx.output, result);
      host.setExitCode(result.status === "declined" ? 1 : 0);
    });
}
