// `sessions list` through the real binary: tab-separated rows when piped, `--format table|tsv|json`, `--json`
// compact off a terminal, CJK/emoji keys aligned by screen cells, hostile keys kept to one escaped line.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { TSV_FIELDS } from "../../src/cli/render/sessions-render.js";
import { cellWidth } from "../../src/cli/render/table.js";
import { seedSessions } from "../helpers/seed-sessions.js";
import { binPath, makeTempState, runBin } from "../helpers/temp-state.js";

function seeded() {
  const state = makeTempState();
  const now = Date.now();
  seedSessions(state.paths, "main", [
    { sessionId: "s-cjk", key: "agent:main:discord:group:会话频道:🦞", updatedAt: now - 60_000, model: "模型-🦞", entry: { sessionId: "s-cjk", totalTokens: 1200, contextTokens: 200000 } },
    { sessionId: "s-tab", key: "agent:main:evil\tkey\nsecond-line\u001b[31m", updatedAt: now - 120_000, entry: { sessionId: "s-tab" } },
    { sessionId: "s-main", key: "agent:main:main", updatedAt: now - 3_600_000, entry: { sessionId: "s-main" } },
  ]);
  seedSessions(state.paths, "work", [{ sessionId: "w1", key: "agent:work:main", updatedAt: now - 30_000 }]);
  return state;
}

describe("sessions list output formats (binary)", () => {
  it("piped: tab-separated rows only, whole keys, ISO times, hostile values escaped; a cut-off listing says so on stderr", async () => {
    const { env } = seeded();
    const run = await runBin(["sessions", "list"], env);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.split("\t")).toHaveLength(TSV_FIELDS.length);
    const rows = lines.map((l) => l.split("\t"));
    expect(rows.map((r) => r[0])).toEqual(["agent:main:discord:group:会话频道:🦞", "agent:main:evil\\tkey\\nsecond-line\\x1b[31m", "agent:main:main"]);
    expect(run.stdout).not.toContain("\u001b");
    expect(rows[0]).toEqual(["agent:main:discord:group:会话频道:🦞", "main", "unknown", expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), "模型-🦞", "1200", "200000", "", "s-cjk"]);
    expect(rows[2]![4]).toBe("");
    expect(run.stderr).toBe("");
    const limited = await runBin(["sessions", "list", "--limit", "1", "--format", "tsv"], env);
    expect(limited.stdout.trimEnd().split("\n")).toHaveLength(1);
    expect(limited.stderr).toMatch(/note: 1 of 3 sessions listed; --limit all lists every one/);
  });

  it("--format table off a terminal: aligned by screen cells with CJK and emoji, no control character reaches the terminal", async () => {
    const { env } = seeded();
    const run = await runBin(["sessions", "list", "--format", "table"], { ...env, COLUMNS: "80" });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    const header = lines.findIndex((l) => l.startsWith("Kind"));
    const table = lines.slice(header);
    expect(table).toHaveLength(4);
    const ageAt = cellWidth(table[0]!.slice(0, table[0]!.indexOf("Age")));
    for (const line of table.slice(1)) {
      expect(cellWidth(line), line).toBeLessThanOrEqual(80);
      expect(cellWidth(line.slice(0, line.search(/\d+(m|h) ago/))), line).toBe(ageAt);
    }
    expect(table[1]).toContain("discord:group:会话频道:🦞");
    expect(table[2]).toContain("evil\\tkey\\nsecond-line\\x1b[31m");
    expect(run.stdout).not.toContain("\u001b");
  });

  it("--json and --format json are the same compact document when piped; they may not contradict --format", async () => {
    const { env } = seeded();
    const json = await runBin(["sessions", "list", "--all-agents", "--json"], env);
    const format = await runBin(["sessions", "list", "--all-agents", "--format", "json"], env);
    expect(json.code).toBe(0);
    expect(format.code).toBe(0);
    expect(json.stdout.trimEnd().split("\n")).toHaveLength(1);
    const doc = JSON.parse(json.stdout);
    expect(JSON.parse(format.stdout)).toEqual(doc);
    expect(doc).toMatchObject({ ok: true, command: "sessions list", count: 4 });
    const row = doc.sessions.find((s: { sessionId: string }) => s.sessionId === "s-cjk");
    // Times are ISO-8601 in every --json document (docs/cli.md); no epoch-ms twin beside them.
    expect(row).toMatchObject({ key: "agent:main:discord:group:会话频道:🦞", updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    expect(new Date(row.updatedAt).toISOString()).toBe(row.updatedAt);
    expect(row).not.toHaveProperty("updatedAtIso");
    const clash = await runBin(["sessions", "list", "--json", "--format", "tsv"], env);
    expect(clash.code).toBe(2);
    expect(JSON.parse(clash.stdout)).toMatchObject({ ok: false, error: { message: expect.stringMatching(/--json and --format tsv contradict/) } });
    const bad = await runBin(["sessions", "list", "--format", "csv"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Invalid --format value "csv": use table, tsv or json/);
  });

  it("on a terminal: a table by default and pretty JSON (a real pty via script(1))", () => {
    const { env } = seeded();
    const probe = spawnSync("script", ["-qec", "true", "/dev/null"], { encoding: "utf8" });
    if (probe.status !== 0) return; // no script(1)/pty here: the piped cases above still run
    const run = (args: string) => spawnSync("script", ["-qec", `stty cols 80 rows 40; ${JSON.stringify(process.execPath)} ${JSON.stringify(binPath)} ${args}`, "/dev/null"], { encoding: "utf8", env: { ...env, COLUMNS: "" } });
    const table = run("sessions list --no-color");
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/Kind\s+Key\s+Age/);
    expect(table.stdout).not.toContain("\t");
    const json = run("sessions list --json");
    expect(json.stdout.replace(/\r/g, "")).toMatch(/^\{\n {2}"version": 1,\n/);
  });
});
