// Crash and child-process test helpers: spawn the binary and SIGKILL it at a chosen moment; check nothing was retired without its rows.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { generateLegacyCorpus, type LegacyCorpusOptions } from "../../bench/legacy-corpus.mjs";
import { binPath, makeTempDir } from "./temp-state.js";

/** A fresh temp HOME holding a generated legacy corpus in .openclaw. */
export function legacyCorpusState(options: LegacyCorpusOptions, prefix = "ocs-crash-"): { env: NodeJS.ProcessEnv; stateDir: string; root: string } {
  const root = makeTempDir(prefix);
  const stateDir = path.join(root, ".openclaw");
  generateLegacyCorpus(stateDir, options);
  return { root, stateDir, env: { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir } };
}

/** Spawns the binary with `args` and SIGKILLs it after `ms` (or lets it finish); resolves with the exit code or "killed". */
export function runAndKill(args: string[], env: NodeJS.ProcessEnv, ms: number): Promise<number | "killed"> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binPath, ...args], { env, stdio: ["ignore", "ignore", "ignore"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(signal === "SIGKILL" ? "killed" : (code ?? -1));
    });
  });
}

/** Every file under migrated/ must have its rows committed: transcripts their events, indexes their routes. */
export function assertNothingRetiredWithoutRows(stateDir: string): number {
  const migrated = path.join(stateDir, "migrated");
  if (!fs.existsSync(migrated)) return 0;
  let checked = 0;
  for (const runDir of fs.readdirSync(migrated)) {
    for (const agent of fs.existsSync(path.join(migrated, runDir, "agents")) ? fs.readdirSync(path.join(migrated, runDir, "agents")) : []) {
      const dir = path.join(migrated, runDir, "agents", agent, "sessions");
      // A kill between creating the run's agent folder and its first move leaves the folder without sessions/.
      if (!fs.existsSync(dir)) continue;
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

/** Retired files (relative to their run dir under migrated/), sorted. */
export function retiredNames(stateDir: string): string[] {
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

/** Legacy files still in place under agents/<id>/sessions/, as "<agent>/<name>", sorted. */
export function leftInPlace(stateDir: string, agents: readonly string[]): string[] {
  return agents.flatMap((a) => fs.readdirSync(path.join(stateDir, "agents", a, "sessions")).map((n) => `${a}/${n}`)).sort();
}

/** The next line a child prints on stdout (rejects if it exits first). */
export function nextLine(proc: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const onData = (d: Buffer): void => {
      buf += d.toString();
      const i = buf.indexOf("\n");
      if (i >= 0) {
        proc.stdout.off("data", onData);
        resolve(buf.slice(0, i));
      }
    };
    proc.stdout.on("data", onData);
    proc.once("exit", (code) => reject(new Error(`child exited with ${code}`)));
  });
}
