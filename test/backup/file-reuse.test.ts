// Unchanged plain files: the last verified archive's compressed body is copied unread, only when its own manifest and the bytes vouch for it.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { PLAIN_SEGMENT_MIN } from "../../src/backup/file-reuse.js";
import { readArchiveManifest } from "../../src/backup/read-archive.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { RACY_MARGIN_MS } from "../../src/backup/snapshot-reuse.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, type TempState } from "../helpers/temp-state.js";

/** Written by the build before plain files had bodies of their own (b14ce81): two 31 KB files, no body records. */
const PRE_FILE_BODIES = path.join(import.meta.dirname, "..", "fixtures", "backup", "pre-file-bodies.tar.gz");

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, RACY_MARGIN_MS + 300));

/** Compressible text of about `bytes` bytes (lines of JSON like a transcript), different per seed. */
function text(seed: string, bytes: number): string {
  const lines: string[] = [];
  for (let n = 0, i = 0; n < bytes; i += 1) {
    const line = JSON.stringify({ seed, i, id: crypto.createHash("sha1").update(`${seed}${i}`).digest("hex"), body: "lorem ipsum ".repeat(1 + (i % 7)) });
    lines.push(line);
    n += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

const NAMES = ["a", "b", "c", "d"] as const;
const rel = (name: string): string => `notes/${name}.txt`;
const entry = (name: string): string => `payload/state/${rel(name)}`;

function seedFiles(state: TempState): void {
  seedState(state, { sessions: 5 });
  fs.mkdirSync(path.join(state.paths.stateDir, "notes"), { recursive: true });
  for (const name of NAMES) fs.writeFileSync(path.join(state.paths.stateDir, rel(name)), text(name, 3 * PLAIN_SEGMENT_MIN));
  // Below the segment size: always read, shares blocks with its neighbours.
  fs.writeFileSync(path.join(state.paths.stateDir, rel("small")), text("small", 2000));
}

function payloadStartOf(state: TempState, runId: string): number {
  const run = spawnSync("sqlite3", [state.paths.globalDbPath, `SELECT json_extract(manifest_json, '$.reuse.payloadStart') FROM backup_runs WHERE id = '${runId}'`], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  return Number(run.stdout.trim());
}

async function restoredMatches(state: TempState, archivePath: string): Promise<void> {
  const target = path.join(makeTempDir(), "t");
  await restoreBackup({ paths: state.paths, archivePath, target, confirm: async () => true });
  for (const name of [...NAMES, "small"]) {
    expect(fs.readFileSync(path.join(target, "state", rel(name))).equals(fs.readFileSync(path.join(state.paths.stateDir, rel(name)))), name).toBe(true);
  }
}

describe("createBackup reuse of unchanged plain files", () => {
  it("copies unchanged files unread; a changed size, mtime or inode is read afresh; the archive verifies and restores byte-identical", async () => {
    const state = makeTempState("legacy-state");
    seedFiles(state);
    await settle();
    const first = await createBackup({ paths: state.paths });
    expect(first.reusedFiles).toBe(0);
    const own = await readArchiveManifest(first.archivePath);
    const recorded = own.files.find((f) => f.archivePath === entry("a"))!;
    expect(recorded.body).toEqual({ compression: first.compression, offset: expect.any(Number), length: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(recorded.sourceState?.size).toBe(String(recorded.size));
    expect(own.files.find((f) => f.archivePath === entry("small"))!.body).toBeUndefined();

    const file = (name: string): string => path.join(state.paths.stateDir, rel(name));
    // b: another size; c: same bytes, another mtime; d: same bytes and mtime, another inode (replaced by a rename).
    fs.appendFileSync(file("b"), "more\n");
    const cTime = fs.statSync(file("c")).mtime;
    fs.utimesSync(file("c"), cTime, new Date(cTime.getTime() - 60_000));
    const dStat = fs.statSync(file("d"));
    fs.copyFileSync(file("d"), `${file("d")}.new`);
    fs.utimesSync(`${file("d")}.new`, dStat.atime, dStat.mtime);
    fs.renameSync(`${file("d")}.new`, file("d"));

    const second = await createBackup({ paths: state.paths });
    expect(second.reusedFiles).toBe(1);
    expect(second.warnings.filter((w) => w.includes("reuse"))).toEqual([]);
    const secondManifest = await readArchiveManifest(second.archivePath);
    const again = secondManifest.files.find((f) => f.archivePath === entry("a"))!;
    // Re-recorded where it landed in this archive: the next run copies it from here.
    expect({ ...again, body: { ...again.body, offset: 0 } }).toEqual({ ...recorded, body: { ...recorded.body, offset: 0 } });
    for (const name of ["b", "c", "d"]) {
      const f = secondManifest.files.find((x) => x.archivePath === entry(name))!;
      expect(f.sha256).toBe(crypto.createHash("sha256").update(fs.readFileSync(file(name))).digest("hex"));
      // Written (or changed) within the racy margin of this read: no stamp, so never copied by the next run.
      expect(f.sourceState).toBeUndefined();
    }
    const verified = await verifyBackup(second.archivePath);
    expect(verified.ok, verified.problem).toBe(true);
    await restoredMatches(state, second.archivePath);

    // The next run copies from the newest archive (a) and reads the racy ones afresh again.
    await settle();
    const third = await createBackup({ paths: state.paths });
    expect(third.reusedFiles).toBe(1);
    const fourth = await createBackup({ paths: state.paths });
    expect(fourth.reusedFiles).toBe(4);
    expect((await verifyBackup(fourth.archivePath)).ok).toBe(true);
    await restoredMatches(state, fourth.archivePath);
  });

  it("a file written just before the read is racy: no stamp recorded, read afresh next time", async () => {
    const state = makeTempState("legacy-state");
    seedFiles(state);
    const first = await createBackup({ paths: state.paths });
    const own = await readArchiveManifest(first.archivePath);
    for (const name of NAMES) {
      const f = own.files.find((x) => x.archivePath === entry(name))!;
      expect(f.body).toBeUndefined();
      expect(f.sourceState).toBeUndefined();
    }
    await settle();
    const second = await createBackup({ paths: state.paths });
    expect(second.reusedFiles).toBe(0);
  });

  it("an earlier archive whose body bytes were altered: the file is read afresh, named in a warning, and the new archive is valid", async () => {
    const state = makeTempState("legacy-state");
    seedFiles(state);
    // Incompressible bytes ahead of the altered body (the walk is sorted): reading the manifest decodes ~1 MiB past
    // it, and a gzip data error there would hide the manifest itself (then nothing at all would be reused).
    fs.writeFileSync(path.join(state.paths.stateDir, "notes", "0-filler.bin"), crypto.randomBytes(3 * 1024 * 1024));
    await settle();
    const first = await createBackup({ paths: state.paths });
    const body = (await readArchiveManifest(first.archivePath)).files.find((f) => f.archivePath === entry("b"))!.body!;
    const fd = fs.openSync(first.archivePath, "r+");
    const at = payloadStartOf(state, first.runId) + body.offset + Math.floor(body.length / 2);
    const byte = Buffer.alloc(1);
    fs.readSync(fd, byte, 0, 1, at);
    fs.writeSync(fd, Buffer.from([byte[0]! ^ 0xff]), 0, 1, at);
    fs.closeSync(fd);

    // The lent bodies are hashed once, by the new archive's verify: b's fails it, and the archive is written again
    // with every lent body hashed before it is copied (a's progress step is seen once per write).
    const steps: string[] = [];
    const second = await createBackup({ paths: state.paths, onProgress: (p) => (p.phase === "archive" && p.path ? steps.push(p.path) : undefined) });
    expect(second.verified).toBe(true);
    expect(steps.filter((p) => p.endsWith(rel("a")))).toHaveLength(2);
    expect(second.reusedFiles, second.warnings.join("; ")).toBe(NAMES.length);
    expect(second.warnings.filter((w) => w.includes(rel("b")) && w.includes("do not hash"))).toHaveLength(1);
    const verified = await verifyBackup(second.archivePath);
    expect(verified.ok, verified.problem).toBe(true);
    await restoredMatches(state, second.archivePath);
    // The altered archive itself fails a full verify: nothing of it was trusted unchecked.
    expect((await verifyBackup(first.archivePath)).ok).toBe(false);

    // Without a verify to leave the check to, every lent body is hashed as it is read: b's (altered in the second
    // archive, the one that lends now) is read afresh, in one write.
    const again = (await readArchiveManifest(second.archivePath)).files.find((f) => f.archivePath === entry("b"))!.body!;
    const fd2 = fs.openSync(second.archivePath, "r+");
    const at2 = payloadStartOf(state, second.runId) + again.offset + Math.floor(again.length / 2);
    fs.readSync(fd2, byte, 0, 1, at2);
    fs.writeSync(fd2, Buffer.from([byte[0]! ^ 0xff]), 0, 1, at2);
    fs.closeSync(fd2);
    steps.length = 0;
    const third = await createBackup({ paths: state.paths, verify: false, onProgress: (p) => (p.phase === "archive" && p.path ? steps.push(p.path) : undefined) });
    expect(steps.filter((p) => p.endsWith(rel("a")))).toHaveLength(1);
    expect(third.warnings.some((w) => w.includes(rel("b")) && w.includes("do not hash")), third.warnings.join("; ")).toBe(true);
    expect(third.reusedFiles).toBe(NAMES.length);
    const checked = await verifyBackup(third.archivePath);
    expect(checked.ok, checked.problem).toBe(true);
    await restoredMatches(state, third.archivePath);
  });

  it("an archive from before file bodies still verifies and restores byte-identical", async () => {
    const manifest = await readArchiveManifest(PRE_FILE_BODIES);
    const plain = manifest.files.filter((f) => f.size >= PLAIN_SEGMENT_MIN && !manifest.databases.some((d) => d.archivePath === f.archivePath));
    expect(plain.length).toBe(2);
    expect(plain.every((f) => f.body === undefined && f.sourceState === undefined)).toBe(true);
    const verified = await verifyBackup(PRE_FILE_BODIES);
    expect(verified.ok, verified.problem).toBe(true);
    const state = makeTempState("legacy-state");
    const target = path.join(makeTempDir(), "t");
    await restoreBackup({ paths: state.paths, archivePath: PRE_FILE_BODIES, target, confirm: async () => true });
    for (const f of plain) {
      const restored = fs.readFileSync(path.join(target, f.archivePath.replace(/^payload\//, "")));
      expect(crypto.createHash("sha256").update(restored).digest("hex")).toBe(f.sha256);
    }
  });

  it("a ledger row from before file bodies (no payload start) lends no plain file; the run reads them and is valid", async () => {
    const state = makeTempState("legacy-state");
    seedFiles(state);
    await settle();
    const first = await createBackup({ paths: state.paths });
    const run = spawnSync("sqlite3", [state.paths.globalDbPath, `UPDATE backup_runs SET manifest_json = json_remove(manifest_json, '$.reuse.payloadStart') WHERE id = '${first.runId}'`], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const second = await createBackup({ paths: state.paths });
    expect(second.reusedFiles).toBe(0);
    expect(second.reusedDatabases.length).toBeGreaterThan(0);
    expect((await verifyBackup(second.archivePath)).ok).toBe(true);
    // Its own row says where its payload starts again: the next run copies from it.
    expect((await createBackup({ paths: state.paths })).reusedFiles).toBe(NAMES.length);
  });

  it("when the newest archive is gone, the newest one still there lends the files unchanged since it", async () => {
    const state = makeTempState("legacy-state");
    seedFiles(state);
    await settle();
    const first = await createBackup({ paths: state.paths });
    const second = await createBackup({ paths: state.paths });
    expect(second.reusedFiles).toBe(NAMES.length);
    fs.rmSync(second.archivePath);
    const third = await createBackup({ paths: state.paths });
    expect(third.reusedFiles).toBe(NAMES.length);
    expect((await verifyBackup(third.archivePath)).ok).toBe(true);
    await restoredMatches(state, third.archivePath);
    expect(fs.existsSync(first.archivePath)).toBe(true);
  });

  it("with --no-reuse, or across compressions, nothing is copied", async () => {
    const state = makeTempState("legacy-state");
    seedFiles(state);
    await settle();
    await createBackup({ paths: state.paths, compression: "gzip" });
    expect((await createBackup({ paths: state.paths, compression: "gzip", reuse: false })).reusedFiles).toBe(0);
    expect((await createBackup({ paths: state.paths, compression: "none" })).reusedFiles).toBe(0);
  });
});
