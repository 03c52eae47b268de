// The merge path's file steps: strip a staging global copy of its bookkeeping, and place an upgraded agent copy where the runtime has no database yet.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { OPENCLAW_CURRENT } from "../db-format.js";
import { checkOwnedPath } from "../owned-path.js";
import { ensurePrivateDirBelow, fsyncDir } from "../private-fs.js";
import { defaultBusyTimeoutMs } from "../busy-timeout.js";
import { fillClaimedWindows, findPlaceholderClaims } from "./placeholder-keys.js";

/**
 * Tables of a staging global copy that describe the staging state itself, not imported data: its agent registry
 * (paths under migrated/), its ledger (copied separately, with the run's final outcome) and leases.
 */
const BOOKKEEPING = ["agent_databases", "migration_sources", "migration_runs", "backup_runs", "state_leases"] as const;

export function stripStagingBookkeeping(file: string): void {
  const db = new Database(file);
  try {
    db.transaction(() => {
      for (const table of BOOKKEEPING) db.prepare(`DELETE FROM "${table}"`).run();
    }).immediate();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

export interface PlaceAgentDbOptions {
  stateDir: string;
  /** The upgraded copy (OpenClaw's current agent format) under the staging dir. */
  staged: string;
  /** agents/<id>/agent/openclaw-agent.sqlite of the live state: must not exist. */
  live: string;
  agentId: string;
  /** The live global database (current format), where the new file is registered. */
  globalPath: string;
  now: number;
}

/**
 * Copies the staged file to the live path (never over a file that appeared meanwhile, never through a link) and
 * registers it in the live global database as OpenClaw does: the path relative to the state dir.
 */
export function placeNewAgentDatabase(options: PlaceAgentDbOptions): void {
  ensurePrivateDirBelow(options.stateDir, path.dirname(options.live));
  checkOwnedPath(options.stateDir, options.live, { action: "create the agent database", allowMissing: true, expect: "file" });
  fs.copyFileSync(options.staged, options.live, fs.constants.COPYFILE_EXCL);
  try {
    fs.chmodSync(options.live, 0o600);
    const fd = fs.openSync(options.live, "r+");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fsyncDir(path.dirname(options.live));
    const relative = path.relative(options.stateDir, options.live).split(path.sep).join("/");
    const db = new Database(options.globalPath);
    try {
      db.pragma(`busy_timeout = ${defaultBusyTimeoutMs()}`);
      db.prepare("INSERT OR IGNORE INTO agent_databases (agent_id, path, schema_version, last_seen_at, size_bytes) VALUES (?, ?, ?, ?, ?)").run(
        options.agentId,
        relative,
        OPENCLAW_CURRENT.agent,
        options.now,
        fs.statSync(options.live).size,
      );
    } finally {
      db.close();
    }
  } catch (error) {
    // Not registered: the file would be a database nobody knows about; take it back.
    fs.rmSync(options.live, { force: true });
    throw error;
  }
}

export interface AdoptedSessionKey {
  sessionId: string;
  /** The key the staging import gave the session (an orphan key when no index named it). */
  from: string;
  /** The key the live database files it under: the runtime's, which stays. */
  to: string;
}

/**
 * A session the live database already holds keeps the runtime's key: the staging import files a transcript without
 * its index under an orphan key (or a restored index may name another key), so before the merge the staged windows
 * of such sessions are re-keyed to the live key, and a staged session node left without windows is dropped. The
 * staged file is this run's scratch copy; the live file is only read.
 */
export function adoptLiveSessionKeys(stagedFile: string, liveFile: string): AdoptedSessionKey[] {
  const live = new Database(liveFile, { readonly: true, fileMustExist: true });
  let staged: Database.Database | null = null;
  let liveKeys: Map<string, string>;
  try {
    staged = new Database(stagedFile);
    live.pragma(`busy_timeout = ${defaultBusyTimeoutMs()}`);
    liveKeys = new Map((live.prepare("SELECT session_id, session_key FROM session_windows").all() as Array<{ session_id: string; session_key: string }>).map((r) => [r.session_id, r.session_key]));
    // The other way round: a live placeholder key (recovered/orphan) yields to the key this run's index gives the
    // session (placeholder-keys.ts, applied inside the merge); the staged window is not re-keyed.
    const claims = findPlaceholderClaims(staged, live);
    for (const c of claims) liveKeys.delete(c.sessionId);
    fillClaimedWindows(staged, live, claims);
  } catch (error) {
    staged?.close();
    throw error;
  } finally {
    live.close();
  }
  const db = staged;
  const adopted: AdoptedSessionKey[] = [];
  try {
    // Scratch rows are re-keyed in two steps (window first, then its node goes): the checks would refuse the middle.
    db.pragma("foreign_keys = OFF");
    const staged = db.prepare("SELECT session_id, session_key FROM session_windows").all() as Array<{ session_id: string; session_key: string }>;
    const keyed = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'session_windows' AND name <> 'session_nodes'").all() as Array<{ name: string }>;
    const withKey = keyed.map((t) => t.name).filter((t) => (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(t) as Array<{ name: string }>).some((c) => c.name === "session_key"));
    db.transaction(() => {
      for (const w of staged) {
        const to = liveKeys.get(w.session_id);
        if (to === undefined || to === w.session_key) continue;
        db.prepare("UPDATE session_windows SET session_key = ? WHERE session_id = ?").run(to, w.session_id);
        adopted.push({ sessionId: w.session_id, from: w.session_key, to });
      }
      for (const a of adopted) {
        const left = db.prepare("SELECT count(*) AS n FROM session_windows WHERE session_key = ?").get(a.from) as { n: number };
        if (left.n > 0) continue;
        db.prepare("DELETE FROM session_nodes WHERE session_key = ?").run(a.from);
        for (const t of withKey) db.prepare(`DELETE FROM "${t}" WHERE session_key = ?`).run(a.from);
      }
    }).immediate();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return adopted;
}
