// Every file and dir the tool creates is 0600/0700 (even under umask 000); a planted secret never appears in any output.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { legacyCorpusState } from "../helpers/crash.js";
import { binPath, makeTempDir, type CliRun } from "../helpers/temp-state.js";

const SECRET = "sk-live-PLANTED-9f8e7d6c5b4a39281706";
const CORPUS = { agents: ["main", "ops"], sessionsPerAgent: 8, linesPerSession: 6, meanLineBytes: 200, seed: 17, mtime: Date.UTC(2026, 0, 6) };

/** The real binary under `umask 000`: anything created without an explicit private mode would come out 0666/0777. */
function runOpen(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", 'umask 000; exec "$0" "$@"', process.execPath, binPath, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Every path under `dir` (dir included) whose mode is not 0700 (dirs) / 0600 (files). Symlinks are skipped. */
function notPrivate(dir: string, skip: (rel: string) => boolean = () => false): string[] {
  const bad: string[] = [];
  const walk = (p: string): void => {
    const st = fs.lstatSync(p);
    const rel = path.relative(dir, p) || ".";
    if (st.isSymbolicLink() || skip(rel)) return;
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) bad.push(`${rel} ${mode.toString(8)}`);
      for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    } else if (mode !== 0o600) bad.push(`${rel} ${mode.toString(8)}`);
  };
  walk(dir);
  return bad;
}

describe("permissions and secrets", () => {
  it("doctor --fix, backup create, restore (in place and --target): private modes; the secret is never printed", async () => {
    const state = legacyCorpusState(CORPUS, "ocs-perm-");
    // The secret lives in files the backup archives (auth profiles are issue 5's importer; their own secret test belongs there).
    fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), JSON.stringify({ gateway: { auth: { token: SECRET } }, models: { providers: { x: { apiKey: SECRET } } } }), { mode: 0o600 });
    fs.mkdirSync(path.join(state.stateDir, "credentials"), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(state.stateDir, "credentials", "token.json"), JSON.stringify({ token: SECRET }), { mode: 0o600 });
    const backups = path.join(state.root, "backups");
    const env = { ...state.env, OPENCLAW_BACKUP_DIR: backups };
    const outputs: Array<[string, CliRun]> = [];
    const run = async (args: string[]): Promise<CliRun> => {
      const r = await runOpen(args, env);
      outputs.push([args.join(" "), r]);
      return r;
    };

    expect((await run(["doctor", "--fix", "--yes"])).code).toBe(0);
    // The legacy files doctor left alone are the user's; everything doctor created or repaired is private.
    expect(notPrivate(state.stateDir)).toEqual([]);
    expect(notPrivate(backups)).toEqual([]);

    const archive = path.join(backups, "perm.tar.gz");
    expect((await run(["backup", "create", "--output", archive])).code).toBe(0);
    expect(notPrivate(backups)).toEqual([]);
    expect(fs.statSync(archive).mode & 0o777).toBe(0o600);

    const target = path.join(makeTempDir(), "restored");
    expect((await run(["backup", "restore", archive, "--yes", "--target", target])).code).toBe(0);
    expect(notPrivate(target)).toEqual([]);
    expect((await run(["backup", "restore", archive, "--yes"])).code).toBe(0);
    expect(notPrivate(state.stateDir)).toEqual([]);
    for (const sibling of fs.readdirSync(state.root).filter((n) => n.includes(".pre-restore-"))) expect(notPrivate(path.join(state.root, sibling))).toEqual([]);

    for (const args of [
      ["doctor"],
      ["doctor", "--json", "--verbose"],
      ["inspect", "--json"],
      ["inspect", "--verbose"],
      ["migrate", "plan", "--json"],
      ["sessions", "list", "--all-agents", "--json"],
      ["backup", "verify", archive, "--json"],
      ["backup", "verify", archive, "--verbose"],
      ["backup", "list", "--json"],
      ["backup", "create", "--dry-run", "--json"],
      ["backup", "restore", archive, "--dry-run", "--json"],
      ["reset", "--scope", "config+creds+sessions", "--dry-run", "--json"],
    ]) {
      const r = await run(args);
      expect(r.stdout + r.stderr, args.join(" ")).not.toMatch(/\n\s+at .+:\d+:\d+|Unexpected failure/);
    }
    for (const [command, r] of outputs) {
      expect(r.stdout, `${command} stdout`).not.toContain(SECRET);
      expect(r.stderr, `${command} stderr`).not.toContain(SECRET);
      expect(r.stdout + r.stderr, command).not.toContain("PLANTED");
    }
  });
});
