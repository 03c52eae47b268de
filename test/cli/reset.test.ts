// `reset` through the CLI: each scope on a migrated-like tree, dry run, consent, lease, links, prompts, and the real binary.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { pathExists } from "../../src/state/private-fs.js";
import { GATEWAY_SCOPE, MAINTENANCE_SCOPE } from "../../src/state/lease.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { binPath, makeTempDir, runBin, runInProcess, snapshotTree } from "../helpers/temp-state.js";
import { holdLease, seedResetState, type SeededState } from "../reset/seed-reset-state.js";

function rows(db: string, sql: string): unknown[] {
  const handle = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return handle.prepare(sql).all();
  } finally {
    handle.close();
  }
}

/** Everything that must survive every scope: backups, the outside workspace, a link target outside. */
function survivors(s: SeededState): Record<string, unknown> {
  return {
    backups: snapshotTree(s.paths.backupDir),
    workspace: snapshotTree(path.dirname(s.outsideWorkspace)),
    elsewhere: snapshotTree(path.dirname(s.outsideTarget)),
  };
}

describe("reset --scope config", () => {
  it("removes the config file and nothing else", async () => {
    const s = seedResetState();
    const keep = survivors(s);
    const agents = snapshotTree(s.paths.agentsDir);
    const creds = snapshotTree(s.paths.credentialsDir);
    const run = await runInProcess(["reset", "--scope", "config", "--yes"], s.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/removed\s+config\s+.*openclaw\.json/);
    expect(pathExists(s.paths.configPath)).toBe(false);
    expect(snapshotTree(s.paths.agentsDir)).toEqual(agents);
    expect(snapshotTree(s.paths.credentialsDir)).toEqual(creds);
    expect(pathExists(s.paths.globalDbPath)).toBe(true);
    expect(pathExists(s.insideWorkspace)).toBe(true);
    expect(survivors(s)).toEqual(keep);
  });

  it("removes a config file that lives outside the state dir (OPENCLAW_CONFIG_PATH)", async () => {
    const s = seedResetState({ configOutside: true });
    expect(s.paths.configPath.startsWith(s.stateDir)).toBe(false);
    const agents = snapshotTree(s.paths.agentsDir);
    const run = await runInProcess(["reset", "--scope", "config", "--yes", "--json"], s.env);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.removed).toEqual([{ path: s.paths.configPath, kind: "config" }]);
    expect(pathExists(s.paths.configPath)).toBe(false);
    expect(pathExists(path.dirname(s.paths.configPath))).toBe(true);
    expect(snapshotTree(s.paths.agentsDir)).toEqual(agents);
  });
});

describe("reset --scope config+creds+sessions", () => {
  it("removes config, credentials, every agent DB with its sidecars and legacy sessions; the global DB and its other rows stay", async () => {
    const s = seedResetState();
    const keep = survivors(s);
    const cron = snapshotTree(path.join(s.stateDir, "cron"));
    const workspace = snapshotTree(s.insideWorkspace);
    expect(pathExists(`${s.opsDb}-wal`)).toBe(true);
    const run = await runInProcess(["reset", "--scope", "config+creds+sessions", "--yes", "--json"], s.env);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, command: "reset", scope: "config+creds+sessions", dryRun: false, status: "completed" });
    expect(doc.registryRowsRemoved.sort()).toEqual(["main", "ops"]);
    for (const gone of [s.paths.configPath, s.paths.credentialsDir, s.mainDb, s.opsDb, `${s.opsDb}-wal`, `${s.opsDb}-shm`, path.join(s.paths.agentsDir, "main", "sessions")]) {
      expect(pathExists(gone), gone).toBe(false);
      expect(doc.removed.map((r: { path: string }) => r.path)).toContain(gone);
    }
    expect(pathExists(s.paths.globalDbPath)).toBe(true);
    expect(rows(s.paths.globalDbPath, "SELECT agent_id FROM agent_databases")).toEqual([]);
    expect(rows(s.paths.globalDbPath, "SELECT scope FROM state_leases")).toEqual([]);
    expect(snapshotTree(path.join(s.stateDir, "cron"))).toEqual(cron);
    expect(snapshotTree(s.insideWorkspace)).toEqual(workspace);
    expect(fs.readlinkSync(s.symlinkInState)).toBe(s.outsideTarget);
    expect(survivors(s)).toEqual(keep);
    // The registry cleanup leaves nothing for doctor to flag.
    const doctor = await runInProcess(["doctor", "--json"], s.env);
    const ids = JSON.parse(doctor.stdout).findings.map((f: { id: string }) => f.id);
    expect(ids).not.toContain("registry.missing-file");
  });
});

describe("reset --scope full", () => {
  it("removes the whole state dir plus config and credentials outside it; backups, outside workspace and link targets survive", async () => {
    const s = seedResetState({ configOutside: true, credentialsOutside: true });
    expect(pathExists(path.join(s.paths.credentialsDir, "oauth.json"))).toBe(true);
    const keep = survivors(s);
    const run = await runInProcess(["reset", "--scope", "full", "--yes"], s.env);
    expect(run.code, run.stderr).toBe(0);
    expect(pathExists(s.stateDir)).toBe(false);
    expect(pathExists(s.paths.configPath)).toBe(false);
    expect(pathExists(s.paths.credentialsDir)).toBe(false);
    expect(survivors(s)).toEqual(keep);
    expect(fs.readFileSync(s.outsideTarget, "utf8")).toBe("not openclaw state\n");
    expect(run.stdout).toMatch(/removed\s+state-dir\s+/);
    expect(run.stdout).toMatch(/kept .*openclaw-backups/);
    // Global DB dir and the state dir are removed last.
    const removedLines = run.stdout.split("\n").filter((l) => l.startsWith("removed"));
    expect(removedLines.at(-1)).toContain(`state-dir`);
    expect(removedLines.at(-2)).toContain(path.join(s.stateDir, "state"));
  });

  it("keeps a backup dir the operator placed inside the state dir and removes everything else", async () => {
    const s = seedResetState({ backupInside: true });
    const backups = snapshotTree(s.paths.backupDir);
    const run = await runInProcess(["reset", "--scope", "full", "--yes", "--json"], s.env);
    expect(run.code, run.stderr).toBe(0);
    expect(fs.readdirSync(s.stateDir)).toEqual(["backups"]);
    expect(snapshotTree(s.paths.backupDir)).toEqual(backups);
    expect(JSON.parse(run.stdout).kept).toContainEqual({ path: s.paths.backupDir, reason: expect.stringContaining("never removes backups") });
  });

  it("removes a symlink inside the state dir as a link: the file it points at survives", async () => {
    const s = seedResetState();
    const dirTarget = path.join(s.root, "elsewhere", "dir");
    fs.mkdirSync(dirTarget);
    fs.writeFileSync(path.join(dirTarget, "x.txt"), "x");
    fs.symlinkSync(dirTarget, path.join(s.paths.agentsDir, "main", "linked-dir"));
    const elsewhere = snapshotTree(path.dirname(s.outsideTarget));
    const run = await runInProcess(["reset", "--scope", "full", "--yes"], s.env);
    expect(run.code, run.stderr).toBe(0);
    expect(pathExists(s.symlinkInState)).toBe(false);
    expect(snapshotTree(path.dirname(s.outsideTarget))).toEqual(elsewhere);
  });
});

describe("reset --dry-run", () => {
  for (const scope of ["config", "config+creds+sessions", "full"]) {
    it(`${scope}: lists exactly what a real run removes and leaves the tree byte-for-byte unchanged`, async () => {
      const s = seedResetState({ configOutside: scope === "config" });
      const before = snapshotTree(s.root);
      const dry = await runInProcess(["reset", "--scope", scope, "--dry-run", "--json"], s.env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(snapshotTree(s.root)).toEqual(before);
      const planned = JSON.parse(dry.stdout);
      expect(planned).toMatchObject({ scope, dryRun: true, status: "dry-run" });
      expect(planned.removed.length).toBeGreaterThan(0);
      const real = await runInProcess(["reset", "--scope", scope, "--yes", "--json"], s.env);
      expect(JSON.parse(real.stdout).removed).toEqual(planned.removed);
    });
  }

  it("prints every path with 'would remove' in human mode", async () => {
    const s = seedResetState();
    const run = await runInProcess(["reset", "--scope", "config+creds+sessions", "--dry-run"], s.env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`would remove   db-sidecar       ${s.opsDb}-wal`);
    expect(run.stdout).toContain("nothing was removed");
  });
});

describe("consent and usage", () => {
  it("refuses without --yes when it cannot prompt (exit 2 naming --yes) and leaves the tree unchanged", async () => {
    const s = seedResetState();
    const before = snapshotTree(s.root);
    const run = await runInProcess(["reset", "--scope", "full"], s.env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--yes");
    expect(run.stderr).not.toContain("--scope <");
    expect(snapshotTree(s.root)).toEqual(before);
    const json = await runInProcess(["reset", "--scope", "full", "--json"], s.env);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ version: 1, ok: false, error: { code: "consent_required" } });
    expect(snapshotTree(s.root)).toEqual(before);
  });

  it("needs --scope without a terminal, and --non-interactive means no prompt even when one is possible", async () => {
    const s = seedResetState();
    const before = snapshotTree(s.root);
    const noScope = await runInProcess(["reset", "--yes"], s.env);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toContain("--scope");
    const nonInteractive = await runInProcess(["reset", "--scope", "config", "--non-interactive"], s.env, [true, true]);
    expect(nonInteractive.code).toBe(2);
    expect(nonInteractive.stderr).toContain("--yes");
    expect(snapshotTree(s.root)).toEqual(before);
  });

  it("rejects an unknown scope with exit 2", async () => {
    const s = seedResetState();
    const run = await runInProcess(["reset", "--scope", "everything", "--yes"], s.env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("config+creds+sessions");
  });
});

describe("interactive", () => {
  it("chooses a scope, declines the backup offer, confirms, and removes", async () => {
    const s = seedResetState();
    const run = await runInProcess(["reset"], s.env, ["config+creds+sessions", false, true]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("would remove");
    expect(pathExists(s.mainDb)).toBe(false);
    expect(pathExists(s.paths.globalDbPath)).toBe(true);
  });

  it("declining the confirmation removes nothing (exit 1)", async () => {
    const s = seedResetState();
    const before = snapshotTree(s.root);
    const run = await runInProcess(["reset", "--scope", "full"], s.env, [false, false]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("Nothing was removed");
    expect(snapshotTree(s.root)).toEqual(before);
  });

  it("cancelling the scope choice removes nothing", async () => {
    const s = seedResetState();
    const before = snapshotTree(s.root);
    const run = await runInProcess(["reset"], s.env, ["not-a-scope"]);
    expect(run.code).toBe(1);
    expect(snapshotTree(s.root)).toEqual(before);
  });
});

describe("lease", () => {
  for (const scope of [GATEWAY_SCOPE, MAINTENANCE_SCOPE] as const) {
    it(`exits 75 and removes nothing while a live ${scope} lease is held`, async () => {
      const s = seedResetState();
      holdLease(s.paths, scope);
      const before = snapshotTree(s.root);
      const run = await runInProcess(["reset", "--scope", "full", "--yes", "--json"], s.env);
      expect(run.code).toBe(75);
      expect(JSON.parse(run.stdout).error.code).toBe("state_locked");
      expect(snapshotTree(s.root)).toEqual(before);
      const dry = await runInProcess(["reset", "--scope", "full", "--dry-run"], s.env);
      expect(dry.code).toBe(0);
      expect(dry.stderr).toContain("would exit 75");
    });
  }

  it("--force takes over a live lease", async () => {
    const s = seedResetState();
    holdLease(s.paths, GATEWAY_SCOPE);
    const run = await runInProcess(["reset", "--scope", "config+creds+sessions", "--yes", "--force"], s.env);
    expect(run.code, run.stderr).toBe(0);
    expect(pathExists(s.mainDb)).toBe(false);
  });
});

describe("unsafe locations", () => {
  it("refuses a state dir that is a symlink to elsewhere, removing nothing", async () => {
    const root = makeTempDir();
    const real = path.join(root, "real");
    fs.mkdirSync(real);
    fs.writeFileSync(path.join(real, "openclaw.json"), "{}");
    fs.symlinkSync(real, path.join(root, ".openclaw"));
    const before = snapshotTree(root);
    const run = await runInProcess(["reset", "--scope", "full", "--yes"], { PATH: process.env.PATH, HOME: root });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("is a symlink");
    expect(snapshotTree(root)).toEqual(before);
  });

  it("refuses when the state dir is the home dir", async () => {
    const root = makeTempDir();
    const run = await runInProcess(["reset", "--scope", "full", "--yes", "--state-dir", root], { PATH: process.env.PATH, HOME: root });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("home directory");
    expect(fs.existsSync(root)).toBe(true);
  });
});

describe("reset --backup", () => {
  it("writes a verified backup before removing anything, prints its path, and the archive verifies", async () => {
    const s = seedResetState();
    const run = await runInProcess(["reset", "--scope", "full", "--backup", "--yes", "--json"], s.env);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.backupPath).toMatch(/openclaw-backup\.tar\.(gz|zst)$/);
    expect(path.dirname(doc.backupPath)).toBe(s.paths.backupDir);
    expect(pathExists(s.stateDir)).toBe(false);
    const check = await verifyBackup(doc.backupPath);
    expect(check.ok, check.problem).toBe(true);
    // The archive holds the databases that were removed.
    expect(check.databases.map((d) => d.role).sort()).toEqual(["agent", "agent", "global"]);
    expect(pathExists(s.backupFile)).toBe(true);
  });

  it("keeps the new archive when the backup dir is inside the state dir and the scope is full", async () => {
    const s = seedResetState({ backupInside: true });
    const run = await runInProcess(["reset", "--scope", "full", "--backup", "--yes"], s.env);
    expect(run.code, run.stderr).toBe(0);
    const written = /Backup written: (\S+) \(verified\)/.exec(run.stdout)?.[1];
    expect(written).toBeDefined();
    expect(run.stdout.indexOf("Backup written:")).toBeLessThan(run.stdout.indexOf("removed "));
    expect(fs.readdirSync(s.stateDir)).toEqual(["backups"]);
    expect((await verifyBackup(written!)).ok).toBe(true);
  });

  it("interactive: accepting the backup offer writes one before removing", async () => {
    const s = seedResetState();
    const run = await runInProcess(["reset"], s.env, ["config+creds+sessions", true, true]);
    expect(run.code, run.stderr).toBe(0);
    const written = /Backup written: (\S+) \(verified\)/.exec(run.stdout)?.[1];
    expect(written && (await verifyBackup(written)).ok).toBe(true);
    expect(pathExists(s.mainDb)).toBe(false);
  });
});

/** A real archive made by `backup create` (into the default backup dir), then moved where the attack needs it. */
async function cliArchive(s: SeededState, dest: string): Promise<string> {
  const made = await runInProcess(["backup", "create", "--json"], s.env);
  expect(made.code, made.stderr).toBe(0);
  const archive = JSON.parse(made.stdout).archivePath as string;
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.renameSync(archive, dest);
  return dest;
}

describe("reset keeps archives (CLI)", () => {
  it("full --dry-run names <stateDir>/backups/ as kept with its archive; the real run keeps it and --json names it", async () => {
    const s = seedResetState();
    const archive = await cliArchive(s, path.join(s.stateDir, "backups", "2026-05-01-openclaw-backup.tar.gz"));
    const folder = path.dirname(archive);
    const bytes = fs.readFileSync(archive);

    const dry = await runInProcess(["reset", "--scope", "full", "--dry-run"], s.env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`kept\\s+${folder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} — holds an archive reset never removes`));
    expect(dry.stdout).toMatch(/archive\s+.*2026-05-01-openclaw-backup\.tar\.gz/);
    expect(dry.stdout).not.toMatch(/would remove\s+\S+\s+.*\/backups/);

    const run = await runInProcess(["reset", "--scope", "full", "--yes", "--json"], s.env);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.ok).toBe(true);
    expect(doc.kept).toContainEqual(expect.objectContaining({ path: folder, archives: [archive] }));
    expect(fs.readFileSync(archive).equals(bytes)).toBe(true);
    expect(fs.readdirSync(s.stateDir)).toEqual(["backups"]);
    expect((await verifyBackup(archive)).ok).toBe(true);
  });

  it("the consent prompt shows the kept archive folder before asking", async () => {
    const s = seedResetState();
    const archive = await cliArchive(s, path.join(s.stateDir, "misc", "KEEP.tar.zst"));
    const run = await runInProcess(["reset", "--scope", "full"], s.env, [false, false]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/keeps\s+.*misc — holds an archive reset never removes: KEEP\.tar\.zst/);
    expect(pathExists(archive)).toBe(true);
  });
});

describe("reset (binary)", () => {
  beforeAll(() => {
    expect(fs.existsSync(path.join(path.dirname(binPath), "..", "dist", "cli", "main.js")), "run `npm run build` first").toBe(true);
  });

  it("full --yes --json removes the state dir and prints one JSON document; without --yes it exits 2", async () => {
    const s = seedResetState();
    const refused = await runBin(["reset", "--scope", "full"], s.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--yes");
    expect(pathExists(s.stateDir)).toBe(true);
    const run = await runBin(["reset", "--scope", "full", "--yes", "--json"], s.env);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ version: 1, ok: true, scope: "full", status: "completed" });
    expect(doc.removed.at(-1)).toEqual({ path: s.stateDir, kind: "state-dir" });
    expect(pathExists(s.stateDir)).toBe(false);
    expect(pathExists(s.backupFile)).toBe(true);
    expect(resolveStatePaths({ env: s.env }).stateDir).toBe(s.stateDir);
  });

  it("refuses a symlinked state/ dir with exit 1 naming the link; the linked DB is unchanged byte for byte", async () => {
    const s = seedResetState();
    const stateSub = path.dirname(s.paths.globalDbPath);
    const elsewhere = path.join(s.root, "other-state");
    fs.renameSync(stateSub, elsewhere);
    fs.symlinkSync(elsewhere, stateSub);
    const linkedDb = path.join(elsewhere, path.basename(s.paths.globalDbPath));
    const before = fs.readFileSync(linkedDb);
    const tree = snapshotTree(s.root);
    for (const args of [["--yes"], ["--dry-run"], ["--yes", "--json"]]) {
      const run = await runBin(["reset", "--scope", "full", ...args], s.env);
      expect(run.code, run.stderr).toBe(1);
      if (args.includes("--json")) expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: "reset_unsafe_path" } });
      else expect(run.stderr).toContain(`${stateSub} is a symbolic link`);
      expect(fs.readFileSync(linkedDb).equals(before)).toBe(true);
      expect(snapshotTree(s.root)).toEqual(tree);
    }
  });
});
