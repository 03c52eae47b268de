// SIGKILL at random moments of `doctor --fix` on a few hundred sources, then re-run: the same final databases.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { generateLegacyCorpus, prng } from "../../bench/legacy-corpus.mjs";
import { resolveStatePaths } from "../../src/state/paths.js";
import { binPath, makeTempDir, repoRoot, runBin } from "../helpers/temp-state.js";
import { dumpState } from "../helpers/migration.js";
import { execFileSync } from "node:child_process";

const CORPUS = { agents: ["main", "ops"], sessionsPerAgent: 150, linesPerSession: 30, meanLineBytes: 500, seed: 7, extras: ["truncated", "corrupt"] as Array<"truncated" | "corrupt">, mtime: Date.UTC(2026, 0, 2) };
const ARGS = ["doctor", "--fix", "--yes", "--no-backup", "--json"];

beforeAll(() => {
  // The crash test needs the compiled binary of this very tree.
  execFileSync("npm", ["run", "build", "--silent"], { cwd: repoRoot });
});

function corpus(): { env: NodeJS.ProcessEnv; stateDir: string } {
  const root = makeTempDir("ocs-crash-");
  const stateDir = path.join(root, ".openclaw");
  generateLegacyCorpus(stateDir, CORPUS);
  return { stateDir, env: { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir } };
}

/** Spawns the binary and SIGKILLs it after `ms` (or lets it finish); resolves with the exit code or "killed". */
function runAndKill(env: NodeJS.ProcessEnv, ms: number): Promise<number | "killed"> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binPath, ...ARGS], { env, stdio: ["ignore", "ignore", "ignore"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(signal === "SIGKILL" ? "killed" : (code ?? -1));
    });
  });
}

/** Every file under migrated/ must have its rows committed: transcripts their events, indexes their routes. */
function assertNothingRetiredWithoutRows(stateDir: string): number {
  const migrated = path.join(stateDir, "migrated");
  if (!fs.existsSync(migrated)) return 0;
  let checked = 0;
  for (const runDir of fs.readdirSync(migrated)) {
    for (const agent of fs.existsSync(path.join(migrated, runDir, "agents")) ? fs.readdirSync(path.join(migrated, runDir, "agents")) : []) {
      const dir = path.join(migrated, runDir, "agents", agent, "sessions");
      const db = new Database(path.join(stateDir, "agents", agent, "agent", "openclaw-agent.sqlite"), { readonly: true });
      try {
        for (const name of fs.readdirSync(dir)) {
          const lines = fs.readFileSync(path.join(dir, name), "utf8").split("\n").filter((l) => l.trim() !== "");
          if (name === "sessions.json") {
            const keys = Object.keys(JSON.parse(lines.join("\n")) as object).length;
            const routes = (db.prepare("SELECT count(*) AS n FROM session_routes").get() as { n: number }).n;
            expect(routes, `${name} retired without its routes`).toBeGreaterThanOrEqual(keys);
          } else {
            const sessionId = (JSON.parse(lines[0]!) as { id: string }).id;
            const events = (db.prepare("SELECT count(*) AS n FROM transcript_events WHERE session_id = ?").get(sessionId) as { n: number }).n;
            // A truncated final line is dropped on purpose; every other line must be there.
            expect(events, `${name} retired without its rows`).toBeGreaterThanOrEqual(name.includes("truncated") ? lines.length - 1 : lines.length);
          }
          checked += 1;
        }
      } finally {
        db.close();
      }
    }
  }
  return checked;
}

function retiredNames(stateDir: string): string[] {
  const migrated = path.join(stateDir, "migrated");
  const out: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name), rel ? `${rel}/${e.name}` : e.name);
      else out.push(rel.split("/").slice(1).concat(e.name).join("/"));
    }
  };
  if (fs.existsSync(migrated)) walk(migrated, "");
  return out.sort();
}

describe("crash safety", () => {
  it("kill -9 at random moments, re-run: identical databases, nothing retired without its rows", async () => {
    const reference = corpus();
    const t0 = Date.now();
    const ref = await runBin(ARGS, reference.env);
    const fullMs = Date.now() - t0;
    expect(ref.code).toBe(0);
    expect(JSON.parse(ref.stdout).migration.run.status).toBe("warning"); // the corrupt files stay, by design
    const expected = dumpState(resolveStatePaths({ env: reference.env }));

    const crashed = corpus();
    const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
    const rand = prng(seed);
    const kills: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      // Within the first half of an uninterrupted run: each kill lands mid-run, and later runs have less left.
      const ms = Math.floor(150 + rand() * fullMs * 0.5);
      const outcome = await runAndKill(crashed.env, ms);
      kills.push(outcome === "killed" ? ms : -ms);
      const retired = assertNothingRetiredWithoutRows(crashed.stateDir);
      if (process.env.CRASH_DEBUG) console.log(`kill ${i}: ${outcome} after ${ms} ms, ${retired} retired so far`);
    }
    expect(kills.filter((k) => k > 0).length, "at least one run must really be killed").toBeGreaterThan(0);
    const final = await runBin(ARGS, crashed.env);
    expect(final.code, `seed ${seed}, kills ${kills.join(",")}: ${final.stderr}`).toBe(0);
    expect(dumpState(resolveStatePaths({ env: crashed.env })), `seed ${seed}, kills at ${kills.join(", ")} ms`).toEqual(expected);
    expect(assertNothingRetiredWithoutRows(crashed.stateDir)).toBe(assertNothingRetiredWithoutRows(reference.stateDir));
    expect(retiredNames(crashed.stateDir)).toEqual(retiredNames(reference.stateDir));
    const left = (dir: string): string[] => ["main", "ops"].flatMap((a) => fs.readdirSync(path.join(dir, "agents", a, "sessions")).map((n) => `${a}/${n}`)).sort();
    expect(left(crashed.stateDir)).toEqual(left(reference.stateDir));
  }, 120_000);
});
