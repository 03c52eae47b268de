// createBackup on real files: archive layout, manifest, snapshots, sidecars, modes, output rules, dry-run, backup_runs.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { OperationError, UsageError } from "../../src/core/errors.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { agentDb, countRows, seedState } from "../helpers/backup-state.js";
import { manifestOf, readRawEntries } from "../helpers/tar-tools.js";
import { makeTempDir, makeTempState, modeOf, snapshotTree } from "../helpers/temp-state.js";

function sha256(buf: Buffer): string {
  return crypto.createHash("sha256").update(buf).digest("hex");
}

describe("createBackup", () => {
  it("writes a verified 0600 archive in the default backup dir (0700) with a complete manifest", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const result = await createBackup({ paths: state.paths });
    expect(result.status).toBe("completed");
    expect(result.verified).toBe(true);
    expect(path.dirname(result.archivePath)).toBe(`${state.stateDir}-backups`);
    expect(path.basename(result.archivePath)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z-openclaw-backup\.tar\.(gz|zst)$/);
    expect(modeOf(result.archivePath)).toBe(0o600);
    expect(modeOf(path.dirname(result.archivePath))).toBe(0o700);
    expect(fs.readdirSync(path.dirname(result.archivePath))).toEqual([path.basename(result.archivePath)]);
    expect(result.sizeBytes).toBe(fs.statSync(result.archivePath).size);

    const m = result.manifest;
    expect(m).toMatchObject({ schemaVersion: 1, format: "openclaw-state-backup", tool: { name: "openclaw-state" }, nodeVersion: process.version });
    expect(m.paths.stateDir).toBe(state.stateDir);
    expect(m.assets).toEqual([{ kind: "state", sourcePath: state.stateDir, archivePath: "payload/state", type: "dir", excluded: [] }]);
    const global = m.databases.find((d) => d.role === "global")!;
    const agent = m.databases.find((d) => d.role === "agent")!;
    expect(agent).toMatchObject({ agentId: "main", archivePath: "payload/state/agents/main/agent/openclaw-agent.sqlite", integrity: "ok", schemaVersion: 1 });
    expect(agent.rowCounts.sessions).toBe(20);
    expect(agent.rowCounts.transcript_events).toBe(100);
    expect(global.rowCounts.agent_databases).toBe(1);
    expect(global.pageCount * global.pageSize).toBe(global.sizeBytes);
    // A link within the tree is recorded; one leading out of it is not archived (restore would refuse it).
    expect(m.symlinks).toEqual([{ archivePath: "payload/state/readme-link", target: "notes/readme.md" }]);
    expect(m.skipped).toContainEqual({ kind: "symlink", path: path.join(state.stateDir, "escape-link"), reason: expect.stringMatching(/^link leaves the state tree \(its target "\/etc" is absolute\)/) });
    expect(m.files.find((f) => f.archivePath === "payload/state/scripts/run.sh")!.mode).toBe(0o700);
    expect(m.files.find((f) => f.archivePath === "payload/state/notes/readme.md")!.mode).toBe(0o600);
    expect(m.directories.map((d) => d.archivePath)).toContain("payload/state/empty");
  });

  it("archives no SQLite sidecar, and every payload file's sha256 and size are in the manifest", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    // Leave a live-looking WAL beside the agent DB and a stray journal file.
    fs.writeFileSync(`${agentDb(state)}-wal`, Buffer.alloc(4096, 1));
    fs.writeFileSync(`${agentDb(state)}-shm`, Buffer.alloc(4096, 2));
    fs.writeFileSync(`${state.paths.globalDbPath}-journal`, Buffer.alloc(512, 3));
    const result = await createBackup({ paths: state.paths, verify: false });
    const entries = readRawEntries(result.archivePath);
    expect(entries[0]!.path).toBe(`${result.manifest.archiveRoot}/manifest.json`);
    expect(entries.filter((e) => /-(wal|shm|journal)$/.test(e.path))).toEqual([]);
    expect(result.manifest.skipped.filter((s) => s.kind === "sidecar").map((s) => path.basename(s.path)).sort()).toEqual([
      "openclaw-agent.sqlite-shm",
      "openclaw-agent.sqlite-wal",
      "openclaw.sqlite-journal",
    ]);
    const manifest = manifestOf(entries);
    const listed = new Map(manifest.files.map((f) => [f.archivePath, f]));
    const payload = entries.filter((e) => e.type === "File" && !e.path.endsWith("/manifest.json"));
    expect(payload.length).toBe(listed.size);
    for (const e of payload) {
      const rel = e.path.slice(manifest.archiveRoot.length + 1);
      expect(listed.get(rel), rel).toMatchObject({ size: e.data.length, sha256: sha256(e.data) });
    }
    expect(entries.some((e) => e.type === "SymbolicLink")).toBe(false);
  });

  it("GNU tar lists the archive and extracts files with the manifest's sha256", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const result = await createBackup({ paths: state.paths, compression: "gzip" });
    const list = spawnSync("tar", ["-tzf", result.archivePath], { encoding: "utf8" });
    expect(list.status).toBe(0);
    const root = result.manifest.archiveRoot;
    const names = list.stdout.trim().split("\n");
    expect(names[0]).toBe(`${root}/manifest.json`);
    expect(names).toContain(`${root}/payload/state/state/openclaw.sqlite`);
    const out = makeTempDir();
    expect(spawnSync("tar", ["-xzf", result.archivePath, "-C", out]).status).toBe(0);
    for (const f of result.manifest.files) {
      expect(sha256(fs.readFileSync(path.join(out, root, f.archivePath))), f.archivePath).toBe(f.sha256);
    }
    const snapshot = path.join(out, root, "payload/state/agents/main/agent/openclaw-agent.sqlite");
    const sqlite = spawnSync("sqlite3", [snapshot, "PRAGMA integrity_check; SELECT count(*) FROM transcript_events;"], { encoding: "utf8" });
    expect(sqlite.stdout.trim().split("\n")).toEqual(["ok", "100"]);
  });

  it("never overwrites: an existing --output file is refused and left as it was", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const out = path.join(makeTempDir(), "mine.tar.gz");
    fs.writeFileSync(out, "precious");
    await expect(createBackup({ paths: state.paths, output: out })).rejects.toMatchObject({ code: "archive_exists" });
    expect(fs.readFileSync(out, "utf8")).toBe("precious");
    expect(fs.readdirSync(path.dirname(out))).toEqual(["mine.tar.gz"]);
  });

  it("--output accepts a file name or a directory ending with '/', and names the archive root after the file", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const dir = makeTempDir();
    const named = await createBackup({ paths: state.paths, output: path.join(dir, "nightly.tar.gz"), verify: false });
    expect(named.archivePath).toBe(path.join(dir, "nightly.tar.gz"));
    expect(named.manifest.archiveRoot).toBe("nightly");
    const inDir = await createBackup({ paths: state.paths, output: `${path.join(dir, "new-sub")}/`, verify: false });
    expect(path.dirname(inDir.archivePath)).toBe(path.join(dir, "new-sub"));
    expect(modeOf(path.join(dir, "new-sub"))).toBe(0o700);
    // A new path without .tar.gz/.tgz is a directory too (what `--backup-dir <dir>` callers pass).
    const bare = await createBackup({ paths: state.paths, output: path.join(dir, "bare"), verify: false });
    expect(path.dirname(bare.archivePath)).toBe(path.join(dir, "bare"));
  });

  it("refuses an output inside the state dir, <stateDir>/backups included (reset --scope full would delete it)", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    // Only the failed run's backup_runs row is written.
    const tree = (): Record<string, unknown> => {
      const t = snapshotTree(state.root);
      delete t[".openclaw/state/openclaw.sqlite"];
      return t;
    };
    const before = tree();
    await expect(createBackup({ paths: state.paths, output: path.join(state.stateDir, "notes", "x.tar.gz") })).rejects.toBeInstanceOf(UsageError);
    await expect(createBackup({ paths: state.paths, output: path.join(state.stateDir, "notes", "x.tar.gz"), dryRun: true })).rejects.toMatchObject({ code: "output_inside_state" });
    expect(tree()).toEqual(before);
    expect(countRows(state.paths.globalDbPath, "backup_runs", "global")).toBe(1);

    await expect(createBackup({ paths: state.paths, output: `${path.join(state.stateDir, "backups")}/` })).rejects.toMatchObject({ code: "output_inside_state", exitCode: 2 });
    expect(fs.existsSync(path.join(state.stateDir, "backups"))).toBe(false);
    expect(tree()).toEqual(before);

    // OPENCLAW_BACKUP_DIR inside the state dir is the one exception (reset never removes it); it is left out of the
    // state asset.
    const viaEnv = { ...state.paths, backupDir: path.join(state.stateDir, "backups") };
    const first = await createBackup({ paths: viaEnv });
    const second = await createBackup({ paths: viaEnv, output: `${viaEnv.backupDir}/` });
    expect(second.manifest.assets[0]!.excluded).toEqual(["backups"]);
    expect(second.manifest.files.some((f) => f.archivePath.includes("backups"))).toBe(false);
    expect(fs.readdirSync(viaEnv.backupDir).sort()).toEqual([path.basename(first.archivePath), path.basename(second.archivePath)].sort());
  });

  it("--dry-run plans the same archive and writes nothing", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const before = snapshotTree(state.root);
    const dry = await createBackup({ paths: state.paths, dryRun: true });
    expect(dry.status).toBe("dry-run");
    expect(dry.sizeBytes).toBe(0);
    expect(snapshotTree(state.root)).toEqual(before);
    expect(fs.existsSync(`${state.stateDir}-backups`)).toBe(false);
    expect(dry.manifest.databases.map((d) => [d.role, d.integrity, d.rowCounts.sessions ?? null])).toEqual(
      expect.arrayContaining([["agent", "not-checked", 20]]),
    );
    const real = await createBackup({ paths: state.paths, verify: false });
    expect(dry.manifest.files.map((f) => f.archivePath)).toEqual(real.manifest.files.map((f) => f.archivePath));
    expect(dry.manifest.directories).toEqual(real.manifest.directories);
    expect(dry.manifest.symlinks).toEqual(real.manifest.symlinks);
  });

  it("--dry-run fails where the real run would (corrupt database), and so does the real run, leaving no file", async () => {
    const state = makeTempState("legacy-state");
    seedState(state, { sessions: 400 });
    const file = agentDb(state);
    const fd = fs.openSync(file, "r+");
    // Scribble over a b-tree page in the middle of the file: the header stays valid, the content does not.
    fs.writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 8 * 4096);
    fs.closeSync(fd);
    await expect(createBackup({ paths: state.paths, dryRun: true })).rejects.toBeInstanceOf(OperationError);
    await expect(createBackup({ paths: state.paths })).rejects.toBeInstanceOf(OperationError);
    expect(fs.readdirSync(`${state.stateDir}-backups`)).toEqual([]);
  });

  it("records completed and failed runs in backup_runs", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const ok = await createBackup({ paths: state.paths });
    expect(ok.recorded).toBe(true);
    const out = path.join(makeTempDir(), "exists.tar.gz");
    fs.writeFileSync(out, "x");
    // Refused before anything is written, but still a failed run.
    await expect(createBackup({ paths: state.paths, output: out })).rejects.toMatchObject({ code: "archive_exists" });
    fs.writeFileSync(path.join(state.paths.agentsDir, "main", "agent", "broken.sqlite"), Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(2048, 7)]));
    await expect(createBackup({ paths: state.paths })).rejects.toMatchObject({ code: "snapshot_failed" });
    const db = openGlobalDatabase(state.paths, { mode: "read" });
    try {
      const rows = db.all(db.q.selectFrom("backup_runs").selectAll().orderBy("created_at"));
      expect(rows.map((r) => r.status)).toEqual(["completed", "failed", "failed"]);
      expect(rows[0]!.archive_path).toBe(ok.archivePath);
      expect(JSON.parse(rows[0]!.manifest_json!)).toMatchObject({ runId: ok.runId, totals: { databases: 2 } });
      expect(rows[1]!.archive_path).toBeNull();
      expect(JSON.parse(rows[1]!.manifest_json!).error.code).toBe("archive_exists");
      expect(JSON.parse(rows[2]!.manifest_json!).error.code).toBe("snapshot_failed");
    } finally {
      db.close();
    }
  });

  it("without a global DB the run is not recorded, nothing is created in the state dir, and it says so", async () => {
    const state = makeTempState("legacy-state");
    const before = snapshotTree(state.stateDir);
    const result = await createBackup({ paths: state.paths });
    expect(result.recorded).toBe(false);
    expect(result.warnings.join("\n")).toMatch(/No global database .* not recorded in backup_runs/);
    expect(snapshotTree(state.stateDir)).toEqual(before);
    expect((await verifyBackup(result.archivePath)).ok).toBe(true);
  });

  it("fails clearly when there is nothing to back up", async () => {
    const state = makeTempState();
    await expect(createBackup({ paths: state.paths })).rejects.toMatchObject({ code: "not_found" });
    await expect(createBackup({ paths: state.paths, onlyConfig: true })).rejects.toThrow(/config file .* does not exist/);
    expect(fs.readdirSync(state.root)).toEqual([]);
  });

  it("--only-config archives just the config file", async () => {
    const state = makeTempState("legacy-state");
    const result = await createBackup({ paths: state.paths, onlyConfig: true });
    expect(result.manifest.assets.map((a) => a.kind)).toEqual(["config"]);
    expect(result.manifest.files.map((f) => f.archivePath)).toEqual(["payload/config/openclaw.json"]);
  });

  it("skips FIFOs and unarchivable names with a note and warns about a file that vanishes mid-run", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    expect(spawnSync("mkfifo", [path.join(state.stateDir, "pipe")]).status).toBe(0);
    fs.writeFileSync(path.join(state.stateDir, "bad\nname"), "x");
    const doomed = path.join(state.stateDir, "notes", "zz-vanishes.txt");
    fs.writeFileSync(doomed, "bye");
    let removed = false;
    const result = await createBackup({
      paths: state.paths,
      onProgress: (e) => {
        if (!removed && e.phase === "archive") {
          fs.rmSync(doomed);
          removed = true;
        }
      },
    });
    expect(result.manifest.skipped).toContainEqual({ kind: "special", path: path.join(state.stateDir, "pipe"), reason: "FIFO (not archivable)" });
    expect(result.manifest.skipped).toContainEqual({ kind: "file", path: path.join(state.stateDir, "bad\nname"), reason: "name contains a line break (not archivable)" });
    expect(result.warnings.join("\n")).toMatch(/zz-vanishes\.txt vanished before it was archived/);
    expect(result.manifest.files.some((f) => f.archivePath.endsWith("zz-vanishes.txt"))).toBe(false);
    expect(result.verified).toBe(true);
  });

  it("leaves every live file untouched except the backup_runs row in the global DB", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const withoutGlobal = (): Record<string, unknown> => {
      const tree = snapshotTree(state.stateDir);
      delete tree["state/openclaw.sqlite"];
      return tree;
    };
    const before = withoutGlobal();
    const result = await createBackup({ paths: state.paths });
    expect(withoutGlobal()).toEqual(before);
    expect(fs.readdirSync(path.join(state.stateDir, "state"))).toEqual(["openclaw.sqlite"]);
    expect(countRows(agentDb(state), "sessions")).toBe(20);
    expect(result.manifest.databases.find((d) => d.role === "agent")!.rowCounts.sessions).toBe(20);
  });
});
