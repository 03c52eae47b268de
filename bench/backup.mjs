#!/usr/bin/env node
// Benchmark: `backup create --no-verify` vs sqlite3 VACUUM INTO + GNU tar czf, and `backup restore` vs tar xzf.
//
// Builds a state dir with BENCH_BACKUP_MB (default 1024) MiB of SQLite data across a global DB and
// BENCH_BACKUP_AGENTS (default 4) agent DBs, then times each side in the same run and prints the ratios
// and the tool's peak RSS (about 3-4 minutes on 2 cores; smaller sizes mostly measure process start-up).
// BENCH_BACKUP_REPEAT=N runs N interleaved rounds and keeps each measure's best time.
// Needs `npm run build`, the sqlite3 shell and GNU tar.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openAgentDatabase, openGlobalDatabase } from "../dist/state/state-databases.js";
import { resolveStatePaths } from "../dist/state/paths.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const sizeMb = Number(process.env.BENCH_BACKUP_MB ?? 1024);
const agents = Number(process.env.BENCH_BACKUP_AGENTS ?? 4);
const repeat = Math.max(1, Number(process.env.BENCH_BACKUP_REPEAT ?? 1));
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

function main() {
  fs.rmSync(work, { recursive: true, force: true });
  console.log(`Building ${sizeMb} MiB of SQLite data (global + ${agents} agent DBs) in ${stateDir} ...`);
  const t0 = Date.now();
  buildState();
  const dataBytes = dirBytes(stateDir);
  console.log(`  ${mb(dataBytes)} on disk, built in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

  const dbs = [];
  const others = [];
  for (const e of fs.readdirSync(stateDir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath ?? e.path, e.name);
    (/\.sqlite$/.test(e.name) ? dbs : /-(wal|shm)$/.test(e.name) ? [] : others).push(abs);
  }
  const best = { create: Infinity, baseCreate: Infinity, restoreTarget: Infinity, restoreInPlace: Infinity, baseRestore: Infinity };
  const rss = { create: 0, restoreTarget: 0, restoreInPlace: 0 };
  let ours;
  let baseArchive;
  let createdDoc;
  // Rounds interleave ours and the baseline; each measure keeps its best time (the host is shared and noisy).
  for (let round = 1; round <= repeat; round += 1) {
    // Baseline create: sqlite3 VACUUM INTO per DB into a staged copy of the tree, then GNU tar czf of it.
    const staged = path.join(work, `staged-${round}`);
    let baseCreate = 0;
    for (const db of dbs) {
      const dest = path.join(staged, path.relative(stateDir, db));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      baseCreate += timed("sqlite3", [db, `VACUUM INTO '${dest.replace(/'/g, "''")}'`]).seconds;
    }
    for (const f of others) {
      const dest = path.join(staged, path.relative(stateDir, f));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.copyFileSync(f, dest);
    }
    baseArchive = path.join(work, `baseline-${round}.tar.gz`);
    baseCreate += timed("tar", ["czf", baseArchive, "-C", staged, "."]).seconds;
    fs.rmSync(staged, { recursive: true, force: true });
    best.baseCreate = Math.min(best.baseCreate, baseCreate);

    // Ours: backup create --no-verify.
    ours = path.join(work, "out", `ours-${round}.tar.gz`);
    const created = tool(["backup", "create", "--no-verify", "--output", ours, "--json"]);
    createdDoc = JSON.parse(created.stdout);
    best.create = Math.min(best.create, created.seconds);
    rss.create = Math.max(rss.create, created.rss);

    // Restore: tar xzf of our archive into an empty dir vs backup restore (into a fresh --target, then in place).
    const xdir = path.join(work, `tar-x-${round}`);
    fs.mkdirSync(xdir);
    best.baseRestore = Math.min(best.baseRestore, timed("tar", ["xzf", ours, "-C", xdir]).seconds);
    fs.rmSync(xdir, { recursive: true, force: true });
    const target = path.join(work, `restored-${round}`);
    const restoredTarget = tool(["backup", "restore", ours, "--yes", "--target", target]);
    fs.rmSync(target, { recursive: true, force: true });
    best.restoreTarget = Math.min(best.restoreTarget, restoredTarget.seconds);
    rss.restoreTarget = Math.max(rss.restoreTarget, restoredTarget.rss);
    const restoredInPlace = tool(["backup", "restore", ours, "--yes"]);
    best.restoreInPlace = Math.min(best.restoreInPlace, restoredInPlace.seconds);
    rss.restoreInPlace = Math.max(rss.restoreInPlace, restoredInPlace.rss);
    if (round < repeat) {
      fs.rmSync(ours, { force: true });
      fs.rmSync(baseArchive, { force: true });
    }
  }

  const rows = [
    ["backup create --no-verify", best.create, best.baseCreate, rss.create],
    ["backup restore --target (fresh dir)", best.restoreTarget, best.baseRestore, rss.restoreTarget],
    ["backup restore (in place)", best.restoreInPlace, best.baseRestore, rss.restoreInPlace],
  ];
  const rssLimit = 200 * 1024 * 1024;
  let failed = false;
  console.log(`archive: ours ${mb(createdDoc.sizeBytes)}, baseline ${mb(fs.statSync(baseArchive).size)}; data ${mb(dataBytes)}\n`);
  console.log(["measure".padEnd(38), "ours s".padStart(8), "base s".padStart(8), "ratio".padStart(7), "target".padStart(7), "result".padStart(7), "peak RSS".padStart(10)].join(" "));
  for (const [name, o, b, rss] of rows) {
    const ratio = o / b;
    const pass = ratio <= 1.3 && rss < rssLimit;
    if (!pass) failed = true;
    console.log([name.padEnd(38), o.toFixed(2).padStart(8), b.toFixed(2).padStart(8), `${ratio.toFixed(2)}x`.padStart(7), "<=1.3x".padStart(7), (pass ? "pass" : "FAIL").padStart(7), mb(rss).padStart(10)].join(" "));
  }
  console.log(`\nbaseline create = sqlite3 VACUUM INTO per DB (${dbs.length}) + GNU tar czf of the staged tree; baseline restore = GNU tar xzf of the same archive.`);
  console.log(`best of ${repeat} interleaved round(s) per measure (BENCH_BACKUP_REPEAT); ${os.availableParallelism()} CPU(s).`);
  console.log(`peak RSS target < ${mb(rssLimit)} (child process maxRSS, worker thread included).`);
  if (!process.env.BENCH_KEEP) fs.rmSync(work, { recursive: true, force: true });
  process.exitCode = failed ? 1 : 0;
}

main();
