// Restore keeps what it replaces: a newer session file, migrated/ files and a workspace file written after the backup survive at the printed `.pre-restore-<ts>` paths.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { swapIntoPlace, type StagedItem } from "../../src/backup/restore-swap.js";
import type { RestorePlanItem } from "../../src/backup/restore-plan.js";
import { runDoctor } from "../../src/doctor/run-doctor.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, runInProcess, snapshotTree, type TempState } from "../helpers/temp-state.js";

const yes = async (): Promise<boolean> => true;

interface Scene {
  state: TempState;
  ws: string;
  archive: string;
  /** Written after the backup: what a restore that deleted its copies would lose. */
  later: Record<string, string>;
}

/** A backed-up state, then newer data written into the state dir, its migrated/ folder and the configured workspace. */
async function sceneAfterBackup(): Promise<Scene> {
  const state = makeTempState("legacy-state");
  seedState(state);
  const ws = path.join(state.root, "ws");
  fs.mkdirSync(path.join(ws, "src"), { recursive: true });
  fs.writeFileSync(path.join(ws, "src", "main.ts"), "export {};\n");
  fs.writeFileSync(state.paths.configPath, `{ agents: { defaults: { workspace: "~/ws", }, }, }`);
  const backup = await createBackup({ paths: state.paths });
  const later: Record<string, string> = {
    [path.join(state.stateDir, "agents", "main", "sessions", "s-newer.jsonl")]: '{"type":"session","id":"s-newer"}\n{"type":"message","text":"written after the backup"}\n',
    [path.join(state.stateDir, "migrated", "agents", "main", "sessions", "s-main.jsonl")]: '{"type":"session","id":"s-main","retired":true}\n',
    [path.join(state.stateDir, "migrated", "sessions", "sessions.json")]: '{"agent:main:main":{"sessionId":"s-main"}}\n',
    [path.join(ws, "src", "later.ts")]: "export const later = 1;\n",
  };
  for (const [file, text] of Object.entries(later)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  return { state, ws, archive: backup.archivePath, later };
}

/** The tree under `dir` without the global DB (the restore takes and releases its lease row there). */
function treeWithoutGlobalDb(dir: string): Record<string, unknown> {
  const tree = snapshotTree(dir);
  for (const key of Object.keys(tree)) if (/^state\/openclaw\.sqlite/.test(key)) delete tree[key];
  return tree;
}

function copiesBeside(dest: string): string[] {
  return fs
    .readdirSync(path.dirname(dest))
    .filter((n) => n.startsWith(`${path.basename(dest)}.pre-restore-`))
    .map((n) => path.join(path.dirname(dest), n));
}

describe("backup restore keeps what it replaces", () => {
  it("dry-run and the consent refusal name every replaced path and where its copy goes; nothing is written", async () => {
    const { state, ws, archive } = await sceneAfterBackup();
    const before = snapshotTree(state.root);

    const dry = await runInProcess(["backup", "restore", archive, "--dry-run"], state.env);
    expect(dry.code, dry.stderr).toBe(0);
    for (const dest of [state.stateDir, ws]) {
      expect(dry.stdout).toContain(`replace  ${dest}  `);
      expect(dry.stdout).toMatch(new RegExp(`current copy kept at ${escape(dest)}\\.pre-restore-\\d{8}T\\d{6}Z\\n`));
    }
    const dryJson = JSON.parse((await runInProcess(["backup", "restore", archive, "--dry-run", "--json"], state.env)).stdout);
    expect(dryJson).toMatchObject({ ok: true, status: "dry-run", keptCopies: [] });
    expect(dryJson.plan.map((i: RestorePlanItem) => [i.kind, i.destination, i.keptAt?.replace(/\d{8}T\d{6}Z$/, "<ts>")])).toEqual([
      ["workspace", ws, `${ws}.pre-restore-<ts>`],
      ["state", state.stateDir, `${state.stateDir}.pre-restore-<ts>`],
    ]);

    const consent = await runInProcess(["backup", "restore", archive], state.env);
    expect(consent.code).toBe(2);
    expect(consent.stderr).toMatch(new RegExp(`replace .*${escape(state.stateDir)} \\(current copy kept at ${escape(state.stateDir)}\\.pre-restore-\\d{8}T\\d{6}Z\\)`));
    expect(consent.stderr).toMatch(new RegExp(`${escape(ws)} \\(current copy kept at ${escape(ws)}\\.pre-restore-\\d{8}T\\d{6}Z\\)`));
    const asked = await runInProcess(["backup", "restore", archive], state.env, [false]);
    expect(asked.stdout).toMatch(/current copy kept at .*\.openclaw\.pre-restore-/);
    expect(asked.stdout).toMatch(/restore never deletes them \(`openclaw-state backup prune --pre-restore` does\)/);
    expect(asked.stdout).not.toMatch(/deleted once the restore succeeds/);
    expect(snapshotTree(state.root)).toEqual(before);
  });

  it("after restore the old state tree and workspace are intact at the kept paths, which --json and the human output name", async () => {
    const { state, ws, archive, later } = await sceneAfterBackup();
    const oldState = treeWithoutGlobalDb(state.stateDir);
    const oldWs = snapshotTree(ws);

    const run = await runInProcess(["backup", "restore", archive, "--yes", "--json"], state.env);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.ok).toBe(true);
    const kept = doc.keptCopies as Array<{ kind: string; path: string; keptAt: string }>;
    expect(kept.map((k) => [k.kind, k.path]).sort()).toEqual([
      ["state", state.stateDir],
      ["workspace", ws],
    ]);
    // The restored state no longer has what was written after the backup…
    for (const file of Object.keys(later)) expect(fs.existsSync(file), file).toBe(false);
    // …and the kept copies hold every byte of it, at exactly the paths --json printed (and nowhere else).
    const keptState = kept.find((k) => k.kind === "state")!.keptAt;
    const keptWs = kept.find((k) => k.kind === "workspace")!.keptAt;
    expect(copiesBeside(state.stateDir)).toEqual([keptState]);
    expect(copiesBeside(ws)).toEqual([keptWs]);
    expect(treeWithoutGlobalDb(keptState)).toEqual(oldState);
    expect(snapshotTree(keptWs)).toEqual(oldWs);
    for (const [file, text] of Object.entries(later)) {
      const from = file.startsWith(`${state.stateDir}${path.sep}`) ? keptState : keptWs;
      const base = file.startsWith(`${state.stateDir}${path.sep}`) ? state.stateDir : ws;
      expect(fs.readFileSync(path.join(from, path.relative(base, file)), "utf8")).toBe(text);
    }

    // A second restore keeps a second copy beside the first; the human output names it and how to remove copies.
    const again = await runInProcess(["backup", "restore", archive, "--yes"], state.env);
    expect(again.code, again.stderr).toBe(0);
    const copies = copiesBeside(state.stateDir);
    expect(copies).toHaveLength(2);
    const second = copies.find((c) => c !== keptState)!;
    expect(again.stdout).toContain(`replaced ${state.stateDir} (previous copy kept at ${second})`);
    expect(again.stdout).toMatch(/2 previous copies kept; once the restored state is good, remove them with `openclaw-state backup prune --pre-restore`/);
    expect(fs.existsSync(keptState)).toBe(true);
  });

  it("--backup takes the verified archive and still keeps the copies", async () => {
    const { state, archive, later } = await sceneAfterBackup();
    const result = await restoreBackup({ paths: state.paths, archivePath: archive, backup: true, confirm: yes });
    expect(result.preRestoreBackup).toMatchObject({ verified: true });
    const keptState = result.keptCopies.find((k) => k.kind === "state")!.keptAt;
    const newer = Object.keys(later)[0]!;
    expect(fs.readFileSync(path.join(keptState, path.relative(state.stateDir, newer)), "utf8")).toBe(later[newer]);
  });

  it("doctor reports the kept copies as info naming the prune command, and --fix never removes or moves them", async () => {
    const { state, archive } = await sceneAfterBackup();
    const result = await restoreBackup({ paths: state.paths, archivePath: archive, confirm: yes });
    const keptState = result.keptCopies.find((k) => k.kind === "state")!.keptAt;
    const doctor = await runDoctor({ paths: state.paths });
    const kept = doctor.findings.filter((f) => f.id === "restore.leftover");
    expect(kept.map((f) => [f.path, f.severity])).toEqual(
      expect.arrayContaining([
        [state.stateDir, "info"],
        [path.join(state.root, "ws"), "info"],
      ]),
    );
    expect(doctor.findings.filter((f) => f.id.startsWith("restore.") && f.severity !== "info")).toEqual([]);
    const stateFinding = kept.find((f) => f.path === state.stateDir)!;
    expect(stateFinding.title).toContain(keptState);
    expect(stateFinding.title).toContain("`openclaw-state backup prune --pre-restore` removes it");
    const human = await runInProcess(["doctor"], state.env);
    expect(human.stdout).toContain(`✓ Previous copy of ${state.stateDir} kept by \`backup restore\` at ${keptState}`);

    // Even with the state dir gone afterwards (no restore in progress), a kept copy is information, not a restore to undo.
    fs.rmSync(state.stateDir, { recursive: true });
    const gone = await runDoctor({ paths: state.paths });
    expect(gone.findings.find((f) => f.path === state.stateDir && f.id.startsWith("restore."))).toMatchObject({ id: "restore.leftover", severity: "info" });
    expect(gone.findings.find((f) => f.id === "restore.interrupted")).toBeUndefined();
    await runDoctor({ paths: state.paths, fix: true, migration: { backup: false, removeSources: false } });
    expect(fs.existsSync(keptState)).toBe(true);
  });
});

describe("a config restored inside the state dir (nested)", () => {
  it("is named as replaced, with its current copy inside the state dir's kept copy", async () => {
    const state = makeTempState("legacy-state");
    fs.rmSync(path.join(state.stateDir, "openclaw.json"));
    const env = { ...state.env, OPENCLAW_CONFIG_PATH: path.join(state.root, "etc", "openclaw.json") };
    const outside = resolveStatePaths({ env });
    seedState({ ...state, env, paths: outside });
    const made = await createBackup({ paths: outside });
    // Now the default layout: the live config is <stateDir>/openclaw.json, which the archive's config asset replaces.
    const liveConfig = path.join(state.stateDir, "openclaw.json");
    fs.writeFileSync(liveConfig, '{ "mine": true }\n');
    const dry = await restoreBackup({ paths: state.paths, archivePath: made.archivePath, dryRun: true });
    const planned = dry.plan.find((i) => i.kind === "config")!;
    const stateItem = dry.plan.find((i) => i.kind === "state")!;
    expect(planned).toMatchObject({ nestedIn: "payload/state", destination: liveConfig, keptAt: path.join(stateItem.keptAt!, "openclaw.json") });
    const human = await runInProcess(["backup", "restore", made.archivePath, "--dry-run"], state.env);
    expect(human.stdout).toContain(`replace (inside payload/state) ${liveConfig}`);

    const result = await restoreBackup({ paths: state.paths, archivePath: made.archivePath, confirm: yes });
    const keptConfig = result.keptCopies.find((k) => k.kind === "config")!;
    expect(keptConfig.path).toBe(liveConfig);
    expect(keptConfig.keptAt).toBe(path.join(result.keptCopies.find((k) => k.kind === "state")!.keptAt, "openclaw.json"));
    expect(fs.readFileSync(keptConfig.keptAt, "utf8")).toBe('{ "mine": true }\n');
    expect(fs.readFileSync(liveConfig, "utf8")).toMatch(/comment/);
  });
});

describe("restore moves go through the boundary check", () => {
  it("refuses a FIFO where the config goes, before a byte is written, in the dry run and the real run", async () => {
    const state = makeTempState("legacy-state");
    const env = { ...state.env, OPENCLAW_CONFIG_PATH: path.join(state.root, "etc", "openclaw.json") };
    const live = resolveStatePaths({ env });
    seedState({ ...state, env, paths: live });
    const backup = await createBackup({ paths: live });
    fs.rmSync(live.configPath);
    spawnSync("mkfifo", [live.configPath]);
    const before = snapshotTree(state.root);
    for (const args of [["--dry-run"], ["--yes"]]) {
      const r = await runInProcess(["backup", "restore", backup.archivePath, ...args, "--json"], env);
      expect(r.code, r.stdout).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "unsafe_path", message: expect.stringMatching(/Refusing to restore over .*etc\/openclaw\.json: it is a FIFO/) } });
      expect(snapshotTree(state.root)).toEqual(before);
    }
  });

  it("the swap refuses a destination whose parent became a symlink; nothing is moved on either side", () => {
    const root = makeTempDir();
    const elsewhere = makeTempDir();
    fs.mkdirSync(path.join(elsewhere, "credentials"));
    fs.writeFileSync(path.join(elsewhere, "credentials", "key"), "outside");
    fs.symlinkSync(elsewhere, path.join(root, "linked"));
    const stagingRoot = path.join(root, ".credentials.restore-20261205T000000Z-1-AbC123");
    fs.mkdirSync(stagingRoot);
    fs.writeFileSync(path.join(stagingRoot, "key"), "from the archive");
    const item: RestorePlanItem = { kind: "credentials", archivePath: "payload/credentials", type: "dir", destination: path.join(root, "linked", "credentials"), action: "replace", files: 1, bytes: 16, keep: [] };
    const staged: StagedItem[] = [{ item, staged: stagingRoot, stagingRoot, root }];
    const beforeOutside = snapshotTree(elsewhere);
    expect(() => swapIntoPlace(staged, "20261205T000000Z")).toThrow(/its parent .*linked is a symbolic link/);
    expect(snapshotTree(elsewhere)).toEqual(beforeOutside);
    expect(fs.readFileSync(path.join(stagingRoot, "key"), "utf8")).toBe("from the archive");
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
