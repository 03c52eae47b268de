// The state dir as a question, not a default: empty → usage error (exit 2); a file, FIFO or link to a file →
// refused by every mutating command (exit 1, the file untouched), named by doctor; missing → read commands
// say there is no state there (exit 1, --json ok:false) instead of printing an empty, healthy state.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir, makeTempState, runBin, runInProcess, snapshotTree } from "../helpers/temp-state.js";

const READ_COMMANDS = [["doctor"], ["inspect"], ["sessions", "list"], ["sessions", "show", "main"], ["migrate", "plan"], ["migrate", "history"], ["backup", "list"]];
const MUTATING_COMMANDS = [
  ["doctor", "--fix", "--yes"],
  ["reset", "--scope", "full", "--yes"],
  ["reset", "--scope", "config+creds+sessions", "--yes"],
  ["reset", "--scope", "config", "--yes"],
  ["backup", "create"],
  ["backup", "restore", "/nonexistent/archive.tar.gz", "--yes"],
  ["backup", "prune", "--keep", "1", "--yes"],
];

describe("an empty --state-dir or OPENCLAW_STATE_DIR", () => {
  it("is a usage error (exit 2) for every command and never touches ~/.openclaw", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    // The default location holds a real state: `--state-dir ""` must not fall back to it.
    const home = { ...env, OPENCLAW_STATE_DIR: undefined };
    const tree = snapshotTree(stateDir);
    for (const args of [...READ_COMMANDS, ...MUTATING_COMMANDS]) {
      const run = await runInProcess(["--state-dir", "", ...args], home);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(/--state-dir is empty/);
      const json = await runInProcess(["--json", ...args, "--state-dir", "  "], home);
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "empty_state_dir" } });
    }
    expect(snapshotTree(stateDir)).toEqual(tree);
  });

  it("OPENCLAW_STATE_DIR set but empty (an unset shell variable) is exit 2 too, through the binary", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    const tree = snapshotTree(stateDir);
    for (const value of ["", "undefined"]) {
      const run = await runBin(["reset", "--scope", "full", "--yes"], { ...env, OPENCLAW_STATE_DIR: value });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/OPENCLAW_STATE_DIR is set but/);
      expect(run.stdout).toBe("");
    }
    expect(snapshotTree(stateDir)).toEqual(tree);
  });
});

describe("a state dir that is not a directory", () => {
  function kinds(): Array<[string, (p: string, root: string) => void, RegExp]> {
    return [
      ["regular file", (p) => fs.writeFileSync(p, "precious, not a state dir\n"), /is a regular file, not a directory/],
      ["FIFO", (p) => execFileSync("mkfifo", [p]), /is a FIFO \(named pipe\), not a directory/],
      [
        "symlink to a file",
        (p, root) => {
          fs.writeFileSync(path.join(root, "target.txt"), "precious\n");
          fs.symlinkSync(path.join(root, "target.txt"), p);
        },
        /is a symlink to a regular file, not a directory/,
      ],
    ];
  }

  for (const [label, make, said] of kinds()) {
    it(`${label}: every mutating command refuses (exit 1) and leaves it as it was; doctor names it`, async () => {
      const root = makeTempDir();
      const stateDir = path.join(root, "state");
      make(stateDir, root);
      const env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: stateDir };
      const tree = snapshotTree(root);
      for (const args of MUTATING_COMMANDS) {
        const run = await runInProcess(args, env);
        expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(1);
        expect(run.stderr, args.join(" ")).toMatch(said);
        const json = await runInProcess([...args, "--json"], env);
        expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "state_not_a_directory" } });
      }
      expect(snapshotTree(root)).toEqual(tree);
      const doctor = await runInProcess(["doctor"], env);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(said);
      const doctorJson = JSON.parse((await runInProcess(["doctor", "--json"], env)).stdout);
      expect(doctorJson).toMatchObject({ ok: false, findings: expect.arrayContaining([expect.objectContaining({ id: "state-dir.not-a-dir", severity: "error" })]) });
    });
  }

  it("reset --scope full --yes through the binary never deletes a file given as the state dir", async () => {
    const root = makeTempDir();
    const file = path.join(root, "notes.txt");
    fs.writeFileSync(file, "keep me\n");
    const run = await runBin(["--state-dir", file, "reset", "--scope", "full", "--yes"], { PATH: process.env.PATH, HOME: root });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/notes\.txt is a regular file, not a directory; nothing was changed/);
    expect(fs.readFileSync(file, "utf8")).toBe("keep me\n");
  });
});

describe("a missing (mistyped) state dir", () => {
  it("read commands say there is no state there: exit 1, --json ok:false code no_state; nothing is created", async () => {
    const root = makeTempDir();
    const env = { PATH: process.env.PATH, HOME: root, OPENCLAW_STATE_DIR: path.join(root, "opencalw") };
    for (const args of READ_COMMANDS) {
      const run = await runInProcess(args, env);
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.stdout + run.stderr, args.join(" ")).toMatch(/No OpenClaw state at .*opencalw/);
      const json = await runInProcess(["--json", ...args], env);
      const doc = JSON.parse(json.stdout);
      expect(doc.ok, args.join(" ")).toBe(false);
      if (args[0] !== "doctor") expect(doc.error.code).toBe("no_state");
    }
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("doctor --fix still starts a new state there; backup list still lists backups after a full reset", async () => {
    const { env, stateDir, paths } = makeTempState("legacy-state");
    const fresh = { ...env, OPENCLAW_STATE_DIR: path.join(path.dirname(stateDir), "fresh") };
    const fix = await runInProcess(["doctor", "--fix", "--yes"], fresh);
    expect(fix.code, fix.stderr).toBe(0);
    expect(fs.statSync(path.join(path.dirname(stateDir), "fresh")).isDirectory()).toBe(true);

    expect((await runInProcess(["backup", "create"], env)).code).toBe(0);
    expect((await runInProcess(["reset", "--scope", "full", "--yes"], env)).code).toBe(0);
    const list = await runInProcess(["backup", "list", "--json"], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toMatch(/no state dir at/);
    expect(JSON.parse(list.stdout).backups.length).toBeGreaterThan(0);
    expect(fs.existsSync(paths.stateDir)).toBe(false);
  });
});
