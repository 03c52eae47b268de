// `backup create --output -`, `backup verify -`, `backup restore -`, `--compression none` and the restic round trip. Real binary.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { seedState, agentDb, countRows } from "../helpers/backup-state.js";
import { binPath, makeTempDir, makeTempState, repoRoot, type TempState } from "../helpers/temp-state.js";

const bin = `${JSON.stringify(process.execPath)} ${JSON.stringify(binPath)}`;

/** Runs a shell pipeline with pipefail (any failing stage fails it). */
function sh(script: string, env: NodeJS.ProcessEnv): { code: number; stdout: string; stderr: string } {
  const r = spawnSync("bash", ["-o", "pipefail", "-c", script], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function seeded(): TempState & { tmp: string } {
  const state = makeTempState();
  seedState(state);
  const tmp = makeTempDir("ocs-stream-tmp-");
  // Our own TMPDIR: the private staging must be gone afterwards.
  return { ...state, env: { ...state.env, TMPDIR: tmp }, tmp };
}

function stagingLeft(tmp: string): string[] {
  return fs.readdirSync(tmp).filter((n) => n.startsWith(".openclaw-backup-staging-"));
}

const hasRestic = spawnSync("restic", ["version"], { encoding: "utf8" }).status === 0;
if (!hasRestic) console.warn("SKIPPED: the restic round trip (restic is not installed; `apt-get install restic`)");

describe("streaming archives through stdin and stdout", () => {
  it("create --output - | verify - passes; nothing is written in the backup dir or left in TMPDIR", () => {
    const s = seeded();
    const run = sh(`${bin} backup create --output - | ${bin} backup verify -`, s.env);
    expect(run.code, run.stderr).toBe(0);
    // The summary says where the bytes went, not the "-" of the command line (it once read "✓ - verified").
    expect(run.stderr).toMatch(/✓ Archive streamed to stdout, verified \((?:zstd|gzip|none), /);
    expect(run.stderr).not.toContain("Backup written");
    expect(run.stderr).toMatch(/streamed \d+ bytes, sha256 [0-9a-f]{64}/);
    expect(run.stdout).toMatch(/✓ Archive read from stdin, verified \(/);
    expect(run.stdout).not.toMatch(/✓ - verified/);
    expect(fs.existsSync(s.paths.backupDir) ? fs.readdirSync(s.paths.backupDir) : []).toEqual([]);
    expect(stagingLeft(s.tmp)).toEqual([]);
  });

  it("create --output - --compression none is a plain tar that restore - --target restores", () => {
    const s = seeded();
    const file = path.join(s.root, "saved.tar");
    const made = sh(`${bin} backup create --output - --compression none > ${JSON.stringify(file)}`, s.env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain("(none,");
    const listing = spawnSync("tar", ["-tf", file], { encoding: "utf8" });
    expect(listing.status).toBe(0);
    expect(listing.stdout.split("\n")[0]).toMatch(/^[^/]+-openclaw-backup\/manifest\.json$/);
    const target = path.join(s.root, "restored");
    const restored = sh(`${bin} backup create --output - --compression none | ${bin} backup restore - --target ${JSON.stringify(target)} --yes`, s.env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(fs.readFileSync(path.join(target, "state", "notes", "readme.md"), "utf8")).toBe("# notes\n");
    const restoredDb = path.join(target, "state", "agents", "main", "agent", "openclaw-agent.sqlite");
    expect(countRows(restoredDb, "sessions")).toBe(countRows(agentDb(s), "sessions"));
    expect(stagingLeft(s.tmp)).toEqual([]);
  });

  it("a truncated stream is refused by verify and restore (exit 1), nothing restored or swapped", () => {
    const s = seeded();
    const file = path.join(s.root, "saved.tar");
    expect(sh(`${bin} backup create --output - --compression none > ${JSON.stringify(file)}`, s.env).code).toBe(0);
    const half = Math.floor(fs.statSync(file).size / 2);
    const verify = sh(`head -c ${half} ${JSON.stringify(file)} | ${bin} backup verify -`, s.env);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toMatch(/truncated/);
    const before = fs.readdirSync(path.dirname(s.stateDir)).sort();
    const readme = path.join(s.stateDir, "notes", "readme.md");
    fs.writeFileSync(readme, "changed after the backup\n");
    const inPlace = sh(`head -c ${half} ${JSON.stringify(file)} | ${bin} backup restore - --yes`, s.env);
    expect(inPlace.code).toBe(1);
    expect(inPlace.stderr).toMatch(/refused|truncated/);
    expect(fs.readFileSync(readme, "utf8")).toBe("changed after the backup\n");
    expect(fs.readdirSync(path.dirname(s.stateDir)).sort()).toEqual(before);
    const target = path.join(s.root, "t");
    const toTarget = sh(`head -c ${half} ${JSON.stringify(file)} | ${bin} backup restore - --target ${JSON.stringify(target)} --yes`, s.env);
    expect(toTarget.code).toBe(1);
    expect(fs.existsSync(path.join(target, "state"))).toBe(false);
    const empty = sh(`${bin} backup verify - < /dev/null`, s.env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/No archive arrived on stdin/);
    expect(stagingLeft(s.tmp)).toEqual([]);
  });

  it("--output - is refused on a terminal and with --json (exit 2), before anything is written", () => {
    const s = seeded();
    // Refused before a byte of archive: stdout holds only the --json error document.
    const json = sh(`${bin} backup create --output - --json`, s.env);
    expect(json.code).toBe(2);
    expect(json.stderr + json.stdout).toMatch(/--json does not go with --output -/);
    const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;
    if (!hasScript) {
      console.warn("SKIPPED: the terminal check (util-linux `script` is not installed)");
      return;
    }
    // `script` gives the command a pseudo-terminal as stdout.
    const tty = spawnSync("script", ["-qec", `${bin} backup create --output -`, "/dev/null"], { env: s.env, encoding: "utf8" });
    expect(tty.status).toBe(2);
    expect(tty.stdout).toMatch(/stdout, which is a terminal/);
    expect(fs.existsSync(s.paths.backupDir) ? fs.readdirSync(s.paths.backupDir) : []).toEqual([]);
  });

  it.skipIf(!hasRestic)("restic: create --output - --compression none | restic backup --stdin, restic dump | restore - --target", () => {
    const s = seeded();
    const repo = makeTempDir("ocs-restic-");
    const env = { ...s.env, RESTIC_REPOSITORY: repo, RESTIC_PASSWORD: "test-only", RESTIC_CACHE_DIR: path.join(os.tmpdir(), "ocs-restic-cache") };
    fs.rmSync(repo, { recursive: true, force: true });
    // The example in docs/backup.md ("Streaming and offsite"), line by line, as written (our binary for openclaw-state).
    const doc = fs.readFileSync(path.join(repoRoot, "docs", "backup.md"), "utf8");
    const block = /<!-- example: covered by test\/backup\/stream-archive\.e2e\.test\.ts -->\n```sh\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const target = path.join(s.root, "from-restic");
    const lines = block!.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim()).filter((l) => l !== "");
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      const run = sh(line.replaceAll("openclaw-state", bin).replaceAll("/tmp/openclaw-from-restic", JSON.stringify(target)), env);
      expect(run.code, `${line}\n${run.stderr}`).toBe(0);
    }
    expect(fs.readFileSync(path.join(target, "state", "notes", "readme.md"), "utf8")).toBe("# notes\n");
  });
});
