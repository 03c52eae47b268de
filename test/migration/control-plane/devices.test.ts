// identity/device.json, identity/device-auth.json, devices/{paired,pending,bootstrap}.json, nodes/*.json →
// device_identities, device_auth_tokens, device_pairing_entries, node_pairing_entries.
// Shapes from OpenClaw's sources (openclaw/openclaw): device.json {version:1, deviceId, publicKeyPem,
// privateKeyPem, createdAtMs} (src/infra/device-identity.ts); device-auth.json {version:1, deviceId,
// tokens: {<role>: {token, role, scopes, updatedAtMs}}} (src/shared/device-auth.ts); pairing files are maps
// deviceId → PairedDevice {deviceId, publicKey, displayName, roles, scopes, tokens, createdAtMs, approvedAtMs}
// and requestId → pending request {requestId, deviceId, publicKey, role, ts}. bootstrap.json and nodes/*.json
// are assumed to be maps of the same kind (token → record, nodeId → record).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, runInProcess } from "../../helpers/temp-state.js";
import { migrate, rows } from "../../helpers/migration.js";
import { corrupt, expectLedger, expectReimportIdempotent } from "../../helpers/control-plane.js";

const DEVICE = "9f2c1ab0d4e5f60718293a4b5c6d7e8f9f2c1ab0d4e5f60718293a4b5c6d7e8f";
const SECRETS = ["PLANTED-PRIVATE-KEY-NEVER-SHOWN", "devtok-PLANTED-OPERATOR-TOKEN-abc123", "devtok-PLANTED-NODE-TOKEN-def456", "pairtok-PLANTED-PAIRED-TOKEN-789", "boot-PLANTED-BOOTSTRAP-TOKEN-xyz"];

function expectNoSecrets(text: string, where: string): void {
  for (const s of SECRETS) expect(text.includes(s), `${s} in ${where}`).toBe(false);
}

describe("device importers", () => {
  it("maps identities, tokens and pairing entries, records each ledger row, and re-imports idempotently", async () => {
    const { paths, stateDir } = makeTempState("migration/devices");
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.map((s) => [s.kind, s.relativePath, s.records])).toEqual([
      ["device-identity", "identity/device.json", 1],
      ["device-auth", "identity/device-auth.json", 2],
      ["device-pairing", "devices/bootstrap.json", 1],
      ["device-pairing", "devices/paired.json", 1],
      ["device-pairing", "devices/pending.json", 2],
      ["node-pairing", "nodes/paired.json", 1],
      ["node-pairing", "nodes/pending.json", 2],
    ]);
    expect(run.status).toBe("completed");
    const identity = JSON.parse(fs.readFileSync(path.join(stateDir, "migrated", run.runId, "identity/device.json"), "utf8"));
    expect(rows(paths.globalDbPath, "SELECT * FROM device_identities")).toEqual([
      { identity_key: "default", device_id: DEVICE, public_key_pem: identity.publicKeyPem, private_key_pem: identity.privateKeyPem, created_at_ms: 1767000000000, updated_at_ms: expect.any(Number) },
    ]);
    expect(rows(paths.globalDbPath, "SELECT * FROM device_auth_tokens ORDER BY role")).toEqual([
      { device_id: DEVICE, role: "node", token: "devtok-PLANTED-NODE-TOKEN-def456", scopes_json: "[]", updated_at_ms: 1767100000001 },
      { device_id: DEVICE, role: "operator", token: "devtok-PLANTED-OPERATOR-TOKEN-abc123", scopes_json: '["operator.read","operator.write"]', updated_at_ms: 1767100000000 },
    ]);
    const pairing = rows<{ list_kind: string; device_id: string; role: string | null; entry_json: string; created_at_ms: number; updated_at_ms: number }>(paths.globalDbPath, "SELECT * FROM device_pairing_entries ORDER BY list_kind, device_id");
    expect(pairing.map((r) => [r.list_kind, r.device_id, r.role, r.created_at_ms, r.updated_at_ms])).toEqual([
      ["bootstrap", expect.stringMatching(/^bootstrap:[0-9a-f]{16}$/), "node", 1767400000000, 1767400000000],
      ["paired", "dev-phone", "operator", 1767200000000, 1767200005000],
      // Two requests of one device: the newest stays.
      ["pending", "dev-laptop", "operator", 1767300009000, 1767300009000],
    ]);
    expect(JSON.parse(pairing[1]!.entry_json)).toMatchObject({ displayName: "Phone", platform: "ios" });
    expect(JSON.parse(pairing[2]!.entry_json)).toMatchObject({ requestId: "req-2", isRepair: true });
    // The paired node is not overwritten by its pending re-pair request; a pending-only node is added.
    const nodes = rows<{ node_id: string; entry_json: string; updated_at_ms: number }>(paths.globalDbPath, "SELECT * FROM node_pairing_entries ORDER BY node_id");
    expect(nodes.map((n) => [n.node_id, JSON.parse(n.entry_json).displayName, n.updated_at_ms])).toEqual([
      ["node-mac", "Mac mini", 1767500001000],
      ["node-pi", "Pi", 1767600001000],
    ]);
    expectLedger(paths, run, "device-identity", "device_identities", { "identity/device.json": 1 });
    expectLedger(paths, run, "device-auth", "device_auth_tokens", { "identity/device-auth.json": 2 });
    expectLedger(paths, run, "device-pairing", "device_pairing_entries", { "devices/paired.json": 1, "devices/pending.json": 2, "devices/bootstrap.json": 1 });
    expectLedger(paths, run, "node-pairing", "node_pairing_entries", { "nodes/paired.json": 1, "nodes/pending.json": 2 });
    await expectReimportIdempotent(paths, run);
  });

  it("reads the array form of a pairing list (older writers)", async () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(path.join(stateDir, "devices"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "devices/paired.json"), JSON.stringify([{ deviceId: "d1", role: "operator", approvedAtMs: 5 }]));
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(rows(paths.globalDbPath, "SELECT list_kind, device_id, updated_at_ms FROM device_pairing_entries")).toEqual([{ list_kind: "paired", device_id: "d1", updated_at_ms: 5 }]);
  });

  it("never shows a private key or token: stdout, stderr, --json, run and source reports", async () => {
    const { env, paths, stateDir } = makeTempState("migration/devices");
    // A malformed copy holding a secret too: its failure reason must not quote it.
    fs.writeFileSync(path.join(stateDir, "nodes/broken.json"), '{"n1": {"token": "devtok-PLANTED-NODE-TOKEN-def456", ');
    const outputs = [
      await runInProcess(["doctor"], env),
      await runInProcess(["doctor", "--verbose"], env),
      await runInProcess(["doctor", "--json", "--verbose"], env),
      await runInProcess(["migrate", "plan", "--json"], env),
      await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--verbose"], env),
    ];
    fs.writeFileSync(path.join(stateDir, "nodes/broken2.json"), "[1, 2,");
    outputs.push(await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], env));
    outputs.push(await runInProcess(["migrate", "history", "--json", "--verbose"], env));
    outputs.forEach((o, i) => {
      expectNoSecrets(o.stdout, `stdout #${i}`);
      expectNoSecrets(o.stderr, `stderr #${i}`);
    });
    expect(outputs[4]!.stdout).toMatch(/broken\.json/);
    const reports = rows<{ report_json: string }>(paths.globalDbPath, "SELECT report_json FROM migration_runs UNION ALL SELECT report_json FROM migration_sources");
    expect(reports.length).toBeGreaterThan(2);
    for (const r of reports) expectNoSecrets(r.report_json, "report_json");
    // The secrets themselves are in the database, where they belong.
    expect(rows(paths.globalDbPath, "SELECT count(*) AS n FROM device_auth_tokens")).toEqual([{ n: 2 }]);
  });

  it("keeps a malformed identity in place (failed) while the pairing files import", async () => {
    const { paths, stateDir } = makeTempState("migration/devices");
    corrupt(stateDir, "identity/device.json", '{"version": 1, "privateKeyPem": "-----BEGIN PRIVATE KEY-----\\nPLANTED-PRIVATE-KEY-NEVER-SHOWN');
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.filter((o) => o.status === "failed").map((o) => o.relativePath)).toEqual(["identity/device.json"]);
    expect(run.sources.filter((o) => o.status === "imported")).toHaveLength(6);
    expectNoSecrets(JSON.stringify(run), "run");
    expect(fs.existsSync(path.join(stateDir, "identity/device.json"))).toBe(true);
  });
});
