// Hostile archives (SPEC §11): each is refused by verify and by restore, and the live tree stays byte-for-byte unchanged.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { zstdSupported } from "../../src/backup/compression.js";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { seedState } from "../helpers/backup-state.js";
import { build, CASES, type Built } from "../helpers/hostile-archives.js";
import { writeRawArchive } from "../helpers/tar-tools.js";
import { fixturesDir, snapshotTree, type TempState } from "../helpers/temp-state.js";

describe("hostile archives", () => {
  let state: TempState;
  let built: Built;
  let dir: string;

  // One state and one valid archive for every case (temp-state.ts cleans its dirs after each test, so these are our own).
  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-hostile-"));
    const stateDir = path.join(root, ".openclaw");
    fs.cpSync(path.join(fixturesDir, "legacy-state"), stateDir, { recursive: true });
    const env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir };
    state = { root, stateDir, env, paths: resolveStatePaths({ env }) };
    seedState(state);
    // gzip whatever the Node's default: the cases flip gzip's own fields (a member's CRC-32, its trailer).
    const result = await createBackup({ paths: state.paths, compression: "gzip" });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-hostile-archives-"));
    const valid = path.join(dir, "valid.tar.gz");
    fs.renameSync(result.archivePath, valid);
    built = build(valid);
    return () => {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    };
  });

  it("the untouched archive verifies (control)", async () => {
    expect((await verifyBackup(built.valid)).ok).toBe(true);
    const rebuilt = path.join(dir, "rebuilt.tar.gz");
    writeRawArchive(rebuilt, built.entries);
    expect((await verifyBackup(rebuilt)).problem).toBeUndefined();
  });

  for (const [name, expected, make] of CASES) {
    it(`${name}: refused by verify and by restore, nothing written`, async () => {
      const hostile = path.join(dir, `${name.replace(/\W+/g, "-")}.tar.gz`);
      make(built, hostile);
      const verified = await verifyBackup(hostile);
      expect(verified.ok).toBe(false);
      expect(verified.problem).toMatch(expected);

      const before = snapshotTree(state.root);
      await expect(restoreBackup({ paths: state.paths, archivePath: hostile, confirm: async () => true })).rejects.toMatchObject({
        code: "archive_invalid",
        message: expect.stringMatching(expected),
      });
      expect(snapshotTree(state.root)).toEqual(before);
      const target = path.join(dir, `target-${name.replace(/\W+/g, "-")}`);
      await expect(restoreBackup({ paths: state.paths, archivePath: hostile, target, confirm: async () => true })).rejects.toMatchObject({ code: "archive_invalid" });
      expect(fs.existsSync(target)).toBe(false);
      expect(fs.existsSync("/tmp/openclaw-evil.txt")).toBe(false);
    });
  }
});

describe.runIf(zstdSupported())("hostile zstd archives", () => {
  // The end-of-archive marker is a raw zstd frame without a content checksum (compression.ts storedBlock): a flipped
  // byte there is refused by the tar layer instead.
  it("a flipped byte in the last (raw) frame: refused by verify and by restore, nothing written", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-hostile-zstd-"));
    try {
      const stateDir = path.join(root, ".openclaw");
      fs.cpSync(path.join(fixturesDir, "legacy-state"), stateDir, { recursive: true });
      const env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir };
      const zstate: TempState = { root, stateDir, env, paths: resolveStatePaths({ env }) };
      seedState(zstate);
      const made = await createBackup({ paths: zstate.paths, compression: "zstd" });
      const bytes = Buffer.from(fs.readFileSync(made.archivePath));
      bytes[bytes.length - 6] = bytes[bytes.length - 6]! ^ 0xff;
      const hostile = path.join(root, "flipped.tar.zst");
      fs.writeFileSync(hostile, bytes);
      const verified = await verifyBackup(hostile);
      expect(verified.ok).toBe(false);
      expect(verified.problem).toMatch(/zero block/);
      const before = snapshotTree(zstate.root);
      await expect(restoreBackup({ paths: zstate.paths, archivePath: hostile, confirm: async () => true })).rejects.toMatchObject({ code: "archive_invalid" });
      expect(snapshotTree(zstate.root)).toEqual(before);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
