// Agent ids become path segments: unsafe ones are rejected before any path is built.
import { describe, expect, it } from "vitest";
import { normalizeAgentId, tryNormalizeAgentId } from "../../src/state/agent-id.js";
import { agentDbPath, resolveStatePaths } from "../../src/state/paths.js";

describe("normalizeAgentId", () => {
  it("trims and lower-cases valid ids", () => {
    expect(normalizeAgentId("  Main ")).toBe("main");
    expect(normalizeAgentId("ops_bot-2")).toBe("ops_bot-2");
  });

  it.each(["../x", "a/b", "", "   ", "..", ".hidden", "-lead", "a\\b", "a b", "x".repeat(65), "é"])("rejects %j", (raw) => {
    expect(tryNormalizeAgentId(raw)).toBeNull();
    expect(() => normalizeAgentId(raw)).toThrow(/Invalid agent id/);
  });

  it("rejects unsafe ids before building a database path, with exit code 2", () => {
    const paths = resolveStatePaths({ env: { HOME: "/home/u" } });
    try {
      agentDbPath(paths, "../../etc");
      expect.unreachable();
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(2);
      expect((error as { code: string }).code).toBe("invalid_agent_id");
    }
  });
});
