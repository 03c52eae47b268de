// `sessions list` fits the width: the terminal's on a TTY, $COLUMNS off one, else 120; epoch-old ages are
// compact ("56y ago") and never push the columns apart.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { cellWidth } from "../../src/cli/render/table.js";
import { seedSessions } from "../helpers/seed-sessions.js";
import { binPath, makeTempState, runBin } from "../helpers/temp-state.js";

function seeded() {
  const state = makeTempState();
  const now = Date.now();
  seedSessions(state.paths, "main", [
    { sessionId: "s1", key: "agent:main:telegram:group:-1001234567890:topic:42:with-a-long-tail-of-words", updatedAt: now - 60_000, model: "claude-sonnet-4-20250514-with-a-suffix", entry: { sessionId: "s1", totalTokens: 1200, contextTokens: 200000, thinkingLevel: "high" } },
    { sessionId: "s2", key: "agent:main:main", updatedAt: 86_400_000, entry: { sessionId: "s2" } },
    { sessionId: "s3", key: "agent:main:cron:nightly", updatedAt: 0, entry: { sessionId: "s3", contextTokens: 128000 } },
  ]);
  return state;
}

/** The table part of the output: from the column header on. */
function tableLines(stdout: string): string[] {
  const lines = stdout.trimEnd().split("\n");
  return lines.slice(lines.findIndex((l) => l.startsWith("Kind")));
}

describe("sessions list width", () => {
  it("off a terminal: $COLUMNS, else 120; every table line fits and the columns line up", async () => {
    const { env } = seeded();
    for (const [columns, limit] of [[undefined, 120], ["80", 80], ["100", 100], ["200", 200]] as const) {
      const run = await runBin(["sessions", "list", "--format", "table"], { ...env, ...(columns ? { COLUMNS: columns } : {}) });
      expect(run.code, run.stderr).toBe(0);
      const table = tableLines(run.stdout);
      expect(table).toHaveLength(4);
      for (const line of table) expect(cellWidth(line), `${columns}: ${line}`).toBeLessThanOrEqual(limit);
      // "Age" starts at the same column in the header and in every row, old ages included.
      const ageAt = table[0]!.indexOf("Age");
      for (const line of table.slice(1)) expect(line.slice(ageAt)).toMatch(/^(\d+(m|h|d|mo|y) ago|just now)\s/);
    }
    const wide = await runBin(["sessions", "list", "--format", "table"], { ...env, COLUMNS: "200" });
    // One agent listed: its prefix is said once, every key is whole at 200 columns and not padded past the longest.
    expect(wide.stdout).toContain('Keys without "agent:main:" (`sessions show <key>` takes them as shown)');
    expect(wide.stdout).toMatch(/ telegram:group:-1001234567890:topic:42:with-a-long-tail-of-words 1m ago /);
    for (const line of tableLines(wide.stdout)) expect(line).not.toContain("agent:main:");
    expect(wide.stdout).toMatch(/56y ago/);
    expect(wide.stdout).not.toMatch(/\d{4,}d ago/);
  });

  it("on a terminal: the terminal's width (a real pty via script(1))", () => {
    const { env } = seeded();
    const probe = spawnSync("script", ["-qec", "true", "/dev/null"], { encoding: "utf8" });
    if (probe.status !== 0) return; // no script(1)/pty here: the $COLUMNS cases above still cover the layout
    const cmd = `stty cols 72 rows 40; ${JSON.stringify(process.execPath)} ${JSON.stringify(binPath)} sessions list --no-color`;
    const run = spawnSync("script", ["-qec", cmd, "/dev/null"], { encoding: "utf8", env: { ...env, COLUMNS: "" } });
    expect(run.status, run.stderr).toBe(0);
    const table = tableLines(run.stdout.replace(/\r/g, ""));
    expect(table.length).toBe(4);
    for (const line of table) expect(line.length, line).toBeLessThanOrEqual(72);
  });

  it("at 80 columns the key keeps its distinguishing tail, cut in the middle", async () => {
    const { env } = seeded();
    const run = await runBin(["sessions", "list", "--format", "table"], { ...env, COLUMNS: "80" });
    expect(run.code, run.stderr).toBe(0);
    const row = tableLines(run.stdout).find((l) => l.includes("telegram"))!;
    expect(row).toMatch(/telegram.*….*tail-of-words /);
    expect(cellWidth(row)).toBeLessThanOrEqual(80);
  });
});
