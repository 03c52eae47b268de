// The manifest's optional reuse fields (`body`, `sourceState`): kept when well formed, dropped when not, absent in older archives.
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { fitManifest, serializeManifest, validateManifest } from "../../src/backup/manifest.js";
import type { BackupManifest } from "../../src/backup/types.js";
import { RACY_MARGIN_MS } from "../../src/backup/snapshot-reuse.js";
import { agentDb, seedState } from "../helpers/backup-state.js";
import { makeTempState } from "../helpers/temp-state.js";

describe("manifest reuse fields", () => {
  it("round-trips body and sourceState, reads a manifest without them (earlier versions), and drops malformed ones", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    await new Promise((r) => setTimeout(r, RACY_MARGIN_MS + 300));
    const made = await createBackup({ paths: state.paths });
    const stored = JSON.parse(serializeManifest(made.manifest).toString("utf8")) as { databases: Array<Record<string, unknown>> };
    const agentIndex = stored.databases.findIndex((d) => d.sourcePath === agentDb(state));
    const agent = stored.databases[agentIndex]!;
    expect(agent.body).toBeDefined();
    expect(agent.sourceState).toBeDefined();
    expect(validateManifest(structuredClone(stored)).databases[agentIndex]).toEqual(made.manifest.databases[agentIndex]);

    // An earlier version's manifest: no reuse fields, still valid (and nothing can be reused from it).
    const older = structuredClone(stored);
    for (const d of older.databases) {
      delete d.body;
      delete d.sourceState;
    }
    const read = validateManifest(older).databases[agentIndex]!;
    expect(read.body).toBeUndefined();
    expect(read.sourceState).toBeUndefined();

    // Hostile values are dropped, not trusted and not fatal.
    const hostile = structuredClone(stored);
    hostile.databases[agentIndex] = {
      ...agent,
      body: { compression: "lz4", length: -1, sha256: "zz" },
      sourceState: { files: [{ dev: "1; rm", ino: "2", size: "3", mtimeNs: "4", ctimeNs: "5" }, null, null], header: { changeCounter: 1, schemaVersion: 1 } },
    };
    const dropped = validateManifest(hostile).databases[agentIndex]!;
    expect(dropped.body).toBeUndefined();
    expect(dropped.sourceState).toBeUndefined();
    const shortFiles = structuredClone(stored);
    shortFiles.databases[agentIndex] = { ...agent, sourceState: { files: [null], header: null } };
    expect(validateManifest(shortFiles).databases[agentIndex]!.sourceState).toBeUndefined();
  });

  it("a plain file's body and stamp are kept only together and well formed", () => {
    const file = { archivePath: "payload/state/notes/a.txt", size: 20000, sha256: "a".repeat(64), mode: 0o600, mtimeMs: 1 };
    const body = { compression: "gzip", offset: 1024, length: 5000, sha256: "b".repeat(64) };
    const stamp = { dev: "1", ino: "2", size: "20000", mtimeNs: "3", ctimeNs: "4" };
    const read = (f: Record<string, unknown>) => {
      const m = { schemaVersion: 1, format: "openclaw-state-backup", runId: "r", createdAt: "t", archiveRoot: "root", paths: { homeDir: "/h", stateDir: "/h/s", configPath: "/h/c.json", credentialsDir: "/h/cr", backupDir: "/h/b" }, assets: [{ kind: "state", type: "dir", sourcePath: "/h/s", archivePath: "payload/state", excluded: [] }], skipped: [], directories: [{ archivePath: "payload/state" }], files: [f], symlinks: [], databases: [], totals: { files: 1, bytes: f.size, databases: 0, directories: 1, symlinks: 0 } };
      return validateManifest(m).files[0]!;
    };
    expect(read({ ...file, body, sourceState: stamp })).toEqual({ ...file, body, sourceState: stamp });
    // An earlier version's file entry, and malformed or half-present fields: read as a file without a body.
    expect(read(file)).toEqual(file);
    expect(read({ ...file, body })).toEqual(file);
    expect(read({ ...file, body: { ...body, offset: -1 }, sourceState: stamp })).toEqual(file);
    expect(read({ ...file, body: { ...body, offset: "1" }, sourceState: stamp })).toEqual(file);
    expect(read({ ...file, body, sourceState: { ...stamp, ino: "x" } })).toEqual(file);
  });

  it("a manifest the plain files' reuse records would push past the reader's limit is stored without them", () => {
    const stamp = { dev: "1", ino: "2", size: "20000", mtimeNs: "3", ctimeNs: "4" };
    const files = Array.from({ length: 50 }, (_, i) => ({ archivePath: `payload/state/f${i}`, size: 20000, sha256: "a".repeat(64), mode: 0o600, mtimeMs: 1, body: { compression: "gzip" as const, offset: i * 100, length: 100, sha256: "b".repeat(64) }, sourceState: stamp }));
    const manifest = { schemaVersion: 1, format: "openclaw-state-backup", runId: "r", createdAt: "t", archiveRoot: "root", paths: { homeDir: "/h", stateDir: "/h/s", configPath: "/h/c.json", credentialsDir: "/h/cr", backupDir: "/h/b" }, assets: [{ kind: "state", type: "dir", sourcePath: "/h/s", archivePath: "payload/state", excluded: [] }], skipped: [], directories: [{ archivePath: "payload/state" }], files, symlinks: [], databases: [], totals: { files: 50, bytes: 50 * 20000, databases: 0, directories: 1, symlinks: 0 } } as unknown as BackupManifest;
    const full = serializeManifest(manifest);
    // Room for it all: stored as it is.
    expect(fitManifest(manifest, full.length).bytes.equals(full)).toBe(true);
    // One byte short: the reuse records go, every file stays, and what is stored is what is returned.
    const fitted = fitManifest(manifest, full.length - 1);
    expect(fitted.bytes.length).toBeLessThan(full.length - 1);
    expect(fitted.manifest.files).toHaveLength(50);
    expect(fitted.manifest.files.every((f) => f.body === undefined && f.sourceState === undefined)).toBe(true);
    expect(fitted.bytes.equals(serializeManifest(fitted.manifest))).toBe(true);
    expect(validateManifest(JSON.parse(fitted.bytes.toString("utf8"))).files).toHaveLength(50);
  });
});
