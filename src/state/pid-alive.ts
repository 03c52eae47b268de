// Whether a process id is alive on this host (signal 0); its own module so light code need not load the lease.

/** True when `pid` exists (EPERM: it exists but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
