#!/usr/bin/env node
// Benchmark: legacy transcript import (doctor --fix's import phase) vs a bare split + JSON.parse + INSERT baseline.
// Sizes: BENCH_MIGRATE_MB (largest corpus, default 300: the SPEC §10 size), a second corpus at 1/4 of
// it shows that peak RSS does not grow with the corpus. BENCH_REPS alternating repetitions (default 5, median
// reported). BENCH_LINE_BYTES: the generator's mean line parameter (default 2000 ≈ 2.1 KB average lines: chat
// turns, assistant turns with usage/thinking, long tool results); 500 ≈ 0.8 KB lines shows the per-line floor.
// Ours runs under the Node flags the binary restarts `doctor --fix` with (OPENCLAW_STATE_REEXEC=0: none).
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, printTable, recordResult } from "./bench-results.mjs";
import { generateLegacyCorpus } from "./legacy-corpus.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = (p) => path.join(root, "dist", p);

function cpuMs(u) {
  return (u.user + u.system) / 1000;
}

async function child(mode, stateDir) {
  const { resolveStatePaths } = await import(dist("state/paths.js"));
  const paths = resolveStatePaths({ env: { HOME: path.dirname(stateDir), OPENCLAW_STATE_DIR: stateDir } });
  const out = { mode };
  if (mode === "ours") {
    const [{ planMigration }, { applyMigration }, { openGlobalDatabase }] = await Promise.all([
      import(dist("migration/plan-migration.js")),
      import(dist("migration/apply-migration.js")),
      import(dist("state/state-databases.js")),
    ]);
    let t = performance.now();
    const plan = await planMigration({ paths });
    out.planMs = performance.now() - t;
    const global = openGlobalDatabase(paths, { mode: "write", create: true });
    t = performance.now();
    const cpu = process.cpuUsage();
    const run = await applyMigration({ paths, global, plan, backup: false });
    out.importMs = performance.now() - t;
    out.cpuMs = cpuMs(process.cpuUsage(cpu));
    global.close();
    out.status = run.status;
    out.sources = run.totals.imported;
    out.records = run.totals.records;
  } else {
    // The bare baseline: whole-file read, split, JSON.parse, one prepared INSERT per line, one transaction per file.
    const [{ openAgentDatabase }] = await Promise.all([import(dist("state/state-databases.js"))]);
    const t = performance.now();
    const cpu = process.cpuUsage();
    const byAgent = fs.readdirSync(path.join(stateDir, "agents"));
    let records = 0;
    for (const agent of byAgent) {
      const dir = path.join(stateDir, "agents", agent, "sessions");
      const db = openAgentDatabase(paths, agent, { mode: "write", create: true });
      const session = db.handle.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', 0, 0)");
      const insert = db.handle.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, 0)");
      for (const name of fs.readdirSync(dir)) {
        if (!name.endsWith(".jsonl")) continue;
        const sessionId = name.slice(0, -6);
        const lines = fs.readFileSync(path.join(dir, name), "utf8").split("\n");
        db.handle.transaction(() => {
          session.run(sessionId, `agent:${agent}:${sessionId}`);
          let seq = 0;
          for (const line of lines) {
            if (line === "") continue;
            JSON.parse(line);
            insert.run(sessionId, seq, line);
            seq += 1;
          }
          records += seq;
        }).immediate();
      }
      db.close();
    }
    out.importMs = performance.now() - t;
    out.cpuMs = cpuMs(process.cpuUsage(cpu));
    out.records = records;
  }
  out.maxRssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify(out));
}

/** Puts retired files back and drops the databases, so the next measurement starts from the same tree. */
function reset(stateDir) {
  const migrated = path.join(stateDir, "migrated");
  if (fs.existsSync(migrated)) {
    for (const run of fs.readdirSync(migrated)) {
      const base = path.join(migrated, run);
      const walk = (dir) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
          const p = path.join(dir, e.name);
          if (e.isDirectory()) walk(p);
          else {
            const to = path.join(stateDir, path.relative(base, p));
            fs.mkdirSync(path.dirname(to), { recursive: true });
            fs.renameSync(p, to);
          }
        }
      };
      walk(base);
    }
    fs.rmSync(migrated, { recursive: true, force: true });
  }
  fs.rmSync(path.join(stateDir, "state"), { recursive: true, force: true });
  for (const agent of fs.readdirSync(path.join(stateDir, "agents"))) fs.rmSync(path.join(stateDir, "agents", agent, "agent"), { recursive: true, force: true });
}

/**
 * The Node flags the binary restarts `doctor --fix` with on this Node (none where it cannot restart): ours runs under
 * them. OPENCLAW_STATE_REEXEC=0 turns them off here as it does for the binary.
 */
async function importFlags() {
  const { canRestart, planReexec } = await import(dist("cli/plan-reexec.js"));
  const env = { OPENCLAW_STATE_REEXEC: process.env.OPENCLAW_STATE_REEXEC };
  const plan = planReexec({ argv: ["doctor", "--fix"], execArgv: [], env, canExecve: canRestart(process.execPath, process.execve) });
  return plan ? plan.execArgv : [];
}

function measure(mode, stateDir, flags) {
  reset(stateDir);
  const r = spawnSync(process.execPath, [...(mode === "ours" ? flags : []), fileURLToPath(import.meta.url), "--child", mode, stateDir], { encoding: "utf8", maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`${mode} child failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}


async function main() {
  if (process.argv[2] === "--child") return child(process.argv[3], process.argv[4]);
  if (!fs.existsSync(dist("migration/apply-migration.js"))) execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
  const largeMb = Number(process.env.BENCH_MIGRATE_MB ?? 300);
  const reps = Number(process.env.BENCH_REPS ?? 5);
  const meanLineBytes = Number(process.env.BENCH_LINE_BYTES ?? 2000);
  const sizes = [Math.max(4, Math.round(largeMb / 4)), largeMb];
  const flags = await importFlags();
  console.error(`ours runs with the flags the binary's doctor --fix has here: ${flags.join(" ") || "(none)"}`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-bench-migrate-"));
  const rows = [];
  const rss = {};
  try {
    for (const mb of sizes) {
      const stateDir = path.join(work, `${mb}mb`, ".openclaw");
      const linesPerSession = 60;
      // The generator's average line is ~0.93 × mean + ~250 B of JSON framing (long tool results included).
      const sessions = Math.max(10, Math.round((mb * 1e6) / (linesPerSession * (0.93 * meanLineBytes + 250)) / 2));
      const t = performance.now();
      const c = generateLegacyCorpus(stateDir, { agents: ["main", "ops"], sessionsPerAgent: sessions, linesPerSession, meanLineBytes, seed: 42 });
      console.error(`corpus ${mb} MB: ${c.files} files, ${(c.bytes / 1e6).toFixed(1)} MB, ${c.lines} lines, ${Math.round(c.bytes / c.lines)} B/line (generated in ${((performance.now() - t) / 1000).toFixed(1)} s)`);
      const ours = [];
      const base = [];
      for (let i = 0; i < reps; i += 1) {
        // Alternate the order so cache warmth and thermal drift do not favour one side.
        const pair = i % 2 === 0 ? ["ours", "baseline"] : ["baseline", "ours"];
        for (const mode of pair) (mode === "ours" ? ours : base).push(measure(mode, stateDir, flags));
      }
      const oursMs = median(ours.map((r) => r.importMs));
      const baseMs = median(base.map((r) => r.importMs));
      const ratio = baseMs / oursMs;
      const mbps = (ms) => `${(c.bytes / 1e6 / (ms / 1000)).toFixed(1)} MB/s`;
      rss[mb] = Math.max(...ours.map((r) => r.maxRssMb));
      rows.push([`import ${mb} MB (${c.files} files)`, mbps(oursMs), mbps(baseMs), ratio.toFixed(2), "≥ 0.70", ratio >= 0.7 ? "pass" : "FAIL", `${rss[mb].toFixed(0)} MB (baseline ${Math.max(...base.map((r) => r.maxRssMb)).toFixed(0)} MB)`]);
      // CPU time (user + sys) moves less than wall time when other processes share the machine.
      const oursCpu = median(ours.map((r) => r.cpuMs));
      const baseCpu = median(base.map((r) => r.cpuMs));
      rows.push([`  same, CPU time ${mb} MB`, `${(oursCpu / 1000).toFixed(2)} s`, `${(baseCpu / 1000).toFixed(2)} s`, (baseCpu / oursCpu).toFixed(2), "info", "-", "-"]);
      rows.push([`  plan (sha256 + count pass) ${mb} MB`, `${(median(ours.map((r) => r.planMs)) / 1000).toFixed(2)} s`, "-", "-", "-", "-", "-"]);
      if (mb === sizes[0]) {
        // Whole `doctor --fix --yes` wall time on this corpus, with its verified backup and without.
        for (const backup of [true, false]) {
          reset(stateDir);
          const t0 = performance.now();
          const r = spawnSync(process.execPath, [path.join(root, "bin", "openclaw-state.js"), "--state-dir", stateDir, "doctor", "--fix", "--yes", "--json", ...(backup ? ["--backup-dir", path.join(work, "backups")] : ["--no-backup"])], { encoding: "utf8", maxBuffer: 1 << 28 });
          const ms = performance.now() - t0;
          const status = r.status === 0 ? JSON.parse(r.stdout).migration?.run?.status : `exit ${r.status}`;
          rows.push([`doctor --fix ${backup ? "with backup" : "--no-backup"} ${mb} MB`, `${(ms / 1000).toFixed(2)} s`, "-", "-", "-", status, "-"]);
        }
      }
    }
    const [small, large] = sizes;
    const growth = rss[large] / rss[small];
    // Peak RSS must stay under 256 MB; what little grows is per-source metadata (the run's outcome list), not bytes.
    rows.push([`peak RSS ${large} MB vs ${small} MB`, `${rss[large].toFixed(0)} / ${rss[small].toFixed(0)} MB`, "-", growth.toFixed(2), "< 256 MB; ≤ 1.5× for 4× data", rss[large] < 256 && rss[small] < 256 && growth <= 1.5 ? "pass" : "FAIL", "-"]);
    printTable(rows);
    for (const r of rows) {
      const rssMb = /^(\d+) MB/.exec(r[6])?.[1];
      recordResult("migrate", { measure: r[0], ours: r[1], baseline: r[2], ratio: r[3] === "-" ? null : Number(r[3]), target: r[4], pass: r[5] === "pass" ? true : r[5] === "FAIL" ? false : null, peakRssMb: rssMb ? Number(rssMb) : null });
    }
    if (rows.some((r) => r[5] === "FAIL")) process.exitCode = 1;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

await main();
