// Index ↔ transcript linking (issue 23 §2): a transcript named after an indexed session joins it whatever its header
// id says (OpenClaw 2026.9.6 imports an entry's file under the entry's session id); only a transcript nothing
// points at becomes an orphan session, and that is always a warning.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planMigration } from "../../src/migration/plan-migration.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";
import { makeTempState, runInProcess } from "../helpers/temp-state.js";

const BOOT = "boot-20260506-000000-e870ff7f";
const HEADER_ID = "e870ff7f-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
const BOOT_FILE = `agents/main/sessions/${BOOT}.jsonl`;

/** The sqlite3 CLI, an independent reader (not this project's better-sqlite3). */
function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-readonly", "-bail", "-json", file, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as T[]);
}

describe("index ↔ transcript linking", () => {
  it("attaches a transcript whose file name is the indexed sessionId but whose header id differs to that session (a note naming both ids and the file)", async () => {
    const { paths, stateDir } = makeTempState("migration/index-header-mismatch");
    const plan = await planMigration({ paths });
    const planned = plan.sources.find((s) => s.relativePath === BOOT_FILE)!;
    expect(planned.sessionId).toBe(BOOT);
    expect(planned.notes.join("\n")).toMatch(new RegExp(`linked by file name: an index references session ${BOOT} \\(this file's name\\) while the header id is ${HEADER_ID}`));
    expect(planned.notes.join("\n")).not.toMatch(/orphan/);

    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const outcome = run.sources.find((s) => s.relativePath === BOOT_FILE)!;
    expect(outcome).toMatchObject({ status: "imported", warnings: [] });
    expect(outcome.notes).toContain(
      `${path.join(stateDir, BOOT_FILE)}: header id ${HEADER_ID} differs from the file name; attached to the indexed session ${BOOT} (agent:main:boot), as OpenClaw 2026.9.6 does, and the stored header's id is ${BOOT}`,
    );
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT session_id, session_key FROM sessions ORDER BY session_id")).toEqual([
      { session_id: BOOT, session_key: "agent:main:boot" },
      { session_id: "s-main", session_key: "agent:main:main" },
    ]);
    // Every line is the indexed session's: header + 3 messages, identities for the 3 messages.
    expect(rows(db, "SELECT session_id, count(*) AS n FROM transcript_events GROUP BY session_id ORDER BY session_id")).toEqual([
      { session_id: BOOT, n: 4 },
      { session_id: "s-main", n: 2 },
    ]);
    expect(rows(db, "SELECT event_id FROM transcript_event_identities WHERE session_id = ? ORDER BY seq", BOOT)).toEqual([{ event_id: "b1" }, { event_id: "b2" }, { event_id: "b3" }]);
    const [header] = rows<{ event_json: string }>(db, "SELECT event_json FROM transcript_events WHERE session_id = ? AND seq = 0", BOOT);
    expect(JSON.parse(header!.event_json)).toEqual({ type: "session", version: 3, id: BOOT, timestamp: "2026-05-06T00:00:00.000Z", cwd: "/w" });
    expect(rows(db, "SELECT count(*) AS n FROM sessions WHERE session_key LIKE '%:orphan:%' OR session_id = ?", HEADER_ID)).toEqual([{ n: 0 }]);
    // The original (with its header id) is retired byte for byte.
    expect(fs.readFileSync(path.join(stateDir, "migrated", run.runId, BOOT_FILE), "utf8")).toContain(`"id":"${HEADER_ID}"`);
    // Converged: nothing left to do.
    expect((await migrate(paths)).run.sources).toEqual([]);
  });

  it("links by file name to a session an earlier run imported (the index already retired)", async () => {
    const { paths, stateDir } = makeTempState("migration/index-header-mismatch");
    const boot = path.join(stateDir, BOOT_FILE);
    const parked = path.join(stateDir, "..", "boot.jsonl");
    fs.renameSync(boot, parked);
    expect((await migrate(paths)).run.status).toBe("completed");
    // The transcript shows up later (a restored copy): no index in this plan names anything.
    fs.mkdirSync(path.dirname(boot), { recursive: true });
    fs.renameSync(parked, boot);
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => s.relativePath)).toEqual([BOOT_FILE]);
    const { run } = await migrate(paths);
    expect(run.sources[0]).toMatchObject({ status: "imported", warnings: [] });
    expect(run.sources[0]!.notes.join()).toMatch(new RegExp(`attached to the indexed session ${BOOT} \\(agent:main:boot\\)`));
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = ?", BOOT)).toEqual([{ n: 4 }]);
    expect(rows(db, "SELECT session_key FROM sessions ORDER BY session_key")).toEqual([{ session_key: "agent:main:boot" }, { session_key: "agent:main:main" }]);
  });

  it("makes a recovered session only for a transcript nothing points at, and always warns", async () => {
    const { paths, stateDir } = makeTempState("migration/index-header-mismatch");
    const stray = "agents/main/sessions/stray-1.jsonl";
    fs.writeFileSync(
      path.join(stateDir, stray),
      '{"type":"session","version":3,"id":"stray-header","timestamp":"2026-05-06T00:00:00.000Z","cwd":"/w"}\n{"type":"message","id":"x1","parentId":null,"timestamp":"2026-05-06T00:01:00.000Z","message":{"role":"user","content":"lost"}}\n',
    );
    const plan = await planMigration({ paths });
    expect(plan.sources.find((s) => s.relativePath === stray)!.notes.join()).toMatch(/orphan: no session index in this plan references session stray-header or the file name stray-1/);
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    const outcome = run.sources.find((s) => s.relativePath === stray)!;
    expect(outcome.status).toBe("warning");
    expect(outcome.warnings).toEqual(["orphan transcript: no session index references session stray-header or the file name stray-1; stored under agent:main:recovered:stray-header, as OpenClaw 2026.9.6 recovers unregistered history (an index imported later takes it over)"]);
    // The linked transcript is not an orphan, and its session keeps its history.
    expect(run.sources.find((s) => s.relativePath === BOOT_FILE)).toMatchObject({ status: "imported", warnings: [] });
    expect(rows(agentDbFile(paths), "SELECT session_id, session_key FROM sessions WHERE session_key LIKE '%:recovered:%' OR session_key LIKE '%:orphan:%'")).toEqual([{ session_id: "stray-header", session_key: "agent:main:recovered:stray-header" }]);
    expect(rows(agentDbFile(paths), "SELECT count(*) AS n FROM transcript_events WHERE session_id = 'stray-header'")).toEqual([{ n: 2 }]);
  });

  it("doctor --fix ends with the indexed key holding every event in OpenClaw 2026.9.6's format, and no orphan", async () => {
    const state = makeTempState("migration/index-header-mismatch");
    const fix = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
    expect(fix.code, fix.stderr).toBe(0);
    const db = agentDbFile(state.paths);
    expect(cli(db, "PRAGMA user_version")).toEqual([{ user_version: 23 }]);
    expect(cli(db, "SELECT session_key, current_session_id FROM session_nodes ORDER BY session_key")).toEqual([
      { session_key: "agent:main:boot", current_session_id: BOOT },
      { session_key: "agent:main:main", current_session_id: "s-main" },
    ]);
    expect(cli(db, "SELECT seq, json_extract(event_json, '$.id') AS id FROM transcript_events WHERE session_id = '" + BOOT + "' ORDER BY seq")).toEqual([
      { seq: 0, id: BOOT },
      { seq: 1, id: "b1" },
      { seq: 2, id: "b2" },
      { seq: 3, id: "b3" },
    ]);
    // 9.6 gives the header the session's own id as its identity, as for any session it imported itself.
    expect(cli(db, "SELECT event_id, event_type FROM transcript_event_identities WHERE session_id = '" + BOOT + "' AND seq = 0")).toEqual([{ event_id: BOOT, event_type: "session" }]);
    expect(cli(db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = '" + HEADER_ID + "'")).toEqual([{ n: 0 }]);
    expect(cli(db, "SELECT count(*) AS n FROM session_nodes WHERE session_key LIKE '%:orphan:%' OR session_key LIKE '%:recovered:%'")).toEqual([{ n: 0 }]);
    // A second run changes nothing.
    const again = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
    expect(again.code, again.stderr).toBe(0);
    expect(cli(db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = '" + BOOT + "'")).toEqual([{ n: 4 }]);
  });
});
