// Times in --json are ISO-8601 strings in every command (docs/cli.md): a generic walk of each real binary's
// document fails on any key that names a time and holds a number, wherever a regression puts it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { makeTempDir, makeTempState, runBin } from "../helpers/temp-state.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A key that names a point in time: `…At`, `…_at`, `…Time`/`…time`, and the bare names scripts use for one. */
const TIME_KEY = /(At|_at|Time|time)$|^(timestamp|ts|created|updated|mtime|date|when|since|until|expires)$/;
/** A time spelled with a unit suffix: the JSON never carries one (`mtimeMs` is printed as `mtime`). */
const TIME_WITH_UNIT = /(At|_at|time|Time)(Ms|_ms)$|^mtime(Ms|_ms)$/;

/**
 * Records as OpenClaw stored them, printed verbatim (docs/cli.md): `sessions show`'s `entry` and each event's
 * `event`, a tail line's `message`. Their own times are the writer's, not ours.
 */
const VERBATIM = [/^\.entry$/, /^\.events\.items\[\]\.event$/, /^\.message$/];

interface Walk {
  numbers: string[];
  unitTimes: string[];
  iso: string[];
}

function walk(value: unknown, at: string, out: Walk): Walk {
  if (VERBATIM.some((re) => re.test(at))) return out;
  if (Array.isArray(value)) for (const item of value) walk(item, `${at}[]`, out);
  else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      const where = `${at}.${key}`;
      if (TIME_WITH_UNIT.test(key)) out.unitTimes.push(where);
      if (TIME_KEY.test(key) && typeof child === "number") out.numbers.push(`${where} = ${child}`);
      if (TIME_KEY.test(key) && typeof child === "string" && ISO.test(child)) out.iso.push(where);
      walk(child, where, out);
    }
  }
  return out;
}

/** Every JSON document of a run: one, or one per line for the NDJSON of `sessions tail`. */
function documents(stdout: string, ndjson: boolean): unknown[] {
  return ndjson ? stdout.trim().split("\n").map((line) => JSON.parse(line) as unknown) : [JSON.parse(stdout) as unknown];
}

describe("--json times are ISO-8601 in every command", () => {
  it("no key naming a time holds a number, across a seeded state's whole command set", async () => {
    const state = makeTempState("legacy-state");
    const { env } = state;
    const restoreTarget = path.join(makeTempDir(), "restored");
    const seen: Record<string, Walk> = {};
    const run = async (args: string[], options: { ndjson?: boolean; code?: number } = {}): Promise<unknown[]> => {
      const label = args.join(" ");
      const r = await runBin([...args, "--json"], env);
      expect(r.code, `${label}: ${r.stderr}`).toBe(options.code ?? 0);
      const docs = documents(r.stdout, options.ndjson ?? false);
      const found: Walk = { numbers: [], unitTimes: [], iso: [] };
      for (const doc of docs) walk(doc, "", found);
      seen[label] = found;
      return docs;
    };

    // Legacy state: the plan (doctor, migrate plan), the run (doctor --fix, with its pre-migration backup), the ledger.
    await run(["doctor"]);
    await run(["migrate", "plan"]);
    await run(["migrate", "skip", "agents/main/sessions/s-lost.jsonl", "--reason", "test", "--dry-run"]);
    await run(["doctor", "--fix", "--yes"]);
    await run(["migrate", "history"]);
    await run(["migrate", "upgrade", "--dry-run"]);
    // Sessions: list (streamed), show, tail (NDJSON); delete refuses OpenClaw's format (exit 1), its error document walked too.
    await run(["sessions", "list", "--all-agents"]);
    await run(["sessions", "show", "agent:main:main"]);
    await run(["sessions", "tail", "agent:main:main", "--lines", "5"], { ndjson: true });
    await run(["sessions", "delete", "agent:main:main", "--dry-run"], { code: 1 });
    // Backups: create, list, verify, restore (to a target, then in place so a previous copy is kept), prune both ways.
    await run(["backup", "create"]);
    await run(["backup", "list"]);
    await run(["backup", "verify", "latest"]);
    await run(["backup", "restore", "latest", "--target", restoreTarget, "--yes"]);
    await run(["backup", "restore", "latest", "--yes"]);
    await run(["backup", "list", "--all"]);
    await run(["backup", "prune", "--keep-last", "1", "--dry-run"]);
    await run(["backup", "prune", "--pre-restore", "--dry-run"]);
    await run(["reset", "--scope", "config", "--dry-run"]);
    // A live gateway lease, so inspect prints its times too.
    // (The database is in OpenClaw's format after --fix: the row goes in as its gateway writes it, through SQLite directly.)
    const db = new Database(state.paths.globalDbPath);
    const now = Date.now();
    db.prepare("INSERT INTO state_leases (scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at) VALUES (?, 'gateway', ?, ?, ?, ?, ?, ?)").run(
      GATEWAY_SCOPE,
      `${process.pid}@${os.hostname()}`,
      now + 60_000,
      now,
      JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: now }),
      now,
      now,
    );
    db.close();
    await run(["inspect"]);

    const numbers = Object.entries(seen).flatMap(([label, w]) => w.numbers.map((n) => `${label}: ${n}`));
    const unitTimes = Object.entries(seen).flatMap(([label, w]) => w.unitTimes.map((n) => `${label}: ${n}`));
    expect(numbers, "times printed as numbers").toEqual([]);
    expect(unitTimes, "times printed under a unit-suffixed key").toEqual([]);

    // Not vacuous: the documents that carry times carry them, as ISO strings, where scripts look for them.
    const has = (label: string, where: string): void => expect(seen[label]?.iso, `${label} has ${where}`).toContain(where);
    has("doctor", ".migration.plan.plannedAt");
    has("doctor", ".migration.plan.sources[].mtime");
    has("migrate plan", ".plan.plannedAt");
    has("doctor --fix --yes", ".migration.run.startedAt");
    has("doctor --fix --yes", ".migration.run.finishedAt");
    has("migrate history", ".runs[].startedAt");
    has("migrate history", ".runs[].sources[].mtime");
    has("sessions list --all-agents", ".sessions[].updatedAt");
    has("sessions list --all-agents", ".sessions[].createdAt");
    has("sessions show agent:main:main", ".session.updatedAt");
    has("sessions show agent:main:main", ".routes[].updatedAt");
    has("sessions show agent:main:main", ".transcript.firstAt");
    has("sessions show agent:main:main", ".events.items[].createdAt");
    has("sessions tail agent:main:main --lines 5", ".createdAt");
    has("backup create", ".manifest.createdAt");
    has("backup list", ".backups[].createdAt");
    has("backup list --all", ".preRestoreCopies[].createdAt");
    has("backup prune --keep-last 1 --dry-run", ".kept[].createdAt");
    has("backup prune --pre-restore --dry-run", ".removed[].createdAt");
    has("inspect", ".lastMigrationRuns[].startedAt");
    has("inspect", ".databases[].sessions.newest.updatedAt");
    has("inspect", ".leases[].expiresAt");
    expect(fs.existsSync(restoreTarget)).toBe(true);
  }, 240_000);

  it("the walker itself catches a number under a time key, and skips only the verbatim records", () => {
    const found = walk({ a: { updatedAt: 5, lastSeenAt: "2026-01-01T00:00:00.000Z", created_at: 7, timeoutMs: 3, mtimeMs: 4 }, entry: { updatedAt: 1 } }, "", { numbers: [], unitTimes: [], iso: [] });
    expect(found.numbers).toEqual([".a.updatedAt = 5", ".a.created_at = 7"]);
    expect(found.unitTimes).toEqual([".a.mtimeMs"]);
    expect(found.iso).toEqual([".a.lastSeenAt"]);
  });
});
