// doctor on an OpenClaw 2026.9.6 state whose cron rows are keyed by where the state dir was mounted before.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { doctorExitCode, runDoctor, type DoctorResult } from "../../src/doctor/run-doctor.js";
import { makeTempDir, makeTempState } from "../helpers/temp-state.js";
import { cronRows, insertJob, movedState, OLD_KEY } from "./moved-cron-store-state.js";

const moved = (res: DoctorResult | DoctorResult["findings"]) => (Array.isArray(res) ? res : res.findings).filter((f) => f.id.startsWith("storage.moved-cron-store"));
const rekey = (res: DoctorResult) => res.repairs.find((r) => r.id === "storage.moved-cron-store.rekey");

describe("doctor: cron store keys after the state dir moved", () => {
  it("names the old key, the new key and the job count; --fix re-keys jobs, scratch and receipts; a second run changes nothing", async () => {
    const state = movedState([
      { key: OLD_KEY, id: "daily", updatedAt: 1000, scratch: "notes", receipt: "rc-1" },
      { key: OLD_KEY, id: "weekly", updatedAt: 2000 },
    ]);
    const current = path.join(state.stateDir, "cron", "jobs.json");
    const check = await runDoctor({ paths: state.paths });
    expect(moved(check).map((f) => [f.id, f.severity])).toEqual([["storage.moved-cron-store", "warning"]]);
    expect(moved(check)[0]!.title).toBe(`2 cron job(s) are keyed by ${JSON.stringify(OLD_KEY)}, the default store of where this state dir was mounted before; OpenClaw reads them under ${JSON.stringify(current)}`);
    expect(cronRows(state.paths.globalDbPath).every((r) => r[1] === OLD_KEY)).toBe(true);

    const backupDir = path.join(state.root, "archives");
    const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir } });
    const repair = rekey(fixed)!;
    expect(repair.status).toBe("applied");
    expect(fs.existsSync(repair.rows!.backupPath!)).toBe(true);
    expect(path.dirname(repair.rows!.backupPath!)).toBe(backupDir);
    expect(repair.rows!.moved).toEqual([
      { from: `cron_jobs (${JSON.stringify(OLD_KEY)}, "daily")`, to: `cron_jobs (${JSON.stringify(current)}, "daily")`, action: "moved" },
      { from: `cron_jobs (${JSON.stringify(OLD_KEY)}, "weekly")`, to: `cron_jobs (${JSON.stringify(current)}, "weekly")`, action: "moved" },
    ]);
    expect(repair.detail).toContain('job "daily": moved from');
    expect(cronRows(state.paths.globalDbPath)).toEqual([
      ["job", current, "daily:daily:1000"],
      ["job", current, "weekly:weekly:2000"],
      ["receipt", current, "daily:rc-1"],
      ["scratch", current, "daily:notes"],
    ]);
    expect(moved(fixed)).toEqual([]);
    expect(doctorExitCode(fixed, false)).toBe(0);

    const before = fs.readFileSync(state.paths.globalDbPath);
    const again = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir } });
    expect(rekey(again)).toBeUndefined();
    expect(moved(again)).toEqual([]);
    expect(fs.readdirSync(backupDir)).toHaveLength(1);
    expect(fs.readFileSync(state.paths.globalDbPath).equals(before)).toBe(true);
  });

  it("a job under both keys keeps the newer updated_at, either way; the older one (with its scratch and receipts) is dropped and named", async () => {
    const state = movedState([
      // "a": the old mount's copy is newer (the runtime ran there last) → it replaces the one under the current key.
      { key: OLD_KEY, id: "a", updatedAt: 5000, name: "a-old-mount", scratch: "old-newer", receipt: "rc-old-a" },
      // "b": the copy under the current key is newer → the old mount's is dropped.
      { key: OLD_KEY, id: "b", updatedAt: 1000, name: "b-old-mount", scratch: "old-older" },
    ]);
    const here = path.join(state.stateDir, "cron", "jobs.json");
    const db = new Database(state.paths.globalDbPath);
    insertJob(db, { key: here, id: "a", updatedAt: 4000, name: "a-here", scratch: "here-older", receipt: "rc-here-a" });
    insertJob(db, { key: here, id: "b", updatedAt: 3000, name: "b-here", scratch: "here-newer" });
    db.close();

    const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir: path.join(state.root, "archives") } });
    const repair = rekey(fixed)!;
    expect(repair.status).toBe("applied");
    expect(repair.rows!.moved.map((m) => [m.from, m.action])).toEqual([
      [`cron_jobs (${JSON.stringify(OLD_KEY)}, "a")`, "moved"],
      [`cron_jobs (${JSON.stringify(OLD_KEY)}, "b")`, "superseded"],
    ]);
    expect(repair.detail).toContain('job "a": kept the newer row from');
    expect(repair.detail).toContain("dropped the older one under the current key (updated_at 1970-01-01T00:00:04.000Z; 3 row(s))");
    expect(repair.detail).toContain('job "b": kept the row under the current key (updated_at 1970-01-01T00:00:03.000Z, as new or newer), dropped the older one from');
    expect(cronRows(state.paths.globalDbPath)).toEqual([
      ["job", here, "a:a-old-mount:5000"],
      ["job", here, "b:b-here:3000"],
      ["receipt", here, "a:rc-old-a"],
      ["scratch", here, "a:old-newer"],
      ["scratch", here, "b:here-newer"],
    ]);
    expect(moved(fixed)).toEqual([]);
  });

  it("OpenClaw 2026.9.6's own migration, copied from where it was made (/work/oc/t1/state): its two jobs are re-keyed here", async () => {
    const state = makeTempState("openclaw-2026.9.6/legacy-state-migrated");
    const db = path.join(state.stateDir, "state", "openclaw.sqlite");
    const made = path.join(path.sep, "work", "oc", "t1", "state", "cron", "jobs.json");
    expect(cronRows(db).map((r) => r[1])).toEqual([made, made]);
    const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir: path.join(state.root, "archives") } });
    expect(moved(fixed.findingsBefore!).map((f) => f.title)).toEqual([expect.stringMatching(/^2 cron job\(s\) are keyed by "\/work\/oc\/t1\/state\/cron\/jobs\.json"/)]);
    expect(rekey(fixed)!.status).toBe("applied");
    const here = path.join(state.stateDir, "cron", "jobs.json");
    expect(cronRows(db).map((r) => r[1])).toEqual([here, here]);
    expect(moved(fixed)).toEqual([]);
  });

  it("a tie keeps the row already under the current key", async () => {
    const state = movedState([{ key: OLD_KEY, id: "t", updatedAt: 7000, name: "old" }]);
    const here = path.join(state.stateDir, "cron", "jobs.json");
    const db = new Database(state.paths.globalDbPath);
    insertJob(db, { key: here, id: "t", updatedAt: 7000, name: "here" });
    db.close();
    await runDoctor({ paths: state.paths, fix: true, migration: { backupDir: path.join(state.root, "archives") } });
    expect(cronRows(state.paths.globalDbPath)).toEqual([["job", here, "t:here:7000"]]);
  });

  it("a key pointing at a cron store that exists on this machine (another state) is left alone, named as info", async () => {
    const other = makeTempDir();
    fs.mkdirSync(path.join(other, "cron"));
    fs.writeFileSync(path.join(other, "cron", "jobs.json"), "{}\n");
    const otherKey = path.join(other, "cron", "jobs.json");
    const state = movedState([{ key: otherKey, id: "theirs", updatedAt: 1000 }]);
    const check = await runDoctor({ paths: state.paths });
    expect(moved(check).map((f) => [f.id, f.severity])).toEqual([["storage.moved-cron-store.left", "info"]]);
    expect(moved(check)[0]!.title).toContain("may be another state's cron store");
    const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir: path.join(state.root, "archives") } });
    expect(rekey(fixed)).toBeUndefined();
    expect(cronRows(state.paths.globalDbPath)).toEqual([["job", otherKey, "theirs:theirs:1000"]]);
  });

  it("keys that are not a default store path (a custom store, a relative key) are never touched", async () => {
    const custom = path.join(path.sep, "old", "mount", "my-cron.json");
    const state = movedState([
      { key: custom, id: "c", updatedAt: 1 },
      { key: "cron/jobs.json", id: "r", updatedAt: 1 },
    ]);
    const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir: path.join(state.root, "archives") } });
    expect(rekey(fixed)).toBeUndefined();
    expect(moved(fixed)).toEqual([]);
    expect(cronRows(state.paths.globalDbPath).map((r) => r[1]).sort()).toEqual([custom, "cron/jobs.json"].sort());
  });

  it("the store the config names (cron.store) is never re-keyed, even when it is a default store path elsewhere", async () => {
    const state = movedState([{ key: OLD_KEY, id: "configured", updatedAt: 1 }]);
    fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), JSON.stringify({ cron: { store: OLD_KEY } }), { mode: 0o600 });
    const check = await runDoctor({ paths: state.paths });
    expect(moved(check)).toEqual([]);
    expect(check.repairs ?? []).toEqual([]);
    const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir: path.join(state.root, "archives") } });
    expect(rekey(fixed)).toBeUndefined();
    expect(cronRows(state.paths.globalDbPath)).toEqual([["job", OLD_KEY, "configured:configured:1"]]);
  });

  it("refuses without a verified backup: the repair fails (exit 1) and no row is changed", async () => {
    const state = movedState([{ key: OLD_KEY, id: "daily", updatedAt: 1000, scratch: "s" }]);
    const rowsBefore = cronRows(state.paths.globalDbPath);
    const blocker = path.join(state.root, "blocker");
    fs.writeFileSync(blocker, "x");
    const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backupDir: path.join(blocker, "backups") } });
    const repair = rekey(fixed)!;
    expect(repair.status).toBe("failed");
    expect(repair.detail).toMatch(/^The verified backup before re-keying the moved cron store could not be taken \(.*\); no row was changed\./);
    expect(doctorExitCode(fixed, false)).toBe(1);
    expect(cronRows(state.paths.globalDbPath)).toEqual(rowsBefore);
    expect(moved(fixed).map((f) => f.id)).toEqual(["storage.moved-cron-store"]);
  });

  it("a key holding terminal escapes is JSON-quoted in every message", async () => {
    const evil = path.join(path.sep, "old", "\u001b[2Jmount", "cron", "jobs.json");
    const state = movedState([{ key: evil, id: "e", updatedAt: 1 }]);
    const check = await runDoctor({ paths: state.paths });
    expect(moved(check)).toHaveLength(1);
    expect(moved(check)[0]!.title.includes("\u001b")).toBe(false);
    expect(moved(check)[0]!.title).toContain("\\u001b[2Jmount");
  });
});
