// SqliteJobRunner's worker pool, run from the compiled dist/ (the TypeScript sources have no worker file, so jobs run inline there).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/temp-state.js";

type Jobs = typeof import("../../src/state/sqlite-jobs.js");
const distJobs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/state/sqlite-jobs.js");
const { ONE_CPU_INLINE_BYTES, SqliteJobRunner } = (await import(pathToFileURL(distJobs).href)) as Jobs;
/** util-linux taskset, to run a child on one CPU. */
const hasTaskset = spawnSync("taskset", ["-c", "0", "true"]).status === 0;

/** A database of about `bytes`, with `rows` rows in table t. */
function makeDb(file: string, bytes: number): number {
  const db = new Database(file);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)");
  const add = db.prepare("INSERT INTO t (body) VALUES (?)");
  const body = "x".repeat(1000);
  const rows = Math.max(1, Math.ceil(bytes / 1100));
  db.transaction(() => {
    for (let i = 0; i < rows; i += 1) add.run(body);
  })();
  db.close();
  return rows;
}

const runners: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
});

/** A fresh dir (the temp helper removes it after each test) with a 6 MiB and a 20 KiB database. */
function databases(): { dir: string; big: string; small: string; bigRows: number; smallRows: number } {
  const dir = makeTempDir("ocs-sqlite-jobs-");
  const big = path.join(dir, "big.sqlite");
  const small = path.join(dir, "small.sqlite");
  return { dir, big, small, bigRows: makeDb(big, 6 * 1024 * 1024), smallRows: makeDb(small, 20 * 1024) };
}

describe("SqliteJobRunner inlineBelowBytes", () => {

  it("checks a small database on the calling thread while the worker is busy, instead of starting a second one", async () => {
    const { big, small, bigRows, smallRows } = databases();
    const runner = new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(runner);
    runner.warm();
    const [a, b] = await Promise.all([runner.run({ op: "describe", file: big, check: "integrity_check" }), runner.run({ op: "describe", file: small, check: "integrity_check" })]);
    expect(a.rowCounts).toEqual({ t: bigRows });
    expect(b.rowCounts).toEqual({ t: smallRows });
    expect(b.problems).toEqual([]);
    expect(runner.startedWorkers).toBe(1);
    // Finalize of the small file runs inline too, with the same result as on a worker.
    const done = await Promise.all([runner.run({ op: "describe", file: big, check: "integrity_check" }), runner.run({ op: "finalize", file: small, options: { dropLeases: true } })]);
    expect(done[1]).toEqual({ leasesDropped: 0, pathsRewritten: 0 });
    expect(fs.existsSync(`${small}-wal`)).toBe(false);
    expect(runner.startedWorkers).toBe(1);
  });

  it("still starts the second worker for a large database, and for any database without the option", async () => {
    const { big, small } = databases();
    const sized = new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(sized);
    sized.warm();
    await Promise.all([sized.run({ op: "describe", file: big, check: "integrity_check" }), sized.run({ op: "describe", file: big, check: "integrity_check" })]);
    expect(sized.startedWorkers).toBe(2);

    const plain = new SqliteJobRunner({ workers: 2, cpus: 2 });
    runners.push(plain);
    plain.warm();
    await Promise.all([plain.run({ op: "describe", file: big, check: "integrity_check" }), plain.run({ op: "describe", file: small, check: "integrity_check" })]);
    expect(plain.startedWorkers).toBe(2);
  });

  it("starts no more workers than the process has CPUs: on one CPU both large jobs share one worker", async () => {
    const { big, bigRows } = databases();
    const runner = new SqliteJobRunner({ workers: 2, cpus: 1 });
    runners.push(runner);
    expect(runner.maxWorkers).toBe(1);
    const [a, b] = await Promise.all([runner.run({ op: "describe", file: big, check: "integrity_check" }), runner.run({ op: "describe", file: big, check: "integrity_check" })]);
    expect([a.rowCounts, b.rowCounts]).toEqual([{ t: bigRows }, { t: bigRows }]);
    expect(runner.startedWorkers).toBe(1);
  });

  it.skipIf(!hasTaskset)("takes the CPU count from the process's affinity by default (one CPU under taskset: one worker)", async () => {
    const script = `const { SqliteJobRunner } = await import(${JSON.stringify(pathToFileURL(distJobs).href)}); const r = new SqliteJobRunner({ workers: 2 }); console.log(r.maxWorkers);`;
    const run = (args: string[]): Promise<string> =>
      new Promise((resolve, reject) => {
        const child = spawn(args[0]!, args.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        child.on("error", reject);
        child.on("close", () => resolve(out.trim()));
      });
    expect(await run(["taskset", "-c", "0", process.execPath, "--input-type=module", "-e", script])).toBe("1");
    const all = await run([process.execPath, "--input-type=module", "-e", script]);
    expect(all).toBe(String(Math.min(2, os.availableParallelism())));
  });

  it("on one CPU checks databases below ONE_CPU_INLINE_BYTES on the calling thread and starts no worker; a larger one gets the worker", async () => {
    const { dir, big, small, bigRows, smallRows } = databases();
    const one = new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 1 });
    runners.push(one);
    expect(one.inlineLimit).toBe(ONE_CPU_INLINE_BYTES);
    // warmFor: no head start when every listed database would be checked inline.
    one.warmFor([fs.statSync(big).size, fs.statSync(small).size]);
    expect(one.startedWorkers).toBe(0);
    const [a, b, c] = await Promise.all([
      one.run({ op: "describe", file: big, check: "integrity_check" }),
      one.run({ op: "describe", file: big, check: "integrity_check" }),
      one.run({ op: "describe", file: small, check: "integrity_check" }),
    ]);
    expect([a.rowCounts, b.rowCounts, c.rowCounts]).toEqual([{ t: bigRows }, { t: bigRows }, { t: smallRows }]);
    expect(a.problems).toEqual([]);
    expect(one.startedWorkers).toBe(0);
    // A file at the limit (sparse: no database, which the worker reports) goes to a worker.
    const huge = path.join(dir, "huge.sqlite");
    fs.writeFileSync(huge, "");
    fs.truncateSync(huge, ONE_CPU_INLINE_BYTES);
    await expect(one.run({ op: "describe", file: huge, check: "integrity_check" })).rejects.toThrow();
    expect(one.startedWorkers).toBe(1);

    // Only runners that inline at all are raised; on two CPUs the limit is the caller's.
    expect(new SqliteJobRunner({ workers: 2, cpus: 1 }).inlineLimit).toBe(0);
    expect(new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 }).inlineLimit).toBe(4 * 1024 * 1024);
  });

  it("warmFor starts a worker ahead only for a database a worker would take", async () => {
    const two = new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(two);
    two.warmFor([20 * 1024, 1024 * 1024]);
    expect(two.startedWorkers).toBe(0);
    two.warmFor([]);
    expect(two.startedWorkers).toBe(0);
    two.warmFor([20 * 1024, 6 * 1024 * 1024]);
    expect(two.startedWorkers).toBe(1);
    // A size that is no number (a hostile manifest's) means "may be large".
    const other = new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(other);
    other.warmFor([Number.NaN]);
    expect(other.startedWorkers).toBe(1);
  });

  it("sends a small database's job to an idle worker (no inline work when nothing waits)", async () => {
    const { small, smallRows } = databases();
    const runner = new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(runner);
    runner.warm();
    const info = await runner.run({ op: "describe", file: small, check: "integrity_check" });
    expect(info.rowCounts).toEqual({ t: smallRows });
    expect(runner.startedWorkers).toBe(1);
  });

  it("reports a broken small database's failure inline as a SqliteJobError, like the worker does", async () => {
    const { dir, big } = databases();
    const bad = path.join(dir, "bad.sqlite");
    fs.writeFileSync(bad, "not a database at all, just text padding to look like a file".repeat(10));
    const runner = new SqliteJobRunner({ workers: 2, inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(runner);
    runner.warm();
    const busy = runner.run({ op: "describe", file: big, check: "integrity_check" });
    await expect(runner.run({ op: "describe", file: bad, check: "integrity_check" })).rejects.toThrow(/not a database/);
    await busy;
    expect(runner.startedWorkers).toBe(1);
  });

  it("snapshots a small database on the calling thread when no worker runs; a large one, or a small file beside a large WAL, on a worker", async () => {
    const { dir, big, small, smallRows } = databases();
    const runner = new SqliteJobRunner({ inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(runner);
    const copy = path.join(dir, "small-copy.sqlite");
    await runner.run({ op: "snapshot", source: small, dest: copy });
    expect((await runner.run({ op: "describe", file: copy, check: "integrity_check" })).rowCounts).toEqual({ t: smallRows });
    expect(runner.startedWorkers).toBe(0);

    // A small main file whose WAL holds megabytes (a writer keeps it from being checkpointed) is not a small job.
    const walDb = path.join(dir, "wal.sqlite");
    const writer = new Database(walDb);
    try {
      writer.pragma("journal_mode = WAL");
      writer.pragma("wal_autocheckpoint = 0");
      writer.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)");
      const add = writer.prepare("INSERT INTO t (body) VALUES (?)");
      writer.transaction(() => {
        for (let i = 0; i < 6000; i += 1) add.run("y".repeat(1000));
      })();
      expect(fs.statSync(walDb).size).toBeLessThan(4 * 1024 * 1024);
      expect(fs.statSync(`${walDb}-wal`).size).toBeGreaterThan(4 * 1024 * 1024);
      await runner.run({ op: "snapshot", source: walDb, dest: path.join(dir, "wal-copy.sqlite") });
      expect(runner.startedWorkers).toBe(1);
    } finally {
      writer.close();
    }
    const bigCopy = path.join(dir, "big-copy.sqlite");
    const sized = new SqliteJobRunner({ inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(sized);
    await sized.run({ op: "snapshot", source: big, dest: bigCopy });
    expect(sized.startedWorkers).toBe(1);
    expect(fs.statSync(bigCopy).size).toBeGreaterThan(4 * 1024 * 1024);
  });

  it("moves a small job that finds its database locked to a worker, so the calling thread's event loop keeps running", async () => {
    const { dir, small, smallRows } = databases();
    // Another process holds an exclusive lock for ~1.5 s (a gateway mid-write on a rollback-journal database).
    const holder = spawn(process.execPath, ["-e", `const D = require("better-sqlite3"); const d = new D(${JSON.stringify(small)}); d.exec("BEGIN EXCLUSIVE"); console.log("locked"); setTimeout(() => { d.exec("COMMIT"); d.close(); }, 1500);`], { cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.."), stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((resolve) => holder.on("exit", resolve));
    await new Promise<void>((resolve) => holder.stdout!.once("data", () => resolve()));
    const runner = new SqliteJobRunner({ inlineBelowBytes: 4 * 1024 * 1024, cpus: 2 });
    runners.push(runner);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 20);
    const copy = path.join(dir, "locked-copy.sqlite");
    try {
      await runner.run({ op: "snapshot", source: small, dest: copy });
    } finally {
      clearInterval(timer);
    }
    await exited;
    // Inline with the full busy timeout, the loop would not have turned once until the lock went away.
    expect(ticks).toBeGreaterThan(20);
    expect(runner.startedWorkers).toBe(1);
    expect((await runner.run({ op: "describe", file: copy, check: "integrity_check" })).rowCounts).toEqual({ t: smallRows });
  });
});
