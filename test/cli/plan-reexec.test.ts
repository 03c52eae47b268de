// The binary's restart decision: which commands restart with which Node flags, and when they never do.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { canRestart, IMPORT_REEXEC_FLAGS, planReexec, REEXEC_FLAGS, REEXEC_MARKER } from "../../src/cli/plan-reexec.js";

const base = { execArgv: [] as string[], env: { PATH: "/bin" } as NodeJS.ProcessEnv, canExecve: true };

describe("planReexec", () => {
  it("restarts backup create with the semi-space flag after the host's flags, and marks the new environment", () => {
    const plan = planReexec({ ...base, execArgv: ["--max-old-space-size=300"], argv: ["backup", "create", "--output", "/tmp/x/"] });
    expect(plan).toEqual({ execArgv: ["--max-old-space-size=300", ...REEXEC_FLAGS], env: { PATH: "/bin", [REEXEC_MARKER]: "1" } });
  });

  it("finds the command behind the global options", () => {
    expect(planReexec({ ...base, argv: ["--json", "-q", "backup", "create"] })).not.toBeNull();
  });

  it("finds the command behind a value of an option before it", () => {
    expect(planReexec({ ...base, argv: ["--state-dir", "/srv/state", "backup", "create"] })?.execArgv).toEqual([...REEXEC_FLAGS]);
    expect(planReexec({ ...base, argv: ["--state-dir", "/srv/backup", "doctor", "--fix", "--yes"] })?.execArgv).toEqual([...IMPORT_REEXEC_FLAGS]);
  });

  it("restarts the commands that import (doctor --fix, migrate upgrade) with --expose-gc, unless the host has it", () => {
    expect(planReexec({ ...base, argv: ["doctor", "--fix", "--yes"] })).toEqual({ execArgv: ["--expose-gc"], env: { PATH: "/bin", [REEXEC_MARKER]: "1" } });
    expect(planReexec({ ...base, argv: ["migrate", "upgrade", "--yes"] })?.execArgv).toEqual(["--expose-gc"]);
    expect(planReexec({ ...base, argv: ["doctor", "--fix"], execArgv: ["--expose-gc"] })).toBeNull();
  });

  it("leaves every other command where it started", () => {
    for (const argv of [["backup", "restore", "a.tar.zst"], ["backup", "verify", "create"], ["doctor"], ["doctor", "--json"], ["migrate", "plan"], ["backup"], [], ["sessions", "list"], ["reset", "--scope", "all"]]) {
      expect(planReexec({ ...base, argv })).toBeNull();
    }
  });

  it("never restarts twice, nor when switched off, nor without process.execve", () => {
    const argv = ["backup", "create"];
    expect(planReexec({ ...base, argv, env: { [REEXEC_MARKER]: "1" } })).toBeNull();
    expect(planReexec({ ...base, argv, env: { OPENCLAW_STATE_REEXEC: "0" } })).toBeNull();
    expect(planReexec({ ...base, argv, canExecve: false })).toBeNull();
  });

  it("keeps a young-generation size the host chose", () => {
    expect(planReexec({ ...base, argv: ["backup", "create"], execArgv: ["--max-semi-space-size=64"] })).toBeNull();
  });
});

describe("canRestart", () => {
  it("needs process.execve and a binary this user may execute (a failed execve aborts Node, so it is checked first)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocs-restart-"));
    try {
      const plain = path.join(dir, "node");
      fs.writeFileSync(plain, "");
      fs.chmodSync(plain, 0o644);
      const execve = (): void => {};
      // No execute bit for anyone: refused even to root.
      expect(canRestart(plain, execve)).toBe(false);
      expect(canRestart(path.join(dir, "gone"), execve)).toBe(false);
      expect(canRestart(process.execPath, execve)).toBe(true);
      expect(canRestart(process.execPath, undefined)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
