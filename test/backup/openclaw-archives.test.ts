// Archive interchange with the real OpenClaw: its `backup create` archives verify and restore here (tampering refused),
// our manifest carries root-prefixed asset paths, and states in OpenClaw's formats round-trip whatever their user_version.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/create-backup.js";
import { readArchiveManifest } from "../../src/backup/read-archive.js";
import { restoreBackup } from "../../src/backup/restore-backup.js";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { manifestOf, readRawEntries, withManifest, writeRawArchive, type RawEntry } from "../helpers/tar-tools.js";
import { makeTempDir, makeTempState, repoRoot, runInProcess } from "../helpers/temp-state.js";

const FIXTURE = path.join(repoRoot, "fixtures", "backup", "openclaw-2026.9.6", "tiny-state.tar.gz");
const ROOT = "2026-12-04T16-32-32.171+00-00-openclaw-backup";
const STATE = `${ROOT}/payload/posix/tmp/ocfx/state`;
const yes = async (): Promise<boolean> => true;

function userVersion(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma("user_version", { simple: true }) as number;
  } finally {
    db.close();
  }
}

/** The fixture's entries, changed by `edit`, written to a new .tar.gz (OpenClaw's order kept: manifest last). */
function repacked(edit: (entries: RawEntry[]) => RawEntry[]): string {
  const file = path.join(makeTempDir("ocs-oc-archive-"), "edited.tar.gz");
  writeRawArchive(file, edit(readRawEntries(FIXTURE)));
  return file;
}

async function refused(archive: string, pattern: RegExp): Promise<void> {
  const check = await verifyBackup(archive);
  expect(check.ok, check.problem).toBe(false);
  expect(check.problem).toMatch(pattern);
  const target = path.join(makeTempDir("ocs-oc-target-"), "t");
  await expect(restoreBackup({ paths: makeTempState().paths, archivePath: archive, target, confirm: yes })).rejects.toThrow(pattern);
  expect(fs.existsSync(target)).toBe(false);
}

describe("archives made by `openclaw backup create` (2026.9.6)", () => {
  it("verify accepts the fixture: every entry hashed, the global database integrity-checked", async () => {
    const check = await verifyBackup(FIXTURE);
    expect(check.ok, check.problem).toBe(true);
    expect(check.manifest).toMatchObject({ archiveRoot: ROOT, tool: { name: "openclaw", version: "2026.9.6" }, paths: { stateDir: "/tmp/ocfx/state" } });
    expect(check.manifest!.assets).toEqual([{ kind: "state", sourcePath: "/tmp/ocfx/state", archivePath: "payload/state", type: "dir", excluded: [] }]);
    expect(check.files).toBe(6);
    expect(check.databases).toEqual([expect.objectContaining({ archivePath: "payload/state/state/openclaw.sqlite", role: "global", integrity: "ok", problems: [] })]);

    const cli = await runInProcess(["backup", "verify", FIXTURE], makeTempState().env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("payload/state/state/openclaw.sqlite: integrity ok");
  });

  it("restore --target lays the state out as our own archives do, private modes, database at user_version 18", async () => {
    const state = makeTempState();
    const target = path.join(makeTempDir("ocs-oc-target-"), "restored");
    const result = await restoreBackup({ paths: state.paths, archivePath: FIXTURE, target, confirm: yes });
    expect(result.status).toBe("restored");
    expect(result.backupCreatedAt).toBe("2026-12-04T16:32:32.171Z");
    expect(fs.readFileSync(path.join(target, "state", "notes", "hello.txt"), "utf8")).toBe("hello from a fixture\n");
    expect(fs.statSync(path.join(target, "state", "notes", "hello.txt")).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(target, "state", "openclaw.json"))).toBe(true);
    expect(userVersion(path.join(target, "state", "state", "openclaw.sqlite"))).toBe(18);
    expect(result.databases.map((d) => d.archivePath)).toEqual(["payload/state/state/openclaw.sqlite"]);
    // The manifest is read, not extracted.
    expect(fs.readdirSync(target)).toEqual(["state"]);
  });

  it("restore in place replaces the live state dir with the archive's state (placed by this host's settings)", async () => {
    const state = makeTempState("legacy-state");
    const result = await restoreBackup({ paths: state.paths, archivePath: FIXTURE, confirm: yes });
    expect(result.status).toBe("restored");
    expect(result.plan).toEqual([expect.objectContaining({ kind: "state", destination: fs.realpathSync(state.stateDir) })]);
    expect(fs.readFileSync(path.join(state.stateDir, "notes", "hello.txt"), "utf8")).toBe("hello from a fixture\n");
    expect(fs.existsSync(path.join(state.stateDir, "cron"))).toBe(false);
    expect(userVersion(path.join(state.stateDir, "state", "openclaw.sqlite"))).toBe(18);
  });

  it("a flipped byte is refused (gzip CRC or inflate error), and restore writes nothing", async () => {
    const file = path.join(makeTempDir("ocs-oc-archive-"), "flipped.tar.gz");
    const bytes = fs.readFileSync(FIXTURE);
    const at = Math.floor(bytes.length / 2);
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at);
    fs.writeFileSync(file, bytes);
    await refused(file, /truncated or corrupt/);
  });

  it("an entry escaping the archive or lying outside every asset is refused", async () => {
    await refused(
      repacked((e) => [{ path: `${STATE}/../../../../../../etc/evil`, type: "File", data: Buffer.from("x") }, ...e]),
      /path traversal/,
    );
    await refused(repacked((e) => [{ path: `${ROOT}/payload/posix/tmp/elsewhere/x`, type: "File", data: Buffer.from("x") }, ...e]), /outside every asset/);
    await refused(repacked((e) => [{ path: `/${STATE}/abs`, type: "File", data: Buffer.from("x") }, ...e]), /absolute path/);
    await refused(repacked((e) => [{ path: `${STATE}/notes/link`, type: "Link", data: Buffer.alloc(0), linkpath: `${STATE}/openclaw.json` }, ...e]), /hard link/);
  });

  it("a manifest asset that does not sit where its source path says, or a kind we do not restore, is refused", async () => {
    const moved = repacked((e) => {
      const m = manifestOf(e) as unknown as { assets: Array<{ archivePath: string }> };
      m.assets[0]!.archivePath = `${ROOT}/payload/posix/tmp`;
      return withManifest(e, m);
    });
    await refused(moved, /assets\[0\]\.archivePath .* is not .*\/payload\/posix\/tmp\/ocfx\/state/);
    const agent = repacked((e) => {
      const m = manifestOf(e) as unknown as { assets: Array<Record<string, string>> };
      m.assets.push({ kind: "agent", sourcePath: "/tmp/ocfx/agent", archivePath: `${ROOT}/payload/posix/tmp/ocfx/agent` });
      return withManifest(e, m);
    });
    await refused(agent, /"agent" asset .* which this tool does not restore/);
  });

  it("a corrupt database inside is refused by integrity_check; a link leaving the state is left out, not followed", async () => {
    const corrupt = repacked((e) =>
      e.map((x) => {
        if (!x.path.endsWith("/state/openclaw.sqlite")) return x;
        const data = Buffer.from(x.data);
        data.fill(0x5a, 4096 + 100, data.length - 100);
        return { ...x, data };
      }),
    );
    await refused(corrupt, /SQLite file payload\/state\/state\/openclaw\.sqlite fails its check/);

    const linked = repacked((e) => [...e.slice(0, 2), { path: `${STATE}/notes/passwd`, type: "SymbolicLink", data: Buffer.alloc(0), linkpath: "/etc/passwd" }, ...e.slice(2)]);
    const check = await verifyBackup(linked);
    expect(check.ok, check.problem).toBe(true);
    expect(check.manifest!.skipped).toEqual([expect.objectContaining({ kind: "symlink", path: "payload/state/notes/passwd" })]);
    const target = path.join(makeTempDir("ocs-oc-target-"), "t");
    await restoreBackup({ paths: makeTempState().paths, archivePath: linked, target, confirm: yes });
    expect(fs.readdirSync(path.join(target, "state", "notes"))).toEqual(["hello.txt"]);
  });

  it("an archive that is neither ours nor OpenClaw's names both readings", async () => {
    const file = repacked((e) => e.filter((x) => !x.path.endsWith("/manifest.json")));
    await refused(file, /holds no .*manifest\.json \(read as an archive of `openclaw backup create`, because the first entry is ".*", not <root>\/manifest\.json\)/);
  });
});

describe("our archives for `openclaw backup verify`", () => {
  it("store each asset path under the archive root; archives with root-relative asset paths (earlier versions) still verify", async () => {
    const state = makeTempState("legacy-state");
    const backup = await createBackup({ paths: state.paths, output: path.join(makeTempDir("ocs-out-"), "a.tar.gz") });
    const entries = readRawEntries(backup.archivePath);
    const raw = manifestOf(entries) as unknown as { assets: Array<{ archivePath: string }>; archiveRoot: string };
    expect(raw.assets.map((a) => a.archivePath)).toEqual([`${raw.archiveRoot}/payload/state`]);
    expect((await readArchiveManifest(backup.archivePath)).assets[0]!.archivePath).toBe("payload/state");

    const old = path.join(makeTempDir("ocs-out-"), "old.tar.gz");
    writeRawArchive(old, withManifest(entries, { ...raw, assets: raw.assets.map((a) => ({ ...a, archivePath: "payload/state" })) }));
    expect((await verifyBackup(old)).ok).toBe(true);

    const elsewhere = path.join(makeTempDir("ocs-out-"), "other-root.tar.gz");
    writeRawArchive(elsewhere, withManifest(entries, { ...raw, assets: raw.assets.map((a) => ({ ...a, archivePath: `other-root/payload/state` })) }));
    expect((await verifyBackup(elsewhere)).problem).toMatch(/assets\[0\]\.archivePath "other-root\/payload\/state" is not a safe path under payload\//);
  });
});

/** A state in OpenClaw 2026.9.6's format: its global DB from the fixture, an agent DB and a v99 DB made by SQL. */
function openclawFormatState(): ReturnType<typeof makeTempState> {
  const state = makeTempState();
  const global = readRawEntries(FIXTURE).find((e) => e.path.endsWith("/state/openclaw.sqlite"))!;
  fs.mkdirSync(path.join(state.stateDir, "state"), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(state.stateDir, "state", "openclaw.sqlite"), global.data, { mode: 0o600 });
  const agentDir = path.join(state.stateDir, "agents", "main", "agent");
  fs.mkdirSync(agentDir, { recursive: true });
  const agent = new Database(path.join(agentDir, "openclaw-agent.sqlite"));
  agent.exec(`
    PRAGMA journal_mode = WAL;
    CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, node_json TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
    CREATE TABLE transcript_events (session_key TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, PRIMARY KEY (session_key, seq)) WITHOUT ROWID;
    CREATE VIRTUAL TABLE session_transcript_fts USING fts5(body);
    INSERT INTO session_nodes VALUES ('agent:main:main', '{}', 1), ('agent:main:ops', '{}', 2);
    INSERT INTO transcript_events VALUES ('agent:main:main', 1, '{"type":"message"}'), ('agent:main:main', 2, NULL), ('agent:main:ops', 1, '{}');
    INSERT INTO session_transcript_fts VALUES ('hello'), ('world');
    PRAGMA user_version = 23;
  `);
  agent.close();
  const future = new Database(path.join(state.stateDir, "state", "openclaw-future.sqlite"));
  future.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3); PRAGMA user_version = 99;");
  future.close();
  return state;
}

describe("states in OpenClaw's formats round-trip through create, verify and restore", () => {
  it("global v18 + agent v23 + an unknown v99: verified means restorable, rows and versions intact", async () => {
    const state = openclawFormatState();
    const backup = await createBackup({ paths: state.paths, output: path.join(makeTempDir("ocs-out-"), "a.tar.gz") });
    expect(backup.verified).toBe(true);
    const byPath = new Map(backup.manifest.databases.map((d) => [d.archivePath, d]));
    expect(byPath.get("payload/state/state/openclaw.sqlite")).toMatchObject({ role: "global", schemaVersion: 18 });
    expect(byPath.get("payload/state/agents/main/agent/openclaw-agent.sqlite")).toMatchObject({ role: "agent", schemaVersion: 23, rowCounts: expect.objectContaining({ session_nodes: 2, transcript_events: 3 }) });
    expect(byPath.get("payload/state/state/openclaw-future.sqlite")).toMatchObject({ role: "other", schemaVersion: 99, rowCounts: { t: 3 } });

    const check = await verifyBackup(backup.archivePath);
    expect(check.ok, check.problem).toBe(true);
    expect(check.databases.every((d) => d.integrity === "ok" && d.rowCountsMatch)).toBe(true);

    const target = path.join(makeTempDir("ocs-oc-target-"), "restored");
    const restored = await restoreBackup({ paths: makeTempState().paths, archivePath: backup.archivePath, target, confirm: yes });
    expect(restored.status).toBe("restored");
    expect(userVersion(path.join(target, "state", "state", "openclaw.sqlite"))).toBe(18);
    expect(userVersion(path.join(target, "state", "agents", "main", "agent", "openclaw-agent.sqlite"))).toBe(23);
    expect(userVersion(path.join(target, "state", "state", "openclaw-future.sqlite"))).toBe(99);
    const agent = new Database(path.join(target, "state", "agents", "main", "agent", "openclaw-agent.sqlite"), { readonly: true });
    expect(agent.prepare("SELECT count(*) AS n FROM session_transcript_fts WHERE session_transcript_fts MATCH 'hello'").get()).toEqual({ n: 1 });
    agent.close();

    // The CLI, in place, agrees: verify exit 0.
    const cli = await runInProcess(["backup", "verify", backup.archivePath], state.env);
    expect(cli.code, cli.stderr).toBe(0);
  });
});
