#!/usr/bin/env node
// Benchmark: a steady-state cursor read (after 10 appends) on a 1M-event transcript vs a 1k-event one, through openclaw-state/runtime.
//
// Usage: npm run build && node bench/runtime.mjs [--small N] [--large N] [--rounds N]
// (or env BENCH_RUNTIME_SMALL, BENCH_RUNTIME_LARGE, BENCH_ROUNDS). Target: large/small ≤ 1.20× for the visible
// message delta (and the raw delta, reported alongside): a read costs time proportional to the new events.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { resolveStatePaths } from "../dist/state/paths.js";
import { openAgentDatabase } from "../dist/state/state-databases.js";
import { readSessionTranscriptRawDelta, readSessionTranscriptVisibleMessageDelta } from "../dist/runtime/index.js";
import { benchArg as arg, median, printTable, recordResult, toCells } from "./bench-results.mjs";

// Samples start from a collected heap (seeding a million rows leaves garbage behind): re-run with --expose-gc.
if (typeof globalThis.gc !== "function") {
  const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

const SMALL = arg("small", "BENCH_RUNTIME_SMALL", 1_000);
const LARGE = arg("large", "BENCH_RUNTIME_LARGE", 1_000_000);
const ROUNDS = arg("rounds", "BENCH_ROUNDS", 21);
const APPENDS = 10;
const KEY = "agent:main:main";
const work = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-bench-runtime-"));

/** A linear transcript of `events` entries (every 5th a tool call/result pair, every 50th a compaction), with identities. */
function seed(name, events) {
  const stateDir = path.join(work, name, ".openclaw");
  const paths = resolveStatePaths({ stateDir, env: {} });
  const db = openAgentDatabase(paths, "main", { mode: "write", create: true });
  const started = performance.now();
  const h = db.handle;
  // Raw prepared inserts in batches of 50k: seeding a million rows is the bench's own hot path.
  h.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES ('s1', ?, 'shared-main', 1, 1)").run(KEY);
  h.prepare("INSERT INTO session_routes (session_key, session_id, updated_at) VALUES (?, 's1', 1)").run(KEY);
  h.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ('s1', 0, ?, 1)").run(JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }));
  const state = { paths, stateDir, next: 1, parent: null, db };
  for (let done = 0; done < events; done += 50_000) appendEntries(state, Math.min(50_000, events - done));
  db.close();
  state.db = null;
  return { ...state, seedMs: performance.now() - started, dbBytes: fs.statSync(path.join(paths.agentsDir, "main", "agent", "openclaw-agent.sqlite")).size };
}

function entryFor(seq, parent) {
  const id = `e${seq.toString(36)}`;
  if (seq % 50 === 0) return { type: "compaction", id, parentId: parent, timestamp: "2026-01-01T00:00:01.000Z", summary: "earlier turns summarized", firstKeptEntryId: parent };
  const role = seq % 5 === 3 ? "toolResult" : seq % 2 ? "user" : "assistant";
  const content = role === "assistant" ? [{ type: "text", text: `answer ${seq} with a few words of text` }, { type: "toolCall", id: `call-${seq}`, name: "read" }] : `message ${seq} with a few words of text`;
  return { type: "message", id, parentId: parent, timestamp: "2026-01-01T00:00:01.000Z", message: { role, content, ...(role === "toolResult" ? { toolCallId: `call-${seq - 1}` } : {}) } };
}

/** Appends `count` entries the way a writer does (event row + identity row), in one transaction; returns {entries, messages}. */
function appendEntries(state, count) {
  let messages = 0;
  const db = state.db ?? openAgentDatabase(state.paths, "main", { mode: "write" });
  const ev = db.handle.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ('s1', ?, ?, 1)");
  const id = db.handle.prepare("INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, has_parent, parent_id, created_at) VALUES ('s1', ?, ?, ?, ?, ?, 1)");
  db.handle.transaction(() => {
    for (let i = 0; i < count; i += 1) {
      const seq = state.next++;
      const e = entryFor(seq, state.parent);
      ev.run(seq, JSON.stringify(e));
      id.run(e.id, seq, e.type, e.parentId === null ? 0 : 1, e.parentId);
      state.parent = e.id;
      if (e.type === "message") messages += 1;
    }
  })();
  if (!state.db) db.close();
  return { entries: count, messages };
}

/** Drains to the end (not timed) and returns the cursor. */
async function cursorAtEnd(store, read) {
  let cursor;
  for (;;) {
    const r = await read({ stateDir: store.stateDir, agentId: "main", sessionKey: KEY, sessionId: "s1", cursor, ...(read === readSessionTranscriptRawDelta ? { maxEvents: 10_000 } : { maxMessages: 10_000 }), maxBytes: 64 * 1024 * 1024 });
    if (r.kind !== "page") throw new Error(`unexpected ${r.kind}`);
    cursor = r.cursor;
    if (!r.hasMore) return cursor;
  }
}

/** Timed reads per round and store: the same cursor read again returns the same page. */
const READS_PER_ROUND = 20;

/**
 * Each round appends 10 entries to every store (untimed), then times READS_PER_ROUND reads with each store's
 * stored cursor, alternating the stores read by read (and the order every read), so load on a shared box
 * hits both alike; every read must return exactly the new items. Returns the median read time per store.
 */
async function steadyState(stores, read, counted) {
  const cursors = [];
  for (const s of stores) cursors.push(await cursorAtEnd(s, read));
  const times = stores.map(() => []);
  for (let round = 0; round < ROUNDS + 1; round += 1) {
    const expected = stores.map((s) => appendEntries(s, APPENDS)[counted]);
    globalThis.gc();
    const last = [];
    for (let k = 0; k < READS_PER_ROUND; k += 1) {
      const order = k % 2 === 0 ? stores.map((_, i) => i) : stores.map((_, i) => stores.length - 1 - i);
      for (const i of order) {
        const s = stores[i];
        const t = performance.now();
        const r = await read({ stateDir: s.stateDir, agentId: "main", sessionKey: KEY, sessionId: "s1", cursor: cursors[i] });
        const elapsed = performance.now() - t;
        const n = r.kind === "page" ? (r.entries ?? r.events).length : -1;
        if (n !== expected[i]) throw new Error(`${read.name}: expected ${expected[i]} new items, got ${n} (${r.kind})`);
        last[i] = r.cursor;
        if (round > 0) times[i].push(elapsed); // round 0 warms both stores
      }
    }
    last.forEach((c, i) => (cursors[i] = c));
  }
  return times.map(median);
}

const rows = [];
function row(measure, ours, baseline, ratio, target, pass) {
  rows.push({ measure, ours, baseline, ratio, target, pass });
  recordResult("runtime", { measure, ours, baseline, ratio, target, pass });
}
const ms = (v) => `${v.toFixed(2)} ms`;

console.log(`Seeding transcripts of ${SMALL.toLocaleString("en-US")} and ${LARGE.toLocaleString("en-US")} entries under ${work} ...`);
const small = seed("small", SMALL);
const large = seed("large", LARGE);
console.log(`  small: ${small.seedMs.toFixed(0)} ms, ${(small.dbBytes / 1e6).toFixed(1)} MB; large: ${large.seedMs.toFixed(0)} ms, ${(large.dbBytes / 1e6).toFixed(1)} MB`);
console.log(`  ${ROUNDS} rounds: ${APPENDS} appends to each, then ${READS_PER_ROUND} reads of each with its stored cursor, alternating (medians)\n`);

try {
  // The visible delta returns the appended messages (compaction rows are not), the raw delta every appended row.
  const [visLarge, visSmall] = await steadyState([large, small], readSessionTranscriptVisibleMessageDelta, "messages");
  const visRatio = visLarge / visSmall;
  row(`visible message delta after ${APPENDS} appends: ${LARGE.toLocaleString("en-US")} vs ${SMALL.toLocaleString("en-US")} entries`, ms(visLarge), ms(visSmall), visRatio, "≤ 1.20×", visRatio <= 1.2);
  const [rawLarge, rawSmall] = await steadyState([large, small], readSessionTranscriptRawDelta, "entries");
  const rawRatio = rawLarge / rawSmall;
  row(`raw delta after ${APPENDS} appends: ${LARGE.toLocaleString("en-US")} vs ${SMALL.toLocaleString("en-US")} entries`, ms(rawLarge), ms(rawSmall), rawRatio, "≤ 1.20×", rawRatio <= 1.2);
  console.log(`visible delta ratio ${visRatio.toFixed(2)}×, raw delta ratio ${rawRatio.toFixed(2)}×`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

printTable(rows.map((r) => toCells(r)));
process.exitCode = rows.every((r) => r.pass !== false) ? 0 : 1;
