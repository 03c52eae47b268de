// The real binary on states whose databases a released OpenClaw wrote: doctor, migrate, reset and inspect.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { agentDbPath } from "../../src/state/paths.js";
import { makeTempState, runBin, snapshotTree, type TempState } from "../helpers/temp-state.js";

const V96 = "openclaw-2026.9.6/legacy-state-migrated";
const V633 = "openclaw-2026.6.33/legacy-state-migrated";

function openclawState(fixture: string): TempState {
  const state = makeTempState(fixture);
  fs.rmSync(path.join(state.stateDir, "README.md"));
  return state;
}

/** Row count of every table sqlite_master names (sqlite_* internals aside), read directly. */
function tableCounts(file: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    return Object.fromEntries(names.map((n) => [n, (db.prepare(`SELECT count(*) AS n FROM "${n}"`).get() as { n: number }).n]));
  } finally {
    db.close();
  }
}

async function json(args: string[], state: TempState): Promise<{ code: number; doc: Record<string, unknown> }> {
  const r = await runBin([...args, "--json"], state.env);
  return { code: r.code, doc: JSON.parse(r.stdout) as Record<string, unknown> };
}

describe("CLI on OpenClaw-format states", () => {
  it("doctor --json: ok agrees with the exit code; doctor --fix --yes exits 0 on 9.6 and 1 on 6.33 (sources wait)", async () => {
    for (const [fixture, fixCode] of [[V96, 0], [V633, 1]] as const) {
      const state = openclawState(fixture);
      const check = await json(["doctor"], state);
      expect(check.code).toBe(0);
      expect(check.doc.ok).toBe(true);
      expect(check.doc.status).toBe("warnings");
      const fixed = await json(["doctor", "--fix", "--yes"], state);
      expect([fixture, fixed.code]).toEqual([fixture, fixCode]);
      expect(fixed.doc.ok).toBe(fixCode === 0);
      expect((fixed.doc.migration as { run?: unknown } | undefined)?.run).toBeUndefined();
      const findings = fixed.doc.findings as Array<{ id: string; leftUndone?: boolean }>;
      expect(findings.some((f) => f.id === "legacy.foreign-format" && f.leftUndone)).toBe(fixCode === 1);
    }
  });

  it("migrate plan --json: nothing on 9.6; on 6.33 every source is `skip` with the reason naming `openclaw doctor --fix`", async () => {
    const v96 = await json(["migrate", "plan"], openclawState(V96));
    expect(v96.code).toBe(0);
    expect(v96.doc.plan).toMatchObject({ sources: [], pending: false });

    const state = openclawState(V633);
    const before = snapshotTree(state.stateDir);
    const plan = await json(["migrate", "plan"], state);
    expect(plan.code).toBe(0);
    const p = plan.doc.plan as { pending: boolean; sources: Array<{ relativePath: string; action: string; reason?: string }> };
    expect(p.pending).toBe(false);
    expect(p.sources.map((s) => s.relativePath).sort()).toEqual(["agents/main/sessions/s-lost.jsonl", "agents/main/sessions/s-main.jsonl", "agents/main/sessions/s-ops.jsonl", "agents/main/sessions/s-root-dm.jsonl", "agents/main/sessions/sessions.json"]);
    for (const s of p.sources) expect([s.action, s.reason]).toEqual(["skip", expect.stringMatching(/OpenClaw 2026\.6\.33 .*run `openclaw doctor --fix`/)]);
    const human = await runBin(["migrate", "plan"], state.env);
    expect(human.code).toBe(0);
    expect(human.stdout + human.stderr).toMatch(/5 legacy source\(s\) not imported here: .*`openclaw doctor --fix`/);
    expect(human.stdout).toMatch(/Nothing openclaw-state can migrate in this format\./);
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("migrate history names why no runs are shown; migrate skip refuses and changes nothing", async () => {
    const state = openclawState(V633);
    const before = snapshotTree(state.stateDir);
    const history = await json(["migrate", "history"], state);
    expect(history.code).toBe(0);
    expect(history.doc).toMatchObject({ total: 0, runs: [], notRead: { code: "schema_format", writtenBy: "OpenClaw 2026.6.33 (global format v1)" } });
    const human = await runBin(["migrate", "history"], state.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Not read: .*written by OpenClaw 2026\.6\.33/);

    const skip = await json(["migrate", "skip", "agents/main/sessions/s-main.jsonl", "--reason", "test"], state);
    expect(skip.code).toBe(1);
    expect(skip.doc).toMatchObject({ ok: false, error: { code: "schema_format", message: expect.stringMatching(/OpenClaw 2026\.6\.33.*the file was not touched/) } });
    expect(snapshotTree(state.stateDir)).toEqual(before);
  });

  it("reset --scope config works on both; --scope config+creds+sessions refuses 2026.6.33's format with nothing removed", async () => {
    for (const fixture of [V96, V633]) {
      const state = openclawState(fixture);
      const config = path.join(state.stateDir, "openclaw.json");
      if (!fs.existsSync(config)) fs.writeFileSync(config, "{}\n");
      const before = snapshotTree(state.stateDir);
      // 2026.9.6's credential rows are known (test/reset/credentials-reset-openclaw.test.ts); 2026.6.33's are not.
      if (fixture === V633) {
        const refused = await json(["reset", "--scope", "config+creds+sessions", "--yes"], state);
        expect([fixture, refused.code]).toEqual([fixture, 1]);
        expect(refused.doc).toMatchObject({ ok: false, error: { code: "reset_foreign_format", message: expect.stringMatching(/written by OpenClaw .*nothing was removed/) } });
        expect(snapshotTree(state.stateDir)).toEqual(before);
      }

      const dbs = Object.fromEntries(Object.entries(before).filter(([rel]) => /\.sqlite$/.test(rel)));
      const reset = await runBin(["reset", "--scope", "config", "--yes"], state.env);
      expect([fixture, reset.code, reset.stderr]).toEqual([fixture, 0, ""]);
      const after = snapshotTree(state.stateDir);
      expect(after["openclaw.json"]).toBeUndefined();
      for (const [rel, entry] of Object.entries(dbs)) expect(after[rel]?.type).toBe(entry.type);
      // Everything but the config is still there (agent DB byte-identical: the lease row lives in the global DB).
      expect(Object.keys(after).sort()).toEqual(Object.keys(before).filter((rel) => rel !== "openclaw.json").sort());
      expect(after["agents/main/agent/openclaw-agent.sqlite"]).toEqual(before["agents/main/agent/openclaw-agent.sqlite"]);
    }
  });

  it("inspect --json names the format of each database and counts its rows; inspect exits 0", async () => {
    for (const [fixture, release, g, a] of [[V96, "2026.9.6", 18, 23], [V633, "2026.6.33", 1, 1]] as const) {
      const state = openclawState(fixture);
      const before = snapshotTree(state.stateDir);
      const r = await json(["inspect"], state);
      expect([fixture, r.code]).toEqual([fixture, 0]);
      const dbs = r.doc.databases as Array<{ role: string; status: string; format: { writtenBy: string; userVersion: number }; tables: Record<string, number> }>;
      // 9.6's is the format this tool writes (`ok`); 2026.6.33's an older OpenClaw's (`foreign`, counted only).
      const status = release === "2026.9.6" ? "ok" : "foreign";
      expect(dbs.map((d) => [d.role, d.status, d.format.userVersion])).toEqual([["global", status, g], ["agent", status, a]]);
      expect(dbs[0]!.format.writtenBy).toBe(`OpenClaw ${release} (global format v${g})`);
      expect(dbs[1]!.format.writtenBy).toBe(`OpenClaw ${release} (agent format v${a})`);
      const counts = tableCounts(state.paths.globalDbPath);
      expect(dbs[0]!.tables).toEqual(counts);
      expect(dbs[1]!.tables).toEqual(tableCounts(agentDbPath(state.paths, "main")));
      expect(counts.cron_jobs).toBeGreaterThan(0);
      const human = await runBin(["inspect"], state.env);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain(release === "2026.9.6" ? `format OpenClaw ${release} (global format v${g}): current` : `written by OpenClaw ${release} (global format v${g}): row counts only`);
      expect(human.stdout).toMatch(new RegExp(`^ {2}cron_jobs +${counts.cron_jobs}$`, "m"));
      expect(snapshotTree(state.stateDir)).toEqual(before);
    }
  });
});
