// The maintenance lease: one live holder, gateway leases respected, stale leases taken over.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { StateLockedError } from "../../src/core/errors.js";
import { acquireMaintenanceLease, GATEWAY_SCOPE, listLeases, MAINTENANCE_SCOPE } from "../../src/state/lease.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { insertLease } from "../helpers/leases.js";
import { makeTempState } from "../helpers/temp-state.js";

function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["-e", "0"]);
    const pid = child.pid!;
    child.on("exit", () => resolve(pid));
  });
}

describe("maintenance lease", () => {
  it("is taken, visible as live, and released", () => {
    const { paths } = makeTempState();
    const db = openGlobalDatabase(paths, { mode: "write", create: true });
    try {
      const lease = acquireMaintenanceLease(db, { command: "test" });
      const rows = listLeases(db);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ scope: MAINTENANCE_SCOPE, pid: process.pid, live: true, command: "test" });
      lease.release();
      expect(listLeases(db)).toHaveLength(0);
    } finally {
      db.close();
    }
  });

  it("refuses with exit 75 while another live process holds it, and --force takes over", () => {
    const { paths } = makeTempState();
    const db = openGlobalDatabase(paths, { mode: "write", create: true });
    try {
      // This test process is alive, so a row naming its pid is a live holder.
      insertLease(db, MAINTENANCE_SCOPE, process.pid, Date.now() + 60_000);
      let caught: unknown;
      try {
        acquireMaintenanceLease(db, { command: "doctor --fix" });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StateLockedError);
      expect((caught as StateLockedError).exitCode).toBe(75);
      expect((caught as Error).message).toMatch(/locked by `other` \(pid \d+/);
      acquireMaintenanceLease(db, { command: "forced", force: true }).release();
    } finally {
      db.close();
    }
  });

  it("refuses while the gateway holds gateway_locks", () => {
    const { paths } = makeTempState();
    const db = openGlobalDatabase(paths, { mode: "write", create: true });
    try {
      insertLease(db, GATEWAY_SCOPE, process.pid, Date.now() + 60_000);
      expect(() => acquireMaintenanceLease(db, { command: "x" })).toThrow(/locked by the gateway/);
    } finally {
      db.close();
    }
  });

  it("takes over expired leases and leases of dead processes on this host", async () => {
    const { paths } = makeTempState();
    const db = openGlobalDatabase(paths, { mode: "write", create: true });
    try {
      insertLease(db, GATEWAY_SCOPE, process.pid, Date.now() - 1);
      insertLease(db, MAINTENANCE_SCOPE, await deadPid(), Date.now() + 60_000);
      expect(listLeases(db).every((l) => !l.live)).toBe(true);
      const lease = acquireMaintenanceLease(db, { command: "x" });
      expect(lease.takenOver).toHaveLength(1);
      lease.release();
    } finally {
      db.close();
    }
  });
});
