// Config keys OpenClaw 2026.9.6 rejects: found on the parsed value, split into ours (seed-owned) and `openclaw doctor --fix`.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkConfigCompat, rejectedConfigKeys } from "../../src/migration/config-compat.js";
import { applyConfigFix } from "../../src/migration/legacy-config.js";
import { makeTempState, runInProcess } from "../helpers/temp-state.js";

// The shape `openclaw@2026.3.28 onboard` + `agents add` + `config set` wrote (observed), with a comment.
const FILE_ERA = `// operator note
{
  "meta": { "lastTouchedVersion": "2026.3.28", "lastTouchedAt": "2026-01-01T00:00:00.000Z" },
  "diagnostics": { "cacheTrace": { "enabled": true, "filePath": "/tmp/trace.jsonl" } },
  "agents": {
    "defaults": { "workspace": "/srv/ws", "memorySearch": { "store": { "path": "~/.openclaw/memory/main.sqlite" } } },
    "list": [{ "id": "main" }, { "id": "ops", "workspace": "/srv/ws-ops" }]
  },
  "commands": { "native": "auto", "ownerDisplay": "raw" },
  "session": { "dmScope": "per-channel-peer", "idleMinutes": 30, "resetByType": { "dm": { "mode": "idle" } } },
  "hooks": { "internal": { "enabled": true, "handlers": [] } },
  "gateway": { "port": 18790, "tailscale": { "mode": "off", "resetOnExit": false } }
}
`;

function stateWithConfig(text: string): ReturnType<typeof makeTempState> {
  const state = makeTempState();
  fs.mkdirSync(state.stateDir, { recursive: true });
  fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), text, { mode: 0o600 });
  return state;
}

describe("config keys the current OpenClaw rejects", () => {
  it("finds every key 2026.9.6's `config validate` reported on this file-era config", () => {
    const keys = rejectedConfigKeys(JSON.parse(FILE_ERA.replace(/^\/\/.*\n/, ""))).map((k) => k.key);
    expect(keys.sort()).toEqual(
      [
        "meta.lastTouchedAt",
        "diagnostics.cacheTrace.filePath",
        "agents.defaults.memorySearch",
        "agents.ownership",
        "commands.ownerDisplay",
        "session.idleMinutes",
        "session.resetByType.dm",
        "hooks.internal.handlers",
        "gateway.tailscale.resetOnExit",
      ].sort(),
    );
    // One default: true marker, or explicit ownership, satisfies a multi-agent roster; one agent needs neither.
    expect(rejectedConfigKeys({ agents: { list: [{ id: "a", default: true }, { id: "b" }] } })).toEqual([]);
    expect(rejectedConfigKeys({ agents: { list: [{ id: "a" }] } })).toEqual([]);
    expect(rejectedConfigKeys({ agents: { list: [{ id: "a" }, { id: "b", memorySearch: {} }] } }).map((k) => k.key)).toEqual(["agents.list[1].memorySearch", "agents.ownership"]);
  });

  it("splits them: the seed's keys are ours, the rest name `openclaw doctor --fix`; after our --fix only those remain", () => {
    const { paths, stateDir } = stateWithConfig(FILE_ERA);
    const before = checkConfigCompat(paths, stateDir);
    const by = (who: string) => before.rejected.filter((k) => k.fixedBy === who).map((k) => k.key).sort();
    expect(by("openclaw-state")).toEqual(["diagnostics.cacheTrace.filePath", "hooks.internal.handlers", "session.idleMinutes", "session.resetByType.dm"]);
    expect(by("openclaw")).toEqual(["agents.defaults.memorySearch", "agents.ownership", "commands.ownerDisplay", "gateway.tailscale.resetOnExit", "meta.lastTouchedAt"]);
    expect(before.rejected.find((k) => k.fixedBy === "openclaw")!.command).toBe("openclaw doctor --fix");
    applyConfigFix(paths, stateDir);
    expect(fs.readFileSync(path.join(stateDir, "openclaw.json"), "utf8")).toMatch(/^\/\/ operator note\n/);
    const after = checkConfigCompat(paths, stateDir);
    expect(after.rejected.every((k) => k.fixedBy === "openclaw")).toBe(true);
    expect(after.rejected.map((k) => k.key).sort()).toEqual(by("openclaw"));
  });

  it("keeps cron.store / cron.webhook while the cron import still reads them, removes them once it is retired", () => {
    const { paths, stateDir } = stateWithConfig('{ "cron": { "webhook": "https://hooks.example/cron" } }\n');
    fs.mkdirSync(path.join(stateDir, "cron"));
    fs.writeFileSync(path.join(stateDir, "cron", "jobs.json"), '{ "version": 1, "jobs": [] }\n');
    const pending = checkConfigCompat(paths, stateDir).rejected;
    expect(pending).toEqual([expect.objectContaining({ key: "cron.webhook", fixedBy: "openclaw-state", blocked: expect.stringMatching(/run `openclaw-state doctor --fix` once more/) })]);
    fs.rmSync(path.join(stateDir, "cron"), { recursive: true });
    expect(checkConfigCompat(paths, stateDir).rejected[0]!.blocked).toBeNull();
    applyConfigFix(paths, stateDir);
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, "openclaw.json"), "utf8"))).toEqual({ cron: {} });
  });

  it("doctor reports both groups with the command that fixes each", async () => {
    const { env } = stateWithConfig(FILE_ERA);
    const doctor = await runInProcess(["doctor"], env);
    expect(doctor.stdout).toMatch(/! 4 key\(s\) in .*openclaw\.json that OpenClaw 2026\.9\.6 rejects: `openclaw-state doctor --fix` rewrites them/);
    expect(doctor.stdout).toMatch(/! 5 key\(s\) in .*openclaw\.json that OpenClaw 2026\.9\.6 rejects and this tool does not rewrite/);
    expect(doctor.stdout).toMatch(/commands\.ownerDisplay → nothing: owner ids render raw/);
    expect(doctor.stdout).toMatch(/Run `openclaw doctor --fix`/);
  });
});
