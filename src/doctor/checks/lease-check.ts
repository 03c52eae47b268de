// Lease check: reports who holds the state lease (gateway or another maintenance run) and stale rows.
import type { GlobalDB } from "../../state/generated/global-db.js";
import { describeLease, listLeases, type LeaseInfo } from "../../state/lease.js";
import { probeDatabase } from "../../state/probe.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding } from "../types.js";

export const leaseCheck: DoctorCheck = {
  id: "lease",
  run(ctx: CheckContext): CheckResult {
    const probe = probeDatabase<GlobalDB, LeaseInfo[]>(ctx.paths.globalDbPath, "global", undefined, { skipCheck: true }, (db) => listLeases(db));
    const findings: Finding[] = [];
    for (const lease of probe.extra ?? []) {
      if (lease.live) {
        findings.push({
          id: "lease.held",
          severity: "warning",
          title: `State lease "${lease.scope}" is held by ${describeLease(lease)}`,
          detail: `expires ${new Date(lease.expiresAt).toISOString()}`,
          fix: "Commands that write state (doctor --fix, restore, reset) exit 75 until it is released.",
        });
      } else {
        findings.push({ id: "lease.stale", severity: "info", title: `Stale state lease "${lease.scope}" from ${describeLease(lease)} (taken over by the next writer)` });
      }
    }
    return { findings, repairs: [] };
  },
};
