#!/usr/bin/env node
// `npm run bench`: runs every benchmark in bench/ (backup + restore, migrate, migrate input shapes' peak RSS,
// sessions + startup, runtime cursor reads) and prints one table.
//
// Each bench runs as its own child (its own table goes to the terminal as it runs) with BENCH_RESULTS pointing at a
// JSON-lines file; the combined table is built from those rows. Sizes: each bench's own env knobs
// (BENCH_BACKUP_MB, BENCH_MIGRATE_MB, BENCH_SESSIONS_LARGE, BENCH_RUNTIME_LARGE, BENCH_ROUNDS, ...). Run a subset with
// `node bench/run-all.mjs backup sessions`. BENCH_JSON=<file> also writes the combined rows as JSON.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { printTable, toCells } from "./bench-results.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
// backup first: its restore rows create thousands of files, and on an ext4 without a journal new inodes pay for the
// deletes of the minutes before them (docs/performance.md, twelfth and thirteenth passes); the others end by deleting
// their work dirs.
const BENCHES = ["backup", "migrate", "migrate-shapes", "sessions", "runtime"];
const picked = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const unknown = picked.filter((b) => !BENCHES.includes(b));
if (unknown.length > 0) throw new Error(`unknown bench ${unknown.join(", ")}; choose from ${BENCHES.join(", ")}`);
const benches = picked.length > 0 ? picked : BENCHES;

execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
const resultsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocs-bench-all-")), "results.jsonl");
fs.writeFileSync(resultsFile, "");
const timings = [];
const started = performance.now();
for (const name of benches) {
  console.log(`\n=== bench/${name}.mjs ===`);
  const t = performance.now();
  const run = spawnSync(process.execPath, [path.join(here, `${name}.mjs`)], { cwd: root, stdio: "inherit", env: { ...process.env, BENCH_RESULTS: resultsFile } });
  timings.push({ name, seconds: (performance.now() - t) / 1000, code: run.status ?? run.signal });
}

const rows = fs.readFileSync(resultsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
fs.rmSync(path.dirname(resultsFile), { recursive: true, force: true });
if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, `${JSON.stringify({ machine: machine(), timings, rows }, null, 2)}\n`);

function machine() {
  return { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? "?", memGb: Math.round(os.totalmem() / 1024 ** 3), loadavg: os.loadavg().map((l) => l.toFixed(2)).join(" ") };
}

const m = machine();
console.log(`\n=== all benchmarks (${((performance.now() - started) / 1000).toFixed(0)} s; node ${m.node}, ${m.cpus} × ${m.cpuModel}, ${m.memGb} GB, load ${m.loadavg}) ===\n`);
printTable(rows.map(toCells), { markdown: true });
console.log(`\n${timings.map((t) => `${t.name} ${t.seconds.toFixed(0)} s${t.code === 0 ? "" : ` (exit ${t.code})`}`).join(", ")}`);
const failed = rows.some((r) => r.pass === false) || timings.some((t) => t.code !== 0 && t.code !== 1);
process.exitCode = failed ? 1 : 0;
