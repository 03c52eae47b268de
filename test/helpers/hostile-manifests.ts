// Hostile *manifest* builders: every tar entry valid and every sha256 right, but the manifest steers the restore.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { manifestOf, withManifest, type RawEntry } from "./tar-tools.js";

export const AGENT_DB = "payload/state/agents/main/agent/openclaw-agent.sqlite";
export const GLOBAL_DB = "payload/state/state/openclaw.sqlite";

// any: a hostile manifest is edited as loose JSON, field by field.
type Manifest = Record<string, any>;

/** A valid archive's entries plus its manifest, edited together; `entries()` re-serializes with honest totals. */
export class ArchiveEdit {
  readonly m: Manifest;
  private list: RawEntry[];

  constructor(
    entries: readonly RawEntry[],
    readonly root: string,
  ) {
    this.list = entries.map((e) => ({ ...e }));
    this.m = JSON.parse(JSON.stringify(manifestOf(entries)));
  }

  private full(archivePath: string): string {
    return `${this.root}/${archivePath}`;
  }

  addDir(archivePath: string): this {
    this.list.push({ path: this.full(archivePath), type: "Directory", data: Buffer.alloc(0), mode: 0o700 });
    this.m.directories.push({ archivePath });
    return this;
  }

  addFile(archivePath: string, data: Buffer): this {
    this.list.push({ path: this.full(archivePath), type: "File", data, mode: 0o600 });
    this.m.files.push({ archivePath, size: data.length, sha256: sha256(data), mode: 0o600, mtimeMs: 0 });
    return this;
  }

  addLink(archivePath: string, target: string): this {
    this.m.symlinks.push({ archivePath, target });
    return this;
  }

  addAsset(asset: { kind: string; type: "dir" | "file"; sourcePath: string; archivePath: string }): this {
    this.m.assets.push({ ...asset, excluded: [] });
    return this;
  }

  /** Drops every entry and manifest record at or under `archivePath`. */
  remove(archivePath: string): this {
    const inside = (p: string): boolean => p === archivePath || p.startsWith(`${archivePath}/`);
    this.list = this.list.filter((e) => !inside(e.path.slice(this.root.length + 1).replace(/\/$/, "")));
    for (const key of ["directories", "files", "symlinks", "databases"] as const) this.m[key] = this.m[key].filter((e: { archivePath: string }) => !inside(e.archivePath));
    return this;
  }

  /** Rewrites a database's bytes with the sqlite3 shell; the manifest's size, sha256 and page count follow. */
  editDatabase(archivePath: string, sql: string): this {
    const entry = this.list.find((e) => e.path === this.full(archivePath))!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-hostile-db-"));
    try {
      const file = path.join(dir, "db.sqlite");
      fs.writeFileSync(file, entry.data);
      const r = spawnSync("sqlite3", [file, sql], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`sqlite3 failed: ${r.stderr}`);
      const pages = Number(spawnSync("sqlite3", [file, "PRAGMA page_count;"], { encoding: "utf8" }).stdout.trim());
      const data = fs.readFileSync(file);
      entry.data = data;
      const f = this.m.files.find((x: { archivePath: string }) => x.archivePath === archivePath)!;
      f.size = data.length;
      f.sha256 = sha256(data);
      const db = this.m.databases.find((x: { archivePath: string }) => x.archivePath === archivePath);
      if (db) Object.assign(db, { sizeBytes: data.length, sha256: f.sha256, pageCount: pages });
      return this;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  entries(options: { honestTotals?: boolean } = {}): RawEntry[] {
    if (options.honestTotals !== false) {
      this.m.totals = {
        files: this.m.files.length,
        bytes: this.m.files.reduce((n: number, f: { size: number }) => n + f.size, 0),
        databases: this.m.databases.length,
        directories: this.m.directories.length,
        symlinks: this.m.symlinks.length,
      };
    }
    return withManifest(this.list, this.m);
  }
}

export function sha256(data: Buffer): string {
  return crypto.createHash("sha256").update(data).digest("hex");
}
