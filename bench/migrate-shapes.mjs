#!/usr/bin/env node
// Benchmark: peak RSS of the real `doctor --fix --yes` (verified backup included) on the input shapes that used to
// blow memory: a 63 MB sessions.json with 150k sessions, a 50 MB single-entry index, 20,000 small transcripts.
// Target: < 256 MB each. Wall time is informational (the box is shared; compare runs side by side, not to a number).
// Beside the 50 MB entry (info): the floor of writing that one entry in OpenClaw 2026.9.6's format, a bare process that
// holds the entry's text once and inserts it into session_nodes (9.6's schema and triggers, the tool's better-sqlite3).
// Knobs: BENCH_SHAPES (comma list of shape names), BENCH_SHAPES_SCALE (default 1: sizes as above).
// `node bench/migrate-shapes.mjs --make <shape> <stateDir>` only writes that shape (for profiling by hand).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { printTable, recordResult } from "./bench-results.mjs";
import { prng } from "./legacy-corpus.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = path.join(root, "bin", "openclaw-state.js");
const scale = Number(process.env.BENCH_SHAPES_SCALE ?? 1);
const RSS_TARGET_MB = 256;

function writeIndex(dir, entries) {
  fs.mkdirSync(dir, { recursive: true });
  const fd = fs.openSync(path.join(dir, "sessions.json"), "w");
  fs.writeSync(fd, "{\n");
  let first = true;
  for (const [key, value] of entries) {
    fs.writeSync(fd, `${first ? "" : ",\n"}  ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
    first = false;
  }
  fs.writeSync(fd, "\n}\n");
  fs.closeSync(fd);
}

/** ~420 bytes per entry, the fields a gateway writes for a direct chat. */
function* manySessions(count) {
  for (let i = 0; i < count; i += 1) {
    const peer = `+1555${String(i).padStart(7, "0")}`;
    yield [
      `agent:main:telegram:direct:${peer}`,
      {
        sessionId: `0193${i.toString(16).padStart(8, "0")}-7c2e-4a51-9b1f-${String(i).padStart(12, "0")}`,
        updatedAt: 1767000000000 + i * 1000,
        chatType: "direct",
        channel: "telegram",
        deliveryContext: { channel: "telegram", to: peer, accountId: "default" },
        lastChannel: "telegram",
        lastTo: peer,
        model: "claude-sonnet-4",
        modelProvider: "anthropic",
        inputTokens: 12000 + i,
        outputTokens: 800,
        totalTokens: 12800 + i,
        contextTokens: 200000,
        displayName: `Peer ${i}`,
        sessionFile: `0193${i.toString(16).padStart(8, "0")}.jsonl`,
      },
    ];
  }
}

/** One entry of ~50 MB: a long prompt snapshot and a long list of skill records. */
function* oneHugeEntry(bytes) {
  const rand = prng(7);
  const skills = [];
  let size = 0;
  while (size < bytes / 2) {
    const text = Array.from({ length: 40 }, () => Math.floor(rand() * 1e9).toString(36)).join(" ");
    skills.push({ name: `skill-${skills.length}`, description: text, enabled: skills.length % 3 !== 0 });
    size += text.length + 60;
  }
  yield ["agent:main:main", { sessionId: "huge", updatedAt: 1767000000000, chatType: "direct", skillsSnapshot: { prompt: "p".repeat(Math.floor(bytes / 2)), skills } }];
}

function smallTranscripts(stateDir, count) {
  const dir = path.join(stateDir, "agents", "main", "sessions");
  fs.mkdirSync(dir, { recursive: true });
  const index = [];
  for (let i = 0; i < count; i += 1) {
    const id = `small-${String(i).padStart(6, "0")}`;
    const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })];
    let parent = null;
    for (let j = 1; j <= 5; j += 1) {
      const eid = `${i.toString(16)}e${j}`;
      lines.push(JSON.stringify({ type: "message", id: eid, parentId: parent, timestamp: "2026-01-01T00:00:01.000Z", message: { role: j % 2 ? "user" : "assistant", content: `message ${j} of ${id}` } }));
      parent = eid;
    }
    fs.writeFileSync(path.join(dir, `${id}.jsonl`), `${lines.join("\n")}\n`);
    if (i % 2 === 0) index.push([`agent:main:telegram:direct:${i}`, { sessionId: id, updatedAt: 1767000000000 + i }]);
  }
  writeIndex(dir, index);
}

const SHAPES = {
  "index-150k": { describe: "sessions.json 150k sessions", make: (s) => writeIndex(path.join(s, "agents", "main", "sessions"), manySessions(Math.round(150_000 * scale))) },
  "index-one-entry": {
    describe: "sessions.json one 50 MB entry",
    make: (s) => writeIndex(path.join(s, "agents", "main", "sessions"), oneHugeEntry(Math.round(50e6 * scale))),
    floor: (s, dir) => entryFloor(path.join(s, "agents", "main", "sessions", "sessions.json"), dir),
  },
  "transcripts-20k": { describe: "20,000 small transcripts", make: (s) => smallTranscripts(s, Math.round(20_000 * scale)) },
};

function treeBytes(dir) {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? treeBytes(p) : fs.statSync(p).size;
  }
  return n;
}

/** Peak RSS (MB) of `node --expose-gc <this file> --floor-entry <sessions.json> <dir>` (GNU time's %M). */
function entryFloor(sessionsJson, dir) {
  const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, "--expose-gc", fileURLToPath(import.meta.url), "--floor-entry", sessionsJson, dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`entry floor failed: ${r.stderr}`);
  return Number(r.stderr.trim().split("\n").pop()) / 1024;
}

/**
 * The floor of the one-entry shape: the index's only value as text (nothing parsed), inserted into a fresh file of
 * 9.6's agent schema as the upgrade writes a node (the INSERT fires 9.6's AFTER INSERT triggers, which rewrite the
 * row; then entry_valid = 1), in one transaction. What is left is what SQLite and the binding need for that row.
 */
function floorEntryInsert(sessionsJson, dir) {
  const Database = createRequire(import.meta.url)(path.join(root, "node_modules", "better-sqlite3"));
  const bytes = fs.readFileSync(sessionsJson);
  const start = bytes.indexOf(": ") + 2;
  const end = bytes.lastIndexOf("\n}");
  let text = bytes.subarray(start, end).toString("utf8");
  globalThis.gc();
  const db = new Database(path.join(dir, "floor.sqlite"));
  db.pragma("journal_mode = WAL");
  db.exec(fs.readFileSync(path.join(root, "schema", "openclaw", "2026.9.6-agent.sql"), "utf8"));
  db.transaction(() => {
    db.prepare("INSERT INTO session_nodes (session_key, current_session_id, entry_json, entry_valid, updated_at) VALUES ('agent:main:main', 'huge', ?, 1, 1767000000000)").run(text);
    text = "";
    db.prepare("UPDATE session_nodes SET entry_valid = 1 WHERE session_key = 'agent:main:main'").run();
  })();
  db.close();
}

function run(name, work) {
  const shape = SHAPES[name];
  const stateDir = path.join(work, name, ".openclaw");
  fs.mkdirSync(stateDir, { recursive: true });
  shape.make(stateDir);
  const bytes = treeBytes(stateDir);
  const floorRssMb = shape.floor ? shape.floor(stateDir, path.join(work, name)) : null;
  const t = performance.now();
  // GNU time's %M: the child's peak RSS in KiB (the real binary, nothing preloaded).
  const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, bin, "--state-dir", stateDir, "doctor", "--fix", "--yes", "--json", "--backup-dir", path.join(work, name, "backups")], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    env: { ...process.env, HOME: path.join(work, name) },
  });
  const seconds = (performance.now() - t) / 1000;
  const rssMb = Number(r.stderr.trim().split("\n").pop()) / 1024;
  let status = `exit ${r.status}`;
  try {
    status = JSON.parse(r.stdout).migration?.run?.status ?? status;
  } catch {
    // keeps the exit code
  }
  fs.rmSync(path.join(work, name), { recursive: true, force: true });
  return { name, describe: shape.describe, mb: bytes / 1e6, seconds, rssMb, status, floorRssMb };
}

function main() {
  if (!fs.existsSync(path.join(root, "dist", "cli", "main.js"))) spawnSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
  const picked = (process.env.BENCH_SHAPES ?? Object.keys(SHAPES).join(",")).split(",").filter(Boolean);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-bench-shapes-"));
  const rows = [];
  try {
    for (const name of picked) {
      if (!SHAPES[name]) throw new Error(`unknown shape ${name}; choose from ${Object.keys(SHAPES).join(", ")}`);
      const r = run(name, work);
      console.error(`${r.name}: ${r.mb.toFixed(1)} MB, ${r.seconds.toFixed(1)} s, peak RSS ${r.rssMb.toFixed(0)} MB, ${r.status}`);
      const pass = r.rssMb < RSS_TARGET_MB && (r.status === "completed" || r.status === "warning");
      rows.push([`doctor --fix peak RSS: ${r.describe} (${r.mb.toFixed(0)} MB)`, `${r.rssMb.toFixed(0)} MB`, "-", "-", `< ${RSS_TARGET_MB} MB`, pass ? "pass" : "FAIL", `${r.rssMb.toFixed(0)} MB`]);
      rows.push([`  same, wall time (${r.status})`, `${r.seconds.toFixed(1)} s`, "-", "-", "info", "-", "-"]);
      if (r.floorRssMb !== null) {
        console.error(`${r.name}: floor (the entry's text inserted into 9.6's session_nodes alone) ${r.floorRssMb.toFixed(0)} MB`);
        rows.push([`  floor: the entry's text alone into 9.6's session_nodes`, `${r.floorRssMb.toFixed(0)} MB`, "-", "-", "info", "-", `${r.floorRssMb.toFixed(0)} MB`]);
        rows.push([`  doctor --fix above that floor`, `${(r.rssMb - r.floorRssMb).toFixed(0)} MB`, "-", "-", "info", "-", "-"]);
      }
    }
    printTable(rows);
    for (const r of rows) {
      const rss = /^(\d+) MB/.exec(r[6])?.[1];
      recordResult("migrate-shapes", { measure: r[0].trim(), ours: r[1], baseline: r[2], ratio: null, target: r[4], pass: r[5] === "pass" ? true : r[5] === "FAIL" ? false : null, peakRssMb: rss ? Number(rss) : null });
    }
    if (rows.some((r) => r[5] === "FAIL")) process.exitCode = 1;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--floor-entry") {
  floorEntryInsert(process.argv[3], process.argv[4]);
} else if (process.argv[2] === "--make") {
  const [, , , name, stateDir] = process.argv;
  if (!SHAPES[name] || !stateDir) throw new Error(`usage: --make <${Object.keys(SHAPES).join("|")}> <stateDir>`);
  fs.mkdirSync(stateDir, { recursive: true });
  SHAPES[name].make(stateDir);
} else {
  main();
}
