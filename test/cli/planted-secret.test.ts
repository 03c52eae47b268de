// Credentials planted in auth, OAuth and approval files never reach stdout, stderr, --json, or either report_json.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, runBin, runInProcess } from "../helpers/temp-state.js";
import { rows } from "../helpers/migration.js";

/** A unique secret per run: any occurrence anywhere is a leak, not a coincidence. */
function plantSecrets(stateDir: string): string {
  const secret = `sk-planted-${crypto.randomBytes(12).toString("hex")}`;
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(stateDir, rel)), { recursive: true });
    fs.writeFileSync(path.join(stateDir, rel), text);
  };
  write("agents/main/agent/auth-profiles.json", JSON.stringify({ version: 1, profiles: { "anthropic:default": { type: "api_key", provider: "anthropic", key: secret }, "bad profile": secret } }));
  write("agents/main/agent/auth-state.json", JSON.stringify({ version: 1, lastGood: { anthropic: "anthropic:default" } }));
  write("credentials/oauth.json", JSON.stringify({ openai: { access: `${secret}-access`, refresh: `${secret}-refresh`, expires: 1767000000000 } }));
  write("exec-approvals.json", JSON.stringify({ version: 1, socket: { path: "/tmp/x.sock", token: secret } }));
  // Malformed credential files whose parse error sits right next to the secret (V8 quotes that text).
  write("agents/ops/agent/auth-profiles.json", `{"profiles": {"x": {"key": "${secret}" "type": "api_key"}}}`);
  write("agents/ops/agent/auth.json", `{"anthropic": {"key": ${secret}}}`);
  // Wrong shapes: the error names a type, never a value.
  write("agents/qa/agent/auth-profiles.json", JSON.stringify({ profiles: secret }));
  write("agents/qa/agent/auth.json", JSON.stringify(secret));
  return secret;
}

function reports(globalDb: string): string {
  return rows<{ r: string | null }>(globalDb, "SELECT report_json AS r FROM migration_runs UNION ALL SELECT report_json FROM migration_sources UNION ALL SELECT source_path FROM migration_sources")
    .map((x) => x.r ?? "")
    .join("\n");
}

describe("planted secrets", () => {
  it("appear in no output of doctor, doctor --fix, migrate plan/history, and in no report", async () => {
    const { env, stateDir, paths } = makeTempState("legacy-state");
    const secret = plantSecrets(stateDir);
    const outputs: string[] = [];
    const run = async (args: string[]): Promise<number> => {
      const r = await runInProcess(args, env);
      outputs.push(`$ ${args.join(" ")}\n${r.stdout}\n${r.stderr}`);
      return r.code;
    };
    for (const args of [["doctor"], ["doctor", "--verbose"], ["doctor", "--json"], ["doctor", "--json", "--verbose"], ["migrate", "plan"], ["migrate", "plan", "--verbose"], ["migrate", "plan", "--json"]]) {
      expect(await run(args), args.join(" ")).toBeLessThanOrEqual(1);
    }
    // The malformed credential files fail (by design): partial success exits 1.
    expect(await run(["doctor", "--fix", "--yes"])).toBe(1);
    expect(await run(["doctor", "--fix", "--yes", "--json", "--no-backup"])).toBe(1);
    for (const args of [["doctor", "--verbose"], ["migrate", "history", "--verbose"], ["migrate", "history", "--json"]]) await run(args);

    // The planted files were read: the secret is in the database it was imported into.
    expect(rows<{ p: string }>(paths.globalDbPath, "SELECT profiles_json AS p FROM auth_profile_stores").map((r) => r.p).join()).toContain(secret);
    // The malformed ones failed (kept in place) with a message naming the file and a position.
    const all = outputs.join("\n");
    expect(all).toMatch(/agents\/ops\/agent\/auth-profiles\.json: invalid JSON at line 1, column \d+/);
    expect(all).toMatch(/agents\/qa\/agent\/auth\.json: expected an object of credentials keyed by provider, found a string/);
    expect(fs.existsSync(path.join(stateDir, "agents/ops/agent/auth.json"))).toBe(true);

    expect(all).not.toContain(secret);
    expect(reports(paths.globalDbPath)).not.toContain(secret);
  });

  it("the spawned binary prints none either (stdout and stderr)", async () => {
    const { env, stateDir, paths } = makeTempState("migration/auth");
    const secret = plantSecrets(stateDir);
    const fix = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--json", "--verbose"], env);
    expect(fix.code).toBe(1); // the malformed files fail, by design
    expect(JSON.parse(fix.stdout).ok).toBe(false);
    const history = await runBin(["migrate", "history", "--json"], env);
    expect(`${fix.stdout}${fix.stderr}${history.stdout}${history.stderr}`).not.toContain(secret);
    expect(JSON.parse(fix.stdout).migration.run.sources.length).toBeGreaterThan(0);
    expect(reports(paths.globalDbPath)).not.toContain(secret);
  });
});
