// Workspace `.openclaw/workspace-state.json` → workspace_setup_state. Shape from OpenClaw's agent workspace code
// and tests: {version, bootstrapSeededAt?, setupCompletedAt?} with ISO timestamps; older files say
// onboardingCompletedAt. Default workspaces live in the state dir (workspace, workspace-<agent>); configured
// ones (agents.defaults.workspace, agents.list[].workspace) may live anywhere.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { workspaceKey } from "../../../src/migration/importers/workspace-state.js";
import { corrupt, expectLedger, expectReimportIdempotent } from "../../helpers/control-plane.js";
import { migrate, rows } from "../../helpers/migration.js";
import { makeTempDir, makeTempState } from "../../helpers/temp-state.js";

describe("workspace-state importer", () => {
  it("imports default workspaces, maps every field, keeps the user's files, and re-imports idempotently", async () => {
    const { paths, stateDir } = makeTempState("migration/workspace-state");
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.map((s) => [s.kind, s.relativePath, s.records])).toEqual([
      ["workspace-state", "workspace-ops/.openclaw/workspace-state.json", 1],
      ["workspace-state", "workspace/.openclaw/workspace-state.json", 1],
    ]);
    expect(run.status).toBe("completed");
    const main = path.join(stateDir, "workspace");
    const ops = path.join(stateDir, "workspace-ops");
    expect(rows(paths.globalDbPath, "SELECT * FROM workspace_setup_state ORDER BY workspace_path")).toEqual([
      { workspace_key: workspaceKey(main), workspace_path: main, version: 1, bootstrap_seeded_at: Date.parse("2026-01-01T00:00:00.000Z"), setup_completed_at: Date.parse("2026-01-01T00:10:00.000Z"), updated_at: expect.any(Number) },
      { workspace_key: workspaceKey(ops), workspace_path: ops, version: 1, bootstrap_seeded_at: Date.parse("2026-02-01T00:00:00.000Z"), setup_completed_at: Date.parse("2026-02-01T00:05:00.000Z"), updated_at: expect.any(Number) },
    ]);
    expect(fs.readFileSync(path.join(main, "AGENTS.md"), "utf8")).toMatch(/user's own notes/);
    expect(fs.existsSync(path.join(main, ".openclaw", "workspace-state.json"))).toBe(false);
    expectLedger(paths, run, "workspace-state", "workspace_setup_state", {
      "workspace/.openclaw/workspace-state.json": 1,
      "workspace-ops/.openclaw/workspace-state.json": 1,
    });
    await expectReimportIdempotent(paths, run);
  });

  it("finds a configured workspace outside the state dir and moves (never deletes) its file, even with --remove-sources", async () => {
    const { paths, stateDir } = makeTempState();
    const outside = path.join(makeTempDir(), "proj");
    fs.mkdirSync(path.join(outside, ".openclaw"), { recursive: true });
    fs.writeFileSync(path.join(outside, ".openclaw", "workspace-state.json"), JSON.stringify({ version: 1, bootstrapSeededAt: "2026-03-01T00:00:00.000Z" }));
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(path.join(stateDir, "openclaw.json"), JSON.stringify({ agents: { list: [{ id: "dev", workspace: outside }] } }));
    const { run } = await migrate(paths, { removeSources: true });
    const outcome = run.sources.find((o) => o.kind === "workspace-state")!;
    expect(outcome).toMatchObject({ status: "imported", retired: "moved" });
    expect(fs.existsSync(outcome.retiredTo!)).toBe(true);
    expect(rows(paths.globalDbPath, "SELECT workspace_path, setup_completed_at FROM workspace_setup_state")).toEqual([{ workspace_path: outside, setup_completed_at: null }]);
  });

  it("keeps a malformed file in place (failed) while the other workspace imports", async () => {
    const { paths, stateDir } = makeTempState("migration/workspace-state");
    corrupt(stateDir, "workspace-ops/.openclaw/workspace-state.json");
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => [o.relativePath, o.status])).toEqual([
      ["workspace-ops/.openclaw/workspace-state.json", "failed"],
      ["workspace/.openclaw/workspace-state.json", "imported"],
    ]);
    expect(fs.existsSync(path.join(stateDir, "workspace-ops/.openclaw/workspace-state.json"))).toBe(true);
  });
});
