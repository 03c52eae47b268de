// The CLI frame in-process: JSON envelope, exit codes, global flags anywhere, consent, read-only commands.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import { insertLease } from "../helpers/leases.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

describe("CLI frame", () => {
  it("--json prints exactly one document with version 1 for success", async () => {
    const { env, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { mode: 0o700 });
    const run = await runInProcess(["doctor", "--json"], env);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "doctor", mode: "check" });
    expect(Array.isArray(doc.findings)).toBe(true);
  });

  it("--json prints an error envelope for usage errors (exit 2)", async () => {
    const { env } = makeTempState();
    const run = await runInProcess(["--json", "doctor", "--bogus"], env);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({ version: 1, ok: false, error: { code: "usage", message: expect.stringContaining("--bogus") } });
  });

  it("accepts global flags before or after the subcommand", async () => {
    const a = makeTempState();
    const b = makeTempState();
    for (const t of [a, b]) fs.mkdirSync(t.stateDir, { mode: 0o700 });
    const before = await runInProcess(["--state-dir", a.stateDir, "--json", "inspect"], {});
    const after = await runInProcess(["inspect", "--json", "--state-dir", b.stateDir], {});
    expect(JSON.parse(before.stdout).stateDir).toBe(a.stateDir);
    expect(JSON.parse(after.stdout).stateDir).toBe(b.stateDir);
  });

  it("doctor --fix without a TTY and without --yes exits 2 naming --yes, changing nothing", async () => {
    const { env, root } = makeTempState();
    const run = await runInProcess(["doctor", "--fix"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--yes/);
    expect(fs.readdirSync(root)).toEqual([]);
    const json = await runInProcess(["doctor", "--fix", "--json"], env);
    expect(JSON.parse(json.stdout).error.code).toBe("consent_required");
  });

  it("doctor --fix asks on a terminal and applies on yes", async () => {
    const { env, paths } = makeTempState();
    const run = await runInProcess(["doctor", "--fix"], env, [true]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/create the global database/);
    expect(fs.existsSync(paths.globalDbPath)).toBe(true);
  });

  it("read-only commands leave an empty state dir empty and an existing tree unchanged", async () => {
    const { env, stateDir, paths } = makeTempState();
    fs.mkdirSync(stateDir, { mode: 0o700 });
    for (const args of [["doctor"], ["doctor", "--deep", "--json"], ["inspect"], ["inspect", "--check", "--json"]]) {
      await runInProcess(args, env);
      expect(fs.readdirSync(stateDir)).toEqual([]);
    }
    openAgentDatabase(paths, "main", { mode: "write", create: true }).close();
    const before = snapshotTree(stateDir);
    for (const args of [["doctor", "--deep"], ["inspect", "--check"]]) await runInProcess(args, env);
    expect(snapshotTree(stateDir)).toEqual(before);
  });

  it("exits 75 with a clear message when the gateway holds the lease", async () => {
    const { env, paths } = makeTempState();
    openGlobalDatabase(paths, { mode: "write", create: true }).close();
    fs.chmodSync(paths.stateDir, 0o755);
    const db = openGlobalDatabase(paths, { mode: "write" });
    insertLease(db, GATEWAY_SCOPE, process.pid, Date.now() + 60_000);
    db.close();
    const run = await runInProcess(["doctor", "--fix", "--yes"], env);
    expect(run.code).toBe(75);
    expect(run.stderr).toMatch(/locked by the gateway/);
    const json = await runInProcess(["doctor", "--fix", "--yes", "--json"], env);
    expect(json.code).toBe(75);
    expect(JSON.parse(json.stdout).error.code).toBe("state_locked");
  });

  it("doctor exits 1 on error findings and with --strict on warnings", async () => {
    const { env, paths } = makeTempState();
    fs.mkdirSync(paths.stateDir, { mode: 0o700 });
    expect((await runInProcess(["doctor"], env)).code).toBe(0);
    expect((await runInProcess(["doctor", "--strict"], env)).code).toBe(1);
    fs.mkdirSync(`${paths.globalDbPath}`, { recursive: true });
    fs.rmdirSync(paths.globalDbPath);
    fs.writeFileSync(paths.globalDbPath, "garbage".repeat(100));
    const broken = await runInProcess(["doctor"], env);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/✗ Global database cannot be opened/);
  });

  it("renders doctor findings with marks and a summary line", async () => {
    const { env, paths } = makeTempState();
    openAgentDatabase(paths, "main", { mode: "write", create: true }).close();
    expect((await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env)).code).toBe(0);
    const run = await runInProcess(["doctor"], env);
    expect(run.stdout).toMatch(/✓ Global database written by OpenClaw 2026\.9\.6/);
    expect(run.stdout).toMatch(/0 error\(s\), 0 warning\(s\), \d+ ok/);
    expect(run.stderr).toBe("");
  });
});
