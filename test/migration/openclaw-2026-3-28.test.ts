// State written by the real openclaw@2026.3.28 (fixtures/openclaw-2026.3.28), migrated by our binary's doctor --fix: every record where 2026.9.6 keeps it.
//
// The expectations come from reading the fixture's JSON/JSONL here, independently of our importers; the databases are
// read with the sqlite3 CLI (read-only), never with our own code.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fixturesDir, makeTempDir, runBin, type CliRun } from "../helpers/temp-state.js";

const FIXTURE = path.join(fixturesDir, "openclaw-2026.3.28", "state");
/** The scratch root the release ran in: its files name absolute paths under it (HOW.md). It must not exist here. */
const SCRATCH_ROOT = "/tmp/openclaw-2026.3.28-fixture";
const AGENTS = ["main", "ops"] as const;

type Row = Record<string, string | number | null>;
type Json = Record<string, unknown>;

/** The sqlite3 CLI, read-only, JSON mode. */
function sql(file: string, query: string): Row[] {
  const out = execFileSync("sqlite3", ["-readonly", "-bail", "-json", file, query], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as Row[]);
}

function readJson(rel: string): Json {
  return JSON.parse(fs.readFileSync(path.join(FIXTURE, rel), "utf8")) as Json;
}

function readJsonl(file: string): Json[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json);
}

function parse(value: string | number | null | undefined): Json {
  return JSON.parse(String(value)) as Json;
}

/** Legacy routing fields 9.6's importer folds into `delivery` (checked per entry below; `sessionFile` is dropped). */
const ROUTE_FIELDS = new Set(["deliveryContext", "lastTo", "lastChannel", "lastAccountId", "lastThreadId", "origin"]);

let copy = "";
let run: CliRun;
let report: Json;
const globalDb = (): string => path.join(copy, "state", "openclaw.sqlite");
const agentDb = (agentId: string): string => path.join(copy, "agents", agentId, "agent", "openclaw-agent.sqlite");

beforeAll(async () => {
  // The config and session index name paths under the release's scratch root (workspaces, agentDir, sessionFile);
  // with that root present, doctor --fix would read (and retire) workspace files outside the copy.
  expect(fs.existsSync(SCRATCH_ROOT), `${SCRATCH_ROOT} exists: remove it (the fixture's recorded paths must not resolve here)`).toBe(false);
  const root = makeTempDir("ocs-oc3328-");
  copy = path.join(root, "state");
  fs.cpSync(FIXTURE, copy, { recursive: true });
  run = await runBin(["doctor", "--fix", "--yes", "--json", "--state-dir", copy], { PATH: process.env.PATH, HOME: root, TMPDIR: root }, { timeoutMs: 120_000 });
  report = JSON.parse(run.stdout) as Json;
}, 150_000);

// One test body: makeTempDir's afterEach removes the copy after the first test of the file.
describe("openclaw@2026.3.28's own state through doctor --fix", () => {
  it("imports every session, transcript event, cron job and run, auth profile and device record", () => {
    // --- the run itself ---------------------------------------------------------------------------------------------
    expect(run.code, run.stderr || run.stdout).toBe(0);
    expect(report.ok).toBe(true);
    const migration = (report.migration as { run: { status: string; totals: Record<string, number>; sources: Array<{ relativePath: string; status: string }> } }).run;
    expect(migration.status).toBe("completed");
    expect(migration.totals.failed).toBe(0);
    expect(migration.totals.skipped).toBe(0);
    expect((report.formatUpgrade as { status: string }).status).toBe("completed");
    // Every legacy file the release wrote was planned and imported (canvas/index.html is the gateway's static page).
    const legacyFiles = listFiles(FIXTURE).filter((rel) => !/^openclaw\.json(\.bak(\.\d+)?)?$/.test(rel) && rel !== "canvas/index.html");
    expect(migration.sources.map((s) => s.relativePath).sort()).toEqual(legacyFiles.sort());
    for (const source of migration.sources) expect([source.relativePath, source.status]).toEqual([source.relativePath, "imported"]);
    expect(sql(globalDb(), "PRAGMA user_version")).toEqual([{ user_version: 18 }]);

    // --- sessions and transcripts, per agent ---------------------------------------------------------------------------
    for (const agentId of AGENTS) {
      const db = agentDb(agentId);
      expect(sql(db, "PRAGMA user_version")).toEqual([{ user_version: 23 }]);
      expect(sql(db, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
      expect(sql(db, "PRAGMA foreign_key_check")).toEqual([]);
      const index = readJson(`agents/${agentId}/sessions/sessions.json`) as Record<string, Json>;
      const nodes = new Map(sql(db, "SELECT session_key, current_session_id, entry_json, entry_valid, updated_at FROM session_nodes").map((r) => [String(r.session_key), r]));
      // Exactly the index's keys: no synthesized main key, no orphan.
      expect([...nodes.keys()].sort()).toEqual(Object.keys(index).sort());
      for (const [key, entry] of Object.entries(index)) {
        const node = nodes.get(key)!;
        expect([key, node.current_session_id, node.entry_valid, node.updated_at]).toEqual([key, entry.sessionId, 1, entry.updatedAt]);
        const stored = parse(node.entry_json);
        // Every other field of the legacy entry is kept as written (skills snapshot, prompt report, auth override …).
        for (const [field, value] of Object.entries(entry)) {
          if (ROUTE_FIELDS.has(field) || field === "sessionFile") continue;
          // As 9.6: the skills snapshot's resolvedSkills is a runtime cache it never persists.
          if (field === "skillsSnapshot") {
            const { resolvedSkills, ...snapshot } = value as Json;
            expect(resolvedSkills).toBeDefined();
            expect([key, field, stored[field]]).toEqual([key, field, snapshot]);
            continue;
          }
          expect([key, field, stored[field]]).toEqual([key, field, value]);
        }
        expect(stored).not.toHaveProperty("sessionFile");
        expect(stored).toHaveProperty("delivery");
      }
      // main's heartbeat run left lastTo/deliveryContext.to "heartbeat" and origin.provider "cron-event": 9.6 folds them
      // into one external cron-event route (the differential against its doctor checks it byte for byte); ops has none.
      const mainKey = `agent:${agentId}:main`;
      const mainDelivery = parse(nodes.get(mainKey)!.entry_json).delivery;
      if (agentId === "main") expect(mainDelivery).toMatchObject({ kind: "external", route: { channel: "cron-event", target: { to: "heartbeat" } }, context: { channel: "cron-event", to: "heartbeat" } });
      else expect(mainDelivery).toEqual({ kind: "none" });

      // One window per session id; its key is one of the index keys naming that id.
      const ids = [...new Set(Object.values(index).map((e) => String(e.sessionId)))].sort();
      const windows = sql(db, "SELECT session_id, session_key FROM session_windows ORDER BY session_id");
      expect(windows.map((w) => w.session_id)).toEqual(ids);
      for (const w of windows) expect(index[String(w.session_key)]?.sessionId).toBe(w.session_id);

      // Every transcript line, in order, as written, dated by its own timestamp.
      const dir = path.join(FIXTURE, "agents", agentId, "sessions");
      const transcripts = fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
      expect(transcripts.map((n) => n.slice(0, -".jsonl".length)).sort()).toEqual(ids);
      let total = 0;
      for (const name of transcripts) {
        const lines = readJsonl(path.join(dir, name));
        const sessionId = name.slice(0, -".jsonl".length);
        expect(lines[0]).toMatchObject({ type: "session", version: 3, id: sessionId });
        const events = sql(db, `SELECT seq, event_json, created_at, event_zstd FROM transcript_events WHERE session_id = '${sessionId}' ORDER BY seq`);
        expect(events.map((e) => e.seq)).toEqual(lines.map((_, i) => i));
        lines.forEach((line, i) => {
          expect([sessionId, i, parse(events[i]!.event_json)]).toEqual([sessionId, i, line]);
          expect([sessionId, i, events[i]!.created_at]).toEqual([sessionId, i, Date.parse(String(line.timestamp))]);
          expect(events[i]!.event_zstd).toBeNull();
        });
        total += lines.length;
      }
      expect(sql(db, "SELECT count(*) AS n FROM transcript_events")).toEqual([{ n: total }]);
    }

    // --- cron jobs: global cron_jobs, keyed by the store's absolute path ---------------------------------------------
    const storeKey = path.join(copy, "cron", "jobs.json");
    const store = readJson("cron/jobs.json") as { version: number; jobs: Json[] };
    expect(store.version).toBe(1);
    const jobs = sql(globalDb(), "SELECT * FROM cron_jobs ORDER BY sort_order");
    expect(jobs.map((j) => [j.store_key, j.job_id, j.sort_order])).toEqual(store.jobs.map((job, i) => [storeKey, job.id, i]));
    store.jobs.forEach((job, i) => {
      const row = jobs[i]!;
      expect([job.name, row.name, row.enabled, row.agent_id, row.payload_kind, row.description]).toEqual([
        job.name,
        job.name,
        job.enabled ? 1 : 0,
        job.agentId ?? null,
        (job.payload as Json).kind,
        job.description ?? null,
      ]);
      // job_json is the job as written, its runtime state moved to state_json and updatedAtMs to updated_at.
      const { state, updatedAtMs, ...definition } = job;
      const stored = parse(row.job_json);
      expect({ ...stored, state: undefined }).toEqual({ ...definition, state: undefined });
      expect(stored.state).toEqual({});
      expect(parse(row.state_json)).toEqual(state);
      expect(row.updated_at).toBe(updatedAtMs);
      expect(parse(row.schedule_identity)).toEqual({ version: 2, enabled: job.enabled, schedule: job.schedule, hasTrigger: false });
    });
    // The kinds the release wrote: a cron expression with a zone, every-with-anchor, six-field exact, a session key.
    expect(store.jobs.map((j) => (j.schedule as Json).kind).sort()).toEqual(["cron", "cron", "every", "every"]);

    // --- cron runs: task_runs runtime 'cron', one per finished run-log line (a deleted one-shot job's run included) ----
    const runDir = path.join(FIXTURE, "cron", "runs");
    const lines = fs.readdirSync(runDir).flatMap((name) => readJsonl(path.join(runDir, name)).map((line) => ({ name, line })));
    expect(lines.length).toBe(4);
    expect(lines.some(({ line }) => !store.jobs.some((j) => j.id === line.jobId))).toBe(true);
    const runs = new Map(sql(globalDb(), "SELECT * FROM task_runs WHERE runtime = 'cron'").map((r) => [String(r.task_id), r]));
    expect(runs.size).toBe(lines.length);
    for (const { name, line } of lines) {
      expect(name).toBe(`${String(line.jobId)}.jsonl`);
      const row = runs.get(`cron-runlog-import:${String(line.jobId)}:${Number(line.ts)}:1`);
      expect(row, JSON.stringify(line)).toBeDefined();
      expect([row!.source_id, row!.status, row!.error, row!.terminal_summary, row!.started_at, row!.ended_at, row!.child_session_key]).toEqual([
        line.jobId,
        line.status === "ok" ? "succeeded" : "failed",
        line.error ?? null,
        line.summary ?? null,
        line.runAtMs,
        line.ts,
        line.sessionKey ?? null,
      ]);
      expect(parse(row!.detail_json)).toMatchObject({ kind: "cron-run", status: line.status, storeKey, durationMs: line.durationMs, deliveryStatus: line.deliveryStatus });
    }

    // --- auth profiles: main's store is 9.6's shared store (global), ops's lives in its agent DB ----------------------
    const machine = new Map(sql(globalDb(), "SELECT state_key, value_json FROM config_machine_state").map((r) => [String(r.state_key), parse(r.value_json)]));
    expect(machine.get("auth.sharedStore")).toEqual({ location: "state-db" });
    const mainAuth = readJson("agents/main/agent/auth-profiles.json");
    expect(machine.get("authProfiles.store")).toEqual({ version: 1, profiles: mainAuth.profiles });
    expect(machine.get("authProfiles.state")).toMatchObject({ version: 1, order: mainAuth.order, lastGood: mainAuth.lastGood, usageStats: mainAuth.usageStats });
    expect(Object.keys(mainAuth.profiles as Json).sort()).toEqual(["anthropic:default", "anthropic:work", "openai:default"]);
    const opsAuth = readJson("agents/ops/agent/auth-profiles.json");
    const opsStore = sql(agentDb("ops"), "SELECT store_key, store_json FROM auth_profile_store");
    expect(opsStore.map((r) => r.store_key)).toEqual(["primary"]);
    expect(parse(opsStore[0]!.store_json)).toEqual({ version: 1, profiles: opsAuth.profiles });
    const opsState = sql(agentDb("ops"), "SELECT state_key, state_json FROM auth_profile_state");
    expect(opsState.map((r) => r.state_key)).toEqual(["primary"]);
    expect(parse(opsState[0]!.state_json)).toMatchObject({ version: 1, order: opsAuth.order, lastGood: opsAuth.lastGood, usageStats: opsAuth.usageStats });
    // Main's profiles are not copied a second time into its own agent DB.
    expect(sql(agentDb("main"), "SELECT count(*) AS n FROM auth_profile_store")).toEqual([{ n: 0 }]);

    // --- devices, identity, exec approvals, update check --------------------------------------------------------------
    const paired = readJson("devices/paired.json") as Record<string, Json>;
    const pairedRows = sql(globalDb(), "SELECT device_id, public_key, role, client_id, tokens_json, created_at_ms, approved_at_ms, scopes_json FROM device_pairing_paired");
    expect(pairedRows.map((r) => r.device_id)).toEqual(Object.keys(paired));
    for (const row of pairedRows) {
      const device = paired[String(row.device_id)]!;
      expect([row.public_key, row.role, row.client_id, row.created_at_ms, row.approved_at_ms]).toEqual([device.publicKey, device.role, device.clientId, device.createdAtMs, device.approvedAtMs]);
      expect(parse(row.tokens_json)).toEqual(device.tokens);
      expect(JSON.parse(String(row.scopes_json))).toEqual(device.scopes);
    }
    const identity = readJson("identity/device.json");
    // Under 9.6's own key ('primary') with the PEMs byte for byte: its runtime demands canonical framing (trailing newline).
    expect(String(identity.publicKeyPem).endsWith("-----END PUBLIC KEY-----\n")).toBe(true);
    expect(sql(globalDb(), "SELECT identity_key, device_id, public_key_pem, private_key_pem, created_at_ms FROM device_identities")).toEqual([
      { identity_key: "primary", device_id: identity.deviceId, public_key_pem: identity.publicKeyPem, private_key_pem: identity.privateKeyPem, created_at_ms: identity.createdAtMs },
    ]);
    const deviceAuth = readJson("identity/device-auth.json") as { deviceId: string; tokens: Record<string, Json> };
    const tokens = sql(globalDb(), "SELECT device_id, role, token, scopes_json, updated_at_ms FROM device_auth_tokens");
    expect(tokens.map((t) => [t.device_id, t.role, t.token, JSON.parse(String(t.scopes_json)), t.updated_at_ms])).toEqual(
      Object.entries(deviceAuth.tokens).map(([role, t]) => [deviceAuth.deviceId, role, t.token, t.scopes, t.updatedAtMs]),
    );
    // devices/bootstrap.json (a `qr` setup token) is transient: 9.6's doctor archives it without importing, and so do we.
    expect(sql(globalDb(), "SELECT count(*) AS n FROM device_bootstrap_tokens")).toEqual([{ n: 0 }]);
    const approvals = sql(globalDb(), "SELECT config_key, raw_json, agent_count, allowlist_count FROM exec_approvals_config");
    expect(approvals.map((r) => [r.config_key, r.agent_count, r.allowlist_count])).toEqual([["current", 1, 1]]);
    // As 9.6 stores the file: every allowlist entry without an id gets one (derived from the entry); nothing else changes.
    const stored = JSON.parse(String(approvals[0]!.raw_json)) as { agents: Record<string, { allowlist?: Array<Record<string, unknown>> }> };
    const written = readJson("exec-approvals.json") as unknown as { agents: Record<string, { allowlist?: Array<Record<string, unknown>> }> };
    for (const [agentId, agent] of Object.entries(written.agents)) {
      agent.allowlist = agent.allowlist?.map((entry, i) => ({ ...entry, id: entry.id ?? stored.agents[agentId]!.allowlist![i]!.id }));
    }
    expect(stored).toEqual(written);
    for (const agent of Object.values(stored.agents)) for (const e of agent.allowlist ?? []) expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(machine.get("update.checkState")).toEqual(readJson("update-check.json"));

    // --- the legacy files are gone from their old places, kept under migrated/ ----------------------------------------
    for (const rel of legacyFiles) expect([rel, fs.existsSync(path.join(copy, rel))]).toEqual([rel, false]);
    expect(fs.existsSync(path.join(copy, "openclaw.json"))).toBe(true);
  }, 60_000);
});

function listFiles(dir: string, base = dir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const abs = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(abs, base) : [path.relative(base, abs)];
  });
}
