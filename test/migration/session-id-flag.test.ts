// State openclaw@2026.3.28 wrote with `agent --session-id` (fixtures/openclaw-2026.3.28/HOW.md): ids keep their case, an unindexed one is recovered.
import { describe, expect, it } from "vitest";
import { makeTempState } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

describe("agent --session-id, as 2026.3.28 wrote it", () => {
  it("files the indexed id under its key with its case, and recovers the id no index names under a lower-cased key", async () => {
    const { paths } = makeTempState("migration/session-id-flag");
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    const recovered = run.sources.find((o) => o.path.endsWith("My-Sid-1.jsonl"))!;
    expect(recovered.warnings.join("\n")).toMatch(/orphan transcript: no session index references session My-Sid-1; stored under agent:main:recovered:my-sid-1/);
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT session_key, session_id FROM session_routes ORDER BY session_key")).toEqual([
      { session_key: "agent:main:main", session_id: "Other-Sid" },
      { session_key: "agent:main:recovered:my-sid-1", session_id: "My-Sid-1" },
    ]);
    expect(rows(db, "SELECT session_id, count(*) AS n FROM transcript_events GROUP BY session_id ORDER BY session_id")).toEqual([
      { session_id: "My-Sid-1", n: 10 },
      { session_id: "Other-Sid", n: 10 },
    ]);
  });
});
