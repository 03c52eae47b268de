// Legacy check: shows the migration plan as findings (one line per kind); its repair runs the migration.
import { formatBytes, formatCount } from "../../core/format-bytes.js";
import { applyMigration } from "../../migration/apply-migration.js";
import { unretiredOutcomes } from "../../migration/upgrade-wait.js";
import { findBrokenAgentDatabases } from "../../migration/broken-databases.js";
import { describeEntry, entriesByClass } from "../../migration/legacy-inventory.js";
import type { LegacyClass } from "../../migration/legacy-paths.js";
import { moveLegacyStateDir } from "../../migration/layout.js";
import { foreignFormatReason, planBlockedBy, planMergesInto, planMigration } from "../../migration/plan-migration.js";
import { mergeLegacyIntoCurrent } from "../../migration/merge-legacy.js";
import { importerFor } from "../../migration/importers/index.js";
import type { MigrationPlan, PlannedSource, SourceKind } from "../../migration/types.js";
import { pathExists } from "../../state/private-fs.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

function plural(n: number, kind: SourceKind): string {
  const label = importerFor(kind).label;
  return `${formatCount(n)} ${n === 1 ? label.one : label.many}`;
}

function fileLine(s: PlannedSource): string {
  const what = s.action === "skip" ? `skip: ${s.reason ?? ""}` : s.willFail ? `${s.action} (will fail: ${s.willFail})` : s.action;
  return `${s.relativePath} (${formatBytes(s.sizeBytes)}, ${s.records ?? "?"} ${importerFor(s.kind).label.records}) → ${what}`;
}

const IMPORT_FIX = "`doctor --fix` imports them into SQLite after a verified backup, then moves each file under migrated/<run id>/ (`--remove-sources` deletes instead).";

/** A path as a shell word (the `migrate skip` hint is meant to be pasted). */
function shellWord(p: string): string {
  return /^[\w./@:+,=-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
}

/** What to do about a kind's sources: repair or `migrate skip` the failing ones, retry the others, import the rest. */
function sourceFix(failing: readonly PlannedSource[], retrying: readonly PlannedSource[], pending: number): string | null {
  const parts: string[] = [];
  if (failing.length > 0) {
    const one = failing.length === 1;
    parts.push(
      `${one ? "It fails" : "They fail"} on every \`doctor --fix\` as ${one ? "it is" : "they are"}: repair ${one ? "it" : "them"}, or set ${one ? "it" : "each"} aside with \`openclaw-state migrate skip ${shellWord(failing[0]!.relativePath)} --reason "…"\`${one ? "" : " (one path per command)"}.`,
    );
  }
  if (retrying.length > 0) parts.push(`\`doctor --fix\` tries the source(s) whose previous attempt failed again; one that keeps failing can be set aside with \`openclaw-state migrate skip <path> --reason "…"\`.`);
  const others = pending - retrying.length;
  if (others > 0) parts.push(failing.length > 0 || retrying.length > 0 ? `\`doctor --fix\` imports the other ${formatCount(others)} after a verified backup.` : IMPORT_FIX);
  return parts.length > 0 ? parts.join(" ") : null;
}

/** One finding per kind with counts; per-file lines with --verbose, problem lines always. */
export function planFindings(plan: MigrationPlan, verbose: boolean): Finding[] {
  const findings: Finding[] = [];
  for (const item of plan.layout) {
    findings.push({
      id: item.kind === "legacy-state-dir" ? "legacy.state-dir" : "legacy.agent-dir",
      severity: "warning",
      title: item.action === "move" ? `Legacy ${item.kind === "legacy-state-dir" ? "state" : "agent"} dir ${item.path} will be moved to ${item.target}` : `Legacy ${item.kind === "legacy-state-dir" ? "state" : "agent"} dir ${item.path}: ${item.reason}`,
      ...(item.action === "move" ? { detail: item.reason, fix: "`doctor --fix` moves it (nothing is overwritten)." } : {}),
      path: item.path,
    });
  }
  for (const kind of Object.keys(plan.summary) as SourceKind[]) {
    const sources = plan.sources.filter((s) => s.kind === kind);
    const summary = plan.summary[kind];
    if (sources.length === 0 || !summary) continue;
    const a = summary.byAction;
    const parts = [
      a.import > 0 ? `${formatCount(a.import)} to import` : "",
      a["changed-since-import"] > 0 ? `${formatCount(a["changed-since-import"])} changed since import (re-imported)` : "",
      a["already-imported"] > 0 ? `${formatCount(a["already-imported"])} already imported (to retire)` : "",
      a.skip > 0 ? `${formatCount(a.skip)} skipped` : "",
    ].filter(Boolean);
    // A source the read-only pass already knows will fail (corrupt, wrong shape) fails every --fix until it is repaired
    // or set aside: an error naming `migrate skip`, never "`doctor --fix` imports them".
    const failing = sources.filter((s) => s.action !== "skip" && s.willFail);
    const retrying = sources.filter((s) => s.action !== "skip" && !s.willFail && s.notes.some((n) => n.startsWith("the previous attempt")));
    if (failing.length > 0) parts.push(`${formatCount(failing.length)} will fail as ${failing.length === 1 ? "it is" : "they are"}`);
    const pending = Math.max(0, a.import + a["changed-since-import"] + a["already-imported"] - failing.length);
    const problems = sources.flatMap((s) => [
      ...s.notes.filter((n) => n.startsWith("will fail") || n.startsWith("the previous attempt")).map((n) => `${s.relativePath}: ${n}`),
      // Every skipped source is named with its reason: it is legacy state left in place.
      ...(s.action === "skip" ? [`${s.relativePath}: ${s.reason ?? "skipped"}`] : []),
    ]);
    const detail = verbose ? sources.map((s) => [fileLine(s), ...s.notes.map((n) => `    ${n}`)].join("\n")) : problems;
    const fix = sourceFix(failing, retrying, pending);
    findings.push({
      id: `legacy.${kind}`,
      severity: failing.length > 0 ? "error" : pending > 0 || problems.length > 0 ? "warning" : "info",
      title: `${plural(summary.files, kind)}: ${parts.join(", ")} — ${formatBytes(summary.bytes)}, ${formatCount(summary.records)} ${importerFor(kind).label.records}`,
      ...(detail.length > 0 ? { detail: detail.join("\n") } : {}),
      ...(fix ? { fix } : {}),
    });
  }
  const blocked = planBlockedBy(plan);
  const waiting = blocked ? plan.sources.filter((s) => s.action === "skip" && s.reason === foreignFormatReason(blocked)) : [];
  if (blocked && waiting.length > 0) {
    findings.push({
      id: "legacy.foreign-format",
      severity: "warning",
      title: `${formatCount(waiting.length)} legacy source(s) wait for OpenClaw's own migration: ${foreignFormatReason(blocked)}`,
      detail: waiting.slice(0, verbose ? Infinity : 20).map((s) => s.relativePath).join("\n"),
      fix: "Run `openclaw doctor --fix` (the OpenClaw release that wrote these databases, or a newer one); openclaw-state's --fix leaves them and exits 1 while they wait.",
      leftUndone: true,
    });
  }
  findings.push(...inventoryFindings(plan, verbose));
  findings.push(...ownFilesFindings(plan, verbose));
  findings.push(...configFindings(plan));
  for (const note of plan.notes) findings.push({ id: "legacy.ignored", severity: "warning", title: note });
  if (findings.length === 0 && pathExists(plan.stateDir)) findings.push({ id: "legacy", severity: "info", title: "No legacy state left to migrate" });
  return findings;
}

const CLASS_FINDING: Record<Exclude<LegacyClass, "imported" | "current">, { title: string; fix: string }> = {
  core: {
    title: "core legacy file(s) this tool does not import yet (left in place; the runtime no longer reads them)",
    fix: "Keep them until an openclaw-state with their importer (or `openclaw doctor --fix`) imports them; do not delete them.",
  },
  plugin: {
    title: "legacy file(s) owned by plugins' own migrations (not imported here)",
    fix: "Run `openclaw doctor --fix` with those plugins installed: each plugin imports and removes its own files.",
  },
  discard: {
    title: "cache, lock or temp file(s) the design deletes or ignores (not imported)",
    fix: "Safe to delete after a verified backup; or set each aside with `openclaw-state migrate skip <path> --reason …`.",
  },
  archived: {
    title: "archived leftover(s) (*.jsonl.reset.*, *.jsonl.deleted.*, sessions.json.bak*), never imported: kept as they are (--verbose lists them)",
    fix: "Nothing to do: delete them once you no longer need them.",
  },
  special: {
    title: "path(s) that cannot be migrated as they are (links, FIFOs, unreadable directories, directories where a file is expected)",
    fix: "Each line says what to do; nothing here is followed, opened or imported until it is fixed.",
  },
  unknown: {
    title: "file(s) unknown to OpenClaw's design in the state dir (not imported)",
    fix: "Move them out of the state dir if they are yours, or set each aside with `openclaw-state migrate skip <path> --reason …`.",
  },
};

/** One warning per class of legacy file left behind, each file on its own line (20 per class without --verbose). */
function inventoryFindings(plan: MigrationPlan, verbose: boolean): Finding[] {
  const inv = plan.inventory;
  const findings: Finding[] = [];
  for (const [cls, list] of entriesByClass(inv)) {
    const meta = CLASS_FINDING[cls as keyof typeof CLASS_FINDING];
    if (!meta) continue;
    const limit = verbose ? Infinity : 20;
    const lines = list.slice(0, limit).map(describeEntry);
    if (list.length > limit) lines.push(`… and ${formatCount(list.length - limit)} more (--verbose lists all)`);
    const owners = cls === "plugin" ? ` — ${[...new Set(list.map((e) => e.owner ?? "?"))].join(", ")}` : "";
    // Archived copies (reset/deleted transcripts, index backups) are history OpenClaw keeps on purpose: one info line,
    // never a warning that --fix cannot clear and a daily `doctor --quiet` would mail forever.
    findings.push({ id: `legacy.${cls}`, severity: cls === "archived" ? "info" : "warning", title: `${formatCount(inv.counts[cls])} ${meta.title}${owners}`, detail: lines.join("\n"), fix: meta.fix });
  }
  if (inv.omitted > 0) findings.push({ id: "legacy.omitted", severity: "warning", title: `${formatCount(inv.omitted)} more legacy entries not listed (the counts above include them)` });
  if (inv.unreadable.length > 0 && plan.pending) {
    findings.push({
      id: "legacy.unreadable",
      severity: "error",
      title: `${formatCount(inv.unreadable.length)} path(s) in the state dir cannot be read: \`doctor --fix\` refuses to migrate until the pre-migration backup can hold them`,
      detail: inv.unreadable.slice(0, verbose ? Infinity : 20).join("\n"),
      fix: "Make them readable by this user (chmod -R u+rX <path>) or move them out of the state dir.",
    });
  }
  return findings;
}

/** Files OpenClaw itself wrote (its retired sources, import archives, locks): one info line, never a warning. */
function ownFilesFindings(plan: MigrationPlan, verbose: boolean): Finding[] {
  const own = plan.inventory.current.filter((e) => e.owner === "OpenClaw");
  if (own.length === 0) return [];
  const lines = own.slice(0, verbose ? Infinity : 10).map(describeEntry);
  if (own.length > lines.length) lines.push(`… and ${formatCount(own.length - lines.length)} more (--verbose lists all)`);
  return [{ id: "legacy.openclaw-own", severity: "info", title: `${formatCount(own.length)} path(s) written or retired by OpenClaw itself (its own doctor's archives, locks and live files): left as it left them`, detail: lines.join("\n") }];
}

function configFindings(plan: MigrationPlan): Finding[] {
  const findings: Finding[] = [];
  if (plan.config.problem) findings.push({ id: "legacy.config.unreadable", severity: "warning", title: `Config not checked: ${plan.config.problem}`, path: plan.config.path });
  for (const k of plan.config.keys) {
    findings.push({
      id: "legacy.config-key",
      severity: "warning",
      title: `Legacy config key ${k.key} in ${plan.config.path}: replaced by ${k.replacement}`,
      ...(k.blocked ? { detail: `not rewritten by --fix: ${k.blocked}` } : {}),
      fix: k.blocked ? "Edit the config by hand." : "`doctor --fix` rewrites it after the verified backup, keeping the file's formatting and comments.",
      path: plan.config.path,
    });
  }
  return findings;
}

/** An agent database that cannot be opened keeps its legacy sources in place on `--fix`: said before, with the remedy. */
function brokenDatabaseFindings(ctx: CheckContext, plan: MigrationPlan): Finding[] {
  const findings: Finding[] = [];
  for (const b of findBrokenAgentDatabases(ctx.paths)) {
    const waiting = plan.sources.filter((s) => s.targetDatabase === "agent" && s.agentId === b.agentId && s.action !== "skip");
    if (waiting.length === 0) continue;
    findings.push({
      id: "legacy.agent-db-unreadable",
      severity: "warning",
      title: `${formatCount(waiting.length)} legacy source(s) of agent "${b.agentId}" stay in place: its database ${b.relativePath} cannot be opened (${b.reason})`,
      detail: waiting.slice(0, ctx.verbose ? Infinity : 20).map((s) => s.relativePath).join("\n"),
      fix: `\`doctor --fix\` migrates the other agents and leaves this database byte-identical (out of the backup archive, named there as skipped); ${b.remedy}.`,
      path: b.path,
    });
  }
  return findings;
}

function describeMigration(plan: MigrationPlan): string {
  const actionable = plan.sources.filter((s) => s.action !== "skip");
  const imports = actionable.filter((s) => s.action !== "already-imported");
  const bytes = imports.reduce((n, s) => n + s.sizeBytes, 0);
  const parts = [
    imports.length > 0 ? `import ${imports.length} legacy source(s) (${formatBytes(bytes)}) into SQLite` : "",
    actionable.length > imports.length ? `retire ${actionable.length - imports.length} already-imported source(s)` : "",
    plan.layout.some((l) => l.kind === "legacy-agent-dir" && l.action === "move") ? "move the legacy agent/ dir into agents/main/agent/" : "",
    plan.config.keys.some((k) => k.blocked === null) ? `rewrite ${plan.config.keys.filter((k) => k.blocked === null).length} legacy config key(s) in ${plan.config.path}` : "",
  ].filter(Boolean);
  const merge = planMergesInto(plan);
  // The state is already in OpenClaw's format: the rows go through a staging state and merge record by record.
  const how = merge ? `; the databases are in ${merge.writtenBy}'s format, so the sources are imported into a staging state under migrated/ and merged record by record (OpenClaw's newer rows win, every row left out or replaced is kept)` : "";
  return `${parts.join(", ")} (retired files go under migrated/<run id>/)${how}`;
}

export const legacyCheck: DoctorCheck = {
  id: "legacy",
  async run(ctx: CheckContext): Promise<CheckResult> {
    const plan = await planMigration({ paths: ctx.paths, ...(ctx.planReach ? { reach: true } : {}), ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}) });
    const repairs: Repair[] = [];
    const stateDirMove = plan.layout.find((l) => l.kind === "legacy-state-dir" && l.action === "move");
    if (stateDirMove) {
      repairs.push({
        id: "legacy.state-dir.move",
        description: `move the legacy state dir ${stateDirMove.path} to ${stateDirMove.target}`,
        order: -10,
        applyBeforeOpen: ({ paths }) => {
          const moved = moveLegacyStateDir(paths);
          return moved.warnings.length > 0 ? { detail: moved.warnings.join("; "), failed: true } : moved.changes.join("; ");
        },
      });
    }
    const work = plan.sources.some((s) => s.action !== "skip") || plan.layout.some((l) => l.kind === "legacy-agent-dir" && l.action === "move") || plan.config.keys.some((k) => k.blocked === null);
    if (work) {
      repairs.push({
        id: "legacy.migrate",
        description: describeMigration(plan),
        order: 50,
        async apply(rctx) {
          const common = {
            paths: rctx.paths,
            plan,
            backup: rctx.migration.backup,
            removeSources: rctx.migration.removeSources,
            ...(rctx.migration.backupDir ? { backupDir: rctx.migration.backupDir } : {}),
            ...(rctx.onProgress ? { onProgress: rctx.onProgress } : {}),
          };
          // Beside databases in OpenClaw's current format the sources merge through a staging state; else they import.
          const run = planMergesInto(plan) ? (await mergeLegacyIntoCurrent({ ...common, live: rctx.global })).run : await applyMigration({ ...common, global: rctx.global });
          const t = run.totals;
          const unretired = unretiredOutcomes(run.sources).length;
          const setAside = run.skippedDatabases ?? [];
          const extra = [
            unretired > 0 ? `${unretired} imported but not retired (left in place; the next --fix retires them)` : "",
            setAside.length > 0 ? `${setAside.length} agent database(s) unreadable, left as they are: ${setAside.map((b) => b.relativePath).join(", ")}` : "",
          ].filter(Boolean);
          const detail = `run ${run.runId} ${run.status}: ${t.imported} imported, ${t.alreadyImported} already imported, ${t.failed} failed, ${t.retired} retired${extra.length > 0 ? `; ${extra.join("; ")}` : ""}${run.error ? ` — ${run.error}` : ""}`;
          // Partial success is not success: a failed source, a source left in place or a database set aside fails the repair (exit 1).
          return { detail, failed: run.status === "failed" || t.failed > 0 || unretired > 0 || setAside.length > 0, migration: run };
        },
      });
    }
    return { findings: [...planFindings(plan, ctx.verbose), ...brokenDatabaseFindings(ctx, plan)], repairs, migrationPlan: plan };
  },
};
