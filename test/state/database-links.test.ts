// The storage core never creates a database through a symlink (at the file or on the way from the state dir), and
// what it creates is 0700/0600 on every path; doctor --fix reports such a link instead of writing outside the state.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { DatabaseError } from "../../src/core/errors.js";
import { probeDatabase } from "../../src/state/probe.js";
import { openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import { makeTempDir, makeTempState, modeOf, runBin, runInProcess, snapshotTree } from "../helpers/temp-state.js";

describe("database creation and symlinks", () => {
  it("a dangling symlink at an agent DB path is refused: nothing is created where it points", () => {
    const state = makeTempState();
    openGlobalDatabase(state.paths, { mode: "write", create: true }).close();
    const outside = path.join(makeTempDir(), "planted.sqlite");
    const agentDir = path.join(state.stateDir, "agents", "work", "agent");
    fs.mkdirSync(agentDir, { recursive: true });
    fs.symlinkSync(outside, path.join(agentDir, "openclaw-agent.sqlite"));
    const error = (() => {
      try {
        openAgentDatabase(state.paths, "work", { mode: "write", create: true });
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as Error).message).toMatch(/Refusing to create database .*openclaw-agent\.sqlite: .* is a symbolic link \(it points to .*planted\.sqlite\)/);
    expect(fs.existsSync(outside)).toBe(false);
  });

  it("a symlinked agents/ or state/ folder is refused for a new database, even when it points back inside", () => {
    const state = makeTempState();
    fs.mkdirSync(state.stateDir, { mode: 0o700 });
    const outside = makeTempDir();
    fs.symlinkSync(outside, path.join(state.stateDir, "state"));
    expect(() => openGlobalDatabase(state.paths, { mode: "write", create: true })).toThrow(/state is a symbolic link/);
    fs.unlinkSync(path.join(state.stateDir, "state"));
    fs.mkdirSync(path.join(state.stateDir, "elsewhere"));
    fs.symlinkSync("elsewhere", path.join(state.stateDir, "agents"));
    expect(() => openAgentDatabase(state.paths, "main", { mode: "write", create: true })).toThrow(/agents is a symbolic link/);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readdirSync(path.join(state.stateDir, "elsewhere"))).toEqual([]);
  });

  it("creates every missing directory 0700 and the database and its sidecars 0600 under a permissive umask", () => {
    const state = makeTempState();
    const previous = process.umask(0o000);
    try {
      const agent = openAgentDatabase(state.paths, "main", { mode: "write", create: true });
      expect(fs.existsSync(`${agent.path}-wal`)).toBe(true);
      for (const dir of [state.stateDir, path.join(state.stateDir, "agents"), path.join(state.stateDir, "agents", "main"), path.dirname(agent.path), path.dirname(state.paths.globalDbPath)]) expect(modeOf(dir)).toBe(0o700);
      for (const file of [agent.path, `${agent.path}-wal`, `${agent.path}-shm`, state.paths.globalDbPath]) expect(modeOf(file)).toBe(0o600);
      agent.close();
    } finally {
      process.umask(previous);
    }
  });

  it("doctor --fix names the link and writes nothing outside the state dir", async () => {
    const state = makeTempState("legacy-state");
    const outside = makeTempDir();
    const before = snapshotTree(outside);
    fs.rmSync(path.join(state.stateDir, "agents"), { recursive: true, force: true });
    fs.symlinkSync(outside, path.join(state.stateDir, "agents"));
    // (Its exit code for failed sources is issue 12's; here: the refusal is named and nothing lands outside.)
    const fix = await runInProcess(["doctor", "--fix", "--yes"], state.env);
    expect(`${fix.stdout}${fix.stderr}`).toMatch(/Refusing to create database .*agents\/main\/agent\/openclaw-agent\.sqlite: .*agents is a symbolic link/);
    expect(snapshotTree(outside)).toEqual(before);
  });

  describe("an existing database", () => {
    function linkedGlobal() {
      const state = makeTempState();
      openGlobalDatabase(state.paths, { mode: "write", create: true }).close();
      const outsideDir = makeTempDir();
      const outside = path.join(outsideDir, "elsewhere.sqlite");
      fs.renameSync(state.paths.globalDbPath, outside);
      fs.symlinkSync(outside, state.paths.globalDbPath);
      return { state, outsideDir, before: snapshotTree(outsideDir) };
    }

    it("is not opened through a symlink at its path, to read or to write: nothing is written where it points", () => {
      const { state, outsideDir, before } = linkedGlobal();
      for (const mode of ["read", "write"] as const) {
        expect(() => openGlobalDatabase(state.paths, { mode })).toThrow(DatabaseError);
        expect(() => openGlobalDatabase(state.paths, { mode })).toThrow(/Refusing to open database .*openclaw\.sqlite: it is a symbolic link/);
      }
      expect(snapshotTree(outsideDir)).toEqual(before);
    });

    it("is not opened through a symlinked folder on the way to it", () => {
      const state = makeTempState();
      openAgentDatabase(state.paths, "work", { mode: "write", create: true }).close();
      const outside = makeTempDir();
      fs.renameSync(path.join(state.stateDir, "agents"), path.join(outside, "agents"));
      fs.symlinkSync(path.join(outside, "agents"), path.join(state.stateDir, "agents"));
      const before = snapshotTree(outside);
      expect(() => openAgentDatabase(state.paths, "work", { mode: "write" })).toThrow(/Refusing to open database .*: its parent .*agents is a symbolic link/);
      expect(snapshotTree(outside)).toEqual(before);
    });

    it("is not opened when its -wal sidecar is a symlink", () => {
      const state = makeTempState();
      openGlobalDatabase(state.paths, { mode: "write", create: true }).close();
      const outside = path.join(makeTempDir(), "planted-wal");
      fs.symlinkSync(outside, `${state.paths.globalDbPath}-wal`);
      expect(() => openGlobalDatabase(state.paths, { mode: "write" })).toThrow(/its sidecar .*openclaw\.sqlite-wal: it is a symbolic link/);
      expect(fs.existsSync(outside)).toBe(false);
    });

    it("a FIFO at its path is refused at once, with or without a state-dir root (no open blocks on it)", () => {
      const state = makeTempState();
      fs.mkdirSync(path.dirname(state.paths.globalDbPath), { recursive: true });
      execFileSync("mkfifo", [state.paths.globalDbPath]);
      expect(() => openGlobalDatabase(state.paths, { mode: "read" })).toThrow(/Refusing to open database .*: it is a FIFO/);
      const probe = probeDatabase(state.paths.globalDbPath, "global", undefined);
      expect(probe.status).toBe("unopenable");
      expect(probe.message).toMatch(/Refusing to open database .*: it is a FIFO/);
    });

    it("doctor reports a linked global database as unopenable (exit 1) and inspect names it; neither opens it", async () => {
      const { state, outsideDir, before } = linkedGlobal();
      const doctor = await runInProcess(["doctor"], state.env);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(/Global database cannot be opened\n\s+Refusing to open database .*: it is a symbolic link/);
      const inspect = await runInProcess(["inspect", "--json"], state.env);
      expect(inspect.stdout).toMatch(/unopenable/);
      expect(snapshotTree(outsideDir)).toEqual(before);
    });

    it("backup list still lists the archives, names the link in a warning and reads no ledger through it", async () => {
      const { state, outsideDir, before } = linkedGlobal();
      const run = await runBin(["backup", "list", "--json"], state.env);
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as { ok: boolean; runsRead: boolean; warnings: string[] };
      expect(out.ok).toBe(true);
      expect(out.runsRead).toBe(false);
      expect(out.warnings.join("\n")).toMatch(/Refusing to open database .*openclaw\.sqlite: it is a symbolic link/);
      expect(snapshotTree(outsideDir)).toEqual(before);
    });
  });
});
