// FileWriterPool: the exclusive, never-through-a-symlink file writer restore and verify extract with (synchronous I/O).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FileWriterPool } from "../../src/backup/file-writer.js";
import { makeTempDir } from "../helpers/temp-state.js";

describe("FileWriterPool", () => {
  it("writes every chunk in order with the given mode and mtime, and resolves `closed` after finish", async () => {
    const dir = makeTempDir();
    const file = path.join(dir, "out.jsonl");
    const pool = new FileWriterPool();
    const writer = await pool.open(file, { mode: 0o600, mtimeMs: 1_700_000_000_000, sync: false });
    const chunks = [Buffer.from("first "), Buffer.alloc(3 * 1024 * 1024, 0x61), Buffer.from(" last")];
    for (const chunk of chunks) await writer.write(chunk);
    // The caller may reuse a chunk as soon as write() resolves: the bytes are already in the file.
    chunks[0]!.fill(0x7a);
    await writer.finish();
    await writer.closed;
    await pool.drain();
    const st = fs.statSync(file);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.mtimeMs).toBe(1_700_000_000_000);
    expect(fs.readFileSync(file).equals(Buffer.concat([Buffer.from("first "), Buffer.alloc(3 * 1024 * 1024, 0x61), Buffer.from(" last")]))).toBe(true);
  });

  it("refuses a path that exists, as a file or as a symlink (never writes through one)", async () => {
    const dir = makeTempDir();
    const pool = new FileWriterPool();
    const existing = path.join(dir, "existing");
    fs.writeFileSync(existing, "keep");
    await expect(pool.open(existing, { mode: 0o600, sync: false })).rejects.toMatchObject({ code: "EEXIST" });
    const outside = path.join(dir, "outside");
    const link = path.join(dir, "link");
    fs.symlinkSync(outside, link);
    await expect(pool.open(link, { mode: 0o600, sync: false })).rejects.toThrow();
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.readFileSync(existing, "utf8")).toBe("keep");
  });

  it("abort removes the partial file and resolves `closed`", async () => {
    const dir = makeTempDir();
    const file = path.join(dir, "partial");
    const pool = new FileWriterPool();
    const writer = await pool.open(file, { mode: 0o600, sync: false });
    await writer.write(Buffer.from("half"));
    await writer.abort();
    await writer.closed;
    expect(fs.existsSync(file)).toBe(false);
    await pool.drain();
  });
});
