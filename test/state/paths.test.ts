// Path resolution: flag, env overrides, home fallbacks, `~` expansion and unset-looking values.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentDbPath, expandUserPath, resolveStatePaths } from "../../src/state/paths.js";

describe("resolveStatePaths", () => {
  it("defaults to <HOME>/.openclaw with the standard layout", () => {
    const p = resolveStatePaths({ env: { HOME: "/home/u" } });
    expect(p.stateDir).toBe("/home/u/.openclaw");
    expect(p.configPath).toBe("/home/u/.openclaw/openclaw.json");
    expect(p.credentialsDir).toBe("/home/u/.openclaw/credentials");
    expect(p.globalDbPath).toBe("/home/u/.openclaw/state/openclaw.sqlite");
    expect(p.backupDir).toBe("/home/u/.openclaw-backups");
    expect(agentDbPath(p, "main")).toBe("/home/u/.openclaw/agents/main/agent/openclaw-agent.sqlite");
  });

  it("prefers OPENCLAW_HOME over HOME", () => {
    expect(resolveStatePaths({ env: { HOME: "/home/u", OPENCLAW_HOME: "/srv/oc" } }).stateDir).toBe("/srv/oc/.openclaw");
  });

  it("uses OPENCLAW_STATE_DIR with ~ expansion, and the flag wins over it", () => {
    const env = { HOME: "/home/u", OPENCLAW_STATE_DIR: "~/custom" };
    expect(resolveStatePaths({ env }).stateDir).toBe("/home/u/custom");
    expect(resolveStatePaths({ env, stateDir: "/flag/dir" }).stateDir).toBe("/flag/dir");
    expect(resolveStatePaths({ env, stateDir: "~" }).stateDir).toBe("/home/u");
  });

  it("treats literal undefined/null/empty env values as unset", () => {
    const p = resolveStatePaths({ env: { HOME: "/home/u", OPENCLAW_HOME: "null", OPENCLAW_CONFIG_PATH: "", OPENCLAW_OAUTH_DIR: "undefined" } });
    expect(p.stateDir).toBe("/home/u/.openclaw");
    expect(p.configPath).toBe("/home/u/.openclaw/openclaw.json");
    expect(p.credentialsDir).toBe("/home/u/.openclaw/credentials");
  });

  it("refuses an empty --state-dir or a set-but-empty OPENCLAW_STATE_DIR instead of falling back to ~/.openclaw", () => {
    for (const stateDir of ["", "  "]) {
      expect(() => resolveStatePaths({ env: { HOME: "/home/u" }, stateDir })).toThrow(expect.objectContaining({ code: "empty_state_dir", exitCode: 2 }));
    }
    for (const value of ["", " ", "undefined", "null"]) {
      expect(() => resolveStatePaths({ env: { HOME: "/home/u", OPENCLAW_STATE_DIR: value } })).toThrow(expect.objectContaining({ code: "empty_state_dir", exitCode: 2 }));
    }
    // The flag wins: a good flag over a broken variable is fine.
    expect(resolveStatePaths({ env: { HOME: "/home/u", OPENCLAW_STATE_DIR: "" }, stateDir: "/srv/oc" }).stateDir).toBe("/srv/oc");
  });

  it("honours OPENCLAW_CONFIG_PATH, OPENCLAW_OAUTH_DIR and OPENCLAW_BACKUP_DIR", () => {
    const p = resolveStatePaths({
      env: { HOME: "/home/u", OPENCLAW_CONFIG_PATH: "~/cfg/oc.json", OPENCLAW_OAUTH_DIR: "/secrets/oauth", OPENCLAW_BACKUP_DIR: "~/bk" },
    });
    expect(p.configPath).toBe("/home/u/cfg/oc.json");
    expect(p.credentialsDir).toBe("/secrets/oauth");
    expect(p.backupDir).toBe("/home/u/bk");
  });

  it("makes relative paths absolute", () => {
    expect(expandUserPath("rel/dir", "/home/u")).toBe(path.resolve("rel/dir"));
  });
});
