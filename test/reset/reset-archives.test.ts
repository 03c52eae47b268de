// Reset never removes an archive this tool wrote (found by content, wherever it sits) and never opens the DB through a link.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { OpenclawStateError } from "../../src/core/errors.js";
import { runReset, type ResetResult } from "../../src/reset/apply-reset.js";
import { scanForArchives } from "../../src/reset/archive-guard.js";
import { pathExists } from "../../src/state/private-fs.js";
import { makeTempDir, snapshotTree } from "../helpers/temp-state.js";
import { seedResetState, type SeededState } from "./seed-reset-state.js";

/** One real archive written by createBackup, copied into each test's tree (the core refuses to write inside the state dir). */
let archiveBytes: Buffer;

beforeAll(async () => {
  const s = seedResetState();
  const made = await createBackup({ paths: s.paths });
  expect(made.verified).toBe(true);
  archiveBytes = fs.readFileSync(made.archivePath);
}, 60_000);

function place(file: string, bytes: Buffer = archiveBytes): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes, { mode: 0o600 });
  return file;
}

/** Buffer.equals, not toEqual: a deep compare of a megabyte buffer takes vitest seconds. */
function sameBytes(file: string, bytes: Buffer): boolean {
  return fs.readFileSync(file).equals(bytes);
}

function sha(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

function keptEntry(result: ResetResult, p: string): ResetResult["kept"][number] | undefined {
  return result.kept.find((k) => k.path === p);
}

async function refusal(promise: Promise<unknown>): Promise<OpenclawStateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenclawStateError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("reset keeps archives this tool wrote", () => {
  it("full: <stateDir>/backups/ holding real archives survives byte for byte, named in the dry run and the result", async () => {
    const s = seedResetState();
    const folder = path.join(s.stateDir, "backups");
    const a = place(path.join(folder, "2026-01-01T00-00-00.000Z-openclaw-backup.tar.gz"));
    const b = place(path.join(folder, "second.tar.gz"));
    fs.writeFileSync(path.join(folder, "notes.txt"), "operator notes\n");
    const before = snapshotTree(folder);

    const dry = await runReset({ paths: s.paths, scope: "full", dryRun: true });
    expect(dry.removed.some((r) => r.path.startsWith(folder))).toBe(false);
    expect(dry.removed.map((r) => r.path)).not.toContain(s.stateDir);
    expect(keptEntry(dry, folder)).toMatchObject({ archives: [a, b].sort() });
    expect(keptEntry(dry, folder)!.reason).toContain("2 archives reset never removes");

    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(result.status, JSON.stringify(result.failed)).toBe("completed");
    expect(snapshotTree(folder)).toEqual(before);
    expect(keptEntry(result, folder)).toMatchObject({ archives: [a, b].sort() });
    // Everything else went: the state dir holds only the kept folder.
    expect(fs.readdirSync(s.stateDir)).toEqual(["backups"]);
    expect(pathExists(s.paths.globalDbPath)).toBe(false);
  });

  it("full: a renamed archive (KEEP.tar.zst) in another subfolder is recognised by content and its folder kept", async () => {
    const s = seedResetState();
    const keep = place(path.join(s.stateDir, "cron", "old", "KEEP.tar.zst"));
    const hash = sha(keep);
    fs.writeFileSync(path.join(s.stateDir, "cron", "jobs.json"), "{}\n");
    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(result.status).toBe("completed");
    expect(sha(keep)).toBe(hash);
    expect(keptEntry(result, path.dirname(keep))!.archives).toEqual([keep]);
    expect(keptEntry(result, path.dirname(keep))!.reason).toMatch(/KEEP\.tar\.zst, openclaw-state archive \(run /);
    // Its siblings on the way down are removed; only the path to the kept folder stays.
    expect(pathExists(path.join(s.stateDir, "cron", "jobs.json"))).toBe(false);
    expect(fs.readdirSync(s.stateDir)).toEqual(["cron"]);
    expect(fs.readdirSync(path.join(s.stateDir, "cron"))).toEqual(["old"]);
  });

  it("full: an archive without any archive name (renamed to a bare name) is still kept", async () => {
    const s = seedResetState();
    const keep = place(path.join(s.stateDir, "misc", "before-upgrade"));
    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(sameBytes(keep, archiveBytes)).toBe(true);
    expect(keptEntry(result, path.dirname(keep))!.archives).toEqual([keep]);
  });

  it("full: an archive directly in the state dir is kept as a file; everything around it goes", async () => {
    const s = seedResetState();
    const keep = place(path.join(s.stateDir, "pre-upgrade.tar.gz"));
    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(result.status).toBe("completed");
    expect(fs.readdirSync(s.stateDir)).toEqual(["pre-upgrade.tar.gz"]);
    expect(sameBytes(keep, archiveBytes)).toBe(true);
    expect(keptEntry(result, keep)!.reason).toContain("reset never removes an archive");
  });

  it("full: an archive inside the state/ folder keeps that folder (the global DB stays with it) and says so", async () => {
    const s = seedResetState();
    const keep = place(path.join(path.dirname(s.paths.globalDbPath), "copy.tar.gz"));
    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(sameBytes(keep, archiveBytes)).toBe(true);
    expect(pathExists(s.paths.globalDbPath)).toBe(true);
    expect(keptEntry(result, path.dirname(keep))!.archives).toEqual([keep]);
    expect(result.removed.some((r) => r.kind === "global-db")).toBe(false);
  });

  it("config+creds+sessions: an archive inside the credentials dir survives; the rest of the credentials go", async () => {
    const s = seedResetState();
    const keep = place(path.join(s.paths.credentialsDir, "old", "creds-backup.tar.gz"));
    const result = await runReset({ paths: s.paths, scope: "config+creds+sessions" });
    expect(result.status).toBe("completed");
    expect(sameBytes(keep, archiveBytes)).toBe(true);
    expect(pathExists(path.join(s.paths.credentialsDir, "oauth.json"))).toBe(false);
    expect(keptEntry(result, path.dirname(keep))!.archives).toEqual([keep]);
  });

  it("a file only named like an archive is not protected: it goes, and the plan and result say so", async () => {
    const s = seedResetState();
    const fake = place(path.join(s.stateDir, "cron", "fake.tar.zst"), Buffer.from("not an archive at all\n"));
    const gz = place(path.join(s.stateDir, "cron", "other.tar.gz"), zlib.gzipSync(Buffer.from("just text, no tar\n")));
    const dry = await runReset({ paths: s.paths, scope: "full", dryRun: true });
    expect(dry.warnings.join("\n")).toContain(`${fake} is named like an archive but openclaw-state did not write it`);
    expect(dry.warnings.join("\n")).toContain(gz);
    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(pathExists(fake)).toBe(false);
    expect(pathExists(gz)).toBe(false);
    expect(result.warnings.join("\n")).toContain(`is not protected and is removed with ${path.join(s.stateDir, "cron")}`);
    expect(pathExists(s.stateDir)).toBe(false);
  });

  it("a symlink to a folder of archives is removed as a link; the archives it points at stay", async () => {
    const s = seedResetState();
    const outside = place(path.join(s.root, "elsewhere-backups", "a.tar.gz"));
    fs.symlinkSync(path.dirname(outside), path.join(s.stateDir, "linked-backups"));
    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(result.status).toBe("completed");
    expect(sameBytes(outside, archiveBytes)).toBe(true);
    expect(pathExists(s.stateDir)).toBe(false);
  });

  it("a FIFO in the state dir is skipped with its reason (never opened) and the state dir stays around it", async () => {
    const s = seedResetState();
    const fifo = path.join(s.stateDir, "pipe");
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [fifo]);
    const result = await runReset({ paths: s.paths, scope: "full" });
    expect(result.status).toBe("completed");
    expect(result.skipped.find((k) => k.path === fifo)!.reason).toContain("FIFO");
    expect(fs.readdirSync(s.stateDir)).toEqual(["pipe"]);
  });
});

describe("scanForArchives", () => {
  it("bounds the manifest reads: compressed files past the limit are kept unread", async () => {
    const dir = makeTempDir();
    place(path.join(dir, "a.tar.gz"));
    place(path.join(dir, "b.tar.gz"));
    const scan = await scanForArchives([dir], { maxReads: 1 });
    expect(scan.guarded.map((g) => path.basename(g.path))).toEqual(["a.tar.gz", "b.tar.gz"]);
    expect(scan.guarded[1]!.reason).toContain("not inspected");
  });

  it("never follows a link while scanning", async () => {
    const dir = makeTempDir();
    const outside = place(path.join(makeTempDir(), "x.tar.gz"));
    fs.symlinkSync(outside, path.join(dir, "link.tar.gz"));
    const scan = await scanForArchives([dir]);
    expect(scan).toEqual({ guarded: [], foreign: [] });
  });
});

describe("reset never opens the global database through a link", () => {
  function linkStateDir(s: SeededState): { linkedDb: string; before: Buffer } {
    // The real state/ moved elsewhere and linked back: what a careless move or an attacker leaves.
    const elsewhere = path.join(s.root, "other-state");
    fs.renameSync(path.dirname(s.paths.globalDbPath), elsewhere);
    fs.symlinkSync(elsewhere, path.dirname(s.paths.globalDbPath));
    const linkedDb = path.join(elsewhere, path.basename(s.paths.globalDbPath));
    return { linkedDb, before: fs.readFileSync(linkedDb) };
  }

  for (const scope of ["config", "config+creds+sessions", "full"] as const) {
    it(`${scope}: a symlinked state/ is refused before anything is written; the linked DB is unchanged byte for byte`, async () => {
      const s = seedResetState();
      const { linkedDb, before } = linkStateDir(s);
      const tree = snapshotTree(s.root);
      const error = await refusal(runReset({ paths: s.paths, scope }));
      expect(error.code).toBe("reset_unsafe_path");
      expect(error.exitCode).toBe(1);
      expect(error.message).toContain(`${path.dirname(s.paths.globalDbPath)} is a symbolic link`);
      expect(error.message).toContain("nothing was read or written");
      expect(error.message).toContain("--state-dir");
      expect(sameBytes(linkedDb, before)).toBe(true);
      expect(pathExists(`${linkedDb}-wal`)).toBe(false);
      expect(snapshotTree(s.root)).toEqual(tree);
    });
  }

  it("dry run refuses the same way (its exit code predicts the real run)", async () => {
    const s = seedResetState();
    const { linkedDb, before } = linkStateDir(s);
    const error = await refusal(runReset({ paths: s.paths, scope: "full", dryRun: true }));
    expect(error.code).toBe("reset_unsafe_path");
    expect(sameBytes(linkedDb, before)).toBe(true);
  });

  it("a global DB file that is itself a link is refused too", async () => {
    const s = seedResetState();
    const elsewhere = path.join(s.root, "elsewhere", "real.sqlite");
    fs.renameSync(s.paths.globalDbPath, elsewhere);
    fs.symlinkSync(elsewhere, s.paths.globalDbPath);
    const before = fs.readFileSync(elsewhere);
    const error = await refusal(runReset({ paths: s.paths, scope: "config" }));
    expect(error.code).toBe("reset_unsafe_path");
    expect(error.message).toContain(s.paths.globalDbPath);
    expect(sameBytes(elsewhere, before)).toBe(true);
    expect(pathExists(s.paths.configPath)).toBe(true);
  });

  it("a FIFO where the global DB should be is refused at once (never opened, so never blocks)", async () => {
    const s = seedResetState();
    fs.rmSync(s.paths.globalDbPath);
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [s.paths.globalDbPath]);
    const error = await refusal(runReset({ paths: s.paths, scope: "full", dryRun: true }));
    expect(error.code).toBe("reset_unsafe_path");
    expect(error.message).toContain("it is a FIFO");
  });
});
