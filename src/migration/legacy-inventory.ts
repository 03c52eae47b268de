// Classifies every file of the state dir (imported, core, plugin, discard, archived, current, special, unknown): one streamed walk, no hashing.
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import { formatBytes, formatCount } from "../core/format-bytes.js";
import { isPathInside, type StatePaths } from "../state/paths.js";
import { sourceRelativePath } from "./inventory.js";
import { isOnLegacyPath, matchLegacyRule, NOT_IMPORTED_CLASSES, type LegacyClass, type LegacyPathRule } from "./legacy-paths.js";

export type EntryType = "file" | "dir" | "symlink" | "fifo" | "socket" | "device" | "other";

export interface InventoryEntry {
  /** Relative to the root with "/" separators (absolute when outside it, e.g. a credentials dir elsewhere). */
  relativePath: string;
  path: string;
  class: LegacyClass;
  type: EntryType;
  sizeBytes?: number;
  /** A directory reported as one entry: the regular files inside it. */
  files?: number;
  owner?: string;
  target?: string;
  reason: string;
  /** The file or directory cannot be read by this process (the backup would fail or leave it out). */
  unreadable?: boolean;
}

export interface LegacyInventory {
  root: string;
  /** Files per class; a directory reported as one entry counts its files. */
  counts: Record<LegacyClass, number>;
  /** Every legacy path that will not be imported (classes core … unknown), sorted by path. */
  entries: InventoryEntry[];
  /** Current-state entries seen at the top of their tree (databases, config, credentials, workspaces, …). */
  current: InventoryEntry[];
  /** Paths this process cannot read: the pre-migration backup cannot hold them. */
  unreadable: string[];
  /** Entries left out of `entries` beyond the cap (their counts are still in `counts`). */
  omitted: number;
}

export interface InventoryOptions {
  paths: StatePaths;
  root: string;
  /** Absolute paths of the sources the importers detected: these files are `imported`. */
  detected: ReadonlySet<string>;
  /** Absolute paths named like a source that a released OpenClaw's runtime still reads (path → why): current state. */
  live?: ReadonlyMap<string, string>;
  /** Cap on `entries` (a state dir holding 10⁶ stray files must not hold them all in memory). */
  maxEntries?: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const ROOT_IS_PRIVILEGED = typeof process.getuid === "function" && process.getuid() === 0;

export function emptyCounts(): Record<LegacyClass, number> {
  return { imported: 0, core: 0, plugin: 0, discard: 0, archived: 0, current: 0, special: 0, unknown: 0 };
}

function typeOf(d: fs.Dirent | fs.Stats): EntryType {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "dir";
  if (d.isSymbolicLink()) return "symlink";
  if (d.isFIFO()) return "fifo";
  if (d.isSocket()) return "socket";
  if (d.isCharacterDevice() || d.isBlockDevice()) return "device";
  return "other";
}

const TYPE_LABEL: Record<EntryType, string> = {
  file: "file",
  dir: "directory",
  symlink: "symbolic link (never followed)",
  fifo: "FIFO (never opened)",
  socket: "socket",
  device: "device",
  other: "special file",
};

/** Which legacy files a non-regular entry stands in for, and what to do about it. */
function specialReason(type: EntryType, rel: string, rule: LegacyPathRule | null): string {
  const what = TYPE_LABEL[type];
  if (rule) {
    const expected = rule.class === "imported" ? `the legacy ${rule.reason} (${rule.target})` : rule.reason;
    return `${what} where ${expected} is expected: it is not migrated; replace it with the regular ${rule.match === "dir" ? "directory" : "file"} (or remove it)`;
  }
  const onPath = isOnLegacyPath(rel);
  if (onPath) {
    const agent = /^agents\/([^/]+)\/sessions$/.exec(rel);
    const whose = agent ? `agent ${agent[1]}'s legacy sessions` : `the legacy files below it (${onPath.pattern})`;
    return `${what} on a legacy path: ${whose} are not migrated; replace the link with the directory it points to (or remove it)`;
  }
  return `${what}: not state this tool reads; left alone`;
}

function readable(abs: string): boolean {
  if (ROOT_IS_PRIVILEGED) return true;
  try {
    fs.accessSync(abs, fs.constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

interface Frame {
  abs: string;
  /** Path the rules match against ("credentials/…" for a credentials dir outside the root). */
  rel: string;
  /** Inside a current-state directory: unmatched files are current too. */
  inherit: boolean;
}

class Walker {
  readonly counts = emptyCounts();
  readonly entries: InventoryEntry[] = [];
  readonly current: InventoryEntry[] = [];
  readonly unreadable: string[] = [];
  omitted = 0;
  private readonly stack: Frame[] = [];
  private readonly ancestors = new Set<string>();
  private readonly excluded: Set<string>;
  /** Detected sources by directory: a source is recognized by its name without building its path (10⁵ files). */
  private readonly detectedByDir = new Map<string, Set<string>>();

  constructor(private readonly options: InventoryOptions & { maxEntries: number }) {
    for (const file of options.detected) {
      const dir = path.dirname(file);
      const names = this.detectedByDir.get(dir);
      if (names) names.add(path.basename(file));
      else this.detectedByDir.set(dir, new Set([path.basename(file)]));
    }
    for (const start of this.detectedByDir.keys()) {
      for (let dir = start; ; dir = path.dirname(dir)) {
        if (this.ancestors.has(dir)) break;
        this.ancestors.add(dir);
        if (path.dirname(dir) === dir) break;
      }
    }
    const backupDir = path.resolve(options.paths.backupDir);
    this.excluded = new Set(isPathInside(path.resolve(options.root), backupDir) ? [backupDir] : []);
  }

  private display(abs: string): string {
    return sourceRelativePath(this.options.root, abs);
  }

  /** Past the cap only the counts grow: no entry is built (nor its file stat'ed). */
  private full(cls: LegacyClass): boolean {
    if (cls === "current" || this.entries.length < this.options.maxEntries) return false;
    this.counts[cls] += 1;
    this.omitted += 1;
    return true;
  }

  private add(entry: Omit<InventoryEntry, "relativePath">, count = 1): void {
    this.counts[entry.class] += count;
    const full: InventoryEntry = { relativePath: this.display(entry.path), ...entry };
    if (entry.unreadable) this.unreadable.push(entry.path);
    if (entry.class === "current") {
      this.current.push(full);
      return;
    }
    if (this.entries.length >= this.options.maxEntries) {
      this.omitted += 1;
      return;
    }
    this.entries.push(full);
  }

  private fromRule(rule: LegacyPathRule, abs: string, type: EntryType, extra: Partial<InventoryEntry> = {}): Omit<InventoryEntry, "relativePath"> {
    return {
      path: abs,
      class: rule.class,
      type,
      ...(rule.owner ? { owner: rule.owner } : {}),
      ...(rule.target ? { target: rule.target } : {}),
      reason: rule.reason,
      ...extra,
    };
  }

  run(roots: Frame[]): void {
    this.stack.push(...roots.reverse());
    while (this.stack.length > 0) this.readDir(this.stack.pop()!);
  }

  private readDir(frame: Frame): void {
    let dir: fs.Dir;
    try {
      dir = fs.opendirSync(frame.abs);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return;
      this.add({ path: frame.abs, class: "special", type: "dir", unreadable: true, reason: `directory cannot be read (${describeError(error)}): its files are neither planned nor in the pre-migration backup; make it readable (chmod u+rx) or move it out of the state dir` });
      return;
    }
    try {
      const sources = this.detectedByDir.get(frame.abs);
      for (let d = dir.readSync(); d !== null; d = dir.readSync()) this.visit(frame, d, sources);
    } finally {
      dir.closeSync();
    }
  }

  private visit(parent: Frame, d: fs.Dirent, sources: Set<string> | undefined): void {
    // The hot path (a sessions dir of 10⁵ transcripts): a detected source is counted without a string built.
    if (sources?.has(d.name) && d.isFile()) {
      this.counts.imported += 1;
      if (!ROOT_IS_PRIVILEGED && !readable(path.join(parent.abs, d.name))) this.unreadable.push(path.join(parent.abs, d.name));
      return;
    }
    const abs = path.join(parent.abs, d.name);
    const rel = parent.rel === "" ? d.name : `${parent.rel}/${d.name}`;
    if (this.excluded.has(abs)) {
      this.add({ path: abs, class: "current", type: "dir", reason: "backup directory inside the state dir (never archived)" });
      return;
    }
    let type = typeOf(d);
    let st: fs.Stats | null = null;
    if (type === "other") {
      // File systems without d_type: one lstat.
      try {
        st = fs.lstatSync(abs);
        type = typeOf(st);
      } catch {
        return;
      }
    }
    if (type === "dir") return this.visitDir(parent, abs, rel);
    if (type === "file") return this.visitFile(parent, abs, rel, st);
    const rule = matchLegacyRule(rel, "file") ?? matchLegacyRule(rel, "dir");
    if (rule?.allowSpecial) return this.add(this.fromRule(rule, abs, type));
    if (parent.inherit && !rule && !isOnLegacyPath(rel)) {
      this.counts.current += 1;
      return;
    }
    this.add({ path: abs, class: "special", type, reason: specialReason(type, rel, rule) });
  }

  private visitDir(parent: Frame, abs: string, rel: string): void {
    const rule = matchLegacyRule(rel, "dir");
    const holdsSources = this.ancestors.has(abs);
    if (rule && rule.class === "current") {
      this.add(this.fromRule(rule, abs, "dir"));
      if (rule.descend === "all" || holdsSources) this.stack.push({ abs, rel, inherit: true });
      else if (rule.descend) for (const sub of [...rule.descend].reverse()) this.descendInto(abs, rel, sub);
      return;
    }
    if (rule && !holdsSources) {
      const { files, unreadable } = countFiles(abs);
      this.add(this.fromRule(rule, abs, "dir", { files, ...(unreadable ? { unreadable } : {}) }), Math.max(files, 1));
      return;
    }
    const fileRule = matchLegacyRule(rel, "file");
    if (fileRule && fileRule.class !== "current" && !holdsSources) {
      this.add({ path: abs, class: "special", type: "dir", reason: specialReason("dir", rel, fileRule) });
      return;
    }
    this.stack.push({ abs, rel, inherit: parent.inherit });
  }

  /** A sub-path of a workspace: entered only when every component is a real directory (links are reported, never followed). */
  private descendInto(abs: string, rel: string, sub: string): void {
    let at = abs;
    let atRel = rel;
    for (const part of sub.split("/")) {
      at = path.join(at, part);
      atRel = `${atRel}/${part}`;
      let st: fs.Stats;
      try {
        st = fs.lstatSync(at);
      } catch {
        return;
      }
      if (st.isDirectory()) continue;
      const type = typeOf(st);
      if (type !== "file") this.add({ path: at, class: "special", type, reason: specialReason(type, atRel, matchLegacyRule(atRel, "dir")) });
      return;
    }
    // Visited like any directory met in a current-state dir: its own rule (a plugin's dir) applies.
    this.visitDir({ abs: path.dirname(at), rel: atRel.slice(0, atRel.lastIndexOf("/")), inherit: true }, at, atRel);
  }

  private visitFile(parent: Frame, abs: string, rel: string, known: fs.Stats | null): void {
    const unreadable = !readable(abs);
    if (this.options.detected.has(abs)) {
      // Found through a path spelled differently from its directory listing (a root given with "..").
      this.counts.imported += 1;
      if (unreadable) this.unreadable.push(abs);
      return;
    }
    const liveReason = this.options.live?.get(abs);
    if (liveReason !== undefined) {
      this.add({ path: abs, class: "current", type: "file", owner: "OpenClaw", reason: liveReason, ...(unreadable ? { unreadable } : {}) });
      return;
    }
    const rule = matchLegacyRule(rel, "file");
    if (!rule && parent.inherit) {
      this.counts.current += 1;
      if (unreadable) this.unreadable.push(abs);
      return;
    }
    const size = (): number | undefined => {
      try {
        return (known ?? fs.lstatSync(abs)).size;
      } catch {
        return undefined;
      }
    };
    const extra = { ...(unreadable ? { unreadable } : {}) };
    if (this.full(!rule ? "unknown" : rule.class === "imported" ? "core" : rule.class)) {
      if (unreadable) this.unreadable.push(abs);
      return;
    }
    if (!rule) {
      this.add({ path: abs, class: "unknown", type: "file", sizeBytes: size(), reason: "not a file OpenClaw's design names: left alone", ...extra });
      return;
    }
    if (rule.class === "current") {
      if (parent.inherit) this.counts.current += 1;
      else this.add(this.fromRule(rule, abs, "file", extra));
      if (unreadable && parent.inherit) this.unreadable.push(abs);
      return;
    }
    if (rule.class === "imported") {
      // Named like a source, but no importer reads it here (an invalid agent id, a path the config does not name).
      this.add({ path: abs, class: "core", type: "file", sizeBytes: size(), target: rule.target, reason: `named like a legacy ${rule.reason} (${rule.target}), but not where the importer reads it (an invalid agent id or an unexpected folder): left in place`, ...extra });
      return;
    }
    this.add(this.fromRule(rule, abs, "file", { sizeBytes: size(), ...extra }));
  }
}

/** Regular files below a directory reported as one entry (no stat: names only). */
function countFiles(root: string): { files: number; unreadable: boolean } {
  let files = 0;
  let unreadable = false;
  const stack = [root];
  while (stack.length > 0) {
    const dirPath = stack.pop()!;
    let dir: fs.Dir;
    try {
      dir = fs.opendirSync(dirPath);
    } catch {
      unreadable = true;
      continue;
    }
    try {
      for (let d = dir.readSync(); d !== null; d = dir.readSync()) {
        if (d.isDirectory()) stack.push(path.join(dirPath, d.name));
        else if (d.isFile()) {
          files += 1;
          if (!unreadable && !readable(path.join(dirPath, d.name))) unreadable = true;
        }
      }
    } finally {
      dir.closeSync();
    }
  }
  return { files, unreadable };
}

/**
 * Walks `root` (and the credentials dir when it lives elsewhere) and classifies every file. Only directory
 * entries are read: no file is opened, and only reported files are stat'ed.
 */
export function takeLegacyInventory(options: InventoryOptions): LegacyInventory {
  const walker = new Walker({ ...options, maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES });
  const root = path.resolve(options.root);
  const roots: Frame[] = [{ abs: root, rel: "", inherit: false }];
  const credentials = path.resolve(options.paths.credentialsDir);
  if (!isPathInside(root, credentials)) roots.push({ abs: credentials, rel: "credentials", inherit: true });
  walker.run(roots);
  const byPath = (a: InventoryEntry, b: InventoryEntry): number => (a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : 0);
  return {
    root: options.root,
    counts: walker.counts,
    entries: walker.entries.sort(byPath),
    current: walker.current.sort(byPath),
    unreadable: [...new Set(walker.unreadable)].sort(),
    omitted: walker.omitted,
  };
}

/** Legacy entries that will not be imported, grouped by class (classes in report order). */
export function entriesByClass(inventory: LegacyInventory): Array<[LegacyClass, InventoryEntry[]]> {
  return NOT_IMPORTED_CLASSES.map((c) => [c, inventory.entries.filter((e) => e.class === c)] as [LegacyClass, InventoryEntry[]]).filter(([, list]) => list.length > 0);
}

export interface PathClass {
  class: LegacyClass;
  type: EntryType | "missing";
  reason: string;
  owner?: string;
  target?: string;
}

/**
 * One path's class without walking the tree: the same rules as the walk, applied to its ancestors (a file in
 * a current-state dir is current; one in a plugin dir is that plugin's) and then to itself.
 */
export function classifyPath(root: string, abs: string, detected: ReadonlySet<string>, live?: ReadonlyMap<string, string>): PathClass {
  let st: fs.Stats | null = null;
  try {
    st = fs.lstatSync(abs);
  } catch {
    st = null;
  }
  const type = st ? typeOf(st) : "missing";
  if (detected.has(path.resolve(abs))) return { class: "imported", type, reason: "a legacy source the migration imports" };
  const liveReason = live?.get(path.resolve(abs));
  if (liveReason !== undefined) return { class: "current", type, reason: liveReason, owner: "OpenClaw" };
  const rel = sourceRelativePath(root, abs);
  if (path.isAbsolute(rel)) return { class: "unknown", type, reason: "outside the state dir" };
  const parts = rel.split("/");
  let inherit = false;
  for (let n = 1; n < parts.length; n += 1) {
    const rule = matchLegacyRule(parts.slice(0, n).join("/"), "dir");
    if (!rule) continue;
    if (rule.class === "current") {
      const sub = parts.slice(n).join("/");
      const scanned = rule.descend === "all" || (Array.isArray(rule.descend) && rule.descend.some((d) => sub === d || sub.startsWith(`${d}/`)));
      if (!scanned) return { class: "current", type, reason: rule.reason };
      inherit = true;
      continue;
    }
    return { class: rule.class, type, reason: rule.reason, ...(rule.owner ? { owner: rule.owner } : {}), ...(rule.target ? { target: rule.target } : {}) };
  }
  const rule = matchLegacyRule(rel, type === "dir" ? "dir" : "file");
  if (rule && rule.class !== "imported") return { class: rule.class, type, reason: rule.reason, ...(rule.owner ? { owner: rule.owner } : {}), ...(rule.target ? { target: rule.target } : {}) };
  if (rule) return { class: "core", type, reason: `named like a legacy ${rule.reason} (${rule.target}), but not where the importer reads it`, target: rule.target! };
  if (type !== "file" && type !== "dir" && type !== "missing") return { class: "special", type, reason: specialReason(type, rel, null) };
  return inherit ? { class: "current", type, reason: "inside a current-state directory" } : { class: "unknown", type, reason: "not a file OpenClaw's design names" };
}

/** One line per entry: path, size or file count, owner or target, reason. */
export function describeEntry(e: InventoryEntry): string {
  const size = e.files !== undefined ? `${formatCount(e.files)} file(s)` : e.sizeBytes !== undefined ? formatBytes(e.sizeBytes) : e.type;
  const who = e.owner ? `${e.owner}: ` : e.target ? `→ ${e.target}: ` : "";
  return `${e.relativePath}${e.type === "dir" ? "/" : ""} (${size}) — ${who}${e.reason}${e.unreadable ? " [UNREADABLE]" : ""}`;
}
