// A separate writer process holds committed rows in an un-checkpointed WAL and keeps committing during the backup.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { agentDb, countRows, seedState } from "../helpers/backup-state.js";
import { nextLine } from "../helpers/crash.js";
import { makeTempDir, makeTempState } from "../helpers/temp-state.js";

const sqliteModule = createRequire(import.meta.url).resolve("better-sqlite3");

const WRITER = `
const Database = require(process.argv[2]);
const db = new Database(process.argv[3]);
db.pragma("busy_timeout = 30000");
db.pragma("journal_mode = WAL");
db.pragma("wal_autocheckpoint = 0");
const add = db.prepare("INSERT INTO sessions (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', 0, 0)");
db.transaction(() => { for (let i = 0; i < 50; i++) add.run("live-" + i, "live-key-" + i); })();
let n = 0;
const timer = setInterval(() => { add.run("tick-" + n, "tick-key-" + n); n++; }, 2);
process.stdout.write("ready\\n");
process.stdin.on("data", (d) => { if (String(d).includes("stop")) clearInterval(timer); process.stdout.write("commits " + n + "\\n"); });
`;

let child: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
});

describe("backup under a live writer", () => {
  it("snapshots committed rows still in the WAL, archives no -wal/-shm, and does not stall the writer", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const script = path.join(makeTempDir(), "writer.cjs");
    fs.writeFileSync(script, WRITER);
    child = spawn(process.execPath, [script, sqliteModule, agentDb(state)], { stdio: ["pipe", "pipe", "pipe"] });
    expect(await nextLine(child)).toBe("ready");
    // The rows are committed but only in the WAL: the main file has not been checkpointed.
    expect(fs.statSync(`${agentDb(state)}-wal`).size).toBeGreaterThan(0);

    const commits = async (line: string): Promise<number> => {
      child!.stdin.write(line);
      return Number((await nextLine(child!)).replace("commits ", ""));
    };
    const before = await commits("count\n");
    const result = await createBackup({ paths: state.paths });
    // The writer kept committing while the snapshot and the archive were being made.
    expect(await commits("stop\n")).toBeGreaterThan(before);

    const agent = result.manifest.databases.find((d) => d.role === "agent")!;
    expect(agent.rowCounts.sessions).toBeGreaterThanOrEqual(20 + 50);
    expect(result.manifest.files.some((f) => /-(wal|shm)$/.test(f.archivePath))).toBe(false);
    expect(result.manifest.skipped.filter((s) => s.kind === "sidecar").length).toBeGreaterThanOrEqual(2);
    child.kill("SIGKILL");
    child = undefined;

    // Restored into a fresh directory, the snapshot holds the WAL-only rows.
    const target = path.join(makeTempDir(), "restored");
    await restoreBackup({ paths: state.paths, archivePath: result.archivePath, target });
    const restoredDb = path.join(target, "state", "agents", "main", "agent", "openclaw-agent.sqlite");
    expect(countRows(restoredDb, "sessions")).toBe(agent.rowCounts.sessions);
    expect(fs.existsSync(`${restoredDb}-wal`)).toBe(false);
  });
});
