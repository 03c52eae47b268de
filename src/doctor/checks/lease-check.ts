// Lease check: reports who holds the state lease (gateway or another maintenance run) and stale rows.
import { describeLease, type LeaseInfo } from "../../state/lease.js";
import { readLeases } from "../../state/open-lease-database.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding } from "../types.js";

export const leaseCheck: DoctorCheck = {
  id: "lease",
  run(ctx: CheckContext): CheckResult {
    // Any format: OpenClaw's gateway and doctor hold their leases in the same state_leases table.
    let leases: LeaseInfo[] = [];
    try {
      leases = readLeases(ctx.paths) ?? [];
    } catch {
      // An unopenable database (or one without state_leases) is the storage check's finding.
    }
    const findings: Finding[] = [];
    for (const lease of leases) {
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
