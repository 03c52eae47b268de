// An in-place restore's state lease: taken without the storage core, never through a link, FIFO or device at the global DB's path.
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { seedState } from "../helpers/backup-state.js";
import { staticGraph, storageCoreIn } from "../helpers/static-graph.js";
import { makeTempDir, makeTempState, repoRoot } from "../helpers/temp-state.js";

const yes = async (): Promise<boolean> => true;
const sha = (file: string): string => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

describe("restore's state lease", () => {
  it("loads neither kysely nor the storage core on its way: restore-backup.ts, restore-lease.ts and the lease modules it imports in place", () => {
    const src = path.join(repoRoot, "src");
    const restore = fs.readFileSync(path.join(src, "backup", "restore-lease.ts"), "utf8");
    expect(restore).toContain('import("../state/lease.js")');
    expect(restore).toContain('import("../state/raw-lease-database.js")');
    const graph = new Set<string>();
    for (const entry of [path.join(src, "backup", "restore-backup.ts"), path.join(src, "backup", "restore-lease.ts"), path.join(src, "state", "lease.ts"), path.join(src, "state", "raw-lease-database.ts")]) {
      for (const m of staticGraph(entry)) graph.add(m);
    }
    expect(graph.has("better-sqlite3")).toBe(true);
    expect(storageCoreIn(graph)).toEqual([]);
  });

  it("refuses a global DB reached through a symlink: nothing is restored and the linked file is not written; --force restores without the lease", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const backup = await createBackup({ paths: state.paths });
    const outside = path.join(makeTempDir(), "openclaw.sqlite");
    fs.renameSync(state.paths.globalDbPath, outside);
    fs.symlinkSync(outside, state.paths.globalDbPath);
    const before = sha(outside);
    const error = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "lease_unavailable" });
    expect((error as Error).message).toMatch(/it is a symbolic link \(never followed\).*nothing was restored/);
    expect(fs.lstatSync(state.paths.globalDbPath).isSymbolicLink()).toBe(true);
    expect(sha(outside)).toBe(before);

    const forced = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes, force: true });
    expect(forced.status).toBe("restored");
    expect(forced.warnings.join("\n")).toMatch(/without the state lease.*it is a symbolic link \(never followed\)/);
    expect(sha(outside)).toBe(before);
    expect(fs.lstatSync(state.paths.globalDbPath).isFile()).toBe(true);
  });

  it("refuses a FIFO at the global DB's path without opening it", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const backup = await createBackup({ paths: state.paths });
    fs.rmSync(state.paths.globalDbPath);
    execFileSync("mkfifo", [state.paths.globalDbPath]);
    const error = await restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "lease_unavailable" });
    expect((error as Error).message).toMatch(/it is a FIFO/);
    expect(fs.lstatSync(state.paths.globalDbPath).isFIFO()).toBe(true);
  });

  it("a global DB without state_leases (an empty file) goes through the storage core's open and is refused as before, untouched", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const backup = await createBackup({ paths: state.paths });
    fs.truncateSync(state.paths.globalDbPath, 0);
    await expect(restoreBackup({ paths: state.paths, archivePath: backup.archivePath, confirm: yes })).rejects.toThrow(/no such table: state_leases/);
    expect(fs.statSync(state.paths.globalDbPath).size).toBe(0);
    expect(fs.readdirSync(path.dirname(state.paths.globalDbPath))).toEqual(["openclaw.sqlite"]);
  });
});
