// Names the processes holding a SQLite write lock on a database (Linux /proc/locks), for "state is locked" messages.
import fs from "node:fs";

export interface LockHolder {
  pid: number;
  /** The holder's command line, shortened; null when /proc does not tell. */
  command: string | null;
}

/** Linux dev_t → "major:minor" in the hex form /proc/locks prints. */
function devKey(dev: number): string {
  const big = BigInt(dev);
  const major = Number(((big >> 8n) & 0xfffn) | ((big >> 32n) & ~0xfffn));
  const minor = Number((big & 0xffn) | ((big >> 12n) & ~0xffn));
  return `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}`;
}

function commandOf(pid: number): string | null {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    if (argv.length === 0) return null;
    const text = argv.join(" ");
    return text.length > 80 ? `${text.slice(0, 79)}…` : text;
  } catch {
    return null;
  }
}

/**
 * Other processes holding a POSIX write lock on the database or its -shm/-wal (SQLite's WAL write lock
 * lives in the -shm file). Empty where /proc/locks does not exist (not Linux) or names nobody.
 */
export function findWriteLockHolders(dbPath: string): LockHolder[] {
  const keys = new Set<string>();
  for (const file of [dbPath, `${dbPath}-shm`, `${dbPath}-wal`]) {
    try {
      const st = fs.statSync(file);
      keys.add(`${devKey(st.dev)}:${st.ino}`);
    } catch {
      // A sidecar that does not exist holds no lock.
    }
  }
  let table: string;
  try {
    table = fs.readFileSync("/proc/locks", "utf8");
  } catch {
    return [];
  }
  const pids = new Set<number>();
  for (const line of table.split("\n")) {
    // "1: POSIX  ADVISORY  WRITE 3408 00:2d:1234 120 120"; waiters are marked "->" and hold nothing.
    const fields = line.trim().split(/\s+/);
    if (fields.includes("->") || fields[1] !== "POSIX" || fields[3] !== "WRITE") continue;
    const pid = Number(fields[4]);
    const key = (fields[5] ?? "").toLowerCase();
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const [major = "", minor = "", inode = ""] = key.split(":");
    if (keys.has(`${major.padStart(2, "0")}:${minor.padStart(2, "0")}:${inode}`)) pids.add(pid);
  }
  return [...pids].sort((a, b) => a - b).map((pid) => ({ pid, command: commandOf(pid) }));
}

export function describeLockHolders(holders: readonly LockHolder[]): string {
  return holders.map((h) => `pid ${h.pid}${h.command ? ` (${h.command})` : ""}`).join(", ");
}
