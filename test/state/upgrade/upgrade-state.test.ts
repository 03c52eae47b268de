// upgradeStateDatabases: new files first, then one swap; a failed swap puts every file back and leaves no temp file.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OperationError } from "../../../src/core/errors.js";
import { upgradeStateDatabases } from "../../../src/state/upgrade/upgrade-state.js";
import { migrate } from "../../helpers/migration.js";
import { makeTempDir, makeTempState } from "../../helpers/temp-state.js";

const sha = (file: string): string => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

describe("upgradeStateDatabases", () => {
  it("a swap that fails half-way (the global DB cannot be moved aside) restores the agent DB it already swapped", async () => {
    const state = makeTempState("legacy-state");
    await migrate(state.paths); // the importers' design-v1 state, before any format upgrade
    const globalDb = state.paths.globalDbPath;
    const agentDb = path.join(state.stateDir, "agents", "main", "agent", "openclaw-agent.sqlite");
    const kept = makeTempDir("ocs-kept-");
    fs.mkdirSync(path.join(kept, "agent"));
    // Agents swap first; the global DB's keep path is in a directory that does not exist, so its rename fails.
    const targets = [
      { role: "global" as const, path: globalDb, keepAt: path.join(kept, "missing-dir", "openclaw.sqlite") },
      { role: "agent" as const, agentId: "main", path: agentDb, keepAt: path.join(kept, "agent", "openclaw-agent.sqlite") },
    ];
    let error: unknown;
    try {
      upgradeStateDatabases({ paths: state.paths, targets, now: 1_800_000_000_000 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(OperationError);
    expect((error as OperationError).code).toBe("upgrade_swap_failed");
    expect((error as Error).message).toMatch(/every file was put back as it was/);
    // Both files are this tool's design v1 again, in place; nothing was left in the kept dir or beside the files.
    const after = { global: sha(globalDb), agent: sha(agentDb) };
    expect(fs.readdirSync(path.join(kept, "agent"))).toEqual([]);
    for (const dir of [path.dirname(globalDb), path.dirname(agentDb)]) {
      expect(fs.readdirSync(dir).filter((f) => f.includes(".upgrade-"))).toEqual([]);
    }
    const again = upgradeStateDatabases({
      paths: state.paths,
      targets: [
        { ...targets[0]!, keepAt: path.join(kept, "openclaw.sqlite") },
        targets[1]!,
      ],
      now: 1_800_000_000_001,
    });
    expect(again.map((r) => r.role).sort()).toEqual(["agent", "global"]);
    // The kept copies are the files that were back in place after the failed swap.
    expect(sha(path.join(kept, "openclaw.sqlite"))).toBe(after.global);
    expect(sha(path.join(kept, "agent", "openclaw-agent.sqlite"))).toBe(after.agent);
  });
});
