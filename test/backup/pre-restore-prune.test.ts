// `backup prune --pre-restore [--older-than]` and the pre-restore section of `backup list`: only the copies a restore
// kept (by their stamped name, real files/dirs), dry-run exact, consent like other prune deletions, links never followed.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listBackups } from "../../src/backup/list-backups.js";
import { preRestoreStamp, prunePreRestoreCopies, scanPreRestoreCopies } from "../../src/backup/pre-restore-copies.js";
import { makeTempState, runInProcess, snapshotTree, type TempState } from "../helpers/temp-state.js";

const DAY = 24 * 3600 * 1000;

/** `20250102T030405Z` for a time `daysAgo` days before now (restore's stamp form). */
function stamp(daysAgo: number): string {
  return new Date(Date.now() - daysAgo * DAY).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}

interface Layout {
  state: TempState;
  old: string;
  recent: string;
  oldConfig: string;
  future: string;
  odd: string;
  link: string;
  outside: string;
}

/** A state dir with previous copies beside it (as restores leave them) and the traps an attacker would plant. */
function layout(): Layout {
  const state = makeTempState();
  fs.mkdirSync(path.join(state.stateDir, "state"), { recursive: true });
  fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), "{}\n");
  const dir = path.dirname(state.stateDir);
  const base = path.basename(state.stateDir);
  const old = path.join(dir, `${base}.pre-restore-${stamp(40)}`);
  const recent = path.join(dir, `${base}.pre-restore-${stamp(2)}`);
  fs.mkdirSync(path.join(old, "agents", "main"), { recursive: true });
  fs.writeFileSync(path.join(old, "agents", "main", "sessions.json"), "{}");
  fs.mkdirSync(recent);
  fs.writeFileSync(path.join(recent, "openclaw.json"), "{}");
  // A second copy within the same second gets restore's `-1` suffix.
  const oldConfig = path.join(state.stateDir, `openclaw.json.pre-restore-${stamp(40)}-1`);
  fs.writeFileSync(oldConfig, '{"old":true}\n');
  const future = path.join(dir, `${base}.pre-restore-20990101T000000Z`);
  fs.mkdirSync(future);
  const odd = path.join(dir, `${base}.pre-restore-keep-me`);
  fs.mkdirSync(odd);
  const outside = path.join(state.root, "outside");
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "precious.txt"), "not the tool's");
  const link = path.join(dir, `${base}.pre-restore-${stamp(50)}-2`);
  fs.symlinkSync(outside, link);
  return { state, old, recent, oldConfig, future, odd, link, outside };
}

describe("preRestoreStamp", () => {
  it("reads restore's stamp and nothing else", () => {
    expect(preRestoreStamp("x.pre-restore-20250102T030405Z", "/a/x")).toBe(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(preRestoreStamp("x.pre-restore-20250102T030405Z-3", "/a/x")).toBe(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(preRestoreStamp("x.pre-restore-20251302T030405Z", "/a/x")).toBeNull();
    expect(preRestoreStamp("x.pre-restore-20250230T030405Z", "/a/x")).toBeNull();
    expect(preRestoreStamp("x.pre-restore-latest", "/a/x")).toBeNull();
    expect(preRestoreStamp("y.pre-restore-20250102T030405Z", "/a/x")).toBeNull();
  });
});

describe("backup prune --pre-restore", () => {
  it("dry run lists exactly what would go and touches nothing; links, odd names and future stamps are kept", async () => {
    const l = layout();
    const before = snapshotTree(l.state.root);
    const dry = await prunePreRestoreCopies({ paths: l.state.paths, dryRun: true });
    expect(dry.status).toBe("dry-run");
    expect(dry.removed.map((r) => r.path).sort()).toEqual([l.old, l.recent, l.oldConfig].sort());
    expect(dry.removed.find((r) => r.path === l.oldConfig)).toMatchObject({ kind: "file", of: l.state.paths.configPath, sizeBytes: 13 });
    const kept = new Map(dry.kept.map((k) => [k.path, k.reason]));
    expect(kept.get(l.future)).toBe("dated in the future; kept");
    expect(kept.get(l.odd)).toMatch(/not ours, kept: its name does not carry the time stamp/);
    expect(kept.get(l.link)).toMatch(/not ours, kept: it is a symbolic link/);
    expect(dry.warnings.join("\n")).toMatch(/restore time in the future/);
    expect(snapshotTree(l.state.root)).toEqual(before);
  });

  it("--older-than removes only older copies; the real run deletes what the dry run named and nothing else", async () => {
    const l = layout();
    const dry = await prunePreRestoreCopies({ paths: l.state.paths, olderThan: "30d", dryRun: true });
    expect(dry.removed.map((r) => r.path).sort()).toEqual([l.old, l.oldConfig].sort());
    expect(dry.kept.find((k) => k.path === l.recent)?.reason).toBe("newer than 30d");

    const declined = await prunePreRestoreCopies({ paths: l.state.paths, olderThan: "30d", confirm: async () => false });
    expect(declined.status).toBe("declined");
    expect(fs.existsSync(l.old)).toBe(true);

    let asked: string[] = [];
    const pruned = await prunePreRestoreCopies({
      paths: l.state.paths,
      olderThan: "30d",
      confirm: async (remove) => {
        asked = remove.map((r) => r.path);
        return true;
      },
    });
    expect(pruned.status).toBe("pruned");
    expect(asked.sort()).toEqual(dry.removed.map((r) => r.path).sort());
    expect(pruned.removed.map((r) => r.path).sort()).toEqual(asked);
    for (const p of [l.old, l.oldConfig]) expect(fs.existsSync(p)).toBe(false);
    for (const p of [l.recent, l.future, l.odd, l.link]) expect(fs.lstatSync(p)).toBeTruthy();
    expect(fs.readFileSync(path.join(l.outside, "precious.txt"), "utf8")).toBe("not the tool's");
    expect(fs.existsSync(path.join(l.state.stateDir, "openclaw.json"))).toBe(true);
  });

  it("a copy swapped for a link after the listing is refused, not followed", async () => {
    const l = layout();
    const result = await prunePreRestoreCopies({
      paths: l.state.paths,
      confirm: async () => {
        fs.rmSync(l.recent, { recursive: true });
        fs.symlinkSync(l.outside, l.recent);
        return true;
      },
    });
    expect(result.removed.map((r) => r.path)).not.toContain(l.recent);
    expect(result.warnings.join("\n")).toMatch(/Refusing to delete .*symbolic link/);
    expect(fs.readFileSync(path.join(l.outside, "precious.txt"), "utf8")).toBe("not the tool's");
  });

  it("backup list shows the kept copies in their own section and JSON field", async () => {
    const l = layout();
    const listed = await listBackups({ paths: l.state.paths });
    expect(listed.preRestoreCopies.map((c) => c.path)).toEqual(scanPreRestoreCopies(l.state.paths).copies.map((c) => c.path));
    expect(listed.preRestoreCopies.map((c) => c.path)).toContain(l.old);
    expect(listed.preRestoreNotOurs.map((n) => n.path).sort()).toEqual([l.odd, l.link].sort());
    const text = await runInProcess(["backup", "list"], l.state.env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Previous copies kept by restore \(`backup prune --pre-restore` removes them\):/);
    expect(text.stdout).toContain(l.old);
  });

  it("CLI: consent like other prune deletions, ambiguity refused with exit 2, JSON names each copy", async () => {
    const l = layout();
    const before = snapshotTree(l.state.root);
    const noYes = await runInProcess(["backup", "prune", "--pre-restore"], l.state.env);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toMatch(/would delete 3 previous copies kept by restore .*: it needs consent and cannot ask for it here .*so nothing was changed\. Re-run with --yes/);
    const mixed = await runInProcess(["backup", "prune", "--pre-restore", "--keep-last", "1", "--yes"], l.state.env);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/--keep-last applies to archives/);
    const stray = await runInProcess(["backup", "prune", "--older-than", "30d", "--keep-last", "1", "--yes"], l.state.env);
    expect(stray.code).toBe(2);
    const bad = await runInProcess(["backup", "prune", "--pre-restore", "--older-than", "soon", "--yes"], l.state.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--older-than/);
    expect(snapshotTree(l.state.root)).toEqual(before);

    const dry = await runInProcess(["backup", "prune", "--pre-restore", "--older-than", "30d", "--dry-run"], l.state.env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/would remove 2/);
    expect(dry.stdout).toContain(`remove ${l.old}`);

    const run = await runInProcess(["backup", "prune", "--pre-restore", "--older-than", "30d", "--yes", "--json"], l.state.env);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ ok: true, command: "backup prune", status: "pruned", olderThan: "30d" });
    expect(doc.removed.map((r: { path: string }) => r.path).sort()).toEqual([l.old, l.oldConfig].sort());
    expect(fs.existsSync(l.old)).toBe(false);
    expect(fs.existsSync(l.recent)).toBe(true);
  });
});
