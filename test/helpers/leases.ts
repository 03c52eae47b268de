// Seeds state_leases rows the way another process (gateway or maintenance run) would hold them.
import os from "node:os";
import { MAINTENANCE_SCOPE } from "../../src/state/lease.js";
import type { GlobalDatabase } from "../../src/state/state-databases.js";

export function insertLease(db: GlobalDatabase, scope: string, pid: number, expiresAt: number, host = os.hostname()): void {
  db.run(
    db.q.insertInto("state_leases").values({
      scope,
      lease_key: scope === MAINTENANCE_SCOPE ? "state" : "gateway",
      owner: `${pid}@${host}`,
      expires_at: expiresAt,
      heartbeat_at: Date.now(),
      payload_json: JSON.stringify({ pid, host, startedAt: Date.now(), command: "other" }),
      created_at: Date.now(),
      updated_at: Date.now(),
    }),
  );
}
