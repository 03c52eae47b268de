// One file of every class (fixtures/migration/kitchen-sink): doctor names each file it will not import, --fix imports the rest.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, repoRoot, runBin } from "../helpers/temp-state.js";

/**
 * The expected class of every path of the fixture (plus the special entries the test adds). `imported` means
 * an importer of the registry picks it up; `skipped` means an importer detects it and leaves it in place with a
 * reason (the plan names it, doctor reports it).
 */
const EXPECTED: Record<string, string> = {
  // imported by this tool
  "agents/main/sessions/sessions.json": "imported",
  "agents/main/sessions/s-main.jsonl": "imported",
  "agents/main/sessions/s-ops.jsonl": "imported",
  "agents/main/agent/auth-profiles.json": "imported",
  "agents/main/agent/models.json": "imported",
  "audit/crestodian.jsonl": "imported",
  "bindings/current-conversations.json": "imported",
  "commitments.json": "imported",
  "credentials/oauth.json": "imported",
  "cron/jobs.json": "imported",
  "cron/runs/daily-brief.jsonl": "imported",
  "delivery-queue/d-1.json": "imported",
  "devices/paired.json": "imported",
  "exec-approvals.json": "imported",
  "gateway-instance-id": "imported",
  "identity/device.json": "imported",
  "logs/config-audit.jsonl": "imported",
  "logs/config-health.json": "imported",
  "nodes/paired.json": "imported",
  "plugins/installs.json": "imported",
  "sandbox/containers.json": "imported",
  "settings/tts.json": "imported",
  "subagents/runs.json": "imported",
  "tui/last-session.json": "imported",
  "update-check.json": "imported",
  "workspace/.openclaw/workspace-state.json": "imported",
  "acp/event-ledger.json": "imported",
  "agents/main/sessions/s-main.trajectory.jsonl": "imported",
  "credentials/telegram-allowFrom.json": "imported",
  "credentials/telegram-pairing.json": "imported",
  "media/inbound/photo-1.png": "imported",
  "node.json": "imported",
  "plugin-binding-approvals.json": "imported",
  "push/apns-registrations.json": "imported",
  "push/vapid-keys.json": "imported",
  "push/web-push-subscriptions.json": "imported",
  "settings/voicewake-routing.json": "imported",
  "settings/voicewake.json": "imported",
  // added by the test: a real never-shipped sidecar database (deleted after the verified backup)
  "tasks/runs.sqlite": "imported",
  // detected by an importer, then left in place with a reason (named by doctor, never imported)
  "agents/main/sessions/s-main.acp-stream.jsonl": "skipped",
  "plugin-state/state.sqlite": "skipped",
  // owned by plugins' own migrations
  "matrix": "plugin",
  "msteams-conversations.json": "plugin",
  "telegram": "plugin",
  "voice-call/calls.jsonl": "plugin",
  "workspace/.openclaw-wiki": "plugin",
  "workspace/memory/.dreams": "plugin",
  // cache, lock, temp, never-shipped sidecar
  "agents/main/sessions/s-main.jsonl.lock": "discard",
  "cache": "discard",
  "gateway.1a2b3c.lock": "discard",
  // archived leftover
  "agents/main/sessions/s-main-old.jsonl.reset.2025-12-31T00-00-00.000Z": "archived",
  // current state
  "openclaw.json": "current",
  "extensions": "current",
  "logs": "current",
  "workspace": "current",
  "credentials": "current",
  // unknown
  "notes.txt": "unknown",
  // added by the test: a symlink on a legacy path and a FIFO where a legacy file is expected
  "agents/work/sessions": "special",
  "devices/pending.json": "special",
};

/** Every file the fixture holds, as a path relative to the state dir. */
function fixtureFiles(dir: string, rel = ""): string[] {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? fixtureFiles(dir, r) : [r];
  });
}

/** The class the expectation gives a file: its own row, else the row of the closest directory that has one. */
function expectedFor(file: string): string | undefined {
  for (let p = file; p !== "."; p = path.posix.dirname(p)) if (EXPECTED[p]) return EXPECTED[p];
  return undefined;
}

function kitchenSink(): ReturnType<typeof makeTempState> {
  const state = makeTempState("migration/kitchen-sink");
  const outside = path.join(state.root, "elsewhere", "sessions");
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(outside, "s-x.jsonl"), '{"type":"session","version":3,"id":"s-x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n');
  fs.mkdirSync(path.join(state.stateDir, "agents/work"), { recursive: true });
  fs.symlinkSync(outside, path.join(state.stateDir, "agents/work/sessions"));
  expect(spawnSync("mkfifo", [path.join(state.stateDir, "devices/pending.json")]).status).toBe(0);
  fs.mkdirSync(path.join(state.stateDir, "tasks"));
  expect(spawnSync("sqlite3", [path.join(state.stateDir, "tasks/runs.sqlite"), "CREATE TABLE runs (id TEXT)"]).status).toBe(0);
  return state;
}

interface JsonEntry {
  relativePath: string;
  class: string;
  reason: string;
}

describe("kitchen sink", () => {
  it("every file of the fixture has an expected class (the list above covers the fixture)", () => {
    const dir = path.join(repoRoot, "fixtures/migration/kitchen-sink");
    const missing = fixtureFiles(dir).filter((f) => expectedFor(f) === undefined);
    expect(missing).toEqual([]);
  });

  it("migrate plan --json classifies every path as expected; doctor names each one that will not be imported", async () => {
    const { env, stateDir } = kitchenSink();
    const plan = await runBin(["migrate", "plan", "--json"], env, { timeoutMs: 30_000 });
    expect(plan.code, plan.stderr).toBe(0);
    const doc = JSON.parse(plan.stdout).plan;
    const got: Record<string, string> = {};
    for (const s of doc.sources as Array<{ relativePath: string; action: string }>) got[s.relativePath] = s.action === "skip" ? "skipped" : "imported";
    for (const e of [...doc.inventory.entries, ...doc.inventory.current] as JsonEntry[]) got[e.relativePath] = e.class;
    for (const [p, cls] of Object.entries(EXPECTED)) expect(got[p], p).toBe(cls);
    for (const f of fixtureFiles(stateDir)) expect(expectedFor(f), f).toBeDefined();
    const special = (p: string): string => (doc.inventory.entries as JsonEntry[]).find((e) => e.relativePath === p)!.reason;
    expect(special("agents/work/sessions")).toMatch(/symbolic link.*agent work's legacy sessions are not migrated/);
    expect(special("devices/pending.json")).toMatch(/FIFO \(never opened\) where the legacy pending device pairings \(device-pairing\) is expected/);

    const doctor = await runBin(["doctor"], env, { timeoutMs: 30_000 });
    expect(doctor.code, doctor.stderr).toBe(0);
    for (const [p, cls] of Object.entries(EXPECTED)) {
      if (cls === "imported" || cls === "current") continue;
      expect(doctor.stdout, `${p} (${cls})`).toContain(p);
    }
    expect(doctor.stdout).toMatch(/! 6 legacy file\(s\) owned by plugins' own migrations .*Matrix.*Telegram/);
    expect(doctor.stdout).not.toMatch(/No legacy state left/);
  });

  it("doctor --fix imports every imported-class file and leaves (and keeps reporting) the others", async () => {
    const { env, stateDir } = kitchenSink();
    const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env, { timeoutMs: 60_000 });
    expect(fix.code, fix.stderr).toBe(0);
    const doc = JSON.parse(fix.stdout);
    expect(doc.ok).toBe(true);
    const imported = Object.entries(EXPECTED).filter(([, c]) => c === "imported").map(([p]) => p);
    const outcomes = doc.migration.run.sources as Array<{ relativePath: string; status: string }>;
    expect(outcomes.filter((o) => o.status !== "skipped").map((o) => o.relativePath).sort()).toEqual(imported.sort());
    const skipped = Object.entries(EXPECTED).filter(([, c]) => c === "skipped").map(([p]) => p);
    expect(outcomes.filter((o) => o.status === "skipped").map((o) => o.relativePath).sort()).toEqual(skipped.sort());
    expect(outcomes.filter((o) => o.status === "failed")).toEqual([]);
    // Model catalogs and media come back as files: OpenClaw's format reads them there (the import kept them as rows meanwhile).
    for (const p of imported) expect(fs.existsSync(path.join(stateDir, p)), p).toBe(p.endsWith("/models.json") || p.startsWith("media/"));
    for (const [p, cls] of Object.entries(EXPECTED)) {
      if (cls !== "imported" && cls !== "current") expect(fs.existsSync(path.join(stateDir, p)) || fs.lstatSync(path.join(stateDir, p)).isSymbolicLink(), p).toBe(true);
    }
    const after = await runBin(["doctor", "--json"], env, { timeoutMs: 30_000 });
    const afterPlan = JSON.parse(after.stdout).migration.plan;
    const left = [...(afterPlan.inventory.entries as JsonEntry[]).map((e) => e.relativePath), ...(afterPlan.sources as Array<{ relativePath: string; action: string }>).filter((x) => x.action === "skip").map((x) => x.relativePath)];
    for (const [p, cls] of Object.entries(EXPECTED)) if (!["imported", "current"].includes(cls)) expect(left, p).toContain(p);
    // --verbose: archived copies are an info line, whose file list (like every info detail) is shown with --verbose.
    const doctor = await runBin(["doctor", "--verbose"], env, { timeoutMs: 30_000 });
    for (const [p, cls] of Object.entries(EXPECTED)) if (!["imported", "current"].includes(cls)) expect(doctor.stdout, p).toContain(p);
  });
});
