// syncStagedFiles: the one durability pass restore runs before its swap (syncfs per file system, else fsync of each file).
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { syncfsReportsErrors, syncStagedFiles } from "../../src/backup/file-writer.js";
import { makeTempDir } from "../helpers/temp-state.js";

function writeFiles(dir: string, n: number): string[] {
  fs.mkdirSync(path.join(dir, "sub"), { recursive: true });
  return Array.from({ length: n }, (_, i) => {
    const file = path.join(dir, i % 2 ? "sub" : "", `f-${i}.jsonl`);
    fs.writeFileSync(file, `{"i":${i}}\n`);
    return file;
  });
}

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

describe("syncfsReportsErrors", () => {
  it("is true only on Linux 5.8 and newer (syncfs reports writeback errors from 5.8 on)", () => {
    expect(syncfsReportsErrors("linux", "5.8.0")).toBe(true);
    expect(syncfsReportsErrors("linux", "6.1.0-18-amd64")).toBe(true);
    expect(syncfsReportsErrors("linux", "5.7.19")).toBe(false);
    expect(syncfsReportsErrors("linux", "4.19.0")).toBe(false);
    expect(syncfsReportsErrors("darwin", "23.4.0")).toBe(false);
    expect(syncfsReportsErrors("linux", "weird")).toBe(false);
  });
});

describe("syncStagedFiles", () => {
  it("does nothing for no files", async () => {
    expect(await syncStagedFiles([], [makeTempDir()])).toBe("none");
  });

  it.runIf(process.platform === "linux")("uses one syncfs (`sync -f`) where it reports errors", async () => {
    const dir = makeTempDir();
    const files = writeFiles(dir, 20);
    expect(await syncStagedFiles(files, [dir, dir], { syncfs: true })).toBe("syncfs");
  });

  it("falls back to an fsync of every file when `sync -f` cannot run", async () => {
    const dir = makeTempDir();
    const files = writeFiles(dir, 20);
    process.env.PATH = makeTempDir(); // no `sync` binary there
    expect(await syncStagedFiles(files, [dir], { syncfs: true })).toBe("fsync");
  });

  it("fsyncs every file when syncfs is not trusted, and reports a file it cannot sync", async () => {
    const dir = makeTempDir();
    const files = writeFiles(dir, 20);
    expect(await syncStagedFiles(files, [dir], { syncfs: false })).toBe("fsync");
    fs.rmSync(files[7]!);
    await expect(syncStagedFiles(files, [dir], { syncfs: false })).rejects.toThrow(/ENOENT/);
    // Never through a link: a file swapped for a symlink is refused, not followed.
    fs.symlinkSync(files[3]!, files[7]!);
    await expect(syncStagedFiles(files, [dir], { syncfs: false })).rejects.toThrow(/ELOOP/);
  });
});
