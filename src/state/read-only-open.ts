// Read opens of a database we cannot write (read-only filesystem, another user's files): a true read-only
// open when SQLite can do one, else a private temporary copy, so read commands work on a read-only state.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";

/** Why a path cannot be written: "read-only filesystem", "no write permission", or null when it can. */
export function unwritableReason(file: string): string | null {
  for (const p of [file, path.dirname(file)]) {
    try {
      fs.accessSync(p, fs.constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EROFS") return "read-only filesystem";
      if (code === "EACCES" || code === "EPERM") return "no write permission";
      if (code !== "ENOENT") return `not writable (${code ?? "unknown"})`;
    }
  }
  // access(2) reports EROFS for a read-only mount even to root, so no probe file is needed.
  return null;
}

export interface ReadOnlyHandle {
  handle: Database.Database;
  /** Removes the temporary copy, when one was made. */
  cleanup?: () => void;
}

function isCantOpen(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_READONLY") || code === "SQLITE_IOERR_LOCK");
}

/**
 * A WAL database needs its -shm beside it even to read; SQLite cannot create one on a read-only mount.
 * better-sqlite3 is built without URI filenames, so `?immutable=1` is not available: when the plain
 * read-only open cannot read, the file (and a -wal holding committed pages) is copied into a private temp
 * dir and read there. The original is never opened for writing.
 */
export function openReadOnlyHandle(file: string, timeoutMs: number): ReadOnlyHandle {
  const direct = new Database(file, { readonly: true, fileMustExist: true, timeout: timeoutMs });
  try {
    // The first read is where a missing -shm shows up.
    direct.pragma("schema_version", { simple: true });
    return { handle: direct };
  } catch (error) {
    direct.close();
    if (!isCantOpen(error)) throw error;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-state-ro-"));
  const cleanup = (): void => fs.rmSync(dir, { recursive: true, force: true });
  try {
    // mkdtemp made the dir 0700: the copies are private whatever mode they carry over.
    const copy = path.join(dir, path.basename(file));
    fs.copyFileSync(file, copy, fs.constants.COPYFILE_EXCL);
    const wal = `${file}-wal`;
    if (fs.existsSync(wal) && fs.statSync(wal).size > 0) fs.copyFileSync(wal, `${copy}-wal`, fs.constants.COPYFILE_EXCL);
    return { handle: new Database(copy, { fileMustExist: true, timeout: timeoutMs }), cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}
