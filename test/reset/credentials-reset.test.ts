// reset --scope config+creds+sessions after a migration (state left in OpenClaw 2026.9.6's format): credential rows
// (live DB and the kept design-v1 DB), legacy credential files and plaintext copies all go; sqlite3 and a byte scan confirm it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CREDENTIAL_TABLES, OPENCLAW_CREDENTIAL_ROWS } from "../../src/reset/credential-stores.js";
import { fixturesDir, makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

/** Every secret planted in the fixtures (auth profiles, OAuth file, device identity/tokens, pairing). */
const SECRETS = [
  "sk-ant-demo-not-a-real-key",
  "demo-refresh-token",
  "oauth-PLANTED-ACCESS-7f3a",
  "PLANTED-PRIVATE-KEY-NEVER-SHOWN",
  "devtok-PLANTED-OPERATOR-TOKEN-abc123",
  "pairtok-PLANTED-PAIRED-TOKEN-789",
];

/** A migrated state (OpenClaw 2026.9.6's format) whose secrets now live in the DBs and under migrated/<run>/. */
async function migratedState() {
  const state = makeTempState("legacy-state");
  fs.cpSync(path.join(fixturesDir, "migration", "devices"), state.stateDir, { recursive: true });
  fs.mkdirSync(path.join(state.stateDir, "credentials"), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(state.stateDir, "credentials", "oauth.json"), JSON.stringify({ google: { access: "oauth-PLANTED-ACCESS-7f3a", refresh: "r", expires: 1 } }), { mode: 0o600 });
  const fix = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
  expect(fix.code, fix.stdout + fix.stderr).toBe(0);
  return state;
}

/** Paths (relative to `dir`) of files whose bytes contain any secret. */
function filesWithSecrets(dir: string): string[] {
  const hits: string[] = [];
  for (const [rel, entry] of Object.entries(snapshotTree(dir))) {
    if (entry.type !== "file") continue;
    const bytes = fs.readFileSync(path.join(dir, rel)).toString("latin1");
    if (SECRETS.some((s) => bytes.includes(s))) hits.push(rel);
  }
  return hits.sort();
}

/** sqlite3 CLI 3.40 reads OpenClaw 2026.9.6's files (it cannot write them): every check here only reads. */
function sqliteCount(db: string, table: string, where = ""): number {
  return Number(execFileSync("sqlite3", [db, `SELECT count(*) FROM ${table}${where}`], { encoding: "utf8" }).trim());
}

function keyWhere(key: string | undefined): string {
  return key === undefined ? "" : ` WHERE state_key = '${key}'`;
}

/** The design-v1 global DB the format upgrade kept under migrated/format-upgrade-<time>/. */
function keptGlobalDb(stateDir: string): string {
  const runs = fs.readdirSync(path.join(stateDir, "migrated")).filter((r) => r.startsWith("format-upgrade-"));
  expect(runs).toHaveLength(1);
  return path.join(stateDir, "migrated", runs[0]!, "state", "openclaw.sqlite");
}

describe("reset --scope config+creds+sessions removes credentials wherever the migration put them", () => {
  it("dry-run lists the credential rows (live and kept DB), legacy files and migrated copies; the run removes them all", async () => {
    const { env, paths, stateDir } = await migratedState();
    const kept = keptGlobalDb(stateDir);
    const before = filesWithSecrets(stateDir);
    // Sanity: the migration moved the secrets into the DBs (OpenClaw's format, the kept design-v1 file) and under migrated/<run>/.
    expect(before).toContain("state/openclaw.sqlite");
    expect(before).toContain(path.relative(stateDir, kept));
    expect(before.some((p) => p.startsWith("migrated/2"))).toBe(true);
    expect(sqliteCount(paths.globalDbPath, "config_machine_state", keyWhere("authProfiles.store"))).toBe(1);
    expect(sqliteCount(kept, "auth_profile_stores")).toBeGreaterThan(0);

    const tree = snapshotTree(stateDir);
    const dry = await runInProcess(["reset", "--scope", "config+creds+sessions", "--dry-run", "--json"], env);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout);
    expect(plan.ok).toBe(true);
    const cleared = plan.tablesCleared as Array<{ table: string; rows: number; key?: string; database?: string }>;
    const live = cleared.filter((t) => t.database === undefined).map((t) => (t.key ? `${t.table}:${t.key}` : t.table));
    expect(live).toEqual(expect.arrayContaining(["config_machine_state:authProfiles.store", "config_machine_state:authProfiles.state", "device_identities", "device_auth_tokens", "device_pairing_paired"]));
    // The kept design-v1 file: its credential rows (the unmapped pending/node pairing rows too), the file stays.
    const inKept = cleared.filter((t) => t.database === kept).map((t) => t.table);
    expect(inKept).toEqual(expect.arrayContaining(["auth_profile_stores", "auth_profile_state", "device_identities", "device_auth_tokens", "device_pairing_entries", "node_pairing_entries"]));
    expect(cleared.every((t) => t.database === undefined || t.database === kept)).toBe(true);
    const removed = plan.removed as Array<{ path: string; kind: string }>;
    const copies = removed.filter((r) => r.kind === "migrated-copy").map((r) => path.relative(stateDir, r.path));
    expect(copies.some((c) => c.endsWith(path.join("identity", "device-auth.json")))).toBe(true);
    expect(copies.some((c) => c.endsWith(path.join("agents", "main", "agent", "auth-profiles.json")))).toBe(true);
    expect(copies.some((c) => c.endsWith(path.join("agents", "main", "sessions")))).toBe(true);
    // The kept design-v1 agent DB is sessions: removed; the kept global DB is not removed (its other rows stay).
    expect(copies.some((c) => /^migrated\/format-upgrade-[^/]+\/agents\/main\/agent\/openclaw-agent\.sqlite$/.test(c))).toBe(true);
    expect(removed.map((r) => r.path)).not.toContain(kept);
    expect(plan.kept.map((k: { path: string }) => k.path)).toContain(kept);
    expect(snapshotTree(stateDir)).toEqual(tree);

    const human = await runInProcess(["reset", "--scope", "config+creds+sessions", "--dry-run"], env);
    expect(human.stdout).toMatch(/would clear\s+table\s+config_machine_state \(1 row\) — shared auth profile store: API keys and OAuth tokens \(config_machine_state 'authProfiles\.store'\)/);
    expect(human.stdout).toMatch(/would clear\s+table\s+auth_profile_stores \(\d+ rows?\) — auth profiles: API keys and OAuth tokens — in the design-v1 database kept by the format upgrade, migrated\/format-upgrade-/);
    expect(human.stdout).toMatch(/would remove\s+migrated-copy\s+.*device-auth\.json/);

    const keptCronRows = sqliteCount(kept, "cron_jobs");
    const run = await runInProcess(["reset", "--scope", "config+creds+sessions", "--yes", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const done = JSON.parse(run.stdout);
    expect(done).toMatchObject({ ok: true, status: "completed", registryRowsRemoved: ["main"] });
    for (const { table, key } of OPENCLAW_CREDENTIAL_ROWS) expect(sqliteCount(paths.globalDbPath, table, keyWhere(key)), `${table} ${key ?? ""}`).toBe(0);
    for (const table of Object.keys(CREDENTIAL_TABLES)) expect(sqliteCount(kept, table), `kept ${table}`).toBe(0);
    // Not a byte of any secret is left in the state dir: DB pages (secure_delete), WAL, files, copies, the kept DB.
    expect(filesWithSecrets(stateDir)).toEqual([]);
    // What the scope does not name stays: the global DB, its cron rows and ledger, the shared-store marker, the
    // kept design-v1 file with its other rows.
    expect(sqliteCount(paths.globalDbPath, "cron_jobs")).toBeGreaterThan(0);
    expect(sqliteCount(paths.globalDbPath, "migration_sources")).toBeGreaterThan(0);
    expect(sqliteCount(paths.globalDbPath, "config_machine_state", keyWhere("auth.sharedStore"))).toBe(1);
    expect(sqliteCount(paths.globalDbPath, "agent_databases")).toBe(0);
    expect(sqliteCount(kept, "cron_jobs")).toBe(keptCronRows);
    expect(keptCronRows).toBeGreaterThan(0);
    expect(execFileSync("sqlite3", [kept, "PRAGMA integrity_check"], { encoding: "utf8" }).trim()).toBe("ok");
    expect(execFileSync("sqlite3", [paths.globalDbPath, "PRAGMA integrity_check"], { encoding: "utf8" }).trim()).toBe("ok");
  });

  it("removes legacy credential files that were never migrated (an agent's auth profiles)", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    const profiles = path.join(stateDir, "agents", "main", "agent", "auth-profiles.json");
    expect(fs.existsSync(profiles)).toBe(true);
    const run = await runInProcess(["reset", "--scope", "config+creds+sessions", "--yes"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/removed\s+credential-file\s+.*auth-profiles\.json/);
    expect(fs.existsSync(profiles)).toBe(false);
    expect(filesWithSecrets(stateDir)).toEqual([]);
    // Models are not credentials: the legacy agent dir keeps them.
    expect(fs.existsSync(path.join(stateDir, "agent", "models.json"))).toBe(true);
  });

  it("scope config leaves credentials alone (tables and copies)", async () => {
    const { env, paths, stateDir } = await migratedState();
    const run = await runInProcess(["reset", "--scope", "config", "--yes", "--json"], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).tablesCleared).toEqual([]);
    expect(sqliteCount(paths.globalDbPath, "config_machine_state", keyWhere("authProfiles.store"))).toBe(1);
    expect(sqliteCount(keptGlobalDb(stateDir), "auth_profile_stores")).toBeGreaterThan(0);
    expect(filesWithSecrets(stateDir).some((p) => p.startsWith("migrated/"))).toBe(true);
  });
});

describe("reset module layout", () => {
  it("apply-reset and reset-backup do not import each other", () => {
    const src = path.join(fixturesDir, "..", "src", "reset");
    expect(fs.readFileSync(path.join(src, "reset-backup.ts"), "utf8")).not.toMatch(/from "\.\/apply-reset\.js"/);
  });
});
