// The archive layout behind the manifest: padding that decodes to nothing, written in place or moved when it does not fit.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { zstdSupported } from "../../src/backup/compression.js";
import { createBackup } from "../../src/backup/create-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { buildManifest } from "../../src/backup/manifest.js";
import { planAssets } from "../../src/backup/asset-plan.js";
import { archiveOrder, walkAssets } from "../../src/backup/walk-assets.js";
import { headFiller } from "../../src/backup/head-region.js";
import { writeArchive } from "../../src/backup/write-archive.js";
import { SqliteJobRunner } from "../../src/state/sqlite-jobs.js";
import { seedState } from "../helpers/backup-state.js";
import { inflateArchive } from "../helpers/tar-tools.js";
import { makeTempDir, makeTempState } from "../helpers/temp-state.js";

const zstdDecompressSync = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;

/** True when a gzip filler member (header with FEXTRA) follows the manifest member. */
function hasGzipFiller(file: string): boolean {
  return fs.readFileSync(file).subarray(0, 512 * 1024).includes(Buffer.from([0x1f, 0x8b, 0x08, 0x04]));
}

describe("headFiller", () => {
  it("fills exactly the asked size with bytes that decompress to nothing between real members/frames", () => {
    const before = Buffer.from("manifest bytes ");
    const after = Buffer.from("payload bytes");
    for (const size of [22, 23, 43, 1000, 65557, 65558, 65578, 65579, 200_000]) {
      const filler = headFiller("gzip", size)!;
      expect(filler.length).toBe(size);
      const stream = Buffer.concat([zlib.gzipSync(before), filler, zlib.gzipSync(after)]);
      expect(zlib.gunzipSync(stream).toString()).toBe("manifest bytes payload bytes");
    }
    expect(headFiller("gzip", 21)).toBeNull();
    expect(headFiller("zstd", 7)).toBeNull();
    expect(headFiller("zstd", 8)!.length).toBe(8);
    if (zstdDecompressSync) {
      const z = zlib as unknown as { zstdCompressSync(b: Buffer): Buffer };
      for (const size of [8, 9, 4096, 70_000]) {
        const stream = Buffer.concat([z.zstdCompressSync(before), headFiller("zstd", size)!, z.zstdCompressSync(after)]);
        expect(zstdDecompressSync(stream).toString()).toBe("manifest bytes payload bytes");
      }
    }
  });
});

describe("writeArchive layout", () => {
  it("a state of 16 MiB or more gets the padded head region; gzip, GNU tar and verify read it", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    fs.writeFileSync(path.join(state.stateDir, "notes", "big.bin"), crypto.randomBytes(17 * 1024 * 1024));
    for (const compression of zstdSupported() ? (["gzip", "zstd"] as const) : (["gzip"] as const)) {
      const made = await createBackup({ paths: state.paths, compression, verify: false });
      const verified = await verifyBackup(made.archivePath);
      expect(verified.ok, verified.problem).toBe(true);
      // The tar stream is exactly the entries: the padding adds no byte to it.
      const tar = inflateArchive(made.archivePath);
      expect(tar.subarray(0, 100).toString("utf8")).toContain("/manifest.json");
      if (compression === "gzip") {
        expect(hasGzipFiller(made.archivePath)).toBe(true);
        const listed = spawnSync("tar", ["-tzf", made.archivePath], { encoding: "utf8" });
        expect(listed.status, listed.stderr).toBe(0);
        expect(listed.stdout).toContain("payload/state/notes/big.bin");
      }
    }
  });

  it("a manifest that outgrows its room moves the payload behind it; the archive still verifies", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const plan = planAssets({ paths: state.paths });
    const walk = walkAssets(plan.assets, { exclude: [] });
    const runner = new SqliteJobRunner();
    const archivePath = path.join(makeTempDir(), "moved.tar.gz");
    try {
      for (const headReserve of [64, 0]) {
        const file = archivePath.replace(".tar.gz", `-${headReserve}.tar.gz`);
        const written = await writeArchive({
          archivePath: file,
          root: "moved",
          stagingDir: makeTempDir(),
          entries: archiveOrder(walk.entries),
          runner,
          createdAt: new Date(),
          compression: "gzip",
          headReserve,
          manifestFor: (parts) =>
            buildManifest({ runId: "r", createdAt: new Date(), archiveRoot: "moved", paths: state.paths, options: { onlyConfig: false, includeWorkspace: true, verify: false, dryRun: false }, assets: plan.assets.map(({ kind, sourcePath, archivePath: at, type }) => ({ kind, sourcePath, archivePath: at, type, excluded: [] })), ...parts }),
        });
        expect(written.sizeBytes).toBe(fs.statSync(file).size);
        expect(hasGzipFiller(file)).toBe(false);
        const verified = await verifyBackup(file);
        expect(verified.ok, verified.problem).toBe(true);
        // Offsets recorded for reuse point at the moved bytes: each segment decodes to its database.
        for (const seg of written.reusable) {
          const bytes = fs.readFileSync(file).subarray(seg.segment.start, seg.segment.start + seg.segment.length);
          expect(crypto.createHash("sha256").update(zlib.gunzipSync(bytes).subarray(0, seg.file.size)).digest("hex")).toBe(seg.file.sha256);
        }
      }
    } finally {
      await runner.close();
    }
  });
});
