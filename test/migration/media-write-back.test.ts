// Media the import took into media_blobs goes back to <stateDir>/media/ when doctor --fix writes OpenClaw's format.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runDoctor } from "../../src/doctor/run-doctor.js";
import { writeBackMedia } from "../../src/migration/media-write-back.js";
import { LARGE_MEDIA_REASON, MAX_MEDIA_BYTES } from "../../src/migration/importers/media.js";
import { fixturesDir, makeTempState } from "../helpers/temp-state.js";
import { migrate, stagedDbFile } from "../helpers/migration.js";

const FIXTURE_MEDIA = path.join(fixturesDir, "migration/media/media");

describe("media write-back", () => {
  it("doctor --fix leaves every imported media file where OpenClaw reads it, byte for byte, 0600, and a rerun finds nothing", async () => {
    const { paths, stateDir } = makeTempState("migration/media");
    const fixed = await runDoctor({ paths, fix: true, migration: { backup: false } });
    expect(fixed.repairs.filter((r) => r.status !== "applied")).toEqual([]);
    expect(fixed.repairs.map((r) => r.id)).toEqual(expect.arrayContaining(["legacy.migrate", "format.upgrade"]));
    expect(fixed.formatUpgrade!.databases.find((d) => d.role === "global")!.unmapped.media_blobs).toBeUndefined();
    for (const rel of ["note.txt", "outbound/report.pdf", "inbound/photo---1b4e28ba-2fa1-11d2-883f-0016d3cca427.png"]) {
      const file = path.join(stateDir, "media", rel);
      expect(fs.readFileSync(file).equals(fs.readFileSync(path.join(FIXTURE_MEDIA, rel))), rel).toBe(true);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fixed.formatUpgrade!.restoredFiles).toContain(file);
    }
    // Beside OpenClaw's format media/ is its live store, not a legacy source waiting for another doctor.
    const again = await runDoctor({ paths });
    expect(again.findings.filter((f) => f.severity !== "info").map((f) => f.id)).toEqual([]);
  });

  it("a media file over 64 MiB is never read into the database: it stays byte for byte in media/, where OpenClaw reads it, and the plan says why", async () => {
    const { paths, stateDir } = makeTempState("migration/media");
    const big = path.join(stateDir, "media", "inbound", "film---0d9c1c1e-6a3e-4b51-9d4e-2a1f0c9b7e11.mp4");
    const bytes = Buffer.alloc(MAX_MEDIA_BYTES + 1, 7);
    fs.writeFileSync(big, bytes);
    const before = await runDoctor({ paths });
    const text = JSON.stringify(before.findings);
    expect(text).toContain(LARGE_MEDIA_REASON);
    expect(text).not.toMatch(/move it out of the state dir/);
    const fixed = await runDoctor({ paths, fix: true, migration: { backup: false } });
    expect(fixed.repairs.filter((r) => r.status !== "applied")).toEqual([]);
    expect(fs.statSync(big).size).toBe(bytes.length);
    expect(fs.readFileSync(big).equals(bytes)).toBe(true);
    const again = await runDoctor({ paths });
    expect(again.findings.filter((f) => f.severity !== "info").map((f) => f.id)).toEqual([]);
  });

  it("a row naming a path outside media/ is refused, an existing file is never overwritten, and a linked parent is never followed", async () => {
    const { paths, stateDir, root } = makeTempState("migration/media");
    await migrate(paths);
    const source = stagedDbFile(paths);
    const db = new Database(source);
    const insert = db.prepare("INSERT INTO media_blobs (subdir, id, content_type, size_bytes, blob, created_at, updated_at) VALUES (?, ?, NULL, 1, x'41', 1, 1)");
    insert.run("..", "escape.txt");
    insert.run("linked", "x.bin");
    db.close();
    fs.mkdirSync(path.join(stateDir, "media", "outbound"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "media", "outbound", "report.pdf"), "newer");
    const elsewhere = path.join(root, "elsewhere");
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(stateDir, "media", "linked"));
    const back = writeBackMedia(paths, source);
    expect(fs.readFileSync(path.join(stateDir, "media", "outbound", "report.pdf"), "utf8")).toBe("newer");
    expect(fs.existsSync(path.join(stateDir, "escape.txt"))).toBe(false);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(back.warnings.join("\n")).toMatch(/"\.\.\/escape\.txt" names a path outside/);
    expect(back.warnings.join("\n")).toMatch(/report\.pdf .*a file is already there/);
    expect(back.warnings.join("\n")).toMatch(/linked\/x\.bin .*symbolic link/);
    expect(back.written.map((f) => path.relative(stateDir, f)).sort()).toEqual(["media/inbound/photo---1b4e28ba-2fa1-11d2-883f-0016d3cca427.png", "media/note.txt"]);
  });
});
