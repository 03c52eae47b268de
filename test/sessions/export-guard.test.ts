// `sessions show --export` never writes where the next `doctor --fix` would import the file as legacy state.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { legacyDestinationReason } from "../../src/migration/export-guard.js";
import { seedSessions } from "../helpers/seed-sessions.js";
import { makeTempDir, makeTempState, runInProcess } from "../helpers/temp-state.js";

function seeded() {
  const state = makeTempState();
  seedSessions(state.paths, "main", [
    {
      sessionId: "s-main",
      key: "agent:main:main",
      scope: "shared-main",
      chatType: "direct",
      updatedAt: Date.now(),
      entry: { sessionId: "s-main" },
      events: [{ type: "session", version: 3, id: "s-main", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/home/demo" }],
    },
  ]);
  return state;
}

describe("export destinations", () => {
  it("refuses the state dir's session folders and legacy paths, through the CLI, writing nothing", async () => {
    const state = seeded();
    for (const rel of ["agents/main/sessions/export.jsonl", "sessions/export.jsonl", "agents/ops/sessions/nested/x.jsonl", "cron/runs/main.jsonl", "audit/main.jsonl"]) {
      const target = path.join(state.stateDir, rel);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      const r = await runInProcess(["sessions", "show", "main", "--export", target], state.env);
      expect(r.code, rel).toBe(1);
      expect(r.stderr, rel).toMatch(/Refusing to export there: .*the next `doctor --fix` would (import|report) it/);
      expect(fs.existsSync(target), rel).toBe(false);
    }
    const ok = path.join(makeTempDir(), "main.jsonl");
    expect((await runInProcess(["sessions", "show", "main", "--export", ok], state.env)).code).toBe(0);
    expect(fs.existsSync(ok)).toBe(true);
  });

  it("sees through a symlinked directory into the state dir, and refuses a dir an importer reads outside it", () => {
    const state = seeded();
    const link = path.join(makeTempDir(), "into-sessions");
    fs.mkdirSync(path.join(state.stateDir, "agents/main/sessions"), { recursive: true });
    fs.symlinkSync(path.join(state.stateDir, "agents/main/sessions"), link);
    expect(legacyDestinationReason(state.paths, path.join(link, "x.jsonl"))).toMatch(/session folder of the state dir/);
    // A cron store the config places elsewhere: its runs/ dir is read by the cron importers.
    const store = path.join(makeTempDir(), "cron");
    fs.mkdirSync(path.join(store, "runs"), { recursive: true });
    fs.writeFileSync(path.join(store, "jobs.json"), JSON.stringify({ version: 1, jobs: [] }));
    fs.writeFileSync(path.join(store, "runs", "daily.jsonl"), "{}\n");
    fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), JSON.stringify({ cron: { store: path.join(store, "jobs.json") } }));
    expect(legacyDestinationReason(state.paths, path.join(store, "runs", "export.jsonl"))).toMatch(/beside legacy cron run logs .* would import it/);
    expect(legacyDestinationReason(state.paths, path.join(store, "export.txt"))).toBeNull();
  });
});
