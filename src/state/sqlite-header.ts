// The SQLite file-header test, in a module of its own: callers such as the backup walk must not load the
// Kysely-backed storage core (database.ts, ~0.25 s of CPU to import) just to read 16 bytes.
import fs from "node:fs";

/** True when the file starts with the 16-byte SQLite header. */
export function isSqliteFile(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    const header = Buffer.alloc(16);
    const n = fs.readSync(fd, header, 0, 16, 0);
    return n === 16 && header.toString("latin1") === "SQLite format 3\u0000";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
