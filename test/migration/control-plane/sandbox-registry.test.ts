// sandbox/containers.json, sandbox/browsers.json ({entries:[…]}) and the sharded dirs sandbox/{containers,browsers}/<sha>.json
// (one entry per file) → sandbox_registry_entries. Shapes and the container defaults (backendId "docker",
// runtimeLabel = containerName, configLabelKind "Image") from OpenClaw's src/agents/sandbox/registry.ts.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../../helpers/temp-state.js";
import { migrate, rows } from "../../helpers/migration.js";
import { corrupt, expectLedger, expectReimportIdempotent } from "../../helpers/control-plane.js";

describe("sandbox-registry importer", () => {
  it("imports monolithic and sharded entries (most recently used wins), records the ledger, re-imports idempotently", async () => {
    const { paths } = makeTempState("migration/sandbox-registry");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const got = rows(paths.globalDbPath, "SELECT * FROM sandbox_registry_entries ORDER BY registry_kind, container_name");
    expect(got).toEqual([
      {
        registry_kind: "browsers", container_name: "openclaw-sbx-browser-main", session_key: "agent:main:main", backend_id: null, runtime_label: null,
        image: "openclaw-sandbox-browser:bookworm-slim", created_at_ms: 1767000000000, last_used_at_ms: 1767000200000, config_label_kind: null,
        config_hash: "b1", cdp_port: 9222, no_vnc_port: 6080, entry_json: expect.stringContaining('"cdpPort":9222'), updated_at: 1767000200000,
      },
      expect.objectContaining({ registry_kind: "browsers", container_name: "openclaw-sbx-browser-ops", cdp_port: 9223, no_vnc_port: null }),
      // The shard was used after the monolithic entry: its config hash wins; legacy defaults filled in.
      expect.objectContaining({ registry_kind: "containers", container_name: "openclaw-sbx-main", backend_id: "docker", runtime_label: "openclaw-sbx-main", config_label_kind: "Image", config_hash: "abc999", last_used_at_ms: 1767000500000 }),
      expect.objectContaining({ registry_kind: "containers", container_name: "openclaw-sbx-ops", backend_id: "podman", runtime_label: "ops box", config_label_kind: "Dockerfile", image: "custom:1", config_hash: "def456" }),
    ]);
    expectLedger(paths, run, "sandbox-registry", "sandbox_registry_entries", {
      "sandbox/browsers.json": 1,
      "sandbox/browsers/9a8b7c6d.json": 1,
      "sandbox/containers.json": 2,
      "sandbox/containers/0b1c2d3e.json": 1,
    });
    await expectReimportIdempotent(paths, run);
  });

  it("an older shard does not overwrite a more recently used monolithic entry", async () => {
    const { paths, stateDir } = makeTempState("migration/sandbox-registry");
    fs.writeFileSync(path.join(stateDir, "sandbox/containers/0b1c2d3e.json"), JSON.stringify({ containerName: "openclaw-sbx-main", lastUsedAtMs: 1, configHash: "old" }));
    await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT config_hash FROM sandbox_registry_entries WHERE container_name = 'openclaw-sbx-main'")).toEqual([{ config_hash: "abc123" }]);
  });

  it("keeps a malformed registry in place (failed); the shards still import", async () => {
    const { paths, stateDir } = makeTempState("migration/sandbox-registry");
    corrupt(stateDir, "sandbox/containers.json", '{"entries": {}}');
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    const failed = run.sources.find((o) => o.status === "failed")!;
    expect(failed.relativePath).toBe("sandbox/containers.json");
    expect(failed.reason).toMatch(/expected an object with an "entries" array, found an object/);
    expect(run.sources.filter((o) => o.status === "imported")).toHaveLength(3);
    expect(fs.existsSync(path.join(stateDir, "sandbox/containers.json"))).toBe(true);
  });
});
