// runReset as a library call: backup before removal, refusal on an unverified backup, no-DB states, registry cleanup.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OperationError } from "../../src/core/errors.js";
import { runReset, type ResetEvent } from "../../src/reset/apply-reset.js";
import { pathExists } from "../../src/state/private-fs.js";
import { listRegisteredAgents, openGlobalDatabase, registerAgentDatabase } from "../../src/state/state-databases.js";
import { makeTempState, snapshotTree } from "../helpers/temp-state.js";
import { seedResetState } from "./seed-reset-state.js";

describe("runReset", () => {
  it("takes the backup before removing anything and reports its path", async () => {
    const s = seedResetState();
    const events: ResetEvent[] = [];
    let configAtBackup: boolean | undefined;
    const result = await runReset({
      paths: s.paths,
      scope: "full",
      backup: true,
      onEvent: (e) => events.push(e),
      takeBackup: async () => {
        configAtBackup = pathExists(s.paths.configPath);
        return { archivePath: path.join(s.paths.backupDir, "x.tar.gz"), verified: true };
      },
    });
    expect(configAtBackup).toBe(true);
    expect(result.backupPath).toBe(path.join(s.paths.backupDir, "x.tar.gz"));
    expect(events[0]).toEqual({ type: "backup-started" });
    expect(events[1]).toMatchObject({ type: "backup-written" });
    expect(events.slice(2).every((e) => e.type === "removed")).toBe(true);
    expect(pathExists(s.stateDir)).toBe(false);
  });

  it("removes nothing when the backup does not verify (and releases the lease)", async () => {
    const s = seedResetState();
    const agents = snapshotTree(s.paths.agentsDir);
    await expect(
      runReset({ paths: s.paths, scope: "config+creds+sessions", backup: true, takeBackup: async () => ({ archivePath: "/tmp/b.tar.gz", verified: false }) }),
    ).rejects.toThrow(OperationError);
    expect(snapshotTree(s.paths.agentsDir)).toEqual(agents);
    expect(pathExists(s.paths.configPath)).toBe(true);
    const global = openGlobalDatabase(s.paths, { mode: "read" });
    expect(global.all(global.q.selectFrom("state_leases").selectAll())).toEqual([]);
    global.close();
  });

  it("a declined confirmation writes nothing, not even the lease", async () => {
    const s = seedResetState();
    const before = snapshotTree(s.root);
    const result = await runReset({ paths: s.paths, scope: "full", confirm: async () => ({ proceed: false }) });
    expect(result.status).toBe("declined");
    expect(result.removed).toEqual([]);
    expect(snapshotTree(s.root)).toEqual(before);
  });

  it("resets a file-era state that has no global database without creating one", async () => {
    const s = makeTempState("legacy-state");
    const result = await runReset({ paths: s.paths, scope: "config+creds+sessions" });
    expect(result.status).toBe("completed");
    expect(pathExists(path.join(s.paths.agentsDir, "main", "sessions"))).toBe(false);
    expect(pathExists(s.paths.globalDbPath)).toBe(false);
    expect(pathExists(path.dirname(s.paths.globalDbPath))).toBe(false);
  });

  it("drops registry rows whose file is gone, and only those", async () => {
    const s = seedResetState();
    const global = openGlobalDatabase(s.paths, { mode: "write" });
    registerAgentDatabase(global, "ghost", path.join(s.paths.agentsDir, "ghost", "agent", "openclaw-agent.sqlite"));
    const outside = path.join(s.root, "elsewhere", "far.sqlite");
    fs.writeFileSync(outside, "x");
    registerAgentDatabase(global, "far", outside);
    global.close();
    const result = await runReset({ paths: s.paths, scope: "config+creds+sessions" });
    expect(result.registryRowsRemoved.sort()).toEqual(["ghost", "main", "ops"]);
    expect(result.skipped.map((k) => k.path)).toContain(outside);
    expect(fs.readFileSync(outside, "utf8")).toBe("x");
    const after = openGlobalDatabase(s.paths, { mode: "read" });
    expect(listRegisteredAgents(after).map((r) => r.agent_id)).toEqual(["far"]);
    after.close();
  });
});
