// Long paths round-trip: pax path records, 255-byte names, deep trees; archives written by GNU tar and Python's tarfile read back.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, snapshotTree, type TempState } from "../helpers/temp-state.js";

// GNU tar and Python read these archives back, so they are written as gzip (the zstd CLI may be absent).
const yes = async (): Promise<boolean> => true;
const NAME_255 = "n".repeat(251) + ".txt";

/** A node_modules-style tree: a 255-byte name 12 levels down (≈ 1,500-byte path), a multi-byte name, a long link. */
function seedLongPaths(state: TempState): string {
  const modules = path.join(state.stateDir, "workspace", "node_modules");
  let deep = modules;
  for (let i = 0; i < 12; i += 1) deep = path.join(deep, `@scope-${"x".repeat(100)}-${i}`);
  fs.mkdirSync(deep, { recursive: true });
  fs.writeFileSync(path.join(deep, NAME_255), "deep file\n");
  fs.writeFileSync(path.join(modules, `${"é".repeat(100)}.js`), "module.exports = 1;\n");
  fs.symlinkSync(`../${"t".repeat(180)}`, path.join(path.dirname(deep), "L".repeat(140)));
  return path.relative(state.stateDir, path.join(deep, NAME_255));
}

function run(cmd: string, args: string[], cwd?: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr}`);
}

/** Our archive, unpacked by GNU tar and packed again by another writer, manifest first. */
function repack(archive: string, maker: string, dir: string): string {
  const tree = path.join(dir, `tree-${maker}`);
  fs.mkdirSync(tree);
  run("tar", ["xzf", archive, "-C", tree]);
  const root = fs.readdirSync(tree)[0]!;
  const out = path.join(dir, `${maker}.tar.gz`);
  if (maker.startsWith("gnu-")) {
    run("tar", [`--format=${maker.slice(4)}`, "-czf", out, "-C", tree, `${root}/manifest.json`, `${root}/payload`]);
  } else {
    const format = maker === "python-pax" ? "PAX_FORMAT" : "GNU_FORMAT";
    const script = [
      "import sys, tarfile",
      `with tarfile.open(sys.argv[1], "w:gz", format=tarfile.${format}) as t:`,
      "    t.add(sys.argv[2] + '/manifest.json')",
      "    t.add(sys.argv[2] + '/payload')",
    ].join("\n");
    run("python3", ["-c", script, out, root], tree);
  }
  return out;
}

function listNames(archive: string): string[] {
  const r = spawnSync("tar", ["tzf", archive], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return r.stdout.split("\n").filter(Boolean);
}

describe("long paths", () => {
  it("create, verify and restore a state with pax paths, a 255-byte name, a deep tree and a long link", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const deepRel = seedLongPaths(state);
    expect(Buffer.byteLength(deepRel)).toBeGreaterThan(1400);

    const backup = await createBackup({ paths: state.paths, compression: "gzip" });
    expect(backup.verified).toBe(true);
    // GNU tar reads the same long names (pax records), so the archive is standard.
    expect(listNames(backup.archivePath)).toContain(`${backup.manifest.archiveRoot}/payload/state/${deepRel}`);
    const verified = await verifyBackup(backup.archivePath);
    expect(verified.problem).toBeUndefined();

    const target = path.join(makeTempDir(), "restored");
    await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, target, confirm: yes });
    const restored = snapshotTree(path.join(target, "state"));
    expect(restored[deepRel]).toMatchObject({ type: "file", size: 10 });
    const original = snapshotTree(state.stateDir);
    // Same names, types, bytes and link texts (modes come back private: 0700/0600).
    for (const rel of Object.keys(original).filter((k) => k.startsWith("workspace"))) expect({ ...restored[rel], mode: 0 }).toEqual({ ...original[rel], mode: 0 });
    expect(restored[deepRel]!.mode).toBe(0o600);
  });

  for (const maker of ["gnu-gnu", "gnu-posix", "python-pax", "python-gnu"]) {
    it(`reads and restores an archive written by ${maker.startsWith("gnu") ? "GNU tar" : "Python tarfile"} (${maker.split("-")[1]} format)`, async () => {
      const state = makeTempState("legacy-state");
      seedState(state);
      const deepRel = seedLongPaths(state);
      const backup = await createBackup({ paths: state.paths, compression: "gzip" });
      const dir = makeTempDir();
      const other = repack(backup.archivePath, maker, dir);
      // The long name really is in that writer's long form (GNU ././@LongLink or a pax record).
      const raw = spawnSync("sh", ["-c", `gzip -dc '${other}' | grep -a -c -e '@LongLink' -e ' path='`], { encoding: "utf8" });
      expect(Number(raw.stdout.trim())).toBeGreaterThan(0);

      const verified = await verifyBackup(other);
      expect(verified.problem).toBeUndefined();
      expect(verified.ok).toBe(true);
      const target = path.join(dir, "restored");
      await restoreBackup({ paths: state.paths, archivePath: other, target, confirm: yes });
      const restored = snapshotTree(path.join(target, "state"));
      const original = snapshotTree(state.stateDir);
      expect(restored[deepRel]).toEqual({ ...original[deepRel], mode: 0o600 });
      // Databases are snapshots (other bytes, same rows): every other file comes back byte for byte.
      const files = (tree: typeof original) =>
        Object.fromEntries(Object.entries(tree).filter(([k, e]) => e.type === "file" && !/\.sqlite(-wal|-shm)?$/.test(k)).map(([k, e]) => [k, e.sha256]));
      expect(files(restored)).toEqual(files(original));
    });
  }
});
