// Plans a reset: scope → the exact paths to remove (kind, reason), what is kept and skipped. Reads only (lstat/readdir).
import fs from "node:fs";
import path from "node:path";
import { OperationError, UsageError } from "../core/errors.js";
import { describePathKind, pathKind } from "../core/safe-read.js";
import { isPathInside, isWorkspaceDirName, type StatePaths } from "../state/paths.js";
import { discoverAgentDirs } from "../state/state-databases.js";
import { inspectStateDir, notADirectoryError } from "../state/state-dir.js";
import { IMPORTERS } from "../migration/importers/index.js";
import { MIGRATED_DIR } from "../migration/retire.js";
import { keptAgentDatabases, keptGlobalDatabases, migratedRunDirs, retiredCopyCandidates, type LedgerSource, type TableCount } from "./credential-stores.js";
import type { ArchiveScan } from "./archive-guard.js";
import { assertSafeRoot, assertSafeTarget, entryType, type EntryType } from "./path-safety.js";

export const RESET_SCOPES = ["config", "config+creds+sessions", "full"] as const;
export type ResetScope = (typeof RESET_SCOPES)[number];

/** What each scope removes, for the interactive chooser and the docs. */
export const RESET_SCOPE_HINTS: Record<ResetScope, string> = {
  config: "the config file only",
  "config+creds+sessions":
    "config, credentials (the credentials dir, credential rows of the global database and of the design-v1 databases kept under migrated/, legacy and migrated/ copies), every agent database (sessions, transcripts, per-agent auth profiles) and legacy sessions dirs; the global database stays",
  full: "the whole state dir plus config/credentials outside it; workspaces outside it, the backup dir and every folder holding openclaw-state archives stay",
};

export function parseResetScope(raw: string): ResetScope {
  const value = raw.trim().toLowerCase();
  const scope = RESET_SCOPES.find((s) => s === value);
  if (!scope) throw new UsageError(`Unknown reset scope ${JSON.stringify(raw)}: use one of ${RESET_SCOPES.join(", ")}.`, "invalid_scope");
  return scope;
}

export type ResetKind =
  | "config"
  | "credentials"
  | "agent-db"
  | "db-sidecar"
  | "legacy-sessions"
  | "workspace"
  | "agents"
  | "global-db"
  | "state-entry"
  | "state-dir"
  | "credential-file"
  | "migrated-copy";

export interface ResetTarget {
  path: string;
  kind: ResetKind;
  reason: string;
  /** The resolved location this path must stay inside (the state dir, or the config/credentials path itself). */
  root: string;
  /** A symlink: the link goes, whatever it points at stays. */
  link: boolean;
  /** Is or contains the global DB: removed only after it is closed (scope full). */
  afterClose: boolean;
  agentId?: string;
}

export interface ResetNote {
  path: string;
  reason: string;
  /** A kept folder (or file) holding archives reset never removes: the archives, by path. */
  archives?: string[];
}

export interface ResetPlan {
  scope: ResetScope;
  stateDir: string;
  /** In removal order. */
  targets: ResetTarget[];
  /** Global-DB tables whose rows the scope deletes (credentials migrated out of files), with their row counts. */
  tables: TableCount[];
  /** Existing paths the scope leaves in place. */
  kept: ResetNote[];
  /** Paths the scope names that are absent or not removable as such. */
  skipped: ResetNote[];
  /** What the operator must know about the plan (a file named like an archive that is not ours and goes). */
  warnings: string[];
}

export interface RegisteredAgentDb {
  agent_id: string;
  path: string;
}

export interface PlanResetInput {
  scope: ResetScope;
  paths: StatePaths;
  /** agent_databases rows, when the global DB could be read. */
  registry?: readonly RegisteredAgentDb[];
  /** Known workspace paths (config, workspace_setup_state, default names). */
  workspaces?: readonly string[];
  /** Row counts of the credential tables (live global DB, and kept design-v1 DBs: `database` set), when readable. */
  credentialTables?: readonly TableCount[];
  /** Ledger rows of credential and session sources: where their copies sit under migrated/<run>/. */
  ledgerSources?: readonly LedgerSource[];
  /** Live legacy credential files the importers detect (not migrated yet). */
  legacyCredentialFiles?: readonly string[];
  /** Archives found (by content) under the paths the scope names: their folders are kept (archive-guard.ts). */
  archives?: ArchiveScan;
}

/** Sidecars SQLite may leave beside a database. */
export const DB_SIDECAR_SUFFIXES = ["-wal", "-shm", "-journal"] as const;

/** Something reset keeps whole, wherever a scope would remove around it: the backup dir, a folder holding our archives. */
interface ProtectedUnit {
  path: string;
  reason: string;
  archives: string[];
}

/** How a removed directory's children are named when reset must remove around a kept folder inside it. */
type ChildClassifier = (child: string) => { kind: ResetKind; reason: string; afterClose: boolean };

/**
 * The units to keep: the backup dir when it is inside the state dir, and each folder holding an archive reset must
 * never remove (the archive file itself when it sits directly in the state dir, which `full` must still empty).
 */
function protectedUnits(paths: StatePaths, archives: ArchiveScan | undefined): ProtectedUnit[] {
  const stateDir = path.resolve(paths.stateDir);
  const backupDir = path.resolve(paths.backupDir);
  const units = new Map<string, ProtectedUnit>();
  if (isPathInside(stateDir, backupDir)) units.set(backupDir, { path: backupDir, reason: "the backup dir; reset never removes backups", archives: [] });
  for (const a of archives?.guarded ?? []) {
    const file = path.resolve(a.path);
    const parent = path.dirname(file);
    const unitPath = parent === stateDir ? file : parent;
    const unit = units.get(unitPath) ?? { path: unitPath, reason: "", archives: [] };
    unit.archives.push(file);
    units.set(unitPath, unit);
  }
  for (const unit of units.values()) {
    if (unit.reason !== "") continue;
    const [first] = unit.archives;
    const own = archives?.guarded.find((g) => path.resolve(g.path) === first)?.reason ?? "";
    unit.reason =
      unit.path === first
        ? `${own}; reset never removes an archive`
        : `holds ${unit.archives.length === 1 ? `an archive reset never removes: ${path.basename(first!)}, ${own}` : `${unit.archives.length} archives reset never removes`}`;
  }
  // A unit inside another is kept with it: only the outermost is named, with every archive under it.
  const all = [...units.values()];
  const outer = all.filter((u) => !all.some((o) => o !== u && isPathInside(o.path, u.path)));
  for (const u of all) {
    if (outer.includes(u)) continue;
    const host = outer.find((o) => isPathInside(o.path, u.path))!;
    host.archives.push(...u.archives);
  }
  for (const u of outer) u.archives.sort();
  return outer;
}

class PlanBuilder {
  readonly targets: ResetTarget[] = [];
  readonly kept: ResetNote[] = [];
  readonly skipped: ResetNote[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly paths: StatePaths,
    private readonly units: readonly ProtectedUnit[] = [],
  ) {}

  target(
    p: string,
    kind: ResetKind,
    reason: string,
    root: string,
    extra: { afterClose?: boolean; agentId?: string; type?: EntryType | null } = {},
    classify?: ChildClassifier,
  ): void {
    const abs = path.resolve(p);
    if (this.seen.has(abs)) return;
    // Inside (or being) a kept folder: the folder is kept whole, with whatever the scope named in it.
    const holder = this.units.find((u) => isPathInside(u.path, abs));
    if (holder) return this.keepUnit(holder);
    const type = extra.type === undefined ? entryType(abs) : extra.type;
    const inner = this.units.filter((u) => isPathInside(abs, u.path));
    if (inner.length > 0) {
      this.seen.add(abs);
      // A link or file on the way to a kept folder: removing it would not remove the folder, but cut its path; left.
      if (type !== "dir") return this.keep(abs, `leads to ${inner[0]!.path}, which reset keeps`);
      // Remove around the kept folder: every sibling on the way down goes, the folder and its ancestors stay.
      for (const name of readdirSorted(abs)) {
        const child = path.join(abs, name);
        const c = classify ? classify(child) : { kind, reason, afterClose: extra.afterClose ?? false };
        this.target(child, c.kind, c.reason, root, { afterClose: c.afterClose, ...(extra.agentId ? { agentId: extra.agentId } : {}) }, classify);
      }
      return;
    }
    if (type === "other") {
      this.seen.add(abs);
      this.skipped.push({ path: abs, reason: `${describePathKind(pathKind(abs))}, not a file, directory or link: reset never acts on one; remove it by hand if it should go` });
      return;
    }
    assertSafeTarget({ path: abs, root, isStateDir: kind === "state-dir" }, this.paths);
    this.seen.add(abs);
    this.targets.push({
      path: abs,
      kind,
      reason,
      root,
      link: type === "symlink",
      afterClose: extra.afterClose ?? false,
      ...(extra.agentId ? { agentId: extra.agentId } : {}),
    });
  }

  private keepUnit(unit: ProtectedUnit): void {
    if (this.seen.has(unit.path)) return;
    this.seen.add(unit.path);
    this.kept.push({ path: unit.path, reason: unit.reason, ...(unit.archives.length > 0 ? { archives: unit.archives } : {}) });
  }

  keep(p: string, reason: string): void {
    const abs = path.resolve(p);
    if (this.seen.has(abs) || entryType(abs) === null) return;
    // Something inside a removed directory is not kept, whatever its own rule says.
    if (this.targets.some((t) => isPathInside(t.path, abs))) return;
    const unit = this.units.find((u) => u.path === abs);
    if (unit) return this.keepUnit(unit);
    this.seen.add(abs);
    this.kept.push({ path: abs, reason });
  }

  /** True when something under `p` (not `p` itself) is kept or skipped: a directory reset must not remove whole. */
  holdsNotes(p: string): boolean {
    const abs = path.resolve(p);
    return [...this.kept, ...this.skipped].some((n) => n.path !== abs && isPathInside(abs, n.path));
  }

  /** True when `p` is already planned, itself or inside a planned directory. */
  covered(p: string): boolean {
    const abs = path.resolve(p);
    return this.targets.some((t) => isPathInside(t.path, abs));
  }

  skip(p: string, reason: string): void {
    const abs = path.resolve(p);
    if (this.seen.has(abs)) return;
    this.seen.add(abs);
    this.skipped.push({ path: abs, reason });
  }
}

function readdirSorted(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function addConfig(b: PlanBuilder, paths: StatePaths): void {
  const inside = isPathInside(paths.stateDir, paths.configPath);
  const type = entryType(paths.configPath);
  if (type === null) return b.skip(paths.configPath, "no config file there");
  if (type === "dir" || type === "other") return b.skip(paths.configPath, `${describePathKind(pathKind(paths.configPath))}, not a regular file, so not a config file; left in place`);
  if (!inside) assertSafeRoot(paths.configPath, "config path", paths);
  b.target(paths.configPath, "config", inside ? "the config file" : "the config file (outside the state dir)", inside ? paths.stateDir : paths.configPath, { type });
}

function addCredentials(b: PlanBuilder, paths: StatePaths): void {
  const inside = isPathInside(paths.stateDir, paths.credentialsDir);
  const type = entryType(paths.credentialsDir);
  if (type === null) return b.skip(paths.credentialsDir, "no credentials dir there");
  if (!inside) assertSafeRoot(paths.credentialsDir, "credentials dir", paths);
  b.target(
    paths.credentialsDir,
    "credentials",
    inside ? "credentials (OAuth tokens, API keys)" : "credentials (OAuth tokens, API keys; outside the state dir)",
    inside ? paths.stateDir : paths.credentialsDir,
    { type },
  );
}

/** Every agent DB (agents/ folder and registry) inside the state dir, sidecars first. */
function addAgentDatabases(b: PlanBuilder, paths: StatePaths, registry: readonly RegisteredAgentDb[]): void {
  const candidates = new Map<string, string | undefined>();
  for (const dir of discoverAgentDirs(paths, { all: true })) candidates.set(path.resolve(dir.dbPath), dir.agentId ?? undefined);
  for (const row of registry) {
    const p = path.resolve(row.path);
    if (!candidates.has(p)) candidates.set(p, row.agent_id);
  }
  for (const [dbPath, agentId] of [...candidates].sort((a, b) => a[0].localeCompare(b[0]))) {
    if (!isPathInside(paths.stateDir, dbPath)) {
      if (entryType(dbPath) !== null) b.skip(dbPath, "registered agent database outside the state dir; reset never removes paths there");
      continue;
    }
    const extra = agentId ? { agentId } : {};
    // Sidecars go first: a stale -wal left beside a future database of the same name could be replayed into it.
    for (const suffix of DB_SIDECAR_SUFFIXES) {
      const side = `${dbPath}${suffix}`;
      if (entryType(side) !== null) b.target(side, "db-sidecar", `${suffix.slice(1).toUpperCase()} sidecar of an agent database`, paths.stateDir, extra);
    }
    if (entryType(dbPath) !== null) b.target(dbPath, "agent-db", `agent database${agentId ? ` of "${agentId}"` : ""} (sessions, transcripts; in OpenClaw's format also the agent's own auth profiles)`, paths.stateDir, extra);
  }
}

function addLegacySessions(b: PlanBuilder, paths: StatePaths): void {
  for (const dir of discoverAgentDirs(paths, { all: true })) {
    const sessions = path.join(paths.agentsDir, dir.dirName, "sessions");
    if (entryType(sessions) !== null) b.target(sessions, "legacy-sessions", "legacy sessions dir (file-era session index and transcripts)", paths.stateDir);
  }
}

/** Legacy credential files still in the live tree (an agent's auth profiles, …): the scope removes them too. */
function addLegacyCredentialFiles(b: PlanBuilder, paths: StatePaths, files: readonly string[]): void {
  for (const file of files) {
    if (!isPathInside(paths.stateDir, file) || b.covered(file)) continue;
    const type = entryType(file);
    if (type === "file" || type === "symlink") b.target(file, "credential-file", "legacy credential file (not migrated)", paths.stateDir, { type });
  }
}

/**
 * The plaintext copies the migration retired under migrated/<run>/: the credentials dir and the session
 * dirs as they were moved, and every credential or session source the ledger names, in every run dir.
 */
function addMigratedCopies(b: PlanBuilder, paths: StatePaths, ledger: readonly LedgerSource[]): void {
  const credentialsRel = isPathInside(paths.stateDir, paths.credentialsDir) ? path.relative(paths.stateDir, paths.credentialsDir) : null;
  const sessionKinds = new Set(IMPORTERS.filter((i) => i.target === "agent").map((i) => i.kind));
  const sessionDirs = new Set(ledger.filter((s) => sessionKinds.has(s.kind) && !path.isAbsolute(s.relativePath)).map((s) => path.posix.dirname(s.relativePath)));
  for (const run of migratedRunDirs(paths)) {
    const runDir = path.join(paths.stateDir, MIGRATED_DIR, run);
    const dirs = [...(credentialsRel ? [credentialsRel] : []), ...[...sessionDirs].sort()];
    for (const rel of dirs) {
      for (const dir of [path.join(runDir, ...rel.split("/")), path.join(runDir, "skipped", ...rel.split("/"))]) {
        if (entryType(dir) === "dir" && !b.covered(dir)) b.target(dir, "migrated-copy", `copy of ${rel}/ retired by migration run ${run}`, paths.stateDir);
      }
    }
    for (const source of ledger) {
      for (const copy of retiredCopyCandidates(paths, run, source)) {
        if (entryType(copy) !== null && !b.covered(copy)) b.target(copy, "migrated-copy", `${source.kind} copy retired by migration run ${run}`, paths.stateDir);
      }
    }
  }
}

/**
 * The design-v1 agent DBs the format upgrade kept under migrated/format-upgrade-<time>/: sessions and transcripts,
 * which the scope names, so the files go (sidecars first). The kept global DB stays: it is the only home of rows
 * OpenClaw's format has no place for; the scope clears its credential rows instead (see `tables`).
 */
function addKeptAgentDatabases(b: PlanBuilder, paths: StatePaths): void {
  for (const dbPath of keptAgentDatabases(paths)) {
    if (b.covered(dbPath)) continue;
    const run = path.relative(path.join(paths.stateDir, MIGRATED_DIR), dbPath).split(path.sep)[0];
    const reason = `design-v1 agent database (sessions, transcripts) kept by the format upgrade ${run}`;
    for (const suffix of DB_SIDECAR_SUFFIXES) {
      const side = `${dbPath}${suffix}`;
      if (entryType(side) !== null) b.target(side, "migrated-copy", `${suffix.slice(1).toUpperCase()} sidecar of a ${reason}`, paths.stateDir);
    }
    b.target(dbPath, "migrated-copy", reason, paths.stateDir);
  }
}

function classifyStateEntry(p: string, paths: StatePaths, workspaces: readonly string[]): { kind: ResetKind; reason: string; afterClose: boolean } {
  const globalDb = path.resolve(paths.globalDbPath);
  if (isPathInside(p, globalDb) || DB_SIDECAR_SUFFIXES.some((suffix) => p === `${globalDb}${suffix}`)) return { kind: "global-db", reason: "global database (removed last, after it is closed)", afterClose: true };
  if (p === path.resolve(paths.configPath)) return { kind: "config", reason: "the config file", afterClose: false };
  if (p === path.resolve(paths.credentialsDir)) return { kind: "credentials", reason: "credentials (OAuth tokens, API keys)", afterClose: false };
  if (p === path.resolve(paths.agentsDir)) return { kind: "agents", reason: "agent databases and legacy sessions", afterClose: false };
  if (isWorkspaceDirName(path.basename(p)) || workspaces.some((w) => isPathInside(p, w))) {
    return { kind: "workspace", reason: "workspace inside the state dir", afterClose: false };
  }
  return { kind: "state-entry", reason: "state dir entry", afterClose: false };
}

/** Scope full: every entry of the state dir, then the state dir itself; around the backup dir and archive folders inside it. */
function addStateDir(b: PlanBuilder, paths: StatePaths, workspaces: readonly string[]): void {
  const stateDir = path.resolve(paths.stateDir);
  if (entryType(stateDir) === null) return b.skip(stateDir, "no state dir there");
  const classify: ChildClassifier = (child) => classifyStateEntry(child, paths, workspaces);
  for (const name of readdirSorted(stateDir)) {
    const child = path.join(stateDir, name);
    const c = classify(child);
    b.target(child, c.kind, c.reason, stateDir, { afterClose: c.afterClose }, classify);
  }
  // Removed only when nothing in it stays (it is removed with rmdir, never recursively, so a race cannot take a kept file).
  if (!b.holdsNotes(stateDir)) b.target(stateDir, "state-dir", "the state dir itself (removed last)", stateDir, { afterClose: true });
  else b.keep(stateDir, "the state dir itself stays: it holds what reset keeps or skips (listed here)");
}

/** A file named like an archive that is not ours is not protected by its name: the plan says where it goes. */
function foreignArchiveWarnings(archives: ArchiveScan | undefined, targets: readonly ResetTarget[]): string[] {
  const warnings: string[] = [];
  for (const f of archives?.foreign ?? []) {
    const by = targets.find((t) => isPathInside(t.path, f.path));
    if (!by) continue;
    const withTarget = by.path === path.resolve(f.path) ? "" : ` with ${by.path}`;
    warnings.push(`${f.path} is named like an archive but openclaw-state did not write it (${f.problem}); it is not protected and is removed${withTarget}.`);
  }
  return warnings;
}

function keepCommon(b: PlanBuilder, scope: ResetScope, paths: StatePaths, workspaces: readonly string[]): void {
  const byScope = `kept by scope ${scope}`;
  if (scope === "config") {
    b.keep(paths.credentialsDir, byScope);
    for (const dir of discoverAgentDirs(paths)) b.keep(dir.dbPath, byScope);
  }
  if (scope !== "full") b.keep(paths.globalDbPath, scope === "config" ? byScope : "the global database stays; registry rows of removed agent databases are dropped");
  for (const w of workspaces) {
    b.keep(w, isPathInside(paths.stateDir, w) ? byScope : "workspace outside the state dir; reset never removes workspaces there");
  }
  b.keep(paths.backupDir, "the backup dir; reset never removes backups");
}

/** The reset plan for a scope. Throws (removing nothing) when any planned path is unsafe. */
export function planReset(input: PlanResetInput): ResetPlan {
  const { scope, paths } = input;
  const registry = input.registry ?? [];
  const workspaces = (input.workspaces ?? []).map((w) => path.resolve(w));
  // A file, FIFO or link-to-file where the state dir should be: nothing under it can be planned (scope full
  // would otherwise delete whatever file a mistyped --state-dir names).
  const dir = inspectStateDir(paths);
  if (dir.status === "not-a-directory") throw notADirectoryError(dir, "nothing was removed");
  assertSafeRoot(paths.stateDir, "state dir", paths, { noSymlink: true });
  if (path.resolve(paths.backupDir) === path.resolve(paths.stateDir)) {
    throw new OperationError("reset_unsafe_path", `Refusing to reset: the backup dir ${paths.backupDir} is the state dir itself; point OPENCLAW_BACKUP_DIR elsewhere and retry.`, {
      path: paths.backupDir,
    });
  }
  const b = new PlanBuilder(paths, protectedUnits(paths, input.archives));
  if (scope === "full") {
    if (!isPathInside(paths.stateDir, paths.configPath)) addConfig(b, paths);
    if (!isPathInside(paths.stateDir, paths.credentialsDir)) addCredentials(b, paths);
    addStateDir(b, paths, workspaces);
  } else {
    addConfig(b, paths);
    if (scope === "config+creds+sessions") {
      addCredentials(b, paths);
      addAgentDatabases(b, paths, registry);
      addLegacySessions(b, paths);
      addLegacyCredentialFiles(b, paths, input.legacyCredentialFiles ?? []);
      addMigratedCopies(b, paths, input.ledgerSources ?? []);
      addKeptAgentDatabases(b, paths);
    }
  }
  // Scope full removes the global DB file itself; the narrower scope keeps the DB but not the secrets in it.
  const tables = scope === "config+creds+sessions" ? (input.credentialTables ?? []).filter((t) => t.rows > 0) : [];
  keepCommon(b, scope, paths, workspaces);
  if (scope === "config+creds+sessions") {
    for (const kept of keptGlobalDatabases(paths)) b.keep(kept, "design-v1 global database kept by the format upgrade: its credential rows are deleted (listed above), its other rows stay");
  }
  // Removal order: everything that does not hold the global DB first, in planned order.
  const targets = [...b.targets.filter((t) => !t.afterClose), ...b.targets.filter((t) => t.afterClose)];
  return { scope, stateDir: paths.stateDir, targets, tables, kept: b.kept, skipped: b.skipped, warnings: foreignArchiveWarnings(input.archives, targets) };
}
