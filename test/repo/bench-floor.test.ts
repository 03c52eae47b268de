// bench/backup-floor.mjs's integrity_check does the tool's whole check (CHECK constraints included), so the floor is not less work than the tool's.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { makeTempDir, repoRoot } from "../helpers/temp-state.js";

function floorCheck(dir: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [path.join(repoRoot, "bench", "backup-floor.mjs"), "check", dir], { encoding: "utf8" });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function writeDatabase(dir: string, seq: number): void {
  const db = new Database(path.join(dir, "agent.sqlite"));
  db.exec("CREATE TABLE events (seq INTEGER CHECK (seq > 0))");
  db.pragma("ignore_check_constraints = ON");
  db.prepare("INSERT INTO events VALUES (?)").run(seq);
  db.close();
}

describe("bench/backup-floor.mjs check", () => {
  it("fails on a database that breaks a CHECK constraint (a read-only integrity_check would pass it)", () => {
    const dir = makeTempDir();
    writeDatabase(dir, -1);
    const run = floorCheck(dir);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("CHECK constraint failed in events");
  });

  it("measures a sound database and hashes every file", () => {
    const dir = makeTempDir();
    writeDatabase(dir, 1);
    fs.writeFileSync(path.join(dir, "notes.jsonl"), "{}\n");
    const run = floorCheck(dir);
    expect(run.status).toBe(0);
    const { components } = JSON.parse(run.stdout.trim().split("\n").pop()!);
    expect(Object.keys(components).sort()).toEqual(["integrityCheck", "sha256"]);
    expect(components.integrityCheck.cpu).toBeGreaterThanOrEqual(0);
    // The system part is reported beside the total (the bench prints it per round), and is part of it.
    for (const c of Object.values(components) as Array<{ cpu: number; sys: number }>) {
      expect(c.sys).toBeGreaterThanOrEqual(0);
      expect(c.sys).toBeLessThanOrEqual(c.cpu + 1e-9);
    }
  });
});
