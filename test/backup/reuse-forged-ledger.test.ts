// Property: an archive `backup create` calls verified passes `backup verify` and restores the databases it names, whatever backup_runs holds.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup, type CreateBackupResult } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { RACY_MARGIN_MS } from "../../src/backup/snapshot-reuse.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { prng } from "../../bench/legacy-corpus.mjs";
import { agentDb, seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, type TempState } from "../helpers/temp-state.js";

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, RACY_MARGIN_MS + 300));

function sqlite(db: string, sql: string): string {
  const run = spawnSync("sqlite3", [db, sql], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout.trim();
}

const q = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ENTRY = (agent: string): string => `payload/state/agents/${agent}/agent/openclaw-agent.sqlite`;
const dump = (db: string): string => sqlite(db, "SELECT session_id, seq, event_json FROM transcript_events ORDER BY session_id, seq");

interface Snap {
  sourcePath: string;
  fingerprint: unknown;
  segment: { start: number; length: number; sha256: string };
  file: Record<string, unknown> & { archivePath: string; size: number; sha256: string };
  database: Record<string, unknown>;
}
interface ReuseJson {
  compression: string;
  archiveSize: number;
  snapshots: Snap[];
}

function reuseOf(state: TempState, runId: string): ReuseJson {
  return (JSON.parse(sqlite(state.paths.globalDbPath, `SELECT manifest_json FROM backup_runs WHERE id = ${q(runId)}`)) as { reuse: ReuseJson }).reuse;
}

let forged = 0;
/** Inserts a completed run newer than any real one: the first row a reuse search looks at. */
function forgeRow(state: TempState, archivePath: string, reuse: ReuseJson): void {
  forged += 1;
  const json = JSON.stringify({ reuse });
  sqlite(state.paths.globalDbPath, `INSERT INTO backup_runs (id, created_at, archive_path, status, manifest_json) VALUES ('forged-${forged}', ${Date.now() + 1e9 + forged}, ${q(archivePath)}, 'completed', ${q(json)})`);
}

function dropForged(state: TempState): void {
  sqlite(state.paths.globalDbPath, "DELETE FROM backup_runs WHERE id LIKE 'forged-%'");
}

/** The property itself: verified ⇒ `backup verify` passes and a --target restore holds exactly the live agent databases' rows. */
async function holds(state: TempState, made: CreateBackupResult, agents: readonly string[]): Promise<void> {
  expect(made.verified).toBe(true);
  const verified = await verifyBackup(made.archivePath);
  expect(verified.ok, verified.problem).toBe(true);
  const target = path.join(makeTempDir(), "t");
  await restoreBackup({ paths: state.paths, archivePath: made.archivePath, target, confirm: async () => true });
  for (const d of made.manifest.databases) expect(fs.existsSync(path.join(target, d.archivePath.replace(/^payload\//, ""))), d.archivePath).toBe(true);
  for (const agent of agents) {
    const restored = path.join(target, ENTRY(agent).replace(/^payload\//, ""));
    expect(dump(restored), `agent ${agent}`).toBe(dump(agentDb(state, agent)));
  }
}

describe("snapshot reuse with a forged backup_runs ledger", () => {
  const agents = ["main", "ops"];
  let state: TempState;
  let other: TempState;
  let genuine: CreateBackupResult;
  let genuineReuse: ReuseJson;
  let foreign: CreateBackupResult;
  let foreignReuse: ReuseJson;

  /** Temp dirs go away after each test: every test builds its two installs and their genuine archives. */
  async function setup(): Promise<void> {
    state = makeTempState("legacy-state");
    // Different row counts per agent, so one agent's snapshot can never pass for the other's.
    seedState(state, { agents, sessions: 40 });
    sqlite(agentDb(state, "ops"), "DELETE FROM transcript_events WHERE session_id > 's-12'");
    // Another install with the same layout (its own agent "main").
    other = makeTempState("legacy-state");
    seedState(other, { sessions: 40 });
    await settle();
    genuine = await createBackup({ paths: state.paths });
    genuineReuse = reuseOf(state, genuine.runId);
    foreign = await createBackup({ paths: other.paths });
    foreignReuse = reuseOf(other, foreign.runId);
    expect(genuineReuse.snapshots.map((s) => s.file.archivePath)).toEqual(expect.arrayContaining([ENTRY("main"), ENTRY("ops")]));
  }

  const snap = (r: ReuseJson, agent: string): Snap => structuredClone(r.snapshots.find((s) => s.file.archivePath === ENTRY(agent))!);

  it("a self-consistent row lending agent ops's snapshot as agent main's is refused by the archive's own manifest", async () => {
    await setup();
    const ops = snap(genuineReuse, "ops");
    const main = snap(genuineReuse, "main");
    // The whole record of ops relabelled as main (the old attack): path, archive path, current fingerprint, sizes.
    const lie: Snap = { ...ops, sourcePath: main.sourcePath, fingerprint: main.fingerprint, file: { ...ops.file, archivePath: ENTRY("main") }, database: { ...ops.database, archivePath: ENTRY("main"), role: "agent", agentId: "main", sourcePath: main.sourcePath } };
    forgeRow(state, genuine.archivePath, { ...genuineReuse, snapshots: [lie] });
    const made = await createBackup({ paths: state.paths });
    expect(made.reuseRefused).toContainEqual(expect.objectContaining({ path: agentDb(state, "main"), archivePath: genuine.archivePath, mismatch: true }));
    await holds(state, made, agents);
    dropForged(state);
  }, 60_000);

  it("a size lie (byte range longer or shorter, archive size wrong) is refused or ignored, never trusted", async () => {
    await setup();
    for (const delta of [512, -1]) {
      const main = snap(genuineReuse, "main");
      main.segment.length += delta;
      forgeRow(state, genuine.archivePath, { ...genuineReuse, archiveSize: 12, snapshots: [main] });
      const made = await createBackup({ paths: state.paths });
      expect(made.reuseRefused).toContainEqual(expect.objectContaining({ path: agentDb(state, "main"), mismatch: true, reason: expect.stringMatching(/byte range is \d+ bytes long/) }));
      await holds(state, made, agents);
      dropForged(state);
    }
    // Only the recorded archive size lies: the size was never the proof, the bytes are; the copy is sound.
    forgeRow(state, genuine.archivePath, { ...genuineReuse, archiveSize: 1, snapshots: [snap(genuineReuse, "main")] });
    const made = await createBackup({ paths: state.paths });
    expect(made.reusedDatabases).toContain(agentDb(state, "main"));
    await holds(state, made, agents);
    dropForged(state);
  }, 90_000);

  it("a row with a wrong path (shifted range, a file that is no archive, a symlink, a FIFO) is refused", async () => {
    await setup();
    const main = snap(genuineReuse, "main");
    const shifted = { ...main, segment: { ...main.segment, start: main.segment.start + 7 } };
    const link = path.join(makeTempDir(), "link.tar.gz");
    fs.symlinkSync(genuine.archivePath, link);
    const fifo = path.join(makeTempDir(), "fifo.tar.gz");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const cases: Array<[string, Snap, RegExp]> = [
      [genuine.archivePath, shifted, /do not hash to the body/],
      [agentDb(state, "main"), main, /not a (gzip|zstd) archive/],
      [link, main, /not a regular file/],
      [fifo, main, /not a regular file/],
    ];
    for (const [archivePath, s, reason] of cases) {
      forgeRow(state, archivePath, { ...genuineReuse, snapshots: [s] });
      const made = await createBackup({ paths: state.paths });
      expect(made.reuseRefused).toContainEqual(expect.objectContaining({ archivePath, mismatch: true, reason: expect.stringMatching(reason) }));
      await holds(state, made, agents);
      dropForged(state);
    }
  }, 120_000);

  it("another install's genuine archive is refused: its manifest names another source", async () => {
    await setup();
    // Everything a ledger could say, copied from the other install's own (true) ledger row, with this install's path.
    const theirs = snap(foreignReuse, "main");
    forgeRow(state, foreign.archivePath, { ...foreignReuse, snapshots: [{ ...theirs, sourcePath: agentDb(state, "main") }] });
    const made = await createBackup({ paths: state.paths });
    expect(made.reuseRefused).toContainEqual(expect.objectContaining({ archivePath: foreign.archivePath, mismatch: true, reason: expect.stringMatching(/says that snapshot is of the agent main database .*, not of the agent main database/) }));
    await holds(state, made, agents);
    dropForged(state);
  }, 60_000);

  it("a row pointing at a tampered copy of a genuine archive is refused", async () => {
    await setup();
    const main = snap(genuineReuse, "main");
    const copy = path.join(makeTempDir(), path.basename(genuine.archivePath));
    const bytes = fs.readFileSync(genuine.archivePath);
    bytes[main.segment.start + main.segment.length - 3]! ^= 0x55;
    fs.writeFileSync(copy, bytes);
    forgeRow(state, copy, { ...genuineReuse, snapshots: [main] });
    const made = await createBackup({ paths: state.paths });
    expect(made.reuseRefused).toContainEqual(expect.objectContaining({ archivePath: copy, mismatch: true }));
    await holds(state, made, agents);
    dropForged(state);
  }, 60_000);

  it("random forged rows (seeded): whatever create calls verified verifies and restores the live databases", async () => {
    await setup();
    const rand = prng(Number(process.env.REUSE_FORGE_SEED ?? 22));
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const tampered = path.join(makeTempDir(), "tampered.tar.gz");
    const bytes = fs.readFileSync(genuine.archivePath);
    for (let i = 0; i < 8; i += 1) bytes[Math.floor(bytes.length / 2 + rand() * (bytes.length / 2 - 1))]! ^= 0xff;
    fs.writeFileSync(tampered, bytes);
    const archives = [genuine.archivePath, foreign.archivePath, tampered, path.join(makeTempDir(), "gone.tar.gz"), agentDb(state, "ops")];
    for (let round = 0; round < 3; round += 1) {
      for (let row = 0; row < 4; row += 1) {
        const snapshots = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
          const source = pick([genuineReuse, foreignReuse]);
          const s = snap(source, pick(source === genuineReuse ? ["main", "ops"] : ["main"]));
          const entry = pick([ENTRY("main"), ENTRY("ops")]);
          const shift = pick([0, 0, 1, -512, 512]);
          return { ...s, sourcePath: pick([agentDb(state, "main"), agentDb(state, "ops")]), file: { ...s.file, archivePath: entry }, segment: { ...s.segment, start: Math.max(0, s.segment.start + shift), length: Math.max(1, s.segment.length + pick([0, 0, 3, -7])) } };
        });
        forgeRow(state, pick(archives), { compression: genuineReuse.compression, archiveSize: Math.floor(rand() * 1e6), snapshots });
      }
      const made = await createBackup({ paths: state.paths });
      await holds(state, made, agents);
      dropForged(state);
    }
  }, 240_000);
});
