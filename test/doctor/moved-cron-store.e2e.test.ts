// End to end: the real binary re-keys cron jobs of a moved 9.6 state; exit codes and --json `ok` agree; a rerun is a no-op.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runBin } from "../helpers/temp-state.js";
import { doctorJson, type DoctorJson } from "../helpers/doctor-json.js";
import { cronRows, movedState, OLD_KEY } from "./moved-cron-store-state.js";

const json = doctorJson;

const movedIds = (doc: DoctorJson) => doc.findings.filter((f) => f.id.startsWith("storage.moved-cron-store")).map((f) => [f.id, f.severity]);

describe("openclaw-state doctor on a moved OpenClaw 2026.9.6 state", () => {
  it("warns, --fix --yes re-keys every job behind a verified backup (exit 0), the rerun changes nothing", async () => {
    const state = movedState([
      { key: OLD_KEY, id: "daily", updatedAt: 1000, scratch: "notes", receipt: "rc-1" },
      { key: OLD_KEY, id: "weekly", updatedAt: 2000 },
    ]);
    const env = { ...state.env, OPENCLAW_BACKUP_DIR: path.join(state.root, "archives") };
    const current = path.join(state.stateDir, "cron", "jobs.json");

    const check = await runBin(["doctor", "--json"], env);
    expect(check.code).toBe(0);
    expect(movedIds(json(check))).toEqual([["storage.moved-cron-store", "warning"]]);

    const fix = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(fix.code).toBe(0);
    const fixed = json(fix);
    const repair = fixed.repairs.find((r) => r.id === "storage.moved-cron-store.rekey")!;
    expect(repair.status).toBe("applied");
    expect(repair.rows!.moved.map((m) => [m.to, m.action])).toEqual([
      [`cron_jobs (${JSON.stringify(current)}, "daily")`, "moved"],
      [`cron_jobs (${JSON.stringify(current)}, "weekly")`, "moved"],
    ]);
    expect(fs.existsSync(repair.rows!.backupPath!)).toBe(true);
    expect(movedIds(fixed)).toEqual([]);
    expect(cronRows(state.paths.globalDbPath)).toEqual([
      ["job", current, "daily:daily:1000"],
      ["job", current, "weekly:weekly:2000"],
      ["receipt", current, "daily:rc-1"],
      ["scratch", current, "daily:notes"],
    ]);

    const before = fs.readFileSync(state.paths.globalDbPath);
    const again = await runBin(["doctor", "--fix", "--yes", "--json"], env);
    expect(again.code).toBe(0);
    expect(json(again).repairs.filter((r) => r.id === "storage.moved-cron-store.rekey")).toEqual([]);
    expect(fs.readFileSync(state.paths.globalDbPath).equals(before)).toBe(true);
  });
});
