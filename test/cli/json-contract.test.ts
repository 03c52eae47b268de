// `--json`: exactly one document on stdout, and its "ok" agrees with the exit code, for every command and
// every way a command can end (success, findings, refusal, usage error, a DB failing mid-listing).
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { agentDbPath } from "../../src/state/paths.js";
import { seedSessions } from "../helpers/seed-sessions.js";
import { makeTempDir, makeTempState, runBin, runInProcess, type CliRun } from "../helpers/temp-state.js";

/** Parses stdout as exactly one JSON document (JSON.parse fails on a second one) and checks ok vs the exit code. */
function expectOneAgreeingDocument(run: CliRun, label: string): Record<string, unknown> {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(run.stdout) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`${label}: stdout is not exactly one JSON document (exit ${run.code}): ${String(error)}\n${run.stdout.slice(0, 2000)}`);
  }
  expect(doc.version, label).toBe(1);
  expect(doc.ok, `${label}: exit ${run.code}, ok ${String(doc.ok)}; stderr ${run.stderr.slice(0, 500)}`).toBe(run.code === 0);
  if (doc.ok === false && doc.error !== undefined) expect(doc.error, label).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  return doc;
}

describe("ok agrees with the exit code across commands", () => {
  it("healthy, failing and refused runs of every command", async () => {
    const healthy = makeTempState("legacy-state");
    expect((await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], healthy.env)).code).toBe(0);
    const legacy = makeTempState("legacy-state");
    const missing = { PATH: process.env.PATH, HOME: makeTempDir(), OPENCLAW_STATE_DIR: "/nonexistent/openclaw-state-test" };
    const badArchive = path.join(makeTempDir(), "bad.tar.gz");
    fs.writeFileSync(badArchive, "not a gzip");

    const cases: Array<[string, string[], NodeJS.ProcessEnv, number | null]> = [
      ["doctor healthy", ["doctor"], healthy.env, 0],
      ["doctor --strict with warnings", ["doctor", "--strict"], legacy.env, 1],
      ["doctor missing state", ["doctor"], missing, 1],
      ["doctor --fix without --yes", ["doctor", "--fix"], legacy.env, 2],
      ["inspect", ["inspect"], healthy.env, 0],
      ["inspect missing", ["inspect"], missing, 1],
      ["sessions list", ["sessions", "list", "--all-agents"], healthy.env, 0],
      ["sessions list missing", ["sessions", "list"], missing, 1],
      ["sessions list bad agent", ["sessions", "list", "--agent", "../x"], healthy.env, 2],
      ["sessions show", ["sessions", "show", "agent:main:main"], healthy.env, 0],
      ["sessions show unknown", ["sessions", "show", "nope"], healthy.env, 1],
      ["migrate plan", ["migrate", "plan"], legacy.env, 0],
      ["migrate history", ["migrate", "history"], healthy.env, 0],
      ["migrate history bad limit", ["migrate", "history", "--limit", "0"], healthy.env, 2],
      ["backup list", ["backup", "list"], healthy.env, 0],
      ["backup verify bad", ["backup", "verify", badArchive], healthy.env, 1],
      ["backup restore bad", ["backup", "restore", badArchive, "--yes"], healthy.env, 1],
      ["backup restore no --yes", ["backup", "restore", badArchive], healthy.env, null],
      ["backup prune no --yes", ["backup", "prune", "--keep", "1"], healthy.env, null],
      ["reset dry-run", ["reset", "--scope", "config", "--dry-run"], healthy.env, 0],
      ["reset no --yes", ["reset", "--scope", "config"], healthy.env, 2],
      ["reset no scope", ["reset", "--yes"], healthy.env, 2],
      ["unknown command", ["frobnicate"], healthy.env, 2],
      ["unknown option", ["inspect", "--bogus"], healthy.env, 2],
    ];
    for (const [label, args, env, code] of cases) {
      const run = await runInProcess([...args, "--json"], env);
      if (code !== null) expect(run.code, `${label}: ${run.stderr}`).toBe(code);
      expectOneAgreeingDocument(run, label);
    }
  });

  it("backup create and reset, run for real, agree too", async () => {
    const { env } = makeTempState("legacy-state");
    for (const args of [["backup", "create"], ["reset", "--scope", "config", "--yes"], ["doctor", "--fix", "--yes", "--no-backup"], ["reset", "--scope", "full", "--yes"]]) {
      const run = await runInProcess([...args, "--json"], env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      expectOneAgreeingDocument(run, args.join(" "));
    }
  });
});

/** Overwrites one leaf page of `table` in the middle of the file: reads of those rows fail, the rest work. */
function corruptLeafPage(file: string, table: string): void {
  const db = new Database(file, { readonly: true });
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  const leaves = db.prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno").all(table) as Array<{ pageno: number }>;
  db.close();
  expect(leaves.length).toBeGreaterThan(4);
  const page = leaves[Math.floor(leaves.length / 2)]!.pageno;
  const fd = fs.openSync(file, "r+");
  try {
    fs.writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (page - 1) * pageSize);
  } finally {
    fs.closeSync(fd);
  }
}

describe("sessions list --json when a database read fails midway", () => {
  it("writes exactly one document, ok:false with the error, exit 1 (through the binary)", async () => {
    const state = makeTempState("legacy-state");
    const now = Date.now();
    const pad = "x".repeat(400);
    seedSessions(
      state.paths,
      "main",
      Array.from({ length: 400 }, (_, i) => ({ sessionId: `s-${i}`, key: `agent:main:k${String(i).padStart(4, "0")}`, updatedAt: now - i * 1000, entry: { sessionId: `s-${i}`, note: pad } })),
    );
    corruptLeafPage(agentDbPath(state.paths, "main"), "session_entries");
    for (const args of [["sessions", "list", "--json", "--limit", "all"], ["sessions", "list", "--json", "--limit", "all", "--all-agents"]]) {
      const run = await runBin(args, state.env);
      const doc = expectOneAgreeingDocument(run, args.join(" "));
      expect(run.code).toBe(1);
      expect(doc.error).toMatchObject({ message: expect.stringMatching(/malformed|corrupt/i) });
      expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    }
  });
});
