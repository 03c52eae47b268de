// Concurrency (SPEC §11): a live writer during backup create, a write lock held past the busy timeout, two doctor --fix at once.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { resolveStatePaths } from "../../src/state/paths.js";
import { addSessions, agentDb, seedState } from "../helpers/backup-state.js";
import { legacyCorpusState, nextLine } from "../helpers/crash.js";
import { dumpDatabase, dumpState, migrate } from "../helpers/migration.js";
import { makeTempDir, makeTempState, runBin, snapshotTree } from "../helpers/temp-state.js";

const sqliteModule = createRequire(import.meta.url).resolve("better-sqlite3");

// Each commit adds one session and its route in one transaction: any consistent snapshot has equal "w-" counts.
const WRITER = `
const Database = require(process.argv[2]);
const db = new Database(process.argv[3]);
db.pragma("busy_timeout = 30000");
db.pragma("journal_mode = WAL");
const addSession = db.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', 0, 0)");
const addRoute = db.prepare("INSERT INTO session_routes (session_key, session_id, updated_at) VALUES (?, ?, 0)");
const commit = db.transaction((n) => { addSession.run("w-" + n, "w-key-" + n); addRoute.run("w-key-" + n, "w-" + n); });
let n = 0;
setInterval(() => { commit(n); n++; }, 3);
process.stdout.write("ready\\n");
process.stdin.on("data", () => process.stdout.write("commits " + n + " " + Date.now() + "\\n"));
`;

// Holds BEGIN IMMEDIATE on a DB for argv[3] ms, then rolls back and exits.
const LOCKER = `
const Database = require(process.argv[2]);
const db = new Database(process.argv[3]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("locked\\n");
setTimeout(() => { db.exec("ROLLBACK"); db.close(); process.exit(0); }, Number(process.argv[4]));
`;

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function startScript(source: string, args: string[]): ChildProcessWithoutNullStreams {
  const script = path.join(makeTempDir(), "script.cjs");
  fs.writeFileSync(script, source);
  const child = spawn(process.execPath, [script, sqliteModule, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  return child;
}

async function commits(writer: ChildProcessWithoutNullStreams): Promise<{ n: number; at: number }> {
  const line = nextLine(writer);
  writer.stdin.write("?\n");
  const [, n, at] = (await line).split(" ");
  return { n: Number(n), at: Number(at) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** v1 transcript ids hash the file's absolute path (as OpenClaw's do): two state dirs give two 16-hex prefixes. */
function withoutV1Prefixes<T>(dump: T): T {
  return JSON.parse(JSON.stringify(dump).replace(/\b[0-9a-f]{16}-(?=[0-9a-z]+\b)/g, "<v1>-")) as T;
}

describe("a writer committing during backup create", () => {
  it("the snapshot satisfies the cross-table invariant and the writer keeps at least half its commit rate", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    addSessions(agentDb(state), 1000, 3000, 15);
    const writer = startScript(WRITER, [agentDb(state)]);
    expect(await nextLine(writer)).toBe("ready");
    await sleep(300);
    const a = await commits(writer);
    await sleep(1500);
    const b = await commits(writer);
    const idleRate = (b.n - a.n) / (b.at - a.at);

    const archive = path.join(state.root, "backups", "live.tar.gz");
    const c = await commits(writer);
    const created = await runBin(["backup", "create", "--output", archive, "--json"], state.env);
    const d = await commits(writer);
    expect(created.code, created.stderr).toBe(0);
    const busyRate = (d.n - c.n) / (d.at - c.at);
    expect(d.at - c.at).toBeGreaterThan(300);
    expect(busyRate, `commits/ms idle ${idleRate.toFixed(3)}, during backup ${busyRate.toFixed(3)}`).toBeGreaterThanOrEqual(idleRate * 0.5);

    const target = path.join(makeTempDir(), "restored");
    const restored = await runBin(["backup", "restore", archive, "--yes", "--target", target], state.env);
    expect(restored.code, restored.stderr).toBe(0);
    const snapshotDb = fs.readdirSync(target, { recursive: true }).map(String).find((p) => p.endsWith(path.join("main", "agent", "openclaw-agent.sqlite")));
    expect(snapshotDb).toBeDefined();
    const db = new Database(path.join(target, snapshotDb!), { readonly: true });
    try {
      const sessions = (db.prepare("SELECT count(*) AS n FROM sessions WHERE session_id LIKE 'w-%'").get() as { n: number }).n;
      const routes = (db.prepare("SELECT count(*) AS n FROM session_routes WHERE session_key LIKE 'w-key-%'").get() as { n: number }).n;
      expect(sessions).toBeGreaterThan(0);
      expect(routes).toBe(sessions);
      expect(sessions).toBeGreaterThanOrEqual(c.n);
      expect(sessions).toBeLessThanOrEqual(d.n);
    } finally {
      db.close();
    }
  });
});

describe("a write lock held longer than the busy timeout", () => {
  const CORPUS = { agents: ["main"], sessionsPerAgent: 20, linesPerSession: 10, meanLineBytes: 200, seed: 3, mtime: Date.UTC(2026, 0, 4) };

  for (const which of ["global", "agent"] as const) {
    it(`doctor --fix on a locked ${which} DB: a clear error, nothing half-written`, async () => {
      const state = legacyCorpusState(CORPUS, "ocs-locked-");
      const paths = resolveStatePaths({ env: state.env });
      // Create the databases so there is something to lock: the importers' design-v1 state, where a re-import goes.
      await migrate(paths);
      // Put legacy sources back as new ones so the next run has work to do.
      const extra = legacyCorpusState({ ...CORPUS, seed: 4 }, "ocs-locked-src-");
      fs.mkdirSync(path.join(state.stateDir, "agents", "main", "sessions"), { recursive: true, mode: 0o700 });
      for (const name of fs.readdirSync(path.join(extra.stateDir, "agents", "main", "sessions"))) {
        if (name.endsWith(".jsonl")) fs.writeFileSync(path.join(state.stateDir, "agents", "main", "sessions", `x-${name}`), fs.readFileSync(path.join(extra.stateDir, "agents", "main", "sessions", name)), { mode: 0o600 });
      }
      const before = dumpState(paths);
      const agentFile = path.join(paths.agentsDir, "main", "agent", "openclaw-agent.sqlite");
      const agentBefore = dumpDatabase(agentFile);
      const legacyBefore = snapshotTree(path.join(state.stateDir, "agents", "main", "sessions"));
      const file = which === "global" ? paths.globalDbPath : path.join(paths.agentsDir, "main", "agent", "openclaw-agent.sqlite");
      const locker = startScript(LOCKER, [file, "30000"]);
      expect(await nextLine(locker)).toBe("locked");
      const t0 = Date.now();
      const run = await runBin(["doctor", "--fix", "--yes", "--no-backup"], { ...state.env, OPENCLAW_STATE_BUSY_TIMEOUT_MS: "300" });
      const ms = Date.now() - t0;
      // Fails fast: one busy timeout per database, not one per source.
      expect(ms).toBeLessThan(4000);
      const said = run.stdout + run.stderr;
      expect(said).toMatch(/locked by another process/i);
      // A locked global DB stops the command (the lease cannot be taken); a locked agent DB fails its sources.
      if (which === "global") expect(run.code).not.toBe(0);
      expect(said).not.toMatch(/\n\s+at .+:\d+:\d+/);
      locker.kill("SIGKILL");
      await sleep(100);
      // The agent DB is untouched either way; the global DB may only record the failed attempts in the ledger.
      expect(dumpDatabase(agentFile)).toEqual(agentBefore);
      if (which === "global") expect(dumpState(paths)).toEqual(before);
      expect(snapshotTree(path.join(state.stateDir, "agents", "main", "sessions"))).toEqual(legacyBefore);
    });
  }
});

describe("two doctor --fix at once", () => {
  it("one waits or exits 75; never both importing; the result equals a single run", async () => {
    const CORPUS = { agents: ["main", "ops"], sessionsPerAgent: 60, linesPerSession: 20, meanLineBytes: 300, seed: 21, mtime: Date.UTC(2026, 0, 5) };
    const reference = legacyCorpusState(CORPUS, "ocs-two-ref-");
    const ref = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--json"], reference.env);
    expect(ref.code, ref.stderr).toBe(0);
    const expected = withoutV1Prefixes(dumpState(resolveStatePaths({ env: reference.env })));
    for (let round = 0; round < 5; round += 1) {
      const state = legacyCorpusState(CORPUS, "ocs-two-");
      const args = ["doctor", "--fix", "--yes", "--no-backup", "--json"];
      const [x, y] = await Promise.all([runBin(args, state.env), runBin(args, state.env)]);
      const codes = [x.code, y.code].sort();
      expect([[0, 0], [0, 75]], `${x.stdout.slice(0, 3000)} ${x.stderr} ${y.stdout.slice(0, 3000)} ${y.stderr}`).toContainEqual(codes);
      const imported = [x, y].filter((r) => r.code === 0).map((r) => (JSON.parse(r.stdout).migration?.run?.totals?.imported as number | undefined) ?? 0);
      expect(imported.filter((n) => n > 0).length, `imported ${imported.join(", ")}`).toBe(1);
      for (const r of [x, y]) if (r.code === 75) expect(r.stdout + r.stderr).toMatch(/locked/i);
      expect(withoutV1Prefixes(dumpState(resolveStatePaths({ env: state.env })))).toEqual(expected);
    }
  });
});
