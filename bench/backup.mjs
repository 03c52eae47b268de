#!/usr/bin/env node
// Benchmark: `backup create --no-verify` vs sqlite3 VACUUM INTO + GNU tar czf, and `backup restore` vs tar xzf.
//
// Builds a state dir with BENCH_BACKUP_MB (default 256) MiB of SQLite data across a global DB and
// BENCH_BACKUP_AGENTS (default 4) agent DBs, then times each side in the same run and prints the ratios
// and the tool's peak RSS. BENCH_ROUNDS (default 3; BENCH_BACKUP_REPEAT is an alias) alternating rounds, medians
// reported. The default size keeps `npm run bench` under 10 minutes on 2 cores; for the ≥ 1 GB figure:
// BENCH_BACKUP_MB=1024 npm run bench:backup (smaller sizes weigh process start-up more).
// Needs `npm run build`, the sqlite3 shell and GNU tar.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openAgentDatabase, openGlobalDatabase } from "../dist/state/state-databases.js";
import { resolveStatePaths } from "../dist/state/paths.js";
import { recordResult } from "./bench-results.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const sizeMb = Number(process.env.BENCH_BACKUP_MB ?? 256);
const agents = Number(process.env.BENCH_BACKUP_AGENTS ?? 4);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? process.env.BENCH_BACKUP_REPEAT ?? 3));
const work = path.join(process.env.BENCH_TMP ?? path.join(root, ".bench-tmp"), `backup-${process.pid}`);
const home = path.join(work, "home");
const stateDir = path.join(home, ".openclaw");
const env = { PATH: process.env.PATH, HOME: home, OPENCLAW_STATE_DIR: stateDir };
const paths = resolveStatePaths({ env });

const WORDS = "the quick brown fox jumps over a lazy dog while the assistant calls a tool and the user reads the result of the model reply".split(" ");

function text(n) {
  const out = [];
  for (let i = 0; i < n; i += 1) out.push(WORDS[(Math.random() * WORDS.length) | 0]);
  return out.join(" ");
}

/** Fills an open DB handle with transcript-like rows until the file reaches `bytes`. */
function fillAgent(handle, bytes, file) {
  const addSession = handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', ?, ?)");
  const addEvent = handle.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
  let s = 0;
  while (fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0) < bytes) {
    handle.transaction(() => {
      const id = `s-${s++}`;
      addSession.run(id, `agent:bench:${id}`, s, s);
      for (let seq = 0; seq < 2000; seq += 1) {
        const event = { type: "message", id: crypto.randomUUID(), message: { role: seq % 2 ? "user" : "assistant", content: text(20 + (seq % 60)) } };
        addEvent.run(id, seq, JSON.stringify(event), Date.now());
      }
    })();
  }
}

function fillGlobal(handle, bytes, file) {
  const add = handle.prepare("INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at) VALUES ('bench', 'ns', ?, ?, 0)");
  let k = 0;
  while (fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0) < bytes) {
    handle.transaction(() => {
      for (let i = 0; i < 2000; i += 1) add.run(`k-${k++}`, JSON.stringify({ note: text(40), id: crypto.randomUUID() }));
    })();
  }
}

function buildState() {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(paths.configPath, JSON.stringify({ agents: { defaults: { model: "bench" } } }));
  const total = sizeMb * 1024 * 1024;
  const global = openGlobalDatabase(paths, { mode: "write", create: true });
  fillGlobal(global.handle, total * 0.1, paths.globalDbPath);
  for (let i = 0; i < agents; i += 1) {
    const db = openAgentDatabase(paths, `agent-${i}`, { mode: "write", create: true, global });
    fillAgent(db.handle, (total * 0.9) / agents, db.path);
    db.close();
  }
  global.close();
}

/** Runs a command; returns wall seconds. Throws on a non-zero exit. */
function timed(cmd, args, options = {}) {
  const start = process.hrtime.bigint();
  const run = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (run.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${run.status}: ${run.stderr}`);
  return { seconds, stdout: run.stdout, stderr: run.stderr };
}

/** Runs the CLI in a child that reports its own peak RSS (worker thread included) on exit. */
function tool(args) {
  const script = `import(${JSON.stringify(path.join(root, "dist", "cli", "run-cli.js"))}).then(async (m) => {
    const code = await m.runCli({ argv: ${JSON.stringify(args)} });
    process.stderr.write("\\nMAXRSS_KB " + process.resourceUsage().maxRSS + "\\n");
    process.exitCode = code;
  });`;
  const run = timed(process.execPath, ["--input-type=module", "-e", script], { env });
  const rss = Number(/MAXRSS_KB (\d+)/.exec(run.stderr)?.[1] ?? 0) * 1024;
  return { ...run, rss };
}

function dirBytes(dir) {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size;
  return n;
}

function mb(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function main() {
  fs.rmSync(work, { recursive: true, force: true });
  console.log(`Building ${sizeMb} MiB of SQLite data (global + ${agents} agent DBs) in ${stateDir} ...`);
  const t0 = Date.now();
  buildState();
  const dataBytes = dirBytes(stateDir);
  console.log(`  ${mb(dataBytes)} on disk, built in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${rounds} alternating rounds, medians\n`);

  const dbs = [];
  const others = [];
  for (const e of fs.readdirSync(stateDir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath ?? e.path, e.name);
    (/\.sqlite$/.test(e.name) ? dbs : /-(wal|shm)$/.test(e.name) ? [] : others).push(abs);
  }
  // Baseline create: sqlite3 VACUUM INTO per DB into a staged copy of the tree, then GNU tar czf of it.
  const baselineCreate = (round) => {
    const staged = path.join(work, `staged-${round}`);
    const archive = path.join(work, `baseline-${round}.tar.gz`);
    let seconds = 0;
    for (const db of dbs) {
      const dest = path.join(staged, path.relative(stateDir, db));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      seconds += timed("sqlite3", [db, `VACUUM INTO '${dest.replace(/'/g, "''")}'`]).seconds;
    }
    for (const f of others) {
      const dest = path.join(staged, path.relative(stateDir, f));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.copyFileSync(f, dest);
    }
    seconds += timed("tar", ["czf", archive, "-C", staged, "."]).seconds;
    const size = fs.statSync(archive).size;
    fs.rmSync(staged, { recursive: true, force: true });
    fs.rmSync(archive, { force: true });
    return { seconds, size };
  };

  // Create: alternate ours (`backup create --no-verify`) and the baseline, so drift and cache warmth hit both.
  const oursCreate = [];
  const baseCreate = [];
  let ours;
  let oursSize = 0;
  let baseSize = 0;
  for (let round = 0; round < rounds; round += 1) {
    const runOurs = () => {
      const file = path.join(work, "out", `ours-${round}.tar.gz`);
      const r = tool(["backup", "create", "--no-verify", "--output", file, "--json"]);
      oursSize = JSON.parse(r.stdout).sizeBytes;
      if (ours) fs.rmSync(file, { force: true });
      else ours = file;
      oursCreate.push(r);
    };
    const runBase = () => {
      const r = baselineCreate(round);
      baseSize = r.size;
      baseCreate.push(r.seconds);
    };
    if (round % 2 === 0) (runOurs(), runBase());
    else (runBase(), runOurs());
  }

  // Restore: tar xzf of our archive into an empty dir vs backup restore (into a fresh --target, then in place).
  const baseRestore = [];
  const oursTarget = [];
  const oursInPlace = [];
  for (let round = 0; round < rounds; round += 1) {
    const runBase = () => {
      const xdir = path.join(work, `tar-x-${round}`);
      fs.mkdirSync(xdir);
      baseRestore.push(timed("tar", ["xzf", ours, "-C", xdir]).seconds);
      fs.rmSync(xdir, { recursive: true, force: true });
    };
    const runOurs = () => {
      const target = path.join(work, `restored-${round}`);
      oursTarget.push(tool(["backup", "restore", ours, "--yes", "--target", target]));
      fs.rmSync(target, { recursive: true, force: true });
      oursInPlace.push(tool(["backup", "restore", ours, "--yes"]));
      // In-place restores keep the previous copy as a sibling; drop it so rounds do not pile up data.
      for (const n of fs.readdirSync(home)) if (n.includes(".pre-restore-")) fs.rmSync(path.join(home, n), { recursive: true, force: true });
    };
    if (round % 2 === 0) (runOurs(), runBase());
    else (runBase(), runOurs());
  }

  const med = (runs) => median(runs.map((r) => r.seconds));
  const peak = (runs) => Math.max(...runs.map((r) => r.rss));
  const rows = [
    ["backup create --no-verify", med(oursCreate), median(baseCreate), peak(oursCreate)],
    ["backup restore --target (fresh dir)", med(oursTarget), median(baseRestore), peak(oursTarget)],
    ["backup restore (in place)", med(oursInPlace), median(baseRestore), peak(oursInPlace)],
  ];
  const rssLimit = 200 * 1024 * 1024;
  let failed = false;
  console.log(`archive: ours ${mb(oursSize)}, baseline ${mb(baseSize)}; data ${mb(dataBytes)}\n`);
  console.log(["measure".padEnd(38), "ours s".padStart(8), "base s".padStart(8), "ratio".padStart(7), "target".padStart(7), "result".padStart(7), "peak RSS".padStart(10)].join(" "));
  for (const [name, o, b, rss] of rows) {
    const ratio = o / b;
    const pass = ratio <= 1.3 && rss < rssLimit;
    if (!pass) failed = true;
    console.log([name.padEnd(38), o.toFixed(2).padStart(8), b.toFixed(2).padStart(8), `${ratio.toFixed(2)}x`.padStart(7), "<=1.3x".padStart(7), (pass ? "pass" : "FAIL").padStart(7), mb(rss).padStart(10)].join(" "));
    recordResult("backup", { measure: `${name} (${mb(dataBytes)})`, ours: `${o.toFixed(2)} s`, baseline: `${b.toFixed(2)} s`, ratio, target: "≤ 1.30×; RSS < 200 MB", pass, peakRssMb: rss / 1024 / 1024 });
  }
  console.log(`\nbaseline create = sqlite3 VACUUM INTO per DB (${dbs.length}) + GNU tar czf of the staged tree; baseline restore = GNU tar xzf of the same archive.`);
  console.log(`peak RSS target < ${mb(rssLimit)} (child process maxRSS, worker thread included).`);
  if (!process.env.BENCH_KEEP) fs.rmSync(work, { recursive: true, force: true });
  process.exitCode = failed ? 1 : 0;
}

main();
