// Delivery queues → delivery_queue_entries (outbound-delivery, session-delivery); *.delivered markers removed.
//
// Shapes: OpenClaw src/infra/outbound/delivery-queue-storage.ts (outbound entries, failed/ dir, the
// `<id>.delivered` ack marker, lastAttemptAt backfilled from enqueuedAt for retried legacy entries) and
// src/infra/session-delivery-queue-storage.ts (session entries with kind, sessionKey, route/deliveryContext).
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { execFileSync } from "node:child_process";
import { makeTempState } from "../helpers/temp-state.js";
import { dumpState, ledgerSummary, migrate, migrateAndUpgradeGlobal, rows, sha256Of, writeJson } from "../helpers/migration.js";
import { DELIVERY_HOLD_ENV, deliveryHoldLimit, holdReason } from "../../src/migration/importers/delivery-queue.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("delivery queue importer", () => {
  // The fixture's entries were queued in January 2026: these tests are about columns, not age (see "holding").
  const keepFixtureDeliverable = (): void => void vi.stubEnv(DELIVERY_HOLD_ENV, String(24 * 365 * 100));

  it("imports pending and failed entries of both queues with typed columns and removes stale markers", async () => {
    keepFixtureDeliverable();
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
    keepFixtureDeliverable();
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

/** The sqlite3 CLI, an independent reader of the upgraded file. */
function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-readonly", "-bail", "-json", file, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as T[]);
}

const HOUR = 3_600_000;

describe("holding stale pending entries for review (OpenClaw 2026.9.6 / upstream #135191)", () => {
  /** A state with only a delivery queue: an entry per age, and a failed one as old as the stale one. */
  function queueState(now: number) {
    const state = makeTempState();
    const entry = (id: string, enqueuedAt: number | undefined) => ({ id, ...(enqueuedAt === undefined ? {} : { enqueuedAt }), channel: "telegram", to: "12345", payloads: [{ text: id }], retryCount: 0 });
    writeJson(state.stateDir, "delivery-queue/d-old.json", entry("d-old", now - 90 * 24 * HOUR));
    writeJson(state.stateDir, "delivery-queue/d-fresh.json", entry("d-fresh", now - HOUR));
    writeJson(state.stateDir, "delivery-queue/d-no-time.json", entry("d-no-time", undefined));
    writeJson(state.stateDir, "delivery-queue/failed/d-failed-old.json", entry("d-failed-old", now - 90 * 24 * HOUR));
    writeJson(state.stateDir, "session-delivery-queue/s-old.json", { id: "s-old", kind: "agentTurn", sessionKey: "agent:main:main", route: { channel: "slack", to: "C1" }, enqueuedAt: now - 80 * HOUR, retryCount: 1 });
    return state;
  }

  it("imports a 90-day-old pending entry as held (a warning naming it), a 1-hour-old one as pending; failed stays failed", async () => {
    const now = Date.now();
    const { paths, stateDir } = queueState(now);
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.find((s) => s.relativePath === "delivery-queue/d-old.json")!.notes.join()).toMatch(/will be held for review, not delivered: pending since .* \(90 days\), at least 72 h/);
    expect(plan!.sources.find((s) => s.relativePath === "delivery-queue/d-fresh.json")!.notes).toEqual([]);
    const statuses = rows<{ queue_name: string; id: string; status: string }>(paths.globalDbPath, "SELECT queue_name, id, status FROM delivery_queue_entries ORDER BY queue_name, id");
    expect(statuses).toEqual([
      { queue_name: "outbound-delivery", id: "d-failed-old", status: "failed" },
      { queue_name: "outbound-delivery", id: "d-fresh", status: "pending" },
      { queue_name: "outbound-delivery", id: "d-no-time", status: "held" },
      { queue_name: "outbound-delivery", id: "d-old", status: "held" },
      { queue_name: "session-delivery", id: "s-old", status: "held" },
    ]);
    // Held, not lost: the whole entry is kept for review.
    const [old] = rows<{ entry_json: string; enqueued_at: number }>(paths.globalDbPath, "SELECT entry_json, enqueued_at FROM delivery_queue_entries WHERE id = 'd-old'");
    expect(JSON.parse(old!.entry_json)).toMatchObject({ id: "d-old", payloads: [{ text: "d-old" }] });
    expect(old!.enqueued_at).toBe(now - 90 * 24 * HOUR);
    const outcome = (rel: string) => run.sources.find((s) => s.relativePath === rel)!;
    expect(outcome("delivery-queue/d-old.json")).toMatchObject({ status: "warning" });
    expect(outcome("delivery-queue/d-old.json").warnings).toEqual([expect.stringMatching(/^held for review, not delivered: outbound-delivery entry d-old is pending since .* \(90 days\), at least 72 h; imported with status 'held'/)]);
    expect(outcome("delivery-queue/d-no-time.json").warnings.join()).toMatch(/no usable enqueuedAt/);
    expect(outcome("session-delivery-queue/s-old.json").warnings.join()).toMatch(/\(80 h\), at least 72 h/);
    expect(outcome("delivery-queue/d-fresh.json")).toMatchObject({ status: "imported", warnings: [] });
    expect(outcome("delivery-queue/failed/d-failed-old.json")).toMatchObject({ status: "imported", warnings: [] });
    expect(run.sources.filter((s) => s.warnings.some((w) => w.startsWith("held for review"))).length).toBe(3);
    expect(run.status).toBe("warning");
    // The held files are retired like the others (the originals under migrated/<run>/): a second run has nothing to do.
    expect(fs.existsSync(path.join(stateDir, "delivery-queue/d-old.json"))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "migrated", run.runId, "delivery-queue/d-old.json"))).toBe(true);
    const again = await migrate(paths);
    expect(again.run.sources).toEqual([]);
  });

  it("after the format upgrade OpenClaw's queue holds only the deliverable entries; the held ones are counted and named", async () => {
    const now = Date.now();
    const { paths, stateDir } = queueState(now);
    const { result, target } = await migrateAndUpgradeGlobal(stateDir, paths, now);
    // What 9.6's recovery reads (status 'pending', or failed + settlement_pending): never a held entry.
    expect(cli(target, "SELECT queue_name, id, status FROM delivery_queue_entries ORDER BY queue_name, id")).toEqual([
      { queue_name: "outbound-delivery", id: "d-failed-old", status: "failed" },
      { queue_name: "outbound-delivery", id: "d-fresh", status: "pending" },
    ]);
    expect(result.read.delivery_queue_entries).toBe(5);
    expect(result.written.delivery_queue_entries).toBe(2);
    expect(result.unmapped.delivery_queue_entries).toBe(3);
    const held = result.notes.filter((n) => n.code === "global.delivery.held");
    expect(held).toHaveLength(1);
    expect(held[0]!.message).toMatch(/^delivery_queue_entries: 3 entries held for review \(outbound-delivery\/d-no-time, outbound-delivery\/d-old, session-delivery\/s-old\) left out of OpenClaw's queue/);
    // The kept design-v1 file still holds them.
    expect(rows(paths.globalDbPath, "SELECT id FROM delivery_queue_entries WHERE status = 'held' ORDER BY id")).toEqual([{ id: "d-no-time" }, { id: "d-old" }, { id: "s-old" }]);
  });

  it("takes the age limit from OPENCLAW_STATE_DELIVERY_HOLD_HOURS, and says so when the value is unusable", async () => {
    vi.stubEnv(DELIVERY_HOLD_ENV, "0.5");
    const now = Date.now();
    const { paths } = queueState(now);
    await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT id FROM delivery_queue_entries WHERE status = 'pending'")).toEqual([]);
    expect(rows(paths.globalDbPath, "SELECT id, status FROM delivery_queue_entries WHERE id = 'd-fresh'")).toEqual([{ id: "d-fresh", status: "held" }]);

    vi.stubEnv(DELIVERY_HOLD_ENV, "three days");
    const other = queueState(Date.now());
    const { run } = await migrate(other.paths);
    const fresh = run.sources.find((s) => s.relativePath === "delivery-queue/d-fresh.json")!;
    expect(fresh.status).toBe("warning");
    expect(fresh.warnings).toEqual([`${DELIVERY_HOLD_ENV}="three days" is not a number of hours (0 or more); the default 72 h was used`]);
    expect(rows(other.paths.globalDbPath, "SELECT status FROM delivery_queue_entries WHERE id = 'd-fresh'")).toEqual([{ status: "pending" }]);
  });

  it("holds at exactly the limit and for a future enqueue time (OpenClaw's rule), not just under it", () => {
    const limit = deliveryHoldLimit({});
    expect(limit).toEqual({ hours: 72, ms: 72 * HOUR, problem: null });
    const now = 1_800_000_000_000;
    expect(holdReason(now - 72 * HOUR + 1, now, limit)).toBeNull();
    expect(holdReason(now - 72 * HOUR, now, limit)).toMatch(/at least 72 h/);
    expect(holdReason(now + 60_000, now, limit)).toMatch(/in the future/);
    expect(holdReason(null, now, limit)).toMatch(/no usable enqueuedAt/);
    expect(deliveryHoldLimit({ [DELIVERY_HOLD_ENV]: "-1" }).problem).toMatch(/not a number of hours/);
    expect(deliveryHoldLimit({ [DELIVERY_HOLD_ENV]: "0" })).toEqual({ hours: 0, ms: 0, problem: null });
  });
});
