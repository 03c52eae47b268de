#!/usr/bin/env node
// The floor of a verified backup: each piece of work `backup create` / `backup restore` must do, alone, in-process.
//
// Run by bench/backup.mjs as a child: `node bench/backup-floor.mjs create <plan.json>` or `... check <dir>`. Each
// component is timed on its own (CPU-seconds = user + system of this process from process.cpuUsage(), all threads;
// wall from hrtime), with the tool's own SQLite (better-sqlite3, same pragmas as src/state/sqlite-snapshot.ts) and
// codec (node:zlib, gzip at its default level or zstd level 1 with the frame checksum, 4 MiB blocks like
// src/backup/parallel-compress.ts). Node start-up and module loading are not part of any component. Prints one JSON
// line: { components: { name: { cpu, wall } } }.
//
// create: VACUUM INTO of each database; integrity_check of each snapshot; read + compress of the tree the archive
// holds (the snapshots and every plain file); sha256 of that content; read-back (decode of the compressed output +
// sha256). check: integrity_check of every *.sqlite file under a directory and the sha256 of every file's bytes (the
// restore floor's checks: the verified restore floor of issue 26's table includes the hash). decode: the tool's codec
// (node:zlib, streaming, 1 MiB output chunks like src/backup/compression.ts) decoding an archive, output discarded —
// the restore floor with the tool's own codec instead of the zstd/gzip CLI's.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import Database from "better-sqlite3";

const BLOCK = 4 * 1024 * 1024;
const READ = 1024 * 1024;

/** Runs `fn`, returns { cpu, sys, wall } in seconds (process-wide CPU: this process is single-threaded here; sys: its system part). */
function measure(fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  fn();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, sys: c.system / 1e6, wall: Number(process.hrtime.bigint() - t0) / 1e9 };
}

/** Accumulates CPU and wall of many short calls. */
class Meter {
  cpu = 0;
  sys = 0;
  wall = 0;
  run(fn) {
    const m = measure(fn);
    this.cpu += m.cpu;
    this.sys += m.sys;
    this.wall += m.wall;
  }
  get value() {
    return { cpu: this.cpu, sys: this.sys, wall: this.wall };
  }
}

function codec(name) {
  if (name === "zstd") {
    const P = zlib.constants;
    const params = { [P.ZSTD_c_compressionLevel ?? 100]: 1, [P.ZSTD_c_checksumFlag ?? 201]: 1 };
    return { compress: (b) => zlib.zstdCompressSync(b, { params }), decompress: (b) => zlib.zstdDecompressSync(b) };
  }
  return { compress: (b) => zlib.gzipSync(b), decompress: (b) => zlib.gunzipSync(b) };
}

/**
 * integrity_check the way the tool runs it (src/state/sqlite-snapshot.ts describeDatabaseFile) and the sqlite3 shell
 * does by default: a read-write connection with query_only. A read-only connection skips the CHECK constraints (the
 * json_valid of every JSON column): 0.50 instead of 0.79 CPU-s on issue 26's 329 MB agent DB — a floor doing less
 * than the tool must (docs/performance.md, twelfth pass).
 */
function integrityCheck(file) {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma("query_only = ON");
    db.pragma("cache_size = -2000");
    const rows = db.pragma("integrity_check");
    if (rows.length !== 1 || rows[0].integrity_check !== "ok") throw new Error(`${file}: integrity_check ${JSON.stringify(rows[0])}`);
  } finally {
    db.close();
  }
}

function create(planFile) {
  const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
  const snapDir = path.join(plan.work, "floor-snapshots");
  fs.rmSync(snapDir, { recursive: true, force: true });
  fs.mkdirSync(snapDir, { recursive: true });
  const snaps = plan.dbs.map((_, i) => path.join(snapDir, `snap-${i}.sqlite`));
  const components = {};

  components.vacuumInto = measure(() => {
    plan.dbs.forEach((db, i) => {
      const h = new Database(db);
      h.pragma("synchronous = OFF");
      h.pragma("cache_size = -2000");
      h.prepare("VACUUM INTO ?").run(snaps[i]);
      h.close();
    });
  });
  components.integrityCheck = measure(() => snaps.forEach(integrityCheck));

  // Read + compress in 4 MiB blocks into one output file (block sizes kept for the read-back); hash separately metered.
  const { compress, decompress } = codec(plan.compression);
  const out = path.join(plan.work, "floor-archive.bin");
  const compressM = new Meter();
  const hashM = new Meter();
  const sizes = [];
  const hash = crypto.createHash("sha256");
  compressM.run(() => {
    const outFd = fs.openSync(out, "w");
    const block = Buffer.allocUnsafeSlow(BLOCK);
    let filled = 0;
    const flush = () => {
      if (filled === 0) return;
      const z = compress(block.subarray(0, filled));
      fs.writeSync(outFd, z);
      sizes.push(z.length);
      filled = 0;
    };
    for (const file of [...snaps, ...plan.others]) {
      const fd = fs.openSync(file, "r");
      for (;;) {
        const n = fs.readSync(fd, block, filled, Math.min(READ, BLOCK - filled), null);
        if (n === 0) break;
        const chunk = block.subarray(filled, filled + n);
        // Hashing is its own component: timed apart from the read and the compression around it.
        const c0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        hash.update(chunk);
        const c = process.cpuUsage(c0);
        hashM.cpu += (c.user + c.system) / 1e6;
        hashM.sys += c.system / 1e6;
        hashM.wall += Number(process.hrtime.bigint() - t0) / 1e9;
        filled += n;
        if (filled === BLOCK) flush();
      }
      fs.closeSync(fd);
    }
    flush();
    fs.closeSync(outFd);
  });
  const digest = hash.digest("hex");
  // compressM's total includes the hashing it wrapped.
  components.readCompress = { cpu: compressM.cpu - hashM.cpu, sys: compressM.sys - hashM.sys, wall: compressM.wall - hashM.wall };
  components.sha256 = hashM.value;

  components.readBack = measure(() => {
    const fd = fs.openSync(out, "r");
    const back = crypto.createHash("sha256");
    for (const size of sizes) {
      const z = Buffer.allocUnsafe(size);
      fs.readSync(fd, z, 0, size, null);
      back.update(decompress(z));
    }
    fs.closeSync(fd);
    if (back.digest("hex") !== digest) throw new Error("read-back sha256 differs");
  });
  fs.rmSync(snapDir, { recursive: true, force: true });
  fs.rmSync(out, { force: true });
  return components;
}

function check(dir) {
  const dbs = [];
  const files = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath ?? e.path, e.name);
    files.push(file);
    if (e.name.endsWith(".sqlite")) dbs.push(file);
  }
  if (dbs.length === 0) throw new Error(`no databases under ${dir}`);
  // Only the hashing is metered: a restore hashes bytes it already holds (decoded), it does not read them back.
  const hashM = new Meter();
  const buf = Buffer.allocUnsafeSlow(READ);
  for (const file of files) {
    const hash = crypto.createHash("sha256");
    const fd = fs.openSync(file, "r");
    for (;;) {
      const n = fs.readSync(fd, buf, 0, READ, null);
      if (n === 0) break;
      hashM.run(() => hash.update(buf.subarray(0, n)));
    }
    fs.closeSync(fd);
    hashM.run(() => hash.digest());
  }
  return { integrityCheck: measure(() => dbs.forEach(integrityCheck)), sha256: hashM.value };
}

/** The archive decoded by node:zlib the way the tool streams it (1 MiB reads and output chunks); output discarded. */
async function decode(archive, compression) {
  const decoder = compression === "zstd" ? zlib.createZstdDecompress({ chunkSize: READ }) : zlib.createGunzip({ chunkSize: READ });
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let bytes = 0;
  await pipeline(fs.createReadStream(archive, { highWaterMark: READ }), decoder, new Writable({ write: (chunk, _e, done) => ((bytes += chunk.length), done()) }));
  const c = process.cpuUsage(c0);
  if (bytes === 0) throw new Error(`${archive}: decoded to nothing`);
  return { decode: { cpu: (c.user + c.system) / 1e6, sys: c.system / 1e6, wall: Number(process.hrtime.bigint() - t0) / 1e9 } };
}

const [mode, arg, arg2] = process.argv.slice(2);
const components = mode === "create" ? create(arg) : mode === "check" ? check(arg) : mode === "decode" ? await decode(arg, arg2) : null;
if (!components) throw new Error("usage: backup-floor.mjs create <plan.json> | check <dir> | decode <archive> zstd|gzip");
process.stdout.write(`${JSON.stringify({ components })}\n`);
