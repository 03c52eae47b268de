// reset --scope config+creds+sessions after a migration: credential rows, legacy credential files and the
// plaintext copies under migrated/<run>/ all go (dry-run lists them); sqlite3 and a byte scan confirm it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CREDENTIAL_TABLES } from "../../src/reset/credential-stores.js";
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

/** A migrated state whose secrets now live in the global DB and under migrated/<run>/. */
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

function sqliteCount(db: string, table: string): number {
  return Number(execFileSync("sqlite3", [db, `SELECT count(*) FROM ${table}`], { encoding: "utf8" }).trim());
}

describe("reset --scope config+creds+sessions removes credentials wherever the migration put them", () => {
  it("dry-run lists the credential tables, legacy files and migrated copies; the run removes them all", async () => {
    const { env, paths, stateDir } = await migratedState();
    const before = filesWithSecrets(stateDir);
    // Sanity: the migration moved the secrets into the DB and under migrated/<run>/.
    expect(before).toContain("state/openclaw.sqlite");
    expect(before.some((p) => p.startsWith("migrated/"))).toBe(true);
    expect(sqliteCount(paths.globalDbPath, "auth_profile_stores")).toBeGreaterThan(0);

    const tree = snapshotTree(stateDir);
    const dry = await runInProcess(["reset", "--scope", "config+creds+sessions", "--dry-run", "--json"], env);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout);
    expect(plan.ok).toBe(true);
    const tables = (plan.tablesCleared as Array<{ table: string; rows: number }>).map((t) => t.table);
    expect(tables).toEqual(expect.arrayContaining(["auth_profile_stores", "auth_profile_state", "device_identities", "device_auth_tokens", "device_pairing_entries", "node_pairing_entries"]));
    const copies = (plan.removed as Array<{ path: string; kind: string }>).filter((r) => r.kind === "migrated-copy").map((r) => path.relative(stateDir, r.path));
    expect(copies.some((c) => c.endsWith(path.join("identity", "device-auth.json")))).toBe(true);
    expect(copies.some((c) => c.endsWith(path.join("agents", "main", "agent", "auth-profiles.json")))).toBe(true);
    expect(copies.some((c) => c.endsWith(path.join("agents", "main", "sessions")))).toBe(true);
    expect(snapshotTree(stateDir)).toEqual(tree);

    const human = await runInProcess(["reset", "--scope", "config+creds+sessions", "--dry-run"], env);
    expect(human.stdout).toMatch(/would clear\s+table\s+auth_profile_stores \(\d+ rows?\) — auth profiles: API keys and OAuth tokens/);
    expect(human.stdout).toMatch(/would remove\s+migrated-copy\s+.*device-auth\.json/);

    const run = await runInProcess(["reset", "--scope", "config+creds+sessions", "--yes", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const done = JSON.parse(run.stdout);
    expect(done).toMatchObject({ ok: true, status: "completed" });
    for (const table of Object.keys(CREDENTIAL_TABLES)) expect(sqliteCount(paths.globalDbPath, table), table).toBe(0);
    // Not a byte of any secret is left in the state dir: DB pages (secure_delete), WAL, files, copies.
    expect(filesWithSecrets(stateDir)).toEqual([]);
    // What the scope does not name stays: the global DB, its cron rows and the migration ledger.
    expect(sqliteCount(paths.globalDbPath, "cron_jobs")).toBeGreaterThan(0);
    expect(sqliteCount(paths.globalDbPath, "migration_sources")).toBeGreaterThan(0);
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
    expect(sqliteCount(paths.globalDbPath, "auth_profile_stores")).toBeGreaterThan(0);
    expect(filesWithSecrets(stateDir).some((p) => p.startsWith("migrated/"))).toBe(true);
  });
});

describe("reset module layout", () => {
  it("apply-reset and reset-backup do not import each other", () => {
    const src = path.join(fixturesDir, "..", "src", "reset");
    expect(fs.readFileSync(path.join(src, "reset-backup.ts"), "utf8")).not.toMatch(/from "\.\/apply-reset\.js"/);
  });
});
