// The dry run names where each source's rows end in OpenClaw 2026.9.6's format (tables and database files): checked against what --fix then wrote.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createOpenclawDatabase } from "../../src/state/openclaw-database.js";
import { CONDITIONAL, UPGRADE_OWN_DESTINATIONS } from "../../src/state/upgrade/openclaw-destinations.js";
import { makeTempState, runBin } from "../helpers/temp-state.js";

/** Filled by OpenClaw's own triggers when a row lands in the table named (its schema, openclaw-ddl.ts): named through it. */
const TRIGGER_FILLED: Record<string, string> = { session_canonical_validation_pending: "session_nodes" };

interface DrySource {
  relativePath: string;
  kind: string;
  action: string;
  tables: string[];
  databases: string[];
}

const GLOBAL_DB = path.join("state", "openclaw.sqlite");

/** Every non-empty table of one database, and each config_machine_state key as `config_machine_state (<key>)`. */
function filledIn(file: string): Set<string> {
  const out = new Set<string>();
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>).map((r) => r.name);
    for (const t of tables) {
      if ((db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n === 0) continue;
      if (t !== "config_machine_state") out.add(t);
      else for (const k of db.prepare("SELECT state_key FROM config_machine_state").pluck().all() as string[]) out.add(`config_machine_state (${k})`);
    }
  } finally {
    db.close();
  }
  return out;
}

/** The state's database files (relative to the state dir) → what each holds. */
function filledByDatabase(stateDir: string): Map<string, Set<string>> {
  const files = [GLOBAL_DB];
  const agents = path.join(stateDir, "agents");
  if (fs.existsSync(agents)) for (const id of fs.readdirSync(agents)) files.push(path.join("agents", id, "agent", "openclaw-agent.sqlite"));
  return new Map(files.filter((f) => fs.existsSync(path.join(stateDir, f))).map((f) => [f, filledIn(path.join(stateDir, f))]));
}

const isFile = (d: string): boolean => d.includes("/");
const conditional = (d: string): boolean => CONDITIONAL.test(d);
const baseOf = (d: string): string => {
  const plain = d.replace(CONDITIONAL, "");
  return plain.startsWith("config_machine_state (") ? plain : plain.replace(/ \(.*\)$/, "");
};
/** A named destination covers an observed one: same table, or the same machine-state key (`<scope>` matches any tail). */
function covers(named: string, seen: string): boolean {
  const n = baseOf(named);
  if (!n.includes("<")) return n === seen;
  const prefix = n.slice(0, n.indexOf("<"));
  return seen.startsWith(prefix) && seen.endsWith(")");
}

/** A file destination pattern (`media/<subdir>/<id>`, `agents/<id>/agent/models.json`) matched under the state dir. */
function fileExists(stateDir: string, pattern: string): boolean {
  const walk = (dir: string, parts: string[]): boolean => {
    const [head, ...rest] = parts;
    if (head === undefined) return fs.existsSync(dir) && fs.statSync(dir).isFile();
    if (!head.startsWith("<")) return walk(path.join(dir, head), rest);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return false;
    return fs.readdirSync(dir).some((name) => walk(path.join(dir, name), rest));
  };
  return walk(stateDir, pattern.split("/"));
}

/**
 * What holds rows with no legacy source at all: doctor --fix on an empty state dir (the global file), and a new agent
 * file in 9.6's format as its doctor creates one (an empty state has no agent, so its seeds are read off a fresh file).
 */
async function seededByRuntime(): Promise<{ global: Set<string>; agent: Set<string> }> {
  const { env, root, stateDir } = makeTempState();
  fs.mkdirSync(stateDir, { recursive: true });
  const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env);
  expect(fix.code, fix.stderr).toBe(0);
  const agentFile = path.join(root, "fresh-agent.sqlite");
  createOpenclawDatabase({ path: agentFile, role: "agent", agentId: "main", now: Date.now() }).close();
  return { global: filledIn(path.join(stateDir, GLOBAL_DB)), agent: filledIn(agentFile) };
}

const FIXTURES = [
  "legacy-state", "migration/kitchen-sink", "migration/cron", "migration/auth", "migration/devices", "migration/media",
  "migration/model-catalogs", "migration/voicewake", "migration/small-state", "migration/workspace-state", "migration/plugin-index",
  "migration/node-host", "migration/push", "migration/acp-session-meta", "migration/channel-pairing", "migration/conversation-bindings",
  // a non-main agent's auth store (its own database, not the global one) and a session index filing keys under other agents
  "migration/auth-legacy", "migration/agent-main-keys",
];

describe("dry-run destinations = where doctor --fix puts the rows (OpenClaw 2026.9.6's format)", () => {
  let seeded: ReturnType<typeof seededByRuntime> | undefined;
  for (const fixture of FIXTURES) {
    it(fixture, async () => {
      seeded ??= seededByRuntime();
      const seeds = await seeded;
      const { env, stateDir } = makeTempState(fixture);
      const dry = await runBin(["doctor", "--fix", "--dry-run", "--json"], env);
      expect(dry.code, dry.stderr).toBe(0);
      const sources = JSON.parse(dry.stdout).dryRun.sources as DrySource[];
      const imported = sources.filter((s) => s.action !== "skip");
      expect(imported.length).toBeGreaterThan(0);
      const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env);
      expect(fix.code, fix.stderr).toBe(0);
      const statuses = new Map((JSON.parse(fix.stdout).migration.run.sources as Array<{ relativePath: string; status: string }>).map((o) => [o.relativePath, o.status]));
      const byDb = filledByDatabase(stateDir);
      const seen = new Set([...byDb.values()].flatMap((tables) => [...tables]));
      const ownOf = (db: string): Set<string> => (db === GLOBAL_DB ? seeds.global : seeds.agent);
      const own = (db: string, t: string): boolean => ownOf(db).has(t) || UPGRADE_OWN_DESTINATIONS.includes(t);
      const names = (s: DrySource, t: string): boolean => s.tables.some((n) => covers(n, t) || (TRIGGER_FILLED[t] !== undefined && covers(n, TRIGGER_FILLED[t]!)));
      const inDb = (s: DrySource, db: string): boolean => s.databases.some((d) => d.replace(CONDITIONAL, "") === db);
      // Every table (or machine-state row) holding rows afterwards, in each database file, is named by some source
      // together with that file, or is the runtime's or the upgrade's own.
      const unnamed = [...byDb].flatMap(([db, tables]) => [...tables].filter((t) => !own(db, t) && !sources.some((s) => names(s, t))).map((t) => `${db}: ${t}`));
      expect(unnamed, `filled but named by no source's plan`).toEqual([]);
      const elsewhere = [...byDb].flatMap(([db, tables]) => [...tables].filter((t) => !own(db, t) && sources.some((s) => names(s, t)) && !sources.some((s) => names(s, t) && inDb(s, db))).map((t) => `${db}: ${t}`));
      expect(elsewhere, `filled, but no source naming the table names this database`).toEqual([]);
      // Each file read decides its own conditions: a destination it reaches is named plainly, one it does not is left
      // out. Only a paired node stays conditional (whether its device is paired as a node is in another file).
      const undecided = sources.flatMap((s) => [...s.tables, ...s.databases].filter(conditional).map((d) => `${s.relativePath}: ${d}`));
      expect(undecided.filter((d) => !/^nodes\/paired\.json: (device_pairing_paired|state\/openclaw\.sqlite) \(if its device is paired as a node\)$/.test(d))).toEqual([]);
      // Every destination an imported source names holds rows (a file pattern: a file) afterwards, unless it is conditional.
      for (const s of imported.filter((x) => statuses.get(x.relativePath) === "imported")) {
        for (const d of s.tables.filter((t) => !conditional(t))) {
          const there = isFile(d) ? fileExists(stateDir, d) : [...seen].some((t) => covers(d, t));
          expect(there, `${s.relativePath} (${s.kind}) names ${d}, which holds nothing after --fix`).toBe(true);
        }
        // Every database it names (unless conditional) holds some of what it names, and only database files are named.
        for (const db of s.databases.filter((d) => !conditional(d))) {
          const tables = byDb.get(db) ?? new Set<string>();
          expect([...tables].some((t) => !ownOf(db).has(t) && names(s, t)), `${s.relativePath} (${s.kind}) names ${db}, which holds none of its destinations after --fix`).toBe(true);
        }
        if (s.tables.length > 0 && s.tables.every(isFile)) expect(s.databases, `${s.relativePath} (${s.kind}) is written back as files`).toEqual([]);
      }
    }, 60_000);
  }
});
