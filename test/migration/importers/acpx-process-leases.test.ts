// ACPX process leases land where, and as, the ACPX runtime reads them: open/closing leases of the state's own gateway
// instance, normalized, under a gateway-instance/current record the runtime accepts; the rest named, kept in the retired file.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../../helpers/temp-state.js";
import { migrate, rows } from "../../helpers/migration.js";
import { expectReimportIdempotent } from "../../helpers/control-plane.js";

type Entry = { namespace: string; entry_key: string; value_json: string; created_at: number };

/**
 * What the ACPX runtime reaps at start, read as it reads it (facts from the ACPX plugin's source, not its code): the
 * instance id from `gateway-instance/current` (a non-blank string `instanceId`, else it mints a new one), then the
 * `process-leases` rows whose value has every field of its type and state open/closing, of that instance id.
 */
function runtimeReaps(file: string): { instanceId: string | null; leaseIds: string[] } {
  const entries = rows<Entry>(file, "SELECT namespace, entry_key, value_json, created_at FROM plugin_state_entries WHERE plugin_id = 'acpx' ORDER BY namespace, entry_key");
  const gateway = entries.find((e) => e.namespace === "gateway-instance" && e.entry_key === "current");
  const record = gateway ? (JSON.parse(gateway.value_json) as Record<string, unknown>) : {};
  const instanceId = typeof record.instanceId === "string" && record.instanceId.trim() ? record.instanceId.trim() : null;
  const leaseIds = entries
    .filter((e) => e.namespace === "process-leases")
    .map((e) => JSON.parse(e.value_json) as Record<string, unknown>)
    .filter((l) => ["leaseId", "gatewayInstanceId", "sessionKey", "wrapperRoot", "wrapperPath", "commandHash"].every((f) => typeof l[f] === "string") && typeof l.rootPid === "number" && typeof l.startedAt === "number")
    .filter((l) => (l.state === "open" || l.state === "closing") && l.gatewayInstanceId === instanceId)
    .map((l) => String(l.leaseId));
  return { instanceId, leaseIds };
}

const lease = (leaseId: string, gatewayInstanceId: string, state: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  leaseId,
  gatewayInstanceId,
  sessionKey: "agent:main:acp:x",
  wrapperRoot: "/s/acpx",
  wrapperPath: "/s/acpx/codex-acp-wrapper.mjs",
  rootPid: 4242,
  commandHash: "ab12",
  startedAt: 1767000007000,
  state,
  ...extra,
});

function writeLeases(stateDir: string, leases: unknown[]): string {
  const file = path.join(stateDir, "acpx", "process-leases.json");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ version: 1, leases }));
  return file;
}

const mtimeMs = (file: string): number => Math.trunc(fs.statSync(file).mtimeMs);

describe("acpx/process-leases.json", () => {
  it("imports the open and closing leases of the state's gateway, as the runtime normalizes them, under an instance record it accepts", async () => {
    const { paths, stateDir } = makeTempState("migration/acpx");
    const idFile = path.join(stateDir, "gateway-instance-id");
    const idMtime = mtimeMs(idFile);
    const { processGroupId: _unused, ...withoutGroup } = lease("lease-closing", "gw-instance-42", "closing");
    writeLeases(stateDir, [
      lease("lease-open", "gw-instance-42", "open", { processGroupId: 4242, note: "not a lease field" }),
      withoutGroup,
      lease("lease-closed", "gw-instance-42", "closed"),
      lease("lease-lost", "gw-instance-42", "lost"),
      { ...lease("lease-broken", "gw-instance-42", "open"), commandHash: 7 },
      lease("lease-other", "gw-old", "open"),
    ]);
    const { run } = await migrate(paths);

    expect(runtimeReaps(paths.globalDbPath)).toEqual({ instanceId: "gw-instance-42", leaseIds: ["lease-closing", "lease-open"] });
    const entries = rows<Entry>(paths.globalDbPath, "SELECT namespace, entry_key, value_json, created_at FROM plugin_state_entries WHERE plugin_id = 'acpx' ORDER BY namespace, entry_key");
    expect(entries).toEqual([
      { namespace: "gateway-instance", entry_key: "current", value_json: JSON.stringify({ instanceId: "gw-instance-42", createdAt: idMtime }), created_at: idMtime },
      { namespace: "process-leases", entry_key: "lease-closing", value_json: JSON.stringify(lease("lease-closing", "gw-instance-42", "closing")), created_at: 1767000007000 },
      // Only the runtime's fields, in its order (processGroupId between rootPid and commandHash).
      {
        namespace: "process-leases",
        entry_key: "lease-open",
        value_json: '{"leaseId":"lease-open","gatewayInstanceId":"gw-instance-42","sessionKey":"agent:main:acp:x","wrapperRoot":"/s/acpx","wrapperPath":"/s/acpx/codex-acp-wrapper.mjs","rootPid":4242,"processGroupId":4242,"commandHash":"ab12","startedAt":1767000007000,"state":"open"}',
        created_at: 1767000007000,
      },
    ]);
    const source = run.sources.find((s) => s.relativePath === "acpx/process-leases.json")!;
    expect(source).toMatchObject({ status: "warning", recordsParsed: 6, rows: { plugin_state_entries: 3 } });
    expect(source.warnings.join("\n")).toMatch(/1 lease\(s\) the ACPX runtime cannot read/);
    expect(source.warnings.join("\n")).toMatch(/1 open lease\(s\) \("lease-other"\) belong to another gateway instance than this state's \("gw-instance-42"\)/);
    expect(source.notes.join("\n")).toMatch(/2 finished lease\(s\) \(closed or lost\) not imported/);
    // The file is retired whole: the leases not imported are in it.
    expect(fs.readFileSync(source.retiredTo!, "utf8")).toContain("lease-other");
    await expectReimportIdempotent(paths, run);
  });

  it("without a gateway-instance-id, makes the one gateway all live leases share the instance the runtime reaps for", async () => {
    const { paths, stateDir } = makeTempState("migration/acpx");
    fs.rmSync(path.join(stateDir, "gateway-instance-id"));
    const file = writeLeases(stateDir, [lease("lease-a", "gw-x", "open"), lease("lease-b", "gw-x", "closing"), lease("lease-c", "gw-y", "closed")]);
    const mtime = mtimeMs(file);
    await migrate(paths);
    expect(runtimeReaps(paths.globalDbPath)).toEqual({ instanceId: "gw-x", leaseIds: ["lease-a", "lease-b"] });
    expect(rows(paths.globalDbPath, "SELECT value_json, created_at FROM plugin_state_entries WHERE namespace = 'gateway-instance'")).toEqual([{ value_json: JSON.stringify({ instanceId: "gw-x", createdAt: mtime }), created_at: mtime }]);
  });

  it("keeps the instance id already imported and imports only that gateway's leases", async () => {
    const { paths, stateDir } = makeTempState("migration/acpx");
    fs.rmSync(path.join(stateDir, "acpx"), { recursive: true });
    await migrate(paths); // gateway-instance-id alone, retired
    expect(fs.existsSync(path.join(stateDir, "gateway-instance-id"))).toBe(false);
    writeLeases(stateDir, [lease("mine", "gw-instance-42", "open"), lease("theirs", "gw-z", "open")]);
    const { run } = await migrate(paths);
    expect(runtimeReaps(paths.globalDbPath)).toEqual({ instanceId: "gw-instance-42", leaseIds: ["mine"] });
    expect(run.sources[0]!.warnings.join("\n")).toMatch(/\("theirs"\) belong to another gateway instance/);
  });

  it("reads an instance id an earlier build stored as {version: 1, id} when deciding which leases are this state's", async () => {
    const { paths, stateDir } = makeTempState("migration/acpx");
    fs.rmSync(path.join(stateDir, "acpx"), { recursive: true });
    await migrate(paths);
    const db = new Database(paths.globalDbPath);
    db.prepare("UPDATE plugin_state_entries SET value_json = ? WHERE namespace = 'gateway-instance'").run(JSON.stringify({ version: 1, id: "gw-instance-42" }));
    db.close();
    writeLeases(stateDir, [lease("mine", "gw-instance-42", "open"), lease("theirs", "gw-z", "open")]);
    await migrate(paths);
    expect(rows<Entry>(paths.globalDbPath, "SELECT entry_key FROM plugin_state_entries WHERE namespace = 'process-leases'").map((e) => e.entry_key)).toEqual(["mine"]);
  });

  it("imports no lease when live leases name several gateways and nothing says which is this state's; each is named", async () => {
    const { paths, stateDir } = makeTempState("migration/acpx");
    fs.rmSync(path.join(stateDir, "gateway-instance-id"));
    writeLeases(stateDir, [lease("one", "gw-1", "open"), lease("two", "gw-2", "open")]);
    const { run } = await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT * FROM plugin_state_entries WHERE plugin_id = 'acpx'")).toEqual([]);
    const source = run.sources[0]!;
    expect(source.warnings.join("\n")).toMatch(/2 open lease\(s\) \("one", "two"\) belong to several gateway instances and no gateway-instance-id says which is this state's/);
    expect(fs.readFileSync(source.retiredTo!, "utf8")).toContain('"two"');
  });
});
