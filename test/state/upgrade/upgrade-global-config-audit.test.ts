// logs/config-audit.jsonl through our doctor --fix ends in diagnostic_events (scope config-audit) as OpenClaw 2026.9.6's doctor writes it.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isSensitiveConfigPath, maskSecret, redactAuditArgv, sanitizeConfigAuditRecord } from "../../../src/state/upgrade/config-audit-record.js";
import { legacyConfigAuditEvent } from "../../../src/state/upgrade/upgrade-global-config-audit.js";
import { fixturesDir, makeTempState, runInProcess } from "../../helpers/temp-state.js";

const FIXTURE_LOG = path.join(fixturesDir, "openclaw-2026.3.28", "state", "logs", "config-audit.jsonl");
/** The scratch root the release ran in: its config names paths under it, which must not resolve here. */
const SCRATCH_ROOT = "/tmp/openclaw-2026.3.28-fixture";

/** The keys 9.6's own doctor --fix wrote for the fixture's 6 lines (observed). */
const KEY_PREFIX = "legacy:config:9ef7e00a368a8e30:";

function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as T[]);
}

const records = (): Array<Record<string, unknown>> =>
  fs.readFileSync(FIXTURE_LOG, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Record<string, unknown>);

describe("legacy config audit → diagnostic_events", () => {
  it("the generation is sha256 of the retired file's relative path", () => {
    expect(createHash("sha256").update("logs/config-audit.jsonl.migrated.raw").digest("hex").slice(0, 16)).toBe("9ef7e00a368a8e30");
  });

  it("doctor --fix on openclaw@2026.3.28's tree: the 6 lines as 9.6 keys, masks and dates them, none left in plugin_state_entries", async () => {
    expect(fs.existsSync(SCRATCH_ROOT), `${SCRATCH_ROOT} exists: remove it`).toBe(false);
    const state = makeTempState("openclaw-2026.3.28/state");
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
    expect(run.code, run.stderr || run.stdout).toBe(0);
    const db = state.paths.globalDbPath;
    expect(cli(db, "PRAGMA user_version")).toEqual([{ user_version: 18 }]);
    const rows = cli<{ event_key: string; payload_json: string; created_at: number; sequence: number; t: string }>(
      db,
      "SELECT event_key, payload_json, created_at, sequence, typeof(sequence) AS t FROM diagnostic_events WHERE scope = 'config-audit' ORDER BY sequence",
    );
    const keys = rows.map((r) => r.event_key);
    expect(keys).toHaveLength(6);
    expect(keys[0]).toBe(`${KEY_PREFIX}1:67db1d1141441f6c`);
    expect(keys[5]).toBe(`${KEY_PREFIX}6:957d3c8c0c48469f`);
    keys.forEach((k, i) => expect(k).toMatch(new RegExp(`^${KEY_PREFIX}${i + 1}:[0-9a-f]{16}$`)));
    const lines = records();
    rows.forEach((row, i) => {
      // The digest is of the stored payload; the payload is the line (2026.3.28 already cut argv to 8 and held no secret).
      expect(row.event_key.endsWith(createHash("sha256").update(row.payload_json).digest("hex").slice(0, 16))).toBe(true);
      const payload = JSON.parse(row.payload_json) as Record<string, unknown>;
      const line = lines[i]!;
      expect(payload).toEqual(line);
      expect(Object.keys(payload)).toEqual(Object.keys(line));
      expect(row.created_at).toBe(Date.parse(String(line.ts)));
      expect(row.t).toBe("integer");
      expect(row.sequence).toBe(Number.MIN_SAFE_INTEGER + 1 + i);
    });
    expect(cli(db, "SELECT count(*) AS n FROM plugin_state_entries WHERE plugin_id = 'core' AND namespace = 'config-audit'")).toEqual([{ n: 0 }]);
  }, 120_000);

  it("a log with secrets, a blank line and a non-object line: objects numbered in file order and masked, the array left unmapped", async () => {
    const state = makeTempState();
    fs.mkdirSync(path.join(state.stateDir, "logs"), { recursive: true });
    const lines = [
      { ts: "2026-01-01T00:00:00.000Z", event: "config.write", argv: ["node", "openclaw", "config", "set", "gateway.auth.token", "supersecretvalue123456", "--verbose", "x", "y"], token: "abcdefghijklmnopqrstuvwxyz" },
      [1, 2],
      { event: "config.external", argv: ["a", "b", "c", "d", "e", "f", "g", "h", "--token", "t"] },
    ];
    fs.writeFileSync(path.join(state.stateDir, "logs", "config-audit.jsonl"), `${JSON.stringify(lines[0])}\n${JSON.stringify(lines[1])}\n\n${JSON.stringify(lines[2])}\n`);
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], state.env);
    expect(run.code, run.stderr || run.stdout).toBe(0);
    const rows = cli<{ event_key: string; payload_json: string; created_at: number; sequence: number }>(
      state.paths.globalDbPath,
      "SELECT event_key, payload_json, created_at, sequence FROM diagnostic_events WHERE scope = 'config-audit' ORDER BY sequence",
    );
    expect(rows.map((r) => r.event_key.split(":").slice(0, 4).join(":"))).toEqual([`${KEY_PREFIX}1`, `${KEY_PREFIX}2`]);
    expect(JSON.parse(rows[0]!.payload_json)).toEqual({
      ts: "2026-01-01T00:00:00.000Z",
      event: "config.write",
      argv: ["node", "openclaw", "config", "set", "gateway.auth.token", "***", "--verbose", "x"],
      token: "abcdef…wxyz",
      execArgv: [],
    });
    expect(rows[0]!.created_at).toBe(Date.parse("2026-01-01T00:00:00.000Z"));
    expect(JSON.parse(rows[1]!.payload_json)).toEqual(lines[2]);
    expect(rows[1]!.created_at).toBe(0);
    expect(rows.map((r) => r.sequence)).toEqual([Number.MIN_SAFE_INTEGER + 1, Number.MIN_SAFE_INTEGER + 2]);
    expect(run.stdout).toMatch(/1 line\(s\) that are not JSON objects not copied/);
    expect(cli(state.paths.globalDbPath, "SELECT count(*) AS n FROM plugin_state_entries")).toEqual([{ n: 0 }]);
  }, 120_000);

  it("the pure mapping gives the same first and last keys from the fixture's lines", () => {
    const events = records().map((r, i) => legacyConfigAuditEvent(r, i + 1));
    expect(events[0]!.eventKey).toBe(`${KEY_PREFIX}1:67db1d1141441f6c`);
    expect(events[5]!.eventKey).toBe(`${KEY_PREFIX}6:957d3c8c0c48469f`);
  });

  it("created_at is 0 when ts is missing, numeric or not a date", () => {
    expect(legacyConfigAuditEvent({ event: "config.write" }, 1).createdAt).toBe(0);
    expect(legacyConfigAuditEvent({ ts: 1_700_000_000_000 }, 1).createdAt).toBe(0);
    expect(legacyConfigAuditEvent({ ts: "yesterday-ish" }, 1).createdAt).toBe(0);
  });
});

describe("sanitizeConfigAuditRecord (9.6's shapes)", () => {
  it("masks secret flag values, keeps the array's length, cuts to 8 and fills a missing argv with []", () => {
    const out = sanitizeConfigAuditRecord({
      event: "config.write",
      argv: ["node", "openclaw", "login", "--token", "-abc", "--api-key=sk-live-123", "--gateway-token", "x", "9th", "10th"],
    });
    expect(out.argv).toEqual(["node", "openclaw", "login", "--token", "***", "--api-key=***", "--gateway-token", "***"]);
    expect(out.execArgv).toEqual([]);
    // Suffix rule: --<words>-password, --my_client_key; a non-secret flag is untouched.
    expect(redactAuditArgv(["--db-password", "p", "--my_client_key=abc", "--verbose", "v"])).toEqual(["--db-password", "***", "--my_client_key=***", "--verbose", "v"]);
  });

  it("config set <sensitive path> <value>: the value masked; options with values skipped; --batch-json masked", () => {
    expect(redactAuditArgv(["openclaw", "config", "set", "gateway.auth.token", "abc"])).toEqual(["openclaw", "config", "set", "gateway.auth.token", "***"]);
    expect(redactAuditArgv(["openclaw", "config", "--profile", "p", "set", "--section", "s", "models.openai.apiKey", "k"])).toEqual([
      "openclaw", "config", "--profile", "p", "set", "--section", "s", "models.openai.apiKey", "***",
    ]);
    expect(redactAuditArgv(["openclaw", "config", "set", "agents.defaults.maxTokens", "4096"])).toEqual(["openclaw", "config", "set", "agents.defaults.maxTokens", "4096"]);
    expect(redactAuditArgv(["config", "set", "--batch-json", "{}", "a", "b"])).toEqual(["config", "set", "--batch-json", "***", "a", "b"]);
    expect(redactAuditArgv(["config", "set", "--batch-json={}"])).toEqual(["config", "set", "--batch-json=***"]);
    expect(isSensitiveConfigPath("tools.localService.env.FOO")).toBe(true);
    expect(isSensitiveConfigPath("channels.telegram.passwordFile")).toBe(false);
  });

  it("config.external keeps its argv whole", () => {
    const argv = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "--token", "t"];
    expect(sanitizeConfigAuditRecord({ event: "config.external", argv }).argv).toEqual(argv);
    expect(sanitizeConfigAuditRecord({ event: "config.external" })).toEqual({ event: "config.external" });
  });

  it("secret-named fields: first6…last4 from 18 chars, *** below, *** for numbers and booleans; references kept", () => {
    const out = sanitizeConfigAuditRecord({
      event: "config.write",
      argv: [],
      execArgv: [],
      token: "abcdefghijklmnopqr", // 18
      password: "abcdefghijklmnopq", // 17
      nested: { apiKey: "sk-0123456789abcdefXYZW", GITHUB_TOKEN: "$GITHUB_TOKEN", pin: 1234, cvv: 123, list: { secret: ["short", "0123456789abcdefghij"] } },
      error: { code: "E_FAIL" },
      oauth: { code: "abc" },
      cause: { code: "ECONNRESET" },
      publicShare: { id: "share-1" },
      nextHash: "dcf2c81286e56704f395fd979611c837e240139aa16f664b0e07252e26a03900",
      code: "top-level",
    });
    expect(out.token).toBe("abcdef…opqr");
    expect(out.password).toBe("***");
    expect(out.nested).toEqual({ apiKey: "sk-012…XYZW", GITHUB_TOKEN: "$GITHUB_TOKEN", pin: 1234, cvv: "***", list: { secret: ["***", "012345…ghij"] } });
    expect(out.error).toEqual({ code: "E_FAIL" });
    expect(out.oauth).toEqual({ code: "***" });
    expect(out.cause).toEqual({ code: "ECONNRESET" });
    expect(out.publicShare).toEqual({ id: "***" });
    expect(out.nextHash).toBe("dcf2c81286e56704f395fd979611c837e240139aa16f664b0e07252e26a03900");
    expect(out.code).toBe("top-level");
  });

  it("never cuts a surrogate pair", () => {
    expect(maskSecret("abcde😀fghijklmnopqrs")).toBe("abcde…pqrs");
    expect(maskSecret("abcdefghijklmnopq😀z")).toBe("abcdef…q😀z");
  });
});
