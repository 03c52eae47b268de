// `sessions show --full`, `sessions tail [--follow]` and `sessions delete` through the CLI (in process and the real binary).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { binPath, makeTempDir, makeTempState, runBin, runInProcess, snapshotTree, type TempState } from "../helpers/temp-state.js";
import { agentDbFile, append, chain, createSession, msg } from "../helpers/transcripts.js";

const KEY = "agent:main:main";
const LONG = `${"word ".repeat(60)}END`;

function seeded(): TempState {
  const state = makeTempState();
  createSession(state.paths, "main", "s1", KEY);
  append(state.paths, "main", "s1", [...chain("m", 4, null), msg("m5", "m4", "assistant", `first line\n${LONG}`)]);
  return state;
}

describe("sessions show: fitted to the width, whole with --full", () => {
  it("fits every event line to COLUMNS when not a terminal, and prints full text (all lines) with --full", async () => {
    const state = seeded();
    const fitted = await runInProcess(["sessions", "show", "main"], { ...state.env, COLUMNS: "70" });
    expect(fitted.code).toBe(0);
    const eventLines = fitted.stdout.split("\n").filter((l) => /^\s+#\d/.test(l));
    expect(eventLines).toHaveLength(6);
    for (const l of eventLines) expect(l.length).toBeLessThanOrEqual(70);
    expect(fitted.stdout).not.toContain("END");
    const wide = await runInProcess(["sessions", "show", "main"], { ...state.env, COLUMNS: "400" });
    expect(wide.stdout).toContain("END");
    const full = await runInProcess(["sessions", "show", "main", "--full"], { ...state.env, COLUMNS: "70" });
    expect(full.stdout).toContain("assistant: first line\n");
    expect(full.stdout).toContain(`    ${LONG}`);
  });
});

describe("sessions tail", () => {
  it("prints the newest messages (fitted), and one JSON line per event with --json", async () => {
    const state = seeded();
    const human = await runInProcess(["sessions", "tail", "main", "-n", "2"], { ...state.env, COLUMNS: "60" });
    expect(human.code).toBe(0);
    const lines = human.stdout.trimEnd().split("\n");
    expect(lines[0]).toContain(`Session ${KEY} (s1)`);
    expect(lines.slice(1).map((l) => l.slice(0, 3))).toEqual(["#4 ", "#5 "]);
    for (const l of lines.slice(1)) expect(l.length).toBeLessThanOrEqual(60);
    const json = await runInProcess(["sessions", "tail", "s1", "--json", "-n", "3"], state.env);
    const docs = json.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(docs.map((d) => d.kind)).toEqual(["session", "message", "message", "message"]);
    expect(docs[0]).toMatchObject({ version: 1, sessionKey: KEY, sessionId: "s1" });
    expect(docs.slice(1).map((d) => [d.entryId, d.seq, d.role])).toEqual([
      ["m3", 3, "user"],
      ["m4", 4, "assistant"],
      ["m5", 5, "assistant"],
    ]);
    expect(docs[3].message.content).toContain("END");
  });

  it("exits 1 for an unknown session (a JSON line with --json) and 2 for a bad option", async () => {
    const state = seeded();
    const missing = await runInProcess(["sessions", "tail", "agent:main:nope"], state.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No session");
    const json = await runInProcess(["sessions", "tail", "nope", "--json"], state.env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ version: 1, ok: false, error: { code: "not_found" } });
    expect((await runInProcess(["sessions", "tail", "main", "--interval", "5"], state.env)).code).toBe(2);
  });

  it("--follow (real binary) prints rows appended while it runs, then ends with exit 0 on SIGINT", async () => {
    const state = seeded();
    const child = spawn(process.execPath, [binPath, "sessions", "tail", "main", "--follow", "--interval", "100", "--json", "-n", "1"], { env: state.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const waitFor = async (pred: () => boolean, what: string) => {
      const deadline = Date.now() + 20_000;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout: ${stdout}; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const messages = () => stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((d) => d.kind === "message").map((d) => d.entryId);
    try {
      await waitFor(() => messages().length === 1, "the initial line");
      append(state.paths, "main", "s1", [msg("m6", "m5", "user", "live one")]);
      await waitFor(() => messages().length === 2, "the first appended message");
      append(state.paths, "main", "s1", [msg("m7", "m6", "assistant", "live two"), msg("m8", "m7", "user", "live three")]);
      await waitFor(() => messages().length === 4, "two more appended messages");
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(messages()).toEqual(["m5", "m6", "m7", "m8"]);
    expect(stderr).toBe("");
  });

  it("--follow in human mode ends with exit 0 on SIGTERM", async () => {
    const state = seeded();
    const child = spawn(process.execPath, [binPath, "sessions", "tail", "main", "-f", "--interval", "100"], { env: state.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      const deadline = Date.now() + 20_000;
      while (!stdout.includes("#5")) {
        if (Date.now() > deadline) throw new Error(`no output: ${stdout}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      append(state.paths, "main", "s1", [msg("m6", "m5", "user", "from the live gateway")]);
      while (!stdout.includes("from the live gateway")) {
        if (Date.now() > deadline) throw new Error(`no live line: ${stdout}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(stdout).toContain("following, Ctrl-C to stop");
  });
});

describe("sessions delete", () => {
  it("refuses without --yes when it cannot prompt (exit 2 naming --yes); --dry-run changes nothing", async () => {
    const state = seeded();
    const before = snapshotTree(state.stateDir);
    const noYes = await runBin(["sessions", "delete", KEY], state.env);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain("--yes");
    const json = await runBin(["sessions", "delete", KEY, "--json"], state.env);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "consent_required" } });
    const dry = await runBin(["sessions", "delete", "main", "--dry-run"], state.env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would delete  6 transcript event(s)");
    expect(dry.stdout).toContain("Dry run: nothing was deleted.");
    expect(snapshotTree(state.stateDir)).toEqual(before);
    expect((await runBin(["sessions", "delete", KEY, "--yes", "--backup-dir", path.join(state.stateDir, "x")], state.env)).code).toBe(2);
    expect((await runBin(["sessions", "delete", KEY, "--yes", "--no-backup", "--backup-dir", "/tmp/x"], state.env)).code).toBe(2);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("--yes --json deletes after a verified copy in the default backup dir and reports it in one document", async () => {
    const state = seeded();
    const r = await runBin(["sessions", "delete", "main", "--yes", "--json"], state.env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "sessions delete", sessionKey: KEY, sessionId: "s1", dryRun: false, rows: { transcript_events: 6 } });
    expect(doc.backup.path.startsWith(path.join(`${state.stateDir}-backups`, "sessions"))).toBe(true);
    const read = (file: string, q: string) => execFileSync("sqlite3", ["-readonly", file, q], { encoding: "utf8" }).trim();
    expect(read(doc.backup.path, "PRAGMA integrity_check")).toBe("ok");
    expect(read(doc.backup.path, "SELECT count(*) FROM transcript_events")).toBe("6");
    expect(fs.readdirSync(path.dirname(doc.backup.path))).toEqual([path.basename(doc.backup.path)]);
    expect(read(agentDbFile(state.paths), "SELECT count(*) FROM transcript_events")).toBe("0");
    const again = await runBin(["sessions", "delete", "main", "--yes"], state.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("No session");
  });

  it("asks on a terminal and deletes nothing when declined", async () => {
    const state = seeded();
    const declined = await runInProcess(["sessions", "delete", "main", "--backup-dir", makeTempDir()], state.env, [false]);
    expect(declined.code).toBe(1);
    expect(declined.stdout).toContain("Nothing was deleted.");
    const accepted = await runInProcess(["sessions", "delete", "main", "--no-backup"], state.env, [true]);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain("Deleted session agent:main:main (s1)");
    expect(accepted.stderr).toContain("No backup was written");
  });
});
