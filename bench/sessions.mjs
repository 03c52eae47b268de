#!/usr/bin/env node
// Benchmark: `sessions list` cost vs store size, streamed `--limit all --json` memory, start-up vs bare node, inspect's byte scan.
//
// Usage: npm run build && node bench/sessions.mjs [--small N] [--large N] [--events N] [--rounds N]
// (or env BENCH_SESSIONS_SMALL, BENCH_SESSIONS_LARGE, BENCH_SESSIONS_EVENTS, BENCH_ROUNDS).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { resolveStatePaths } from "../dist/state/paths.js";
import { openAgentDatabase } from "../dist/state/state-databases.js";
import { openSessionList } from "../dist/sessions/list-sessions.js";
import { agentSessionStats } from "../dist/sessions/session-stats.js";
import { benchArg as arg, median, printTable, recordResult, toCells } from "./bench-results.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = path.join(root, "bin", "openclaw-state.js");

const SMALL = arg("small", "BENCH_SESSIONS_SMALL", 1_000);
const LARGE = arg("large", "BENCH_SESSIONS_LARGE", 100_000);
const EVENTS = arg("events", "BENCH_SESSIONS_EVENTS", 200_000);
const ROUNDS = arg("rounds", "BENCH_ROUNDS", 9);
const RSS_LIMIT_MB = 256;
const TIME_BIN = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-bench-sessions-"));
const MODELS = ["claude-sonnet-4", "claude-opus-4", "gpt-5", "gemini-2.5-pro"];
const CHANNELS = ["telegram", "whatsapp", "discord", "slack", null];

function seedStore(name, sessions, events) {
  const stateDir = path.join(work, name, ".openclaw");
  const paths = resolveStatePaths({ stateDir, env: {} });
  const db = openAgentDatabase(paths, "main", { mode: "write", create: true });
  const now = Date.now();
  // Raw prepared inserts in one transaction: seeding 100k sessions is the bench's own hot path.
  const insSession = db.prepare(
    "INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at, chat_type, channel, model_provider, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insRoute = db.prepare("INSERT INTO session_routes (session_key, session_id, updated_at) VALUES (?, ?, ?)");
  const insEntry = db.prepare("INSERT INTO session_entries (session_key, session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)");
  const insEvent = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
  const started = performance.now();
  db.immediate(() => {
    for (let i = 0; i < sessions; i++) {
      const id = `sess-${i.toString(36).padStart(6, "0")}`;
      const group = i % 7 === 0;
      const key = i === 0 ? "agent:main:main" : `agent:main:${group ? "telegram:group:" : "direct:"}${i}`;
      const updatedAt = now - Math.floor(((i * 7919) % 43_200) * 60_000);
      const chat = group ? "group" : "direct";
      const channel = CHANNELS[i % CHANNELS.length];
      const model = MODELS[i % MODELS.length];
      insSession.run(id, key, i === 0 ? "shared-main" : group ? "group" : "conversation", updatedAt - 3_600_000, updatedAt, chat, channel, "anthropic", model);
      insRoute.run(key, id, updatedAt);
      const entry = {
        sessionId: id,
        updatedAt,
        chatType: chat,
        channel,
        model,
        modelProvider: "anthropic",
        totalTokens: (i * 37) % 180_000,
        contextTokens: 200_000,
        inputTokens: (i * 23) % 90_000,
        outputTokens: (i * 11) % 40_000,
        thinkingLevel: i % 5 === 0 ? "high" : undefined,
        displayName: group ? `Group ${i}` : undefined,
        deliveryContext: { channel, to: `+1555${i}`, accountId: "default" },
        skillsSnapshot: { prompt: "x".repeat(200), skills: ["a", "b", "c"] },
      };
      insEntry.run(key, id, JSON.stringify(entry), updatedAt);
    }
    const line = JSON.stringify({ type: "message", id: "e", parentId: null, message: { role: "assistant", content: [{ type: "text", text: "y".repeat(380) }] } });
    const perSession = Math.max(1, Math.ceil(events / Math.min(sessions, 1000)));
    for (let e = 0; e < events; e++) {
      const s = Math.floor(e / perSession);
      insEvent.run(`sess-${s.toString(36).padStart(6, "0")}`, e % perSession, line, now);
    }
  });
  const seedMs = performance.now() - started;
  db.close();
  return { stateDir, paths, seedMs, dbBytes: fs.statSync(path.join(stateDir, "agents", "main", "agent", "openclaw-agent.sqlite")).size };
}

function timeRun(command, args) {
  const t = process.hrtime.bigint();
  const r = spawnSync(command, args, { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** Alternates ours and the baseline every round (so drift hits both), returns medians in ms. */
function alternate(ours, baseline, rounds) {
  const a = [];
  const b = [];
  timeRun(...ours);
  timeRun(...baseline);
  for (let i = 0; i < rounds; i++) {
    a.push(timeRun(...ours));
    b.push(timeRun(...baseline));
  }
  return { ours: median(a), baseline: median(b) };
}

/** Peak RSS (MB) of one child run, streaming its stdout away; counts the bytes it printed. */
function peakRss(args) {
  return new Promise((resolve, reject) => {
    const command = TIME_BIN ?? process.execPath;
    const full = TIME_BIN ? ["-f", "PEAK_RSS_KB=%M", process.execPath, ...args] : args;
    const child = spawn(command, full, { stdio: ["ignore", "pipe", "pipe"] });
    let bytes = 0;
    let tail = "";
    let stderr = "";
    let polledKb = 0;
    const poll = TIME_BIN
      ? null
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"));
            if (m) polledKb = Math.max(polledKb, Number(m[1]));
          } catch {
            // The child may have exited between polls.
          }
        }, 10);
    child.stdout.on("data", (d) => {
      bytes += d.length;
      tail = (tail + d.toString("utf8")).slice(-200);
    });
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (poll) clearInterval(poll);
      if (code !== 0) return reject(new Error(`exit ${code}: ${stderr}`));
      const m = /PEAK_RSS_KB=(\d+)/.exec(stderr);
      const kb = m ? Number(m[1]) : polledKb;
      resolve({ mb: kb / 1024, bytes, tail });
    });
  });
}

function inProcess(paths, fn, rounds) {
  const times = [];
  for (let i = 0; i < rounds + 1; i++) {
    const t = performance.now();
    fn(paths);
    if (i > 0) times.push(performance.now() - t);
  }
  return median(times);
}

const rows = [];
function row(measure, ours, baseline, ratio, target, pass, rss) {
  rows.push({ measure, ours, baseline, ratio, target, pass, rss });
  recordResult("sessions", { measure, ours, baseline, ratio, target, pass, peakRssMb: rss });
}
const ms = (v) => `${v.toFixed(1)} ms`;

console.log(`Seeding ${SMALL.toLocaleString("en-US")} and ${LARGE.toLocaleString("en-US")} sessions (+${EVENTS.toLocaleString("en-US")} transcript events in the large store) under ${work} ...`);
const small = seedStore("small", SMALL, 0);
const large = seedStore("large", LARGE, EVENTS);
console.log(`  small: ${small.seedMs.toFixed(0)} ms, ${(small.dbBytes / 1e6).toFixed(1)} MB; large: ${large.seedMs.toFixed(0)} ms, ${(large.dbBytes / 1e6).toFixed(1)} MB`);
console.log(`  ${ROUNDS} alternating rounds per measure, medians; peak RSS via ${TIME_BIN ? "/usr/bin/time" : "/proc VmHWM polling"}\n`);

try {
  const list = (s) => [process.execPath, [bin, "--state-dir", s.stateDir, "sessions", "list", "--limit", "100"]];
  const listTimes = alternate(list(large), list(small), ROUNDS);
  const listRatio = listTimes.ours / listTimes.baseline;
  const listRss = await peakRss([bin, "--state-dir", large.stateDir, "sessions", "list", "--limit", "100"]);
  row(`sessions list --limit 100: ${LARGE.toLocaleString("en-US")} vs ${SMALL.toLocaleString("en-US")} sessions`, ms(listTimes.ours), ms(listTimes.baseline), listRatio, "≤ 1.20×", listRatio <= 1.2, listRss.mb);

  const core = (limit) => (paths) => {
    const l = openSessionList({ paths, limit });
    try {
      for (const _ of l.rows());
    } finally {
      l.close();
    }
  };
  const coreLarge = inProcess(large.paths, core(100), ROUNDS);
  const coreSmall = inProcess(small.paths, core(100), ROUNDS);
  row("  (in-process core, same page: info)", ms(coreLarge), ms(coreSmall), coreLarge / coreSmall, "info", null, null);

  const all = await peakRss([bin, "--state-dir", large.stateDir, "sessions", "list", "--limit", "all", "--json"]);
  // Off a terminal the document is one compact line (`..."ok":true}`); on one it is indented (`"ok": true`).
  const complete = /"ok":\s*true\s*}\s*$/.test(all.tail);
  row(
    `sessions list --limit all --json (${LARGE.toLocaleString("en-US")} rows, ${(all.bytes / 1e6).toFixed(0)} MB out)`,
    `${all.mb.toFixed(0)} MB`,
    "-",
    null,
    `RSS < ${RSS_LIMIT_MB} MB`,
    complete && all.mb < RSS_LIMIT_MB,
    all.mb,
  );

  const version = alternate([process.execPath, [bin, "--version"]], [process.execPath, ["-e", "0"]], Math.max(ROUNDS, 15));
  const versionRatio = version.ours / version.baseline;
  const versionRss = await peakRss([bin, "--version"]);
  row("openclaw-state --version vs node -e 0", ms(version.ours), ms(version.baseline), versionRatio, "≤ 1.50×", versionRatio <= 1.5, versionRss.mb);

  const statsMs = inProcess(
    large.paths,
    (paths) => {
      const db = openAgentDatabase(paths, "main", { mode: "read" });
      try {
        agentSessionStats(db);
      } finally {
        db.close();
      }
    },
    ROUNDS,
  );
  const countMs = inProcess(
    large.paths,
    (paths) => {
      const db = openAgentDatabase(paths, "main", { mode: "read" });
      try {
        db.handle.prepare("SELECT count(*) FROM transcript_events").get();
      } finally {
        db.close();
      }
    },
    ROUNDS,
  );
  row(`inspect session stats (${EVENTS.toLocaleString("en-US")} events, byte scan) vs count(*)`, ms(statsMs), ms(countMs), statsMs / countMs, "info", null, null);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

printTable(rows.map((r) => toCells({ ...r, peakRssMb: r.rss })));
const failed = rows.some((r) => r.pass === false);
process.exitCode = failed ? 1 : 0;
