// Delivery queues → delivery_queue_entries (outbound-delivery, session-delivery); *.delivered markers removed.
//
// Shapes: OpenClaw src/infra/outbound/delivery-queue-storage.ts (outbound entries, failed/ dir, the
// `<id>.delivered` ack marker, lastAttemptAt backfilled from enqueuedAt for retried legacy entries) and
// src/infra/session-delivery-queue-storage.ts (session entries with kind, sessionKey, route/deliveryContext).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../helpers/temp-state.js";
import { dumpState, ledgerSummary, migrate, rows, sha256Of } from "../helpers/migration.js";

describe("delivery queue importer", () => {
  it("imports pending and failed entries of both queues with typed columns and removes stale markers", async () => {
    const { paths, stateDir } = makeTempState("migration/delivery-queue");
    const { plan, run } = await migrate(paths, { removeSources: true });
    expect(plan!.sources.map((s) => [s.relativePath, s.records])).toEqual([
      ["delivery-queue/d-1.json", 1],
      ["delivery-queue/d-9.delivered", 0],
      ["delivery-queue/d-legacy.json", 1],
      ["delivery-queue/failed/d-3.json", 1],
      ["session-delivery-queue/s-0.delivered", 0],
      ["session-delivery-queue/s-1.json", 1],
      ["session-delivery-queue/s-2.json", 1],
    ]);
    expect(plan!.sources[1]!.notes).toEqual(["stale delivered marker (outbound-delivery): the message was already sent; nothing is imported and the marker is removed"]);
    expect(run).toMatchObject({ status: "completed", totals: { retired: 7 } });
    expect(fs.existsSync(path.join(stateDir, "delivery-queue"))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "session-delivery-queue"))).toBe(false);
    const entries = rows<Record<string, unknown>>(paths.globalDbPath, "SELECT * FROM delivery_queue_entries ORDER BY queue_name, id");
    expect(entries.map((e) => [e.queue_name, e.id, e.status])).toEqual([
      ["outbound-delivery", "d-1", "pending"],
      ["outbound-delivery", "d-3", "failed"],
      ["outbound-delivery", "d-legacy", "pending"],
      ["session-delivery", "s-1", "pending"],
      ["session-delivery", "s-2", "pending"],
    ]);
    expect(entries[0]).toEqual({
      queue_name: "outbound-delivery", id: "d-1", status: "pending", entry_kind: null, session_key: "agent:main:main", channel: "telegram", target: "12345", account_id: "bot-a",
      retry_count: 1, last_attempt_at: 1767300005000, last_error: "timeout", recovery_state: "awaiting-retry", platform_send_started_at: 1767300004000,
      entry_json: JSON.stringify(JSON.parse(fs.readFileSync(path.join(process.cwd(), "fixtures/migration/delivery-queue/delivery-queue/d-1.json"), "utf8"))),
      enqueued_at: 1767300000000, updated_at: 1767300005000, failed_at: null,
    });
    expect(entries[1]).toMatchObject({ status: "failed", retry_count: 5, last_error: "chat not found", failed_at: expect.any(Number) });
    // Legacy: no id (the file name is the id); retried without lastAttemptAt → enqueuedAt, as the runtime does.
    expect(entries[2]).toMatchObject({ id: "d-legacy", retry_count: 2, last_attempt_at: 1767200000000, updated_at: 1767200000000 });
    expect(JSON.parse(entries[2]!.entry_json as string)).toMatchObject({ lastAttemptAt: 1767200000000 });
    expect(entries[3]).toMatchObject({ entry_kind: "agentTurn", session_key: "agent:main:main", channel: "slack", target: "C123", account_id: "team-a", retry_count: 0, last_attempt_at: null });
    expect(entries[4]).toMatchObject({ entry_kind: "systemEvent", channel: "discord", target: "D1", retry_count: 1, last_attempt_at: 1767300300000, last_error: "gateway busy" });
    expect(ledgerSummary(paths, "delivery-queue/d-9.delivered")).toMatchObject({ target_table: "delivery_queue_entries", source_record_count: 0, status: "imported", removed_source: 1 });
    expect(ledgerSummary(paths, "delivery-queue/d-1.json")).toEqual({
      migration_kind: "delivery-queue", target_table: "delivery_queue_entries", source_sha256: sha256Of(path.join(process.cwd(), "fixtures/migration/delivery-queue/delivery-queue/d-1.json")),
      source_record_count: 1, status: "imported", removed_source: 1,
    });
  });

  it("is idempotent, and keeps a malformed entry in place while the others (and other kinds) import", async () => {
    const { paths, stateDir } = makeTempState("migration/delivery-queue");
    fs.cpSync(path.join(process.cwd(), "fixtures/migration/subagents/subagents"), path.join(stateDir, "subagents"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "delivery-queue/d-bad.json"), '{"id": "d-bad", ');
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.find((o) => o.relativePath === "delivery-queue/d-bad.json")).toMatchObject({ status: "failed", reason: expect.stringMatching(/invalid JSON/) });
    expect(run.sources.filter((o) => o.status === "imported")).toHaveLength(8);
    expect(run.sources.find((o) => o.kind === "subagent-runs")).toMatchObject({ status: "imported" });
    expect(fs.existsSync(path.join(stateDir, "delivery-queue/d-bad.json"))).toBe(true);
    const dump = dumpState(paths);
    const again = await migrate(paths);
    expect(again.run.sources.map((o) => [o.relativePath, o.status])).toEqual([["delivery-queue/d-bad.json", "failed"]]);
    expect(dumpState(paths)).toEqual(dump);
  });
});
