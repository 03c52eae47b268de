// Renders backup create/verify/restore/list/prune results as human text or the JSON envelope, plus progress text.
import type { CreateBackupResult } from "../../backup/create-backup.js";
import { summarizeManifest } from "../../backup/manifest.js";
import type { PrunePreRestoreResult } from "../../backup/pre-restore-copies.js";
import type { PruneBackupsResult } from "../../backup/prune-backups.js";
import type { RestoreBackupResult, RestorePlan } from "../../backup/restore-backup.js";
import type { BackupManifest, BackupProgressEvent, SkippedItem } from "../../backup/types.js";
import type { VerifyBackupResult } from "../../backup/verify-archive.js";
import { jsonEnvelope } from "../context.js";
import type { Output } from "../output.js";
// Not ./format.js: it loads the table helper (string-width, ~45 ms of CPU), which no backup command but list needs.
import { formatBytes, formatCount, formatTime } from "../../core/format-bytes.js";
import { withIsoTimes } from "./json-time.js";

const PHASE_LABEL: Record<BackupProgressEvent["phase"], string> = {
  plan: "Planning",
  snapshot: "Snapshotting",
  archive: "Archiving",
  finalize: "Finishing",
  verify: "Verifying",
  extract: "Extracting",
  swap: "Swapping into place",
};

/** Spinner text for a progress event: phase, bytes done (of total) and the current path. */
/** `stats` (percent, rate, ETA from progress-stats.ts) goes right after the byte counts, before the path. */
export function backupProgressText(event: BackupProgressEvent, stats = ""): string {
  const bytes = event.bytesTotal ? `${formatBytes(event.bytesDone)} / ${formatBytes(event.bytesTotal)}` : event.bytesDone > 0 ? formatBytes(event.bytesDone) : "";
  const where = event.path ? ` ${event.path.length > 60 ? `…${event.path.slice(-59)}` : event.path}` : "";
  return `${PHASE_LABEL[event.phase]}${bytes ? ` ${bytes}` : ""}${stats}${where}`;
}

function databasesLine(manifest: BackupManifest): string {
  const labels = manifest.databases.map((d) => (d.role === "agent" ? `agent ${d.agentId}` : d.role));
  return `${manifest.databases.length} database(s)${labels.length ? ` (${labels.join(", ")})` : ""}, ${formatCount(manifest.totals.files)} file(s), ${formatBytes(manifest.totals.bytes)}`;
}

function renderSkipped(output: Output, skipped: readonly SkippedItem[]): void {
  const s = output.style;
  const assets = skipped.filter((k) => k.kind === "state" || k.kind === "config" || k.kind === "credentials" || k.kind === "workspace");
  const others = skipped.filter((k) => !assets.includes(k));
  for (const k of assets) output.log(s.dim(`  skipped ${k.kind} ${k.path}: ${k.reason}`));
  if (output.verbose) for (const k of others) output.log(s.dim(`  skipped ${k.path}: ${k.reason}`));
  else if (others.length > 0) output.log(s.dim(`  ${others.length} other path(s) skipped (live SQLite sidecars, special files…); --verbose lists them`));
}

function renderWarnings(output: Output, warnings: readonly string[]): void {
  for (const w of warnings) output.warn(`${output.style.yellow("!")} ${w}`);
}

export function renderBackupCreate(output: Output, result: CreateBackupResult): void {
  if (output.json) {
    output.writeJson(jsonEnvelope("backup create", { ...result, manifest: summarizeManifest(result.manifest) }));
    return;
  }
  const s = output.style;
  const m = result.manifest;
  if (result.status === "dry-run") output.log(s.bold(`Dry run: would write ${result.archivePath} (nothing was written)`));
  // A streamed archive has no path here (`--output -`): the line says where the bytes went instead.
  else if (result.streamed) output.log(`${s.green("✓")} ${s.bold(`Archive streamed to stdout${result.verified ? ", verified" : ", not verified"}`)} (${result.compression}, ${formatBytes(result.sizeBytes)})`);
  else output.log(`${s.green("✓")} ${s.bold(`Backup written: ${result.archivePath}`)} (${result.compression}, ${formatBytes(result.sizeBytes)}${result.verified ? ", verified" : ", not verified"})`);
  if (result.reusedDatabases.length > 0) output.log(s.dim(`  ${result.reusedDatabases.length} unchanged database(s) copied from the last verified archive (sha256-checked)`));
  if (result.reusedFiles > 0) output.log(s.dim(`  ${formatCount(result.reusedFiles)} unchanged file(s) copied from the last verified archive (sha256-checked)`));
  for (const a of m.assets) output.log(`  ${a.kind.padEnd(11)} ${a.sourcePath}${a.excluded.length ? s.dim(` (left out: ${a.excluded.join(", ")})`) : ""}`);
  output.log(`  ${databasesLine(m)}`);
  renderSkipped(output, m.skipped);
  renderWarnings(output, result.warnings);
}

export function verifyExitCode(result: VerifyBackupResult): number {
  return result.ok ? 0 : 1;
}

export function renderBackupVerify(output: Output, result: VerifyBackupResult): void {
  if (output.json) {
    const { manifest, ...rest } = result;
    const doc = jsonEnvelope("backup verify", { ...rest, ...(manifest ? { manifest: summarizeManifest(manifest) } : {}) });
    output.writeJson(result.ok ? doc : { ...doc, ok: false, error: { code: "archive_invalid", message: result.problem } });
    return;
  }
  const s = output.style;
  // `verify -` read the archive from stdin: "-" is no name to show.
  const name = result.archivePath === "-" ? "The archive read from stdin" : result.archivePath;
  if (!result.ok) {
    output.error(`${s.red("✗")} ${name} failed verification: ${result.problem}`);
    output.error("Do not restore from this archive; take a new backup with `openclaw-state backup create`.");
    return;
  }
  output.log(`${s.green("✓")} ${s.bold(result.archivePath === "-" ? "Archive read from stdin, verified" : `${name} verified`)} (${formatBytes(result.sizeBytes)})`);
  if (result.manifest) output.log(`  created ${result.manifest.createdAt} by ${result.manifest.tool.name} ${result.manifest.tool.version}; ${databasesLine(result.manifest)}`);
  for (const d of result.databases) output.log(`  ${d.archivePath}: integrity ok${d.listed ? ", row counts match" : " (a SQLite file the manifest does not list as a database)"}`);
}

export function renderRestorePlan(output: Output, plan: Pick<RestorePlan, "items" | "skipped">, heading: string): void {
  const s = output.style;
  output.log(s.bold(heading));
  for (const item of plan.items) {
    const replaces = item.keptAt !== undefined || (item.action === "replace" && !item.nestedIn);
    const verb = `${replaces ? "replace" : "create"}${item.nestedIn ? ` (inside ${item.nestedIn})` : ""}`;
    const origin = item.origin ? `; ${item.origin}` : "";
    output.log(`  ${verb.padEnd(8)} ${item.destination}  ${s.dim(`${item.kind}, ${formatCount(item.files)} file(s), ${formatBytes(item.bytes)}${origin}`)}`);
    if (item.keptAt) output.log(`           current copy kept at ${item.keptAt}`);
  }
  for (const k of plan.skipped) output.log(s.dim(`  skip     ${k.path}: ${k.reason}`));
}

/** How the kept copies are removed, once the operator is sure (restore itself never deletes them). */
const PRUNE_HINT = "openclaw-state backup prune --pre-restore";

/** One line for the consent error off a terminal: every path replaced (and where its copy is kept) or created. */
export function restoreConsentSummary(plan: RestorePlan, backup: boolean): string {
  const replaced = plan.items.filter((i) => i.keptAt !== undefined || (i.action === "replace" && !i.nestedIn));
  const created = plan.items.filter((i) => i.action === "create" && !i.nestedIn).map((i) => i.destination);
  const kept = replaced.map((i) => `${i.destination} (current copy kept at ${i.keptAt ?? `${i.destination}.pre-restore-<ts>`})`);
  const what = replaced.length > 0 ? `replace the current state at ${kept.join(", ")}${created.length > 0 ? ` and create ${created.join(", ")}` : ""}` : `create ${created.join(", ")}`;
  return `backup restore would ${what} from ${plan.archivePath}${backup && replaced.length > 0 ? " after a verified backup of the current state (--backup)" : ""}`;
}

/** The plan shown before the consent prompt: an in-place restore says plainly what it replaces and where the current copies go. */
export function renderRestoreConsent(output: Output, plan: RestorePlan, backup: boolean): void {
  const replaces = plan.items.some((i) => i.action === "replace");
  const heading = replaces
    ? `backup restore will REPLACE the current state with the archive's copy (from ${plan.archivePath}):`
    : `backup restore will create (from ${plan.archivePath}):`;
  renderRestorePlan(output, plan, heading);
  if (!replaces) return;
  output.log(`  Each replaced path is kept beside it as <path>.pre-restore-<ts> (named above); restore never deletes them (\`${PRUNE_HINT}\` does).`);
  if (backup) output.log("  A verified backup of the current state is also taken first (--backup) in the backup directory.");
}

export function renderBackupRestore(output: Output, result: RestoreBackupResult): void {
  if (output.json) {
    output.writeJson(jsonEnvelope("backup restore", result));
    return;
  }
  const s = output.style;
  if (result.status === "dry-run") {
    renderRestorePlan(output, { items: result.plan, skipped: result.skipped }, `Dry run: ${result.archivePath} verified; restore would (nothing was changed):`);
    if (result.plan.some((i) => i.keptAt)) output.log(s.dim("The real run keeps each replaced path as shown, stamped with its own time instead of this run's."));
    output.log(s.dim("Re-run without --dry-run and with --yes to restore."));
    renderWarnings(output, result.warnings);
    return;
  }
  if (result.status === "declined") {
    output.log("Nothing was restored (declined).");
    return;
  }
  output.log(`${s.green("✓")} ${s.bold(`Restored ${result.archivePath}`)} (backup of ${result.backupCreatedAt})`);
  if (result.preRestoreBackup) output.log(`  previous state backed up to ${result.preRestoreBackup.archivePath}${result.preRestoreBackup.verified ? " (verified)" : ""}`);
  const keptAt = new Map(result.keptCopies.map((k) => [k.path, k.keptAt]));
  for (const item of result.plan) {
    const kept = keptAt.get(item.destination);
    output.log(`  ${kept ? "replaced" : "created"} ${item.destination}${kept ? ` (previous copy kept at ${kept})` : ""}`);
  }
  for (const d of result.databases) {
    output.log(s.dim(`  ${d.role === "agent" ? `agent ${d.agentId}` : d.role} database ${d.destination}${d.leasesDropped ? ` (${d.leasesDropped} lease row(s) dropped)` : ""}`));
  }
  for (const k of result.skipped) output.log(s.dim(`  skipped ${k.path}: ${k.reason}`));
  if (result.removedSidecars.length > 0) output.log(s.dim(`  removed ${result.removedSidecars.length} stale -wal/-shm file(s)`));
  if (result.pathsRewritten > 0) output.log(s.dim(`  ${result.pathsRewritten} stored path(s) moved to the restored location`));
  if (result.keptCopies.length > 0) {
    output.log(`${result.keptCopies.length} previous cop${result.keptCopies.length === 1 ? "y" : "ies"} kept; once the restored state is good, remove ${result.keptCopies.length === 1 ? "it" : "them"} with \`${PRUNE_HINT}\`.`);
  }
  renderWarnings(output, result.warnings);
}

export function renderBackupPrune(output: Output, result: PruneBackupsResult): void {
  if (output.json) {
    const iso = (list: PruneBackupsResult["kept"]) => list.map((c) => withIsoTimes(c, ["createdAt"]));
    output.writeJson(jsonEnvelope("backup prune", { ...result, kept: iso(result.kept), removed: iso(result.removed) }));
    return;
  }
  const s = output.style;
  const verb = result.status === "pruned" ? "removed" : result.status === "dry-run" ? "would remove" : "not removed (declined)";
  const list = result.status === "declined" ? [] : result.removed;
  const rules = describePolicy(result.policy);
  output.log(s.bold(`${result.backupDir} (${rules}): keeping ${result.kept.length} archive(s), ${verb} ${result.status === "declined" ? "" : list.length}`.trimEnd()));
  if (result.status === "dry-run" || output.verbose) {
    for (const k of result.kept) output.log(`  keep   ${k.archivePath} (${formatTime(k.createdAt)}, ${formatBytes(k.sizeBytes)}) ${s.dim(`by ${k.reasons.join(", ")}`)}`);
  }
  // One line per deleted (or, in a dry run, to-be-deleted) archive: what, when, how big, which run.
  for (const r of list) output.log(`  ${result.status === "dry-run" ? "remove" : verb} ${r.archivePath} (${formatTime(r.createdAt)}, ${formatBytes(r.sizeBytes)}, run ${r.runId ?? "?"})`);
  for (const i of result.ignored) output.log(s.dim(`  not ours, kept ${i.path}: ${i.reason}`));
  if (result.forgotten.length > 0) {
    output.log(s.dim(`  ${result.status === "pruned" ? "forgot" : "would forget"} ${result.forgotten.length} backup_runs row(s) whose archive is gone`));
  }
  renderWarnings(output, result.warnings);
}

export function renderPreRestorePrune(output: Output, result: PrunePreRestoreResult): void {
  if (output.json) {
    output.writeJson(jsonEnvelope("backup prune", { ...result, removed: result.removed.map((c) => withIsoTimes(c, ["createdAt"])) }));
    return;
  }
  const s = output.style;
  const scope = result.olderThan ? `older than ${result.olderThan}` : "all";
  if (result.status === "declined") {
    output.log(`Nothing was deleted (declined); ${result.kept.length} other path(s) kept.`);
    renderWarnings(output, result.warnings);
    return;
  }
  const verb = result.status === "pruned" ? "removed" : "would remove";
  output.log(s.bold(`Previous copies kept by restore (${scope}): ${verb} ${result.removed.length}, keeping ${result.kept.length}${result.status === "dry-run" ? " (dry run: nothing was deleted)" : ""}`));
  for (const r of result.removed) output.log(`  ${result.status === "dry-run" ? "remove" : "removed"} ${r.path} (${r.kind}, restore of ${formatTime(r.createdAt)}, previous ${r.of})`);
  for (const k of result.kept) output.log(s.dim(`  keep   ${k.path}: ${k.reason}`));
  renderWarnings(output, result.warnings);
}

function describePolicy(policy: PruneBackupsResult["policy"]): string {
  const parts = [
    policy.last ? `last ${policy.last}` : "",
    policy.daily ? `daily ${policy.daily}` : "",
    policy.weekly ? `weekly ${policy.weekly}` : "",
    policy.monthly ? `monthly ${policy.monthly}` : "",
    policy.within ? `within ${policy.within}` : "",
  ];
  return `keep ${parts.filter(Boolean).join(", ")}`;
}
