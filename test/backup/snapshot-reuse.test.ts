// Unchanged databases: an earlier verified archive's snapshot bytes are copied only when that archive's own manifest vouches for them.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { readArchiveManifest } from "../../src/backup/read-archive.js";
import { parseReuseHints, RACY_MARGIN_MS, sameFingerprint, sourceFingerprint, stableFingerprint } from "../../src/backup/snapshot-reuse.js";
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

function hintsOf(state: TempState, runId: string): ReturnType<typeof parseReuseHints> {
  const row = sqlite(state.paths.globalDbPath, `SELECT archive_path || char(10) || manifest_json FROM backup_runs WHERE id = '${runId}'`);
  const cut = row.indexOf("\n");
  return parseReuseHints(row.slice(0, cut), row.slice(cut + 1));
}

const AGENT_ENTRY = "payload/state/agents/main/agent/openclaw-agent.sqlite";

describe("sourceFingerprint / stableFingerprint", () => {
  it("records the header's change counter and schema version, and is null when the files changed or are racy", () => {
    const dir = makeTempDir();
    const db = path.join(dir, "x.sqlite");
    sqlite(db, "PRAGMA user_version = 7; CREATE TABLE t (a); INSERT INTO t VALUES (1);");
    const before = sourceFingerprint(db);
    expect(before.header).toEqual({ changeCounter: expect.any(Number), schemaVersion: 7 });
    expect(stableFingerprint(before, before, Date.now())).toBeNull();
    expect(stableFingerprint(before, before, Date.now() + RACY_MARGIN_MS + 1000)).toEqual(before);
    fs.writeFileSync(`${db}-wal`, "w");
    expect(stableFingerprint(before, sourceFingerprint(db), Date.now() + RACY_MARGIN_MS + 1000)).toBeNull();
    // Same stat identity but another header (a write that kept size and timestamps) is not the same database state.
    expect(sameFingerprint(before, { ...before, header: { changeCounter: before.header!.changeCounter + 1, schemaVersion: 7 } })).toBe(false);
    // A file that is not SQLite has no header: never reusable.
    const other = path.join(dir, "y.sqlite");
    fs.writeFileSync(other, "a");
    const fp = sourceFingerprint(other);
    expect(fp.header).toBeNull();
    expect(stableFingerprint(fp, fp, Date.now() + RACY_MARGIN_MS + 1000)).toBeNull();
  });
});

describe("createBackup reuse of unchanged database snapshots", () => {
  it("copies an unchanged agent DB that the earlier archive's manifest vouches for; the result verifies and restores byte-identical rows", async () => {
    const state = makeTempState("legacy-state");
    seedState(state, { sessions: 30 });
    await settle();
    const first = await createBackup({ paths: state.paths });
    expect(first.reusedDatabases).toEqual([]);
    // The archive itself records what a later run checks: the body's compressed sha256 and the source's state.
    const own = (await readArchiveManifest(first.archivePath)).databases.find((d) => d.role === "agent")!;
    expect(own.body).toEqual({ compression: first.compression, length: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(sameFingerprint(own.sourceState!, sourceFingerprint(agentDb(state)))).toBe(true);
    expect(hintsOf(state, first.runId).map((h) => h.entryPath)).toContain(AGENT_ENTRY);

    const second = await createBackup({ paths: state.paths });
    // The global DB changed (the first run's backup_runs row); the agent DB did not.
    expect(second.reusedDatabases).toEqual([agentDb(state)]);
    expect(second.reuseRefused).toEqual([]);
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
    expect((await createBackup({ paths: state.paths })).reusedDatabases).toEqual([agentDb(state)]);

    // A write to the agent DB ends the reuse: the next archive has the new rows.
    addSessions(agentDb(state), 1000, 3);
    const third = await createBackup({ paths: state.paths });
    expect(third.reusedDatabases).toEqual([]);
    expect(third.reuseRefused).toEqual([]);
    expect(third.manifest.databases.find((d) => d.role === "agent")!.rowCounts.sessions).toBe(33);
  });

  it("never reuses from an altered archive, an unverified run, or with reuse off; the altered one is named", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    // Incompressible bytes ahead of the database bodies (plain files come first): reading the manifest decodes ~1 MiB
    // past it, and the altered body must lie beyond that for its bytes, not the manifest, to be what fails.
    fs.mkdirSync(path.join(state.paths.stateDir, "notes"), { recursive: true });
    fs.writeFileSync(path.join(state.paths.stateDir, "notes", "filler.bin"), crypto.randomBytes(3 * 1024 * 1024));
    await settle();
    const unverified = await createBackup({ paths: state.paths, verify: false });
    expect(hintsOf(state, unverified.runId)).toEqual([]);
    const first = await createBackup({ paths: state.paths });
    expect(first.reusedDatabases).toEqual([]);
    expect((await createBackup({ paths: state.paths, reuse: false })).reusedDatabases).toEqual([]);

    // Flip one byte inside the body of the newest archive that lends it: that copy is refused and named, and the
    // next-older intact archive lends the snapshot instead.
    const lender = await createBackup({ paths: state.paths });
    expect(lender.reusedDatabases).toEqual([agentDb(state)]);
    const seg = hintsOf(state, lender.runId).find((h) => h.entryPath === AGENT_ENTRY)!;
    const fd = fs.openSync(lender.archivePath, "r+");
    const one = Buffer.alloc(1);
    fs.readSync(fd, one, 0, 1, seg.start + Math.floor(seg.length / 2));
    one[0]! ^= 0xff;
    fs.writeSync(fd, one, 0, 1, seg.start + Math.floor(seg.length / 2));
    fs.closeSync(fd);
    // The lent bytes are hashed once, as they are copied: the altered ones fail that copy, and the archive is
    // written again with the bytes hashed before they are used (the agent DB's copy step is seen once per write).
    const steps: string[] = [];
    const after = await createBackup({ paths: state.paths, onProgress: (p) => (p.phase === "archive" && p.path ? steps.push(p.path) : undefined) });
    expect(steps.filter((p) => p === `${AGENT_ENTRY} (unchanged, reused)`), JSON.stringify(after.reuseRefused)).toHaveLength(2);
    expect(after.reusedDatabases).toEqual([agentDb(state)]);
    expect(after.reuseRefused).toEqual([expect.objectContaining({ path: agentDb(state), archivePath: lender.archivePath, mismatch: true, reason: expect.stringMatching(/do not hash to the body its manifest records/) })]);
    expect(after.warnings.filter((w) => w.includes(`Did not reuse the earlier snapshot of ${agentDb(state)}`))).toHaveLength(1);
    expect((await verifyBackup(after.archivePath)).ok).toBe(true);

    // A run whose archive is gone cannot lend anything either.
    for (const name of fs.readdirSync(state.paths.backupDir)) fs.rmSync(path.join(state.paths.backupDir, name));
    const none = await createBackup({ paths: state.paths });
    expect(none.reusedDatabases).toEqual([]);
    expect(none.reuseRefused.every((r) => r.reason === "the archive is no longer there" && !r.mismatch)).toBe(true);
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
