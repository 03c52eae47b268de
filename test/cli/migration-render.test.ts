// Migration progress text (what the TTY spinner shows) and the run block of `doctor --fix`.
import { describe, expect, it } from "vitest";
import { createCaptureOutput } from "../../src/cli/output.js";
import { formatMigrationProgress, renderRunHuman } from "../../src/cli/render/migration-render.js";
import type { MigrationRunResult } from "../../src/migration/types.js";

describe("migration rendering", () => {
  it("shows phase, sources done/total and bytes", () => {
    expect(formatMigrationProgress({ phase: "import", done: 12, total: 340, bytesDone: 47_300_000, bytesTotal: 315_600_000, current: "agents/main/sessions/a.jsonl" })).toBe(
      "importing 12/340 sources (45.1 MiB of 301.0 MiB) — agents/main/sessions/a.jsonl",
    );
    expect(formatMigrationProgress({ phase: "backup", done: 0, total: 1, bytesDone: 0, bytesTotal: 0 })).toBe("writing the pre-migration backup…");
  });

  it("never prints more bytes done than the total (a database whose WAL holds most of its data)", () => {
    // The reported case: the live file is 9.9 KiB, the snapshot reads 577.9 KiB out of its WAL.
    expect(formatMigrationProgress({ phase: "backup", done: 0, total: 1, bytesDone: 591_770, bytesTotal: 10_138, step: "snapshot" })).toBe("writing the pre-migration backup (snapshotting databases)… 577.9 KiB");
    expect(formatMigrationProgress({ phase: "backup", done: 0, total: 1, bytesDone: 5_000, bytesTotal: 10_138, step: "verify" })).toBe("writing the pre-migration backup (verifying)… 4.9 KiB of 9.9 KiB");
    expect(formatMigrationProgress({ phase: "import", done: 5, total: 3, bytesDone: 900, bytesTotal: 100 })).toBe("importing 3/3 sources (900 B)");
  });

  it("says loudly that there is no backup, and lists failed sources", () => {
    const { output, stdout } = createCaptureOutput();
    const run: MigrationRunResult = {
      runId: "r1",
      status: "warning",
      stateDir: "/s",
      startedAt: 0,
      finishedAt: 1,
      backupPath: null,
      backupSkipped: true,
      replanned: true,
      sources: [
        { kind: "transcript", agentId: "main", path: "/s/a.jsonl", relativePath: "a.jsonl", sizeBytes: 1, mtimeMs: 0, sha256: null, targetTable: "transcript_events", action: "import", status: "failed", reason: "/s/a.jsonl:3: invalid JSON", warnings: [], notes: [], retired: null },
      ],
      changes: [],
      warnings: ["NO BACKUP: --no-backup skipped the pre-migration backup; there is no archive to roll back to", "the legacy tree changed since the plan was shown: re-planned"],
      totals: { sources: 1, imported: 0, alreadyImported: 0, failed: 1, skipped: 0, retired: 0, records: 0, bytes: 0 },
    };
    renderRunHuman(output, run);
    expect(stdout()).toContain("NO BACKUP (--no-backup)");
    expect(stdout().match(/NO BACKUP/g)).toHaveLength(1);
    expect(stdout()).toContain("re-planned");
    expect(stdout()).toMatch(/✗ failed +a\.jsonl\n +\/s\/a\.jsonl:3: invalid JSON/);
  });
});
