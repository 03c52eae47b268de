// Test helpers for backup: a seeded state dir (real DBs with rows, files, links) and row counting.
import fs from "node:fs";
import path from "node:path";
import { openDatabase } from "../../src/state/database.js";
import { openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import type { TempState } from "./temp-state.js";

export interface SeedOptions {
  sessions?: number;
  eventsPerSession?: number;
  agents?: string[];
}

/** Adds `count` sessions with transcript events to an agent DB (ids continue from `start`). */
export function addSessions(dbPath: string, start: number, count: number, events = 5): void {
  const db = openDatabase({ path: dbPath, role: "agent", mode: "write" });
  try {
    const addSession = db.handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', ?, ?)");
    const addEvent = db.handle.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
    db.immediate(() => {
      for (let i = start; i < start + count; i += 1) {
        const id = `s-${i}`;
        addSession.run(id, `agent:main:${id}`, i, i);
        for (let seq = 0; seq < events; seq += 1) addEvent.run(id, seq, JSON.stringify({ type: "message", text: `event ${seq} of ${id}` }), i);
      }
    });
  } finally {
    db.close();
  }
}

/**
 * A state dir with a global DB, agent DBs with sessions, a config naming no workspace, plain files
 * (one executable), an empty dir and two symlinks (one pointing out of the tree).
 */
export function seedState(state: TempState, options: SeedOptions = {}): void {
  const { paths } = state;
  const global = openGlobalDatabase(paths, { mode: "write", create: true });
  try {
    for (const agentId of options.agents ?? ["main"]) {
      const agent = openAgentDatabase(paths, agentId, { mode: "write", create: true, global });
      agent.close();
      addSessions(path.join(paths.agentsDir, agentId, "agent", "openclaw-agent.sqlite"), 0, options.sessions ?? 20, options.eventsPerSession ?? 5);
    }
  } finally {
    global.close();
  }
  fs.mkdirSync(path.dirname(paths.configPath), { recursive: true });
  fs.writeFileSync(paths.configPath, '{\n  // comment\n  "gateway": { "port": 18789, },\n}\n', { mode: 0o600 });
  fs.mkdirSync(path.join(paths.stateDir, "notes"), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(paths.stateDir, "notes", "readme.md"), "# notes\n", { mode: 0o600 });
  fs.mkdirSync(path.join(paths.stateDir, "scripts"), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(paths.stateDir, "scripts", "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  fs.mkdirSync(path.join(paths.stateDir, "empty"), { recursive: true, mode: 0o700 });
  fs.symlinkSync("notes/readme.md", path.join(paths.stateDir, "readme-link"));
  fs.symlinkSync("/etc", path.join(paths.stateDir, "escape-link"));
}

export function agentDb(state: TempState, agentId = "main"): string {
  return path.join(state.paths.agentsDir, agentId, "agent", "openclaw-agent.sqlite");
}

/** Row count of one table, read without leaving sidecars behind. */
export function countRows(dbPath: string, table: string, role: "global" | "agent" = "agent"): number {
  const db = openDatabase({ path: dbPath, role, mode: "read" });
  try {
    return (db.handle.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}
