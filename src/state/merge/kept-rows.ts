// The merge's kept-rows file: every live row it replaced and every staged row it kept out, created (0600) only when there is one.
import fs from "node:fs";
import Database from "better-sqlite3";
import { OperationError } from "../../core/errors.js";
import { ensurePrivateFile } from "../private-fs.js";

export type KeptSide = "live-replaced" | "staged-older" | "staged-conflict";

export const MERGE_KEPT_SCHEMA = `CREATE TABLE merge_kept (
  side TEXT NOT NULL CHECK (side IN ('live-replaced', 'staged-older', 'staged-conflict')),
  table_name TEXT NOT NULL,
  key_json TEXT NOT NULL,
  row_json TEXT NOT NULL,
  live_updated_at INTEGER,
  staged_updated_at INTEGER,
  kept_at INTEGER NOT NULL
);`;

/**
 * Rows go into one open transaction of the kept file; `commit` makes it durable (before the live COMMIT, so a kept
 * copy exists whenever the live change does), `discard` removes the file (the live change is rolled back).
 */
export class KeptRows {
  private db: Database.Database | null = null;
  private insert: Database.Statement | null = null;
  count = 0;

  constructor(
    readonly path: string,
    private readonly now: number,
  ) {}

  get created(): boolean {
    return this.db !== null;
  }

  add(side: KeptSide, table: string, keyJson: string, rowJson: string, liveUpdatedAt: number | null, stagedUpdatedAt: number | null): void {
    if (!this.insert) this.open();
    this.insert!.run(side, table, keyJson, rowJson, liveUpdatedAt, stagedUpdatedAt, this.now);
    this.count += 1;
  }

  private open(): void {
    // O_EXCL: a file that appeared since the caller checked is never written into.
    if (!ensurePrivateFile(this.path)) {
      throw new OperationError("kept_rows_exists", `${this.path} already exists; the merge writes its kept rows only into a new file. Move it aside and retry; nothing was merged.`);
    }
    const db = new Database(this.path);
    this.db = db;
    db.pragma("synchronous = FULL");
    db.exec(MERGE_KEPT_SCHEMA);
    db.exec("BEGIN");
    this.insert = db.prepare("INSERT INTO merge_kept (side, table_name, key_json, row_json, live_updated_at, staged_updated_at, kept_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
  }

  commit(): void {
    if (!this.db) return;
    this.db.exec("COMMIT");
    this.db.close();
    this.insert = null;
  }

  /** Closes and removes the file (and a rollback journal beside it); a no-op when it was never created. */
  discard(): void {
    const db = this.db;
    if (!db) return;
    try {
      if (db.open) db.close();
    } finally {
      this.db = null;
      this.insert = null;
      for (const f of [this.path, `${this.path}-journal`, `${this.path}-wal`, `${this.path}-shm`]) fs.rmSync(f, { force: true });
    }
  }
}
