// Restore leftovers: an in-place restore killed between its two renames leaves only `<stateDir>.pre-restore-<ts>`.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { runDoctor } from "../../src/doctor/run-doctor.js";
import { listRegisteredAgents, openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

function healthyState() {
  const state = makeTempState();
  openAgentDatabase(state.paths, "main", { mode: "write", create: true }).close();
  return state;
}

describe("doctor: restore leftovers", () => {
  it("reports a state dir lost mid-restore as an error and --fix moves the previous copy back", async () => {
    const { paths, stateDir, env } = healthyState();
    const before = snapshotTree(stateDir);
    const previous = `${stateDir}.pre-restore-20261202T101010Z`;
    fs.renameSync(stateDir, previous);

    const check = await runInProcess(["doctor"], env);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/✗ .*\.openclaw is missing after an interrupted restore; its previous copy is .*pre-restore-20261202T101010Z/);
    expect(fs.existsSync(stateDir)).toBe(false);

    const fixed = await runDoctor({ paths, fix: true });
    expect(fixed.repairs[0]).toMatchObject({ id: "restore.recover", status: "applied" });
    expect(fixed.status).toBe("ok");
    expect(fs.existsSync(previous)).toBe(false);
    // Same tree; the agent DB byte for byte (the global DB took and released the --fix lease).
    const after = snapshotTree(stateDir);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after["agents/main/agent/openclaw-agent.sqlite"]).toEqual(before["agents/main/agent/openclaw-agent.sqlite"]);
    const global = openGlobalDatabase(paths, { mode: "read" });
    expect(listRegisteredAgents(global).map((r) => r.agent_id)).toEqual(["main"]);
    global.close();
  });

  it("warns about kept previous copies next to a live state dir and never deletes them", async () => {
    const { paths, stateDir } = healthyState();
    const previous = `${stateDir}.pre-restore-20261202T101010Z`;
    fs.cpSync(stateDir, previous, { recursive: true });
    const result = await runDoctor({ paths });
    expect(result.findings.find((f) => f.id === "restore.leftover")).toMatchObject({ severity: "warning", detail: previous });
    await runDoctor({ paths, fix: true });
    expect(fs.existsSync(previous)).toBe(true);
  });
});
