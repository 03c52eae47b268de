// Unchanged databases: the last verified archive's snapshot bytes are copied (sha256-checked), never trusted blindly.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import crypto from "node:crypto";
import { parseReuseRecord, RACY_MARGIN_MS, segmentIntact, sourceFingerprint, stableFingerprint } from "../../src/backup/snapshot-reuse.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { addSessions, agentDb, seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, type TempState } from "../helpers/temp-state.js";

/** Files written just now are "racy" (a later write could share their timestamp): wait them out. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, RACY_MARGIN_MS + 300));

function sqlite(db: string, sql: string): string {
  const run = spawnSync("sqlite3", [db, sql], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout.trim();
}

function reuseOf(state: TempState, runId: string): ReturnType<typeof parseReuseRecord> {
  return parseReuseRecord(sqlite(state.paths.globalDbPath, `SELECT manifest_json FROM backup_runs WHERE id = '${runId}'`));
}

describe("segmentIntact", () => {
  it("is true only for the recorded bytes, and false at once for a FIFO, a directory or a missing file", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "a.tar.zst");
    const bytes = crypto.randomBytes(3 * 1024 * 1024 + 17);
    fs.writeFileSync(file, bytes);
    const segment = { start: 1000, length: 2 * 1024 * 1024 + 5, sha256: crypto.createHash("sha256").update(bytes.subarray(1000, 1000 + 2 * 1024 * 1024 + 5)).digest("hex") };
    expect(segmentIntact(file, segment)).toBe(true);
    expect(segmentIntact(file, { ...segment, start: 1001 })).toBe(false);
    expect(segmentIntact(file, { ...segment, start: bytes.length - 10 })).toBe(false);
    fs.writeFileSync(file, Buffer.concat([bytes.subarray(0, 2000), Buffer.from([bytes[2000]! ^ 1]), bytes.subarray(2001)]));
    expect(segmentIntact(file, segment)).toBe(false);
    const fifo = path.join(dir, "fifo.tar.zst");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    // A FIFO swapped in at the recorded path is refused without blocking on it.
    expect(segmentIntact(fifo, segment)).toBe(false);
    expect(segmentIntact(dir, segment)).toBe(false);
    expect(segmentIntact(path.join(dir, "gone.tar.zst"), segment)).toBe(false);
  });
});

describe("stableFingerprint", () => {
  it("is null when the files changed during the snapshot or were written within the racy margin", () => {
    const dir = makeTempDir();
    const db = path.join(dir, "x.sqlite");
    fs.writeFileSync(db, "a");
    const before = sourceFingerprint(db);
    expect(stableFingerprint(before, before, Date.now())).toBeNull();
    expect(stableFingerprint(before, before, Date.now() + RACY_MARGIN_MS + 1000)).toEqual(before);
    fs.writeFileSync(`${db}-wal`, "w");
    expect(stableFingerprint(before, sourceFingerprint(db), Date.now() + RACY_MARGIN_MS + 1000)).toBeNull();
  });
});

describe("createBackup reuse of unchanged database snapshots", () => {
  it("copies an unchanged agent DB from the last verified archive; the result verifies and restores byte-identical rows", async () => {
    const state = makeTempState("legacy-state");
    seedState(state, { sessions: 30 });
    await settle();
    const first = await createBackup({ paths: state.paths });
    expect(first.reusedDatabases).toEqual([]);
    const record = reuseOf(state, first.runId)!;
    expect(record.snapshots.map((s) => s.sourcePath)).toContain(agentDb(state));

    const second = await createBackup({ paths: state.paths });
    // The global DB changed (the first run's backup_runs row); the agent DB did not.
    expect(second.reusedDatabases).toEqual([agentDb(state)]);
    const firstAgent = first.manifest.databases.find((d) => d.role === "agent")!;
    const secondAgent = second.manifest.databases.find((d) => d.role === "agent")!;
    expect(secondAgent).toEqual(firstAgent);
    // A full, independent verify (integrity_check included) of the archive with copied bytes.
    const verified = await verifyBackup(second.archivePath);
    expect(verified.ok, verified.problem).toBe(true);
    const target = path.join(makeTempDir(), "t");
    await restoreBackup({ paths: state.paths, archivePath: second.archivePath, target, confirm: async () => true });
    const restoredDb = path.join(target, "state", "agents", "main", "agent", "openclaw-agent.sqlite");
    const dump = (db: string): string => sqlite(db, "SELECT session_id, seq, event_json FROM transcript_events ORDER BY session_id, seq");
    expect(dump(restoredDb)).toBe(dump(agentDb(state)));
    // The chain continues: the second archive lends the same snapshot to the next run.
    expect(reuseOf(state, second.runId)!.snapshots.find((s) => s.sourcePath === agentDb(state))!.file.sha256).toBe(firstAgent.sha256);

    // A write to the agent DB ends the reuse: the next archive has the new rows.
    addSessions(agentDb(state), 1000, 3);
    const third = await createBackup({ paths: state.paths });
    expect(third.reusedDatabases).toEqual([]);
    expect(third.manifest.databases.find((d) => d.role === "agent")!.rowCounts.sessions).toBe(33);
  });

  it("never reuses from an altered archive, an unverified run, or with reuse off", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    await settle();
    const unverified = await createBackup({ paths: state.paths, verify: false });
    expect(reuseOf(state, unverified.runId)).toBeNull();
    const first = await createBackup({ paths: state.paths });
    expect(first.reusedDatabases).toEqual([]);
    expect((await createBackup({ paths: state.paths, reuse: false })).reusedDatabases).toEqual([]);

    // Flip one byte inside the recorded segment of the newest archive that lends it: the copy is refused and the
    // database is snapshotted afresh.
    const lender = await createBackup({ paths: state.paths });
    expect(lender.reusedDatabases).toEqual([agentDb(state)]);
    const seg = reuseOf(state, lender.runId)!.snapshots.find((s) => s.sourcePath === agentDb(state))!.segment;
    const fd = fs.openSync(lender.archivePath, "r+");
    const one = Buffer.alloc(1);
    fs.readSync(fd, one, 0, 1, seg.start + Math.floor(seg.length / 2));
    one[0]! ^= 0xff;
    fs.writeSync(fd, one, 0, 1, seg.start + Math.floor(seg.length / 2));
    fs.closeSync(fd);
    const after = await createBackup({ paths: state.paths });
    expect(after.reusedDatabases).toEqual([]);
    expect((await verifyBackup(after.archivePath)).ok).toBe(true);

    // A run whose archive is gone cannot lend anything either.
    fs.rmSync(after.archivePath);
    for (const name of fs.readdirSync(state.paths.backupDir)) fs.rmSync(path.join(state.paths.backupDir, name));
    expect((await createBackup({ paths: state.paths })).reusedDatabases).toEqual([]);
  });

  it("does not reuse across compressions", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    await settle();
    await createBackup({ paths: state.paths, compression: "gzip" });
    const other = await createBackup({ paths: state.paths, compression: "gzip" });
    expect(other.reusedDatabases).toEqual([agentDb(state)]);
    if (other.compression === "gzip" && (await import("../../src/backup/compression.js")).zstdSupported()) {
      expect((await createBackup({ paths: state.paths, compression: "zstd" })).reusedDatabases).toEqual([]);
    }
  });
});
