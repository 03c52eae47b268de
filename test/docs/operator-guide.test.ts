// Runs the cron script exactly as docs/operator-guide.md prints it, with cron's bare environment, against a
// temp state: silent on success, archives rotated, and the failure mail is the line the guide shows.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ARCHIVE_NAME_PATTERN } from "../../src/backup/compression.js";
import { binPath, makeTempDir, makeTempState, repoRoot, runInProcess } from "../helpers/temp-state.js";

const guide = fs.readFileSync(path.join(repoRoot, "docs", "operator-guide.md"), "utf8");

function cronScript(): string {
  const block = /<!-- begin cron script -->\s*```sh\n([\s\S]*?)```\s*<!-- end cron script -->/.exec(guide);
  if (!block) throw new Error("docs/operator-guide.md lost its cron script markers");
  return block[1]!;
}

/** A bin dir holding `openclaw-state` (as `npm install -g` would) and `node`, like /usr/local/bin. */
function installDir(): string {
  const bin = makeTempDir("ocs-bin-");
  fs.symlinkSync(binPath, path.join(bin, "openclaw-state"));
  fs.symlinkSync(process.execPath, path.join(bin, "node"));
  return bin;
}

/** Runs the script the way cron does: /bin/sh, PATH=/usr/bin:/bin, no other variables but the ones given. */
function runLikeCron(scriptFile: string, bin: string, vars: Record<string, string>): { status: number | null; output: string } {
  // The guide's script prepends /usr/local/bin:/opt/node/bin; here the install dir stands in for them.
  const script = fs.readFileSync(scriptFile, "utf8").replace('PATH="/usr/local/bin:/opt/node/bin:$PATH"', `PATH="${bin}:$PATH"`);
  const file = path.join(path.dirname(scriptFile), "run.sh");
  fs.writeFileSync(file, script, { mode: 0o755 });
  const run = spawnSync("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin", ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), "/bin/sh", file], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe("docs/operator-guide.md cron job", () => {
  it("prints nothing on success, keeps the newest KEEP verified archives, and mails the documented line on failure", async () => {
    const { stateDir, env, root } = makeTempState("legacy-state");
    expect((await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], env)).code).toBe(0);
    const dir = makeTempDir("ocs-cron-");
    const scriptFile = path.join(dir, "openclaw-backup");
    fs.writeFileSync(scriptFile, cronScript(), { mode: 0o755 });
    expect(cronScript()).toMatch(/^#!\/bin\/sh\n/);
    const bin = installDir();

    for (let night = 0; night < 3; night += 1) {
      const run = runLikeCron(scriptFile, bin, { HOME: root, OPENCLAW_STATE_DIR: stateDir, KEEP: "2" });
      expect(run.status, run.output).toBe(0);
      // Nothing printed: cron sends no mail.
      expect(run.output).toBe("");
    }
    const backups = `${stateDir}-backups`;
    const archives = fs.readdirSync(backups).filter((n) => ARCHIVE_NAME_PATTERN.test(n));
    expect(archives).toHaveLength(2);
    for (const a of archives) expect((await runInProcess(["backup", "verify", path.join(backups, a)], env)).code).toBe(0);

    // A mistyped state dir: exit 1, one line, the guide's text; prune never ran (the archives are still there).
    const typo = path.join(root, ".opencalw");
    const failed = runLikeCron(scriptFile, bin, { HOME: root, OPENCLAW_STATE_DIR: typo, KEEP: "1" });
    expect(failed.status).toBe(1);
    const mail = failed.output.trimEnd();
    expect(mail.split("\n")).toHaveLength(1);
    const documented = /\n(error: No OpenClaw state at .*)\n/.exec(guide)![1]!.replace("/home/openclaw/.opencalw", typo);
    expect(mail).toBe(documented);
    expect(fs.readdirSync(backups).filter((n) => ARCHIVE_NAME_PATTERN.test(n))).toHaveLength(2);

    // Without node on PATH (the guide's warning), cron still gets a mail and a non-zero status.
    const noNode = spawnSync("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin", `OPENCLAW_STATE_DIR=${stateDir}`, "/bin/sh", "-c", `"${path.join(bin, "openclaw-state")}" backup list`], { encoding: "utf8" });
    if (!fs.existsSync("/usr/bin/node") && !fs.existsSync("/bin/node")) {
      expect(noNode.status).toBe(127);
      expect(noNode.stderr).toMatch(/node/);
    }
  });
});
