// End-to-end: the real binary's `backup` commands — exit codes, JSON envelopes, consent, lease refusal.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { agentDb, countRows, seedState } from "../helpers/backup-state.js";
import { readRawEntries, writeRawArchive } from "../helpers/tar-tools.js";
import { makeTempState, runBin, runInProcess, snapshotTree } from "../helpers/temp-state.js";

describe("openclaw-state backup (binary)", () => {
  it("create --json, verify, list --json, restore needing --yes, restore --yes", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const created = await runBin(["backup", "create", "--json"], state.env);
    expect(created.code, created.stderr).toBe(0);
    const doc = JSON.parse(created.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "backup create", status: "completed", verified: true });
    expect(doc.manifest.files).toBeUndefined();
    expect(doc.manifest.totals.databases).toBe(2);
    const archive = doc.archivePath as string;

    const verified = await runBin(["backup", "verify", archive], state.env);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/verified/);
    expect(verified.stdout).toMatch(/openclaw-agent\.sqlite: integrity ok, row counts match/);

    const listed = await runBin(["backup", "list", "--json"], state.env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).backups).toEqual([expect.objectContaining({ archivePath: archive, status: "completed", exists: true })]);

    fs.rmSync(path.join(state.stateDir, "notes"), { recursive: true });
    const before = snapshotTree(state.root);
    const refused = await runBin(["backup", "restore", archive], state.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    expect(refused.stderr).toMatch(/nothing was changed/);
    expect(snapshotTree(state.root)).toEqual(before);

    const dry = await runBin(["backup", "restore", archive, "--dry-run", "--json"], state.env);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ ok: true, status: "dry-run", plan: [expect.objectContaining({ action: "replace" })] });
    expect(snapshotTree(state.root)).toEqual(before);

    const restored = await runBin(["backup", "restore", archive, "--yes"], state.env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/Restored/);
    expect(fs.readFileSync(path.join(state.stateDir, "notes", "readme.md"), "utf8")).toBe("# notes\n");
    expect(countRows(agentDb(state), "sessions")).toBe(20);
  });

  it("verify exits 1 naming the problem; --json carries ok:false and the error", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const archive = JSON.parse((await runBin(["backup", "create", "--json", "--no-verify"], state.env)).stdout).archivePath as string;
    const entries = readRawEntries(archive);
    const hostile = path.join(state.root, "hostile.tar.gz");
    writeRawArchive(hostile, [...entries, { path: `${entries[0]!.path.split("/")[0]}/payload/state/../../../x`, type: "File", data: Buffer.from("x") }]);
    const human = await runBin(["backup", "verify", hostile], state.env);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/failed verification: .*path traversal/);
    const json = await runBin(["backup", "verify", hostile, "--json"], state.env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ version: 1, ok: false, error: { code: "archive_invalid" } });

    const missing = await runBin(["backup", "verify", path.join(state.root, "nope.tar.gz")], state.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/does not exist/);

    const restore = await runBin(["backup", "restore", hostile, "--yes", "--json"], state.env);
    expect(restore.code).toBe(1);
    expect(JSON.parse(restore.stdout)).toMatchObject({ ok: false, error: { code: "archive_invalid" } });
  });

  it("restore exits 75 while another live process holds the state lease", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const archive = JSON.parse((await runBin(["backup", "create", "--json"], state.env)).stdout).archivePath as string;
    const db = openGlobalDatabase(state.paths, { mode: "write" });
    const now = Date.now();
    db.handle
      .prepare("INSERT INTO state_leases (scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at) VALUES ('gateway_locks', 'gw', 'gw', ?, ?, ?, ?, ?)")
      .run(now + 600_000, now, JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: now }), now, now);
    db.close();
    const before = snapshotTree(state.root);
    const locked = await runBin(["backup", "restore", archive, "--yes"], state.env);
    expect(locked.code).toBe(75);
    expect(locked.stderr).toMatch(/locked by the gateway/);
    expect(snapshotTree(state.root)).toEqual(before);
  });

  it("prune needs --keep and consent; usage errors in the nested group exit 2", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    for (let i = 0; i < 3; i += 1) expect((await runInProcess(["backup", "create", "--no-verify"], state.env)).code).toBe(0);
    const noKeep = await runInProcess(["backup", "prune"], state.env);
    expect(noKeep.code).toBe(2);
    expect(noKeep.stderr).toMatch(/--keep/);
    const badKeep = await runInProcess(["backup", "prune", "--keep", "0", "--yes"], state.env);
    expect(badKeep.code).toBe(2);
    const noYes = await runInProcess(["backup", "prune", "--keep", "1"], state.env);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toMatch(/--yes/);
    expect(fs.readdirSync(state.paths.backupDir)).toHaveLength(3);
    const pruned = await runInProcess(["backup", "prune", "--keep", "1", "--yes", "--json"], state.env);
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout).removed).toHaveLength(2);
    expect(fs.readdirSync(state.paths.backupDir)).toHaveLength(1);
  });

  it("prune: retention flags are validated (no NaN), the dry run names the rule that keeps each archive", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    for (let i = 0; i < 3; i += 1) expect((await runInProcess(["backup", "create", "--no-verify"], state.env)).code).toBe(0);
    const before = snapshotTree(state.paths.backupDir);
    for (const [args, message] of [
      [["--keep", "-1"], /Invalid --keep value "-1": use a whole number of at least 1 \(for example --keep 7\)/],
      [["--keep-daily", "1.5"], /Invalid --keep-daily value "1\.5"/],
      [["--keep-within", "3x"], /Invalid --keep-within value "3x": use whole numbers with units/],
      [["--keep", "2", "--keep-last", "2"], /--keep is another name for --keep-last/],
    ] as const) {
      const run = await runInProcess(["backup", "prune", ...args, "--yes"], state.env);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/NaN/);
    }
    expect(snapshotTree(state.paths.backupDir)).toEqual(before);

    const dry = await runInProcess(["backup", "prune", "--keep-last", "1", "--keep-within", "1h", "--dry-run"], state.env);
    expect(dry.code, dry.stderr).toBe(0);
    // All three are within an hour of the newest one; the newest is also the last one.
    expect(dry.stdout).toMatch(/keep last 1, within 1h\): keeping 3 archive\(s\), would remove 0/);
    expect(dry.stdout).toMatch(/keep {3}\S+ \(.*\) by within 1h, last/);
    const dryJson = JSON.parse((await runInProcess(["backup", "prune", "--keep-last", "1", "--dry-run", "--json"], state.env)).stdout);
    expect(dryJson).toMatchObject({ ok: true, status: "dry-run", policy: { last: 1 } });
    expect(dryJson.kept.map((k: { reasons: string[] }) => k.reasons)).toEqual([["last"]]);
    expect(dryJson.removed).toHaveLength(2);
    expect(snapshotTree(state.paths.backupDir)).toEqual(before);
  });

  it("list hides runs whose archive is gone (one line says so) and --all shows them; create refuses a destination inside the state dir", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const first = JSON.parse((await runInProcess(["backup", "create", "--no-verify", "--json"], state.env)).stdout).archivePath as string;
    expect((await runInProcess(["backup", "create", "--no-verify"], state.env)).code).toBe(0);
    fs.rmSync(first);
    const listed = await runInProcess(["backup", "list"], state.env);
    expect(listed.stdout).not.toContain(first);
    expect(listed.stdout).toMatch(/1 run\(s\) whose archive is gone not shown \(--all lists them; `backup prune` forgets them\)/);
    const all = await runInProcess(["backup", "list", "--all"], state.env);
    // The table names archives relative to the backup dir (in its heading); a gone archive's status is "missing".
    expect(all.stdout).toMatch(new RegExp(`\\smissing\\s.*${path.basename(first).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));

    const inside = await runBin(["backup", "create", "--output", `${path.join(state.stateDir, "backups")}/`], state.env);
    expect(inside.code).toBe(2);
    expect(inside.stderr.trim().split("\n")).toHaveLength(1);
    expect(inside.stderr).toMatch(/is inside the state dir .* where `reset --scope full` would delete the archives/);
    expect(fs.existsSync(path.join(state.stateDir, "backups"))).toBe(false);
  });

  it("create --dry-run prints the plan and writes nothing; human output lists assets and skips", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const before = snapshotTree(state.root);
    const dry = await runInProcess(["backup", "create", "--dry-run"], state.env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/Dry run: would write .*openclaw-backup\.tar\.(gz|zst) \(nothing was written\)/);
    expect(dry.stdout).toMatch(/skipped credentials .*: missing/);
    expect(snapshotTree(state.root)).toEqual(before);
  });

  it("on a terminal, restore shows the plan and asks; declining changes nothing", async () => {
    const state = makeTempState("legacy-state");
    seedState(state);
    const archive = JSON.parse((await runInProcess(["backup", "create", "--json"], state.env)).stdout).archivePath as string;
    fs.rmSync(path.join(state.stateDir, "notes"), { recursive: true });
    const before = snapshotTree(state.root);
    const declined = await runInProcess(["backup", "restore", archive], state.env, [false]);
    expect(declined.code).toBe(1);
    expect(declined.stdout).toMatch(/backup restore will REPLACE the current state with the archive's copy \(from .*\):\n\s+replace\s+.*\.openclaw/);
    expect(declined.stdout).toMatch(/current copy kept at .*\.openclaw\.pre-restore-\d{8}T\d{6}Z\n/);
    expect(declined.stdout).toMatch(/Each replaced path is kept beside it as <path>\.pre-restore-<ts> \(named above\); restore never deletes them/);
    expect(declined.stdout).toMatch(/Nothing was restored \(declined\)/);
    expect(snapshotTree(state.root)).toEqual(before);
    const accepted = await runInProcess(["backup", "restore", archive], state.env, [true]);
    expect(accepted.code).toBe(0);
    expect(fs.existsSync(path.join(state.stateDir, "notes", "readme.md"))).toBe(true);
  });
});
