// Runs every example in README.md and docs/**/*.md with the built binary, as a reader would, and checks its exit codes.
//
// HOW TO MARK AN EXAMPLE (the convention for whoever writes docs)
// A fenced block tagged sh/bash/shell/console/cron/ts/js (or an untagged block that starts with a
// `openclaw-state …` command) is an example. Put one or more HTML comments directly above its fence:
//
//   <!-- example: run -->          run the block with `sh -e` (every command must succeed); exit code 0
//   <!-- example: script -->       run the block as a script, as written (no -e): its own exit code counts
//   <!-- example: lines -->        each command line separately (a cheat sheet), in order, on one state
//   <!-- example: cron -->         a crontab: `NAME=value` lines set variables; each schedule line's command
//                                  runs the way cron runs it: `env -i PATH=/usr/bin:/bin HOME=<an empty dir>
//                                  SHELL=/bin/sh … /bin/sh -c '<command>'` (so it must set PATH and the state dir)
//   <!-- example: skip: <reason> -->            not runnable here (needs a real gateway, the network, …)
//   <!-- example: covered by <test file> -->    run by a dedicated test that checks more than exit codes
//
// Options after run/script/lines/cron: `exit=N` (expected exit code; for lines/cron one per command,
// comma-separated, or a single code for all), `state=empty|legacy|migrated|backed-up|locked` (default
// migrated; see setUpState), `silent` (no output at all: what cron mails nothing for), `needs=jq,sqlite3`
// (tools the example uses: without them the run is reported as skipped), `no-sleep` (`sleep` returns at
// once). Several markers on one block run it several times, each on a fresh state.
//
// Every run gets a temp HOME holding the state at ~/.openclaw, a temp working dir, and a PATH starting with
// an install dir that holds `openclaw-state` (a link to bin/openclaw-state.js) and `node`. In the block's
// text, `/usr/local/bin` stands for that install dir and `/home/openclaw` for that HOME; nothing else is
// rewritten. A documented example that fails, and an example without a marker, fail this test.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { binPath, fixturesDir, makeTempDir, repoRoot, runBin } from "../helpers/temp-state.js";
import { docFiles, extractBlocks, isExample, type DocBlock, type Marker, type StateName } from "./doc-examples.js";

type RunMarker = Extract<Marker, { kind: "run" | "script" | "lines" | "cron" }>;

const blocks: DocBlock[] = docFiles(repoRoot).flatMap((file) => extractBlocks(repoRoot, file));
const examples = blocks.filter(isExample);
const where = (b: DocBlock): string => `${b.file}:${b.line}`;

interface Run {
  command: string;
  status: number | null;
  output: string;
}

/** The install dir: `openclaw-state` and `node`, as `npm install -g` into /usr/local puts them. */
function installDir(noSleep: boolean): string {
  const bin = makeTempDir("ocs-doc-bin-");
  fs.symlinkSync(binPath, path.join(bin, "openclaw-state"));
  fs.symlinkSync(process.execPath, path.join(bin, "node"));
  if (noSleep) fs.writeFileSync(path.join(bin, "sleep"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  return bin;
}

/** A temp HOME with ~/.openclaw in the named shape. */
async function setUpState(state: StateName, env: NodeJS.ProcessEnv): Promise<void> {
  const home = env.HOME!;
  const stateDir = path.join(home, ".openclaw");
  if (state === "empty") return;
  fs.cpSync(path.join(fixturesDir, "legacy-state"), stateDir, { recursive: true });
  if (state === "legacy") return;
  // migrated: the legacy fixture after `doctor --fix` (what most readers have).
  const fix = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--quiet"], env);
  expect(fix.code, `setup doctor --fix: ${fix.stdout}${fix.stderr}`).toBe(0);
  if (state === "backed-up") {
    const backup = await runBin(["backup", "create", "--quiet"], env);
    expect(backup.code, `setup backup create: ${backup.stdout}${backup.stderr}`).toBe(0);
  }
  // locked: a repair is pending (openclaw.json readable by others, which `doctor --fix` tightens) while the gateway
  // holds its lease (a live pid on this host: this test's own). A plain row, written the way the gateway writes
  // it, whichever format doctor --fix left the global database in.
  if (state === "locked") {
    fs.chmodSync(path.join(stateDir, "openclaw.json"), 0o644);
    const db = new Database(resolveStatePaths({ env: { HOME: home } }).globalDbPath);
    try {
      const now = Date.now();
      const payload = JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: now, command: "gateway" });
      db.prepare("INSERT INTO state_leases (scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at) VALUES (?, 'gateway', ?, ?, ?, ?, ?, ?)")
        .run(GATEWAY_SCOPE, `${process.pid}@${os.hostname()}`, now + 3_600_000, now, payload, now, now);
    } finally {
      db.close();
    }
  }
}

/** Command lines of a cheat sheet: `\` continuations joined; blank and comment-only lines dropped. */
function commandLines(body: string): string[] {
  const out: string[] = [];
  let pending = "";
  for (const line of body.split("\n")) {
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = pending + line;
    pending = "";
    if (full.trim() !== "" && !full.trim().startsWith("#")) out.push(full);
  }
  return out;
}

function sh(args: string[], env: NodeJS.ProcessEnv, cwd: string, command: string): Run {
  const r = spawnSync("/bin/sh", args, { env, cwd, encoding: "utf8", timeout: 120_000 });
  return { command, status: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? `\n(${r.error.message})` : ""}` };
}

/** Crontab lines: variables, then each schedule line's command as cron runs it (bare environment, /bin/sh -c). */
function runCrontab(text: string, cwd: string, cronHome: string): Run[] {
  const vars: string[] = [];
  const runs: Run[] = [];
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const variable = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (variable) {
      vars.push(`${variable[1]}=${variable[2]!.replace(/^(["'])(.*)\1$/, "$2")}`);
      continue;
    }
    const schedule = /^(?:@\w+|(?:\S+\s+){4}\S+)\s+(.*)$/.exec(line);
    if (!schedule) throw new Error(`not a crontab line: ${line}`);
    const command = schedule[1]!;
    // cron turns an unescaped % into a newline (the rest becomes stdin): a documented line must not rely on it.
    expect(/(^|[^\\])%/.test(command), `cron cuts "${command}" at %`).toBe(false);
    const env = ["-i", "PATH=/usr/bin:/bin", `HOME=${cronHome}`, "SHELL=/bin/sh", "LOGNAME=openclaw", ...vars];
    const r = spawnSync("/usr/bin/env", [...env, "/bin/sh", "-c", command], { cwd, encoding: "utf8", timeout: 120_000 });
    runs.push({ command, status: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}` });
  }
  return runs;
}

const missingTools = (needs: string[]): string[] =>
  needs.filter((tool) => spawnSync("/bin/sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).status !== 0);

const notRun: string[] = [];

async function runExample(block: DocBlock, marker: RunMarker): Promise<void> {
  const missing = missingTools(marker.needs);
  if (missing.length > 0) {
    notRun.push(`${where(block)} [${marker.raw}]: ${missing.join(", ")} not installed`);
    console.warn(`SKIPPED ${where(block)}: needs ${missing.join(", ")}`);
    return;
  }
  const home = makeTempDir("ocs-doc-home-");
  const bin = installDir(marker.noSleep);
  const cwd = makeTempDir("ocs-doc-cwd-");
  const env: NodeJS.ProcessEnv = { PATH: `${bin}:${process.env.PATH}`, HOME: home, TMPDIR: makeTempDir("ocs-doc-tmp-"), NO_COLOR: "1", LANG: "C.UTF-8" };
  await setUpState(marker.state, env);
  const text = block.body.replaceAll("/usr/local/bin", bin).replaceAll("/home/openclaw", home);
  let runs: Run[];
  if (marker.kind === "cron") runs = runCrontab(text, cwd, makeTempDir("ocs-cron-home-"));
  else if (marker.kind === "lines") runs = commandLines(text).map((line) => sh(["-e", "-c", line], env, cwd, line));
  else {
    const file = path.join(cwd, "example.sh");
    fs.writeFileSync(file, text);
    runs = [sh(marker.kind === "run" ? ["-e", file] : [file], env, cwd, text.trim())];
  }
  expect(runs.length, `${where(block)}: no command found`).toBeGreaterThan(0);
  const exits = marker.exits.length === 1 ? runs.map(() => marker.exits[0]!) : marker.exits;
  expect(exits.length, `${where(block)} [${marker.raw}]: ${runs.length} command(s), ${exits.length} exit code(s)`).toBe(runs.length);
  // Every command's result at once, so one run shows all the lines that disagree with the doc.
  const wrong = runs.flatMap((run, i) => {
    const problems = [];
    if (run.status !== exits[i]) problems.push(`exit ${run.status}, documented ${exits[i]}`);
    if (marker.silent && run.output !== "") problems.push("printed output (cron would mail it)");
    return problems.length > 0 ? [`$ ${run.command}\n  ${problems.join("; ")}\n${run.output.replace(/^/gm, "  | ")}`] : [];
  });
  expect(wrong.length, `${where(block)} [${marker.raw}]\n${wrong.join("\n")}`).toBe(0);
}

describe("examples in README.md and docs/", () => {
  it("every example is marked run/script/lines/cron, skip with a reason, or covered by a named test", () => {
    const unmarked = examples.filter((b) => b.markers.length === 0).map((b) => `${where(b)} (${b.info || "untagged"}): ${b.body.split("\n")[0]}`);
    expect(unmarked, "add an <!-- example: … --> marker (see the top of test/docs/examples.test.ts)").toEqual([]);
    const invalid = blocks.flatMap((b) => b.invalid.map((problem) => `${where(b)}: ${problem}`));
    expect(invalid).toEqual([]);
    // Markers on something that is not an example (an output sample) would silently run nothing.
    expect(blocks.filter((b) => !isExample(b) && b.markers.length > 0).map(where)).toEqual([]);
  });

  it("each covering test exists and reads the doc it covers", () => {
    for (const b of examples)
      for (const m of b.markers)
        if (m.kind === "covered") {
          const file = path.join(repoRoot, m.by);
          expect(fs.existsSync(file), `${where(b)}: ${m.by} does not exist`).toBe(true);
          expect(fs.readFileSync(file, "utf8"), `${where(b)}: ${m.by} never names ${b.file}`).toContain(path.basename(b.file));
        }
  });

  for (const block of examples)
    for (const marker of block.markers)
      if (marker.kind !== "skip" && marker.kind !== "covered")
        it(`${where(block)} ${marker.raw}`, () => runExample(block, marker), 300_000);

  it("lists the examples it does not run, with the reason", () => {
    const skipped = examples.flatMap((b) => b.markers.filter((m) => m.kind === "skip").map((m) => `${where(b)}: ${(m as { reason: string }).reason}`));
    const covered = examples.flatMap((b) => b.markers.filter((m) => m.kind === "covered").map((m) => `${where(b)}: run by ${(m as { by: string }).by}`));
    const ran = examples.filter((b) => b.markers.some((m) => m.kind !== "skip" && m.kind !== "covered")).length;
    console.log(
      [
        `${examples.length} examples: ${ran} run here, ${covered.length} run by their own test, ${skipped.length} not runnable${notRun.length ? `, ${notRun.length} run(s) skipped for a missing tool` : ""}`,
        ...covered.map((l) => `  covered  ${l}`),
        ...skipped.map((l) => `  skip     ${l}`),
        ...notRun.map((l) => `  missing  ${l}`),
      ].join("\n"),
    );
    for (const line of skipped) expect(line).toMatch(/: \S.{8,}/);
    expect(ran).toBeGreaterThan(0);
  });
});
