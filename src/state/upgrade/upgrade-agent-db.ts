// Forward upgrade of one design-document v1 agent database into a NEW file in OpenClaw 2026.9.6's agent format (user_version 23).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { DatabaseError, SchemaFormatError } from "../../core/errors.js";
import { defaultBusyTimeoutMs } from "../busy-timeout.js";
import { detectFormat } from "../db-format.js";
import { createOpenclawDatabase } from "../openclaw-database.js";
import { snapshotDatabase } from "../sqlite-snapshot.js";
import type { DbUpgradeResult } from "./types.js";
import { AgentUpgradeContext } from "./upgrade-agent-context.js";
import { countUnmapped, upgradeMemoryAndCache, upgradeTrajectory, upgradeTranscripts } from "./upgrade-agent-data.js";
import { upgradeSessions } from "./upgrade-agent-sessions.js";
import { limitUpgradeCache } from "./connection-cache.js";

export interface UpgradeAgentDbOptions {
  /** The design-v1 agent DB; opened read-only, never modified. */
  source: string;
  /** Where the new file goes; must not exist. Removed again if the upgrade fails. */
  target: string;
  agentId: string;
  now?: number;
}

/** Design-v1 tables this upgrade reads row by row (the rest are only counted). */
const HANDLED = new Set([
  "sessions", "session_routes", "session_entries", "conversations", "session_conversations",
  "transcript_events", "transcript_event_identities", "transcript_generations", "trajectory_runtime_events",
  "memory_index_meta", "memory_index_sources", "memory_index_chunks", "memory_embedding_cache", "memory_index_state", "cache_entries",
]);

/**
 * Copies every row OpenClaw's format has a place for, in one transaction, then proves the result with
 * integrity_check and foreign_key_check and closes it with no -wal/-shm beside it. Rows without a place are
 * counted in `unmapped` with a note; they stay in the source, which the caller keeps.
 */
export function upgradeAgentDb(options: UpgradeAgentDbOptions): DbUpgradeResult {
  const now = options.now ?? Date.now();
  let source: SourceSnapshot | undefined;
  let target: Database.Database | undefined;
  try {
    source = openSourceSnapshot(options.source);
    const format = detectFormat(source.handle, "agent");
    if (format.id !== "design-v1") {
      throw new SchemaFormatError(`${options.source} is written by ${format.writtenBy}; only the design-document v1 agent format is upgraded here. Nothing was changed.`, { path: options.source });
    }
    target = createOpenclawDatabase({ path: options.target, role: "agent", agentId: options.agentId, now });
    limitUpgradeCache(source.handle);
    limitUpgradeCache(target);
    const ctx = new AgentUpgradeContext(source.handle, target, options.agentId, now);
    // One write transaction: the new file holds all of it or nothing.
    target.transaction(() => {
      const windows = upgradeSessions(ctx);
      upgradeTranscripts(ctx, windows);
      upgradeTrajectory(ctx, windows);
      upgradeMemoryAndCache(ctx);
      countUnmapped(ctx, HANDLED);
    }).immediate();
    ctx.note("agent.auth-empty", "auth_profile_store/auth_profile_state are left empty: the design-v1 agent DB holds no auth profiles (they are upgraded with the global database).");
    verify(target, options.target);
    closeClean(target);
    target = undefined;
    return { role: "agent", agentId: options.agentId, source: options.source, target: options.target, read: ctx.read, written: ctx.written, unmapped: ctx.unmapped, notes: ctx.notes, acpSessions: ctx.acpSessions };
  } catch (error) {
    if (target) {
      target.close();
      // The target is ours alone (createOpenclawDatabase refused an existing path): a half-made file must not linger.
      for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(`${options.target}${suffix}`, { force: true });
    }
    throw error;
  } finally {
    source?.handle.close();
    source?.cleanup();
  }
}

interface SourceSnapshot {
  handle: Database.Database;
  cleanup: () => void;
}

/**
 * The rows are read from a private VACUUM INTO copy, never from the source itself: a read-only open of a WAL
 * file leaves a -wal/-shm beside it, and the copy is one consistent read even if a writer is busy. Our connection
 * to the source is its last one when the state lock is held, so closing it removes the -wal/-shm it created.
 */
function openSourceSnapshot(file: string): SourceSnapshot {
  if (!fs.existsSync(file)) throw new DatabaseError(`${file} does not exist; nothing was changed.`, { path: file });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-state-upgrade-"));
  const cleanup = (): void => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const copy = path.join(dir, "source.sqlite");
    snapshotDatabase(file, copy, defaultBusyTimeoutMs());
    return { handle: new Database(copy, { readonly: true, fileMustExist: true }), cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}

function verify(handle: Database.Database, file: string): void {
  const integrity = handle.pragma("integrity_check") as Array<{ integrity_check: string }>;
  if (integrity.length !== 1 || integrity[0]?.integrity_check !== "ok") {
    throw new DatabaseError(`The upgraded ${file} failed integrity_check: ${integrity.map((r) => r.integrity_check).join("; ")}. It was removed; the source is unchanged.`, { path: file });
  }
  const fk = handle.pragma("foreign_key_check") as Array<{ table: string; rowid: number; parent: string }>;
  if (fk.length > 0) {
    const sample = fk.slice(0, 5).map((r) => `${r.table} row ${r.rowid} -> ${r.parent}`).join("; ");
    throw new DatabaseError(`The upgraded ${file} has ${fk.length} dangling reference(s) (${sample}). It was removed; the source is unchanged.`, { path: file });
  }
}

/** Folds the WAL into the main file so the result is one self-contained file (the last close removes -wal/-shm). */
function closeClean(handle: Database.Database): void {
  const [checkpoint] = handle.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
  if (checkpoint && checkpoint.busy !== 0) throw new DatabaseError(`Could not checkpoint ${handle.name}: another connection holds it.`, { path: handle.name });
  handle.close();
}
