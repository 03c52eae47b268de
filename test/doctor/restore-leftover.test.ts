// Restore leftovers: a restore killed between its two renames (copy + staged tree, no live path), kept copies (info), staging dirs.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { runDoctor } from "../../src/doctor/run-doctor.js";
import { openAgentDatabase } from "../../src/state/state-databases.js";
import { rows } from "../helpers/migration.js";
import { binPath, makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

/** An agent and the global DB, in the format `doctor --fix` leaves (OpenClaw's current one). */
async function healthyState() {
  const state = makeTempState();
  openAgentDatabase(state.paths, "main", { mode: "write", create: true }).close();
  const fixed = await runDoctor({ paths: state.paths, fix: true, migration: { backup: false } });
  expect(fixed.status).toBe("ok");
  return state;
}

describe("doctor: restore leftovers", () => {
  it("reports a state dir lost mid-restore as an error and --fix moves the previous copy back", async () => {
    const { paths, stateDir, env, root } = await healthyState();
    const before = snapshotTree(stateDir);
    const previous = `${stateDir}.pre-restore-20261202T101010Z`;
    fs.renameSync(stateDir, previous);
    // What the kill leaves: the staged tree it was about to rename in, under the same stamp (its process gone).
    const staged = path.join(root, "..openclaw.restore-20261202T101010Z-AbC123");
    fs.mkdirSync(staged);

    const check = await runInProcess(["doctor"], env);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/✗ .*\.openclaw is missing after an interrupted restore; its previous copy is .*pre-restore-20261202T101010Z/);
    expect(fs.existsSync(stateDir)).toBe(false);

    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs[0]).toMatchObject({ id: "restore.recover", status: "applied" });
    expect(fixed.status).toBe("ok");
    expect(fs.existsSync(previous)).toBe(false);
    expect(fs.existsSync(staged)).toBe(false);
    // Same tree; the agent DB byte for byte (the global DB took and released the --fix lease).
    const after = snapshotTree(stateDir);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after["agents/main/agent/openclaw-agent.sqlite"]).toEqual(before["agents/main/agent/openclaw-agent.sqlite"]);
    expect(rows(paths.globalDbPath, "SELECT agent_id FROM agent_databases").map((r) => r.agent_id)).toEqual(["main"]);
  });

  it("reports kept previous copies as info (they are kept on purpose), says how to remove them, and never deletes them", async () => {
    const { paths, stateDir, env } = await healthyState();
    const previous = `${stateDir}.pre-restore-20261202T101010Z`;
    fs.cpSync(stateDir, previous, { recursive: true });
    const result = await runDoctor({ paths });
    // Was a warning (nagging on every run until deleted by hand); restore now keeps these copies by design.
    expect(result.findings.find((f) => f.id === "restore.leftover")).toMatchObject({ severity: "info", detail: previous });
    expect(result.status).toBe("ok");
    const human = await runInProcess(["doctor"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`✓ Previous copy of ${stateDir} kept by \`backup restore\` at ${previous}; \`openclaw-state backup prune --pre-restore\` removes it`);
    expect(human.stdout).toMatch(/0 error\(s\), 0 warning\(s\)/);
    await runDoctor({ paths, fix: true });
    expect(fs.existsSync(previous)).toBe(true);
  });

  it("a missing state dir with only a kept copy (no staged tree of that restore) is not an interrupted restore: --fix leaves it", async () => {
    const { paths, stateDir, root } = await healthyState();
    const previous = `${stateDir}.pre-restore-20261202T101010Z`;
    fs.renameSync(stateDir, previous);
    // A stale staging dir of another restore (other stamp) does not make it one either.
    const other = path.join(root, "..openclaw.restore-20261130T000000Z-AbC123");
    fs.mkdirSync(other);
    const result = await runDoctor({ paths });
    expect(result.findings.find((f) => f.id === "restore.interrupted")).toBeUndefined();
    expect(result.findings.find((f) => f.id === "restore.leftover")).toMatchObject({ severity: "info", title: expect.stringContaining("itself is missing") });
    await runDoctor({ paths, fix: true, migration: { backup: false, removeSources: false } });
    expect(fs.existsSync(previous)).toBe(true);
  });

  it("a SIGKILLed restore's staging copy beside the state dir: doctor reports it, --fix removes it, the state is untouched", async () => {
    const { paths, stateDir, env, root } = await healthyState();
    // Incompressible bytes, so the extraction lasts long enough to be killed in the middle.
    fs.writeFileSync(path.join(stateDir, "big.bin"), crypto.randomBytes(48 * 1024 * 1024));
    const backup = await createBackup({ paths });
    const before = snapshotTree(stateDir);
    const child = spawn(process.execPath, [binPath, "backup", "restore", backup.archivePath, "--yes"], { env, stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const staging = (): string[] => fs.readdirSync(root).filter((n) => n.startsWith("..openclaw.restore-"));
    const deadline = Date.now() + 30_000;
    while (staging().length === 0 && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    child.kill("SIGKILL");
    await exited;
    const left = staging();
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(new RegExp(`^\\.\\.openclaw\\.restore-\\d{8}T\\d{6}Z-${child.pid}-\\w{6}$`));
    expect(snapshotTree(stateDir)).toEqual(before);

    const check = await runInProcess(["doctor"], env);
    expect(check.stdout).toMatch(/! 1 staging copy of .*\.openclaw left by an interrupted `backup restore` \(archive data, credentials included\)/);
    const fixed = await runInProcess(["doctor", "--fix", "--yes"], env);
    expect(fixed.stdout).toMatch(/fixed remove 1 restore staging copy beside .*\.openclaw/);
    expect(staging()).toEqual([]);
    const after = await runInProcess(["doctor"], env);
    expect(after.stdout).not.toMatch(/staging cop/);
  }, 120_000);

  it("leaves the staging copy of a restore that is still running alone", async () => {
    const { paths, root } = await healthyState();
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      const live = path.join(root, `..openclaw.restore-20261202T101010Z-${sleeper.pid}-AbC123`);
      const dead = path.join(root, "..openclaw.restore-20261202T101010Z-AbC124");
      fs.mkdirSync(live);
      fs.mkdirSync(dead);
      const result = await runDoctor({ paths });
      expect(result.findings.find((f) => f.id === "restore.staging")).toMatchObject({ severity: "warning", detail: dead });
      await runDoctor({ paths, fix: true });
      expect(fs.existsSync(live)).toBe(true);
      expect(fs.existsSync(dead)).toBe(false);
    } finally {
      sleeper.kill("SIGKILL");
    }
  });
});
