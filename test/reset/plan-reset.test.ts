// planReset: what each scope names, removal order, kept/skipped notes, and the refusals (links, home, /).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OpenclawStateError, UsageError } from "../../src/core/errors.js";
import { parseResetScope, planReset, RESET_SCOPES, type ResetPlan } from "../../src/reset/plan-reset.js";
import { readResetInputs } from "../../src/reset/reset-inputs.js";
import { resolveStatePaths, type StatePaths } from "../../src/state/paths.js";
import { makeTempDir, snapshotTree } from "../helpers/temp-state.js";
import { seedResetState } from "./seed-reset-state.js";

function plan(scope: (typeof RESET_SCOPES)[number], paths: StatePaths): ResetPlan {
  const inputs = readResetInputs(paths);
  return planReset({ scope, paths, registry: inputs.registry, workspaces: inputs.workspaces });
}

function rel(root: string, items: Array<{ path: string }>): string[] {
  return items.map((i) => path.relative(root, i.path));
}

function refusal(fn: () => unknown): OpenclawStateError {
  try {
    fn();
  } catch (error) {
    if (error instanceof OpenclawStateError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("parseResetScope", () => {
  it("accepts the three scopes and rejects anything else with a usage error", () => {
    for (const scope of RESET_SCOPES) expect(parseResetScope(scope)).toBe(scope);
    expect(parseResetScope(" FULL ")).toBe("full");
    expect(() => parseResetScope("everything")).toThrow(UsageError);
    expect(refusal(() => parseResetScope("config+creds")).exitCode).toBe(2);
  });
});

describe("planReset", () => {
  it("config names only the config file and keeps the rest", () => {
    const s = seedResetState();
    const p = plan("config", s.paths);
    expect(rel(s.root, p.targets)).toEqual([".openclaw/openclaw.json"]);
    expect(p.targets[0]!.kind).toBe("config");
    const kept = rel(s.root, p.kept);
    expect(kept).toEqual(
      expect.arrayContaining([
        ".openclaw/credentials",
        ".openclaw/agents/main/agent/openclaw-agent.sqlite",
        ".openclaw/agents/ops/agent/openclaw-agent.sqlite",
        ".openclaw/state/openclaw.sqlite",
        ".openclaw/workspace",
        "projects/ws",
        ".openclaw-backups",
      ]),
    );
  });

  it("config+creds+sessions names credentials, both agent DBs (sidecars first) and legacy sessions; the global DB stays", () => {
    const s = seedResetState();
    const p = plan("config+creds+sessions", s.paths);
    expect(p.targets.map((t) => [path.relative(s.root, t.path), t.kind])).toEqual([
      [".openclaw/openclaw.json", "config"],
      [".openclaw/credentials", "credentials"],
      [".openclaw/agents/main/agent/openclaw-agent.sqlite", "agent-db"],
      [".openclaw/agents/ops/agent/openclaw-agent.sqlite-wal", "db-sidecar"],
      [".openclaw/agents/ops/agent/openclaw-agent.sqlite-shm", "db-sidecar"],
      [".openclaw/agents/ops/agent/openclaw-agent.sqlite", "agent-db"],
      [".openclaw/agents/main/sessions", "legacy-sessions"],
    ]);
    expect(p.targets.every((t) => !t.afterClose)).toBe(true);
    expect(rel(s.root, p.kept)).toEqual(expect.arrayContaining([".openclaw/state/openclaw.sqlite", ".openclaw/workspace", "projects/ws", ".openclaw-backups"]));
  });

  it("full names every state dir entry, the global DB dir and the state dir last, never the sibling backup dir", () => {
    const s = seedResetState({ configOutside: true, credentialsOutside: true });
    const p = plan("full", s.paths);
    const targets = rel(s.root, p.targets);
    expect(targets.slice(0, 2)).toEqual(["etc/openclaw.json", "oauth"]);
    expect(targets.slice(-2)).toEqual([".openclaw/state", ".openclaw"]);
    expect(p.targets.slice(-2).every((t) => t.afterClose)).toBe(true);
    expect(targets).toEqual(expect.arrayContaining([".openclaw/agents", ".openclaw/cron", ".openclaw/workspace", ".openclaw/linked-notes.txt"]));
    expect(p.targets.find((t) => t.path === s.insideWorkspace)!.kind).toBe("workspace");
    expect(p.targets.find((t) => t.path === s.symlinkInState)!.link).toBe(true);
    expect(targets.some((t) => t.startsWith(".openclaw-backups"))).toBe(false);
    expect(rel(s.root, p.kept)).toEqual(expect.arrayContaining([".openclaw-backups", "projects/ws"]));
  });

  it("full with the backup dir inside the state dir removes everything around it and keeps the state dir", () => {
    const s = seedResetState({ backupInside: true });
    const p = plan("full", s.paths);
    const targets = rel(s.root, p.targets);
    expect(targets).not.toContain(".openclaw");
    expect(targets.some((t) => t.startsWith(".openclaw/backups"))).toBe(false);
    expect(targets[targets.length - 1]).toBe(".openclaw/state");
    expect(rel(s.root, p.kept)).toContain(".openclaw/backups");
  });

  it("keeps a backup dir nested deeper inside the state dir by walking down its ancestors", () => {
    const root = makeTempDir();
    const stateDir = path.join(root, ".openclaw");
    fs.mkdirSync(path.join(stateDir, "data", "backups"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "data", "other.txt"), "x");
    fs.writeFileSync(path.join(stateDir, "data", "backups", "a.tar.gz"), "x");
    const paths = resolveStatePaths({ env: { HOME: root, OPENCLAW_BACKUP_DIR: path.join(stateDir, "data", "backups") } });
    const p = plan("full", paths);
    expect(rel(root, p.targets)).toEqual([".openclaw/data/other.txt"]);
    expect(rel(root, p.kept)).toEqual([".openclaw/data/backups", ".openclaw"]);
  });

  it("lists a missing config and credentials dir as skipped", () => {
    const root = makeTempDir();
    const paths = resolveStatePaths({ env: { HOME: root } });
    const p = plan("config+creds+sessions", paths);
    expect(p.targets).toEqual([]);
    expect(rel(root, p.skipped)).toEqual([".openclaw/openclaw.json", ".openclaw/credentials"]);
  });

  it("skips (never removes) a registered agent DB outside the state dir", () => {
    const s = seedResetState();
    const outside = path.join(s.root, "elsewhere", "agent.sqlite");
    fs.writeFileSync(outside, "x");
    const p = planReset({ scope: "config+creds+sessions", paths: s.paths, registry: [{ agent_id: "far", path: outside }] });
    expect(p.targets.some((t) => t.path === outside)).toBe(false);
    expect(p.skipped.map((k) => k.path)).toContain(outside);
  });

  it("refuses a state dir that is a symlink, naming where it points", () => {
    const root = makeTempDir();
    const real = path.join(root, "real-state");
    fs.mkdirSync(real);
    fs.writeFileSync(path.join(real, "openclaw.json"), "{}");
    fs.symlinkSync(real, path.join(root, ".openclaw"));
    const paths = resolveStatePaths({ env: { HOME: root } });
    const error = refusal(() => plan("config", paths));
    expect(error.code).toBe("reset_unsafe_path");
    expect(error.message).toContain("symlink");
    expect(error.message).toContain(real);
  });

  it("refuses the filesystem root and the home dir as the state dir", () => {
    const root = makeTempDir();
    expect(refusal(() => plan("full", resolveStatePaths({ env: { HOME: root, OPENCLAW_STATE_DIR: "/" } }))).message).toContain("filesystem root");
    expect(refusal(() => plan("full", resolveStatePaths({ env: { HOME: root, OPENCLAW_STATE_DIR: root } }))).message).toContain("home directory");
    expect(refusal(() => plan("full", resolveStatePaths({ env: { HOME: root, OPENCLAW_STATE_DIR: path.dirname(root) } }))).message).toContain("home directory");
  });

  it("refuses a path that resolves through a link to outside the state dir", () => {
    const s = seedResetState();
    const outsideAgent = path.join(s.root, "elsewhere", "evil");
    fs.mkdirSync(path.join(outsideAgent, "agent"), { recursive: true });
    fs.writeFileSync(path.join(outsideAgent, "agent", "openclaw-agent.sqlite"), "x");
    fs.symlinkSync(outsideAgent, path.join(s.paths.agentsDir, "evil"));
    const before = snapshotTree(s.root);
    const registry = [{ agent_id: "evil", path: path.join(s.paths.agentsDir, "evil", "agent", "openclaw-agent.sqlite") }];
    const error = refusal(() => planReset({ scope: "config+creds+sessions", paths: s.paths, registry }));
    expect(error.code).toBe("reset_unsafe_path");
    expect(error.message).toContain(`its parent ${path.join(s.paths.agentsDir, "evil")} is a symbolic link`);
    expect(snapshotTree(s.root)).toEqual(before);
  });

  it("refuses a credentials dir that contains the state dir", () => {
    const s = seedResetState();
    const paths = { ...s.paths, credentialsDir: s.root };
    expect(refusal(() => plan("config+creds+sessions", paths)).message).toMatch(/home directory|contains the state dir/);
    const parent = path.join(s.root, "wrap");
    const wrapped = resolveStatePaths({ env: { HOME: s.root, OPENCLAW_STATE_DIR: path.join(parent, "state"), OPENCLAW_OAUTH_DIR: parent } });
    fs.mkdirSync(path.join(parent, "state"), { recursive: true });
    expect(refusal(() => plan("config+creds+sessions", wrapped)).message).toContain("contains the state dir");
  });
});
