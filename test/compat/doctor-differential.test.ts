// Both doctors on the same legacy trees: the real OpenClaw's `doctor --fix` and ours, compared table by table and key by key.
//
// Every table either side filled is compared by row count and, where it has a primary key, by the set of keys —
// except what one doctor writes of its own accord (runtime-owned rows, derived indexes, each tool's ledger), listed
// below with the reason, and the differences we chose, listed in KNOWN with the reason (docs/migration.md, "Where we
// differ"). Read with the sqlite3 CLI / node:sqlite, never with our own code.
import { cpSync, existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ourNode, runOurCli } from "./helpers/our-node.js";
import { describeRun, makeSandbox, openclawInstall, pinnedVersions, REPO_ROOT, runDoctorFix, type DoctorRun, type Sandbox } from "./helpers/openclaw.js";
import { sqliteReader, type SqlRow } from "./helpers/sqlite-reader.js";

const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);
const reader = sqliteReader();
const node = ourNode();
const built = existsSync(join(REPO_ROOT, "dist", "cli", "main.js"));
if (install && (!node || !built)) process.stderr.write("\ncompat: SKIPPED — doctor-differential: no node that loads better-sqlite3, or dist/ not built\n\n");

/** Legacy trees both doctors migrate; each names a different family of sources. */
const FIXTURES = [
  "fixtures/legacy-state",
  "fixtures/migration/cron",
  "fixtures/migration/auth",
  "fixtures/migration/exec-approvals",
  "fixtures/migration/subagents",
  "fixtures/migration/delivery-queue",
];

/** Tables a doctor fills of its own accord or derives from others: not part of what was imported. */
const NOT_IMPORTED: Record<string, string> = {
  schema_meta: "each database's own header row",
  migration_runs: "each tool's own ledger (ours records one run per source family, 9.6 one per step)",
  migration_sources: "each tool's own ledger",
  diagnostic_events: "9.6's doctor logs its own run",
  config_health_entries: "9.6's doctor records the config it validated",
  device_identities: "9.6 creates the gateway's own device identity on first start",
  agent_databases: "9.6's registry of agent DBs it opened (rebuilt by its runtime)",
  agent_integrity_verifications: "9.6's quarantine DB: its own integrity runs",
  memory_index_state: "9.6's memory indexer bookkeeping, written when it opens an agent",
  session_canonical_validation_pending: "9.6's validation queue, drained by its runtime",
  session_key_contract: "9.6 stamps the key contract when its runtime opens an agent",
  session_transcript_index_state: "derived: 9.6's search index, rebuilt from transcript_events",
  session_transcript_active_events: "derived: 9.6's search index",
  session_transcript_fts_rows: "derived: 9.6's search index",
};
const DERIVED_PREFIXES = ["session_transcript_fts", "standing_intents_fts"];

/** Rows 9.6's doctor creates from defaults rather than from the legacy tree. */
const RUNTIME_ROWS: Record<string, { where: string; why: string }> = {
  cron_jobs: { where: "name <> 'heartbeat-main'", why: "9.6 seeds the default agent's heartbeat job" },
  config_machine_state: { where: "state_key NOT IN ('plugins.installedIndex', 'config.lastTouchedAt')", why: "9.6 rebuilds the plugin index from manifests and stamps the config" },
};

/** Differences we chose on purpose, per fixture and table (each also in docs/migration.md). */
const KNOWN: Record<string, Record<string, string>> = {
  "fixtures/legacy-state": {
    transcript_event_identities: "v1 transcript lines carry no ids: 9.6 derives `<hash>-<n>`, ours 8 hex digits (issue 24: one codec with upstream's)",
  },
  "fixtures/migration/subagents": { subagent_runs: "9.6 discards legacy subagent runs as transient and deletes runs.json; we keep every run" },
  "fixtures/migration/delivery-queue": {
    delivery_queue_entries: "9.6 writes no row for an entry 72 h old or a failed one (it archives the file); we keep failed entries as failed rows, and stale ones held in the kept staging file",
  },
};

/** Spellings that differ on purpose, mapped to theirs before keys are compared (docs/migration.md, "Where we differ"). */
const SAME_KEY: Array<{ from: RegExp; to: string; why: string }> = [
  { from: /:orphan:/g, to: ":recovered:", why: "a transcript no index names: ours `agent:<id>:orphan:<id>`, 9.6's `recovered`" },
];

interface TableView {
  count: number;
  keys: string[] | null;
}

function tablesOf(db: string): string[] {
  return reader
    .query(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .map((r) => String(r.name));
}

function compared(table: string): boolean {
  return !(table in NOT_IMPORTED) && !DERIVED_PREFIXES.some((p) => table.startsWith(p));
}

/** Keys naming a file hold the absolute path (cron store keys, as 9.6 computes them): compared relative to the state dir. */
function view(db: string, table: string, stateDir: string): TableView {
  const filter = RUNTIME_ROWS[table] ? ` WHERE ${RUNTIME_ROWS[table]!.where}` : "";
  const count = Number(reader.query(db, `SELECT count(*) AS n FROM "${table}"${filter}`)[0]!.n);
  const columns = (reader.query(db, `PRAGMA table_info("${table}")`) as SqlRow[]).filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk));
  const pk = columns.map((c) => String(c.name));
  // A lone INTEGER key is a rowid each writer allocates in its own order: only natural keys are comparable.
  const natural = pk.length > 0 && !(columns.length === 1 && String(columns[0]!.type).toUpperCase() === "INTEGER");
  const keys = natural
    ? reader
        .query(db, `SELECT ${pk.map((c) => `"${c}"`).join(", ")} FROM "${table}"${filter}`)
        .map((r) => SAME_KEY.reduce((key, k) => key.replace(k.from, k.to), JSON.stringify(pk.map((c) => r[c])).split(stateDir).join("<state>")))
        .sort()
    : null;
  return { count, keys };
}

const STATE_DB = /^(state\/openclaw\.sqlite|agents\/[^/]+\/agent\/openclaw-agent\.sqlite)$/;

/** The global and agent databases of a state, outside migrated/ (the kept staging files are ours alone), relative to the state dir. */
function databases(stateDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== "migrated") walk(abs);
      else if (entry.isFile() && entry.name.endsWith(".sqlite")) out.push(relative(stateDir, abs));
    }
  };
  walk(stateDir);
  // The state's databases only: 9.6 also keeps lock databases under tmp/ and its own quarantine DB.
  return out.filter((rel) => STATE_DB.test(rel)).sort();
}

describe.skipIf(!install || !node || !built)(`our doctor --fix imports what openclaw@${current.version}'s doctor --fix imports`, () => {
  const sandboxes: Sandbox[] = [];

  afterAll(() => {
    for (const sandbox of sandboxes) sandbox.cleanup();
  });

  /** Both doctors on one copy each of the tree: theirs must succeed for the comparison to mean anything. */
  async function bothDoctors(fixture: string): Promise<{ theirs: DoctorRun; ours: Sandbox }> {
    const theirs = await runDoctorFix(install!, join(REPO_ROOT, fixture), { timeoutMs: 400_000 });
    sandboxes.push(theirs.sandbox);
    expect(theirs.result.code, describeRun(theirs.result)).toBe(0);
    const ours = makeSandbox("ours-differential");
    sandboxes.push(ours);
    cpSync(join(REPO_ROOT, fixture), ours.stateDir, { recursive: true });
    const fix = runOurCli(node!, ["doctor", "--fix", "--yes", "--no-backup"], { HOME: ours.home, OPENCLAW_STATE_DIR: ours.stateDir, TMPDIR: ours.tmp });
    expect(fix.code, `${fixture}: ${fix.out}`).toBe(0);
    return { theirs, ours };
  }

  it.each(FIXTURES)("%s: the same databases, tables, row counts and keys", async (fixture) => {
    const run = await bothDoctors(fixture);
    const theirDbs = databases(run.theirs.sandbox.stateDir);
    expect(databases(run.ours.stateDir)).toEqual(theirDbs);
    const mismatches: string[] = [];
    for (const db of theirDbs) {
      const theirFile = join(run.theirs.sandbox.stateDir, db);
      const ourFile = join(run.ours.stateDir, db);
      const tables = new Set([...tablesOf(theirFile), ...tablesOf(ourFile)].filter(compared));
      for (const table of tables) {
        if (KNOWN[fixture]?.[table]) continue;
        const theirView = view(theirFile, table, run.theirs.sandbox.stateDir);
        const ourView = view(ourFile, table, run.ours.stateDir);
        if (theirView.count !== ourView.count) mismatches.push(`${db} ${table}: theirs ${theirView.count} rows, ours ${ourView.count}`);
        else if (theirView.keys && JSON.stringify(theirView.keys) !== JSON.stringify(ourView.keys)) {
          mismatches.push(`${db} ${table}: keys differ\n  theirs ${theirView.keys.join(" ")}\n  ours   ${ourView.keys!.join(" ")}`);
        }
      }
    }
    expect(mismatches, `${fixture}\n${mismatches.join("\n")}`).toEqual([]);
  }, 900_000);
});
