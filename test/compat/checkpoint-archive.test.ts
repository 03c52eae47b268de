// Compaction checkpoints through both doctors: where openclaw@2026.9.6's `doctor --fix` really puts each checkpoint file, what it imports of it and what it warns, and what ours does with the same tree (docs/migration.md, "Where we differ").
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ourNode, runOurCli } from "./helpers/our-node.js";
import { describeRun, makeSandbox, openclawInstall, pinnedVersions, REPO_ROOT, runOpenClaw, type RunResult, type Sandbox } from "./helpers/openclaw.js";
import { sqliteReader } from "./helpers/sqlite-reader.js";

const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);
const reader = sqliteReader();
const node = ourNode();
const built = existsSync(join(REPO_ROOT, "dist", "cli", "main.js"));
if (install && (!node || !built)) process.stderr.write("\ncompat: SKIPPED — checkpoint-archive: no node that loads better-sqlite3, or dist/ not built\n\n");

const SESSIONS = join("agents", "main", "sessions");
const ARCHIVE = join("agents", "main", "session-sqlite-import-archive");
const AGENT_DB = join("agents", "main", "agent", "openclaw-agent.sqlite");
const TOPIC = "0d4c3b2a-1e0f-4a9b-8c7d-6e5f4a3b2c1d";

/** An indexed session with a UUID-id checkpoint (named by its entry's compactionCheckpoints) and a numbered one beside its transcript. */
const CP = {
  fixture: "fixtures/migration/compaction-checkpoints",
  uuid: "s-cp.checkpoint.0b9c7d2e-1f3a-4b5c-8d6e-7f8091a2b3c4.jsonl",
  numbered: "s-cp.checkpoint.2.jsonl",
};
/** Numbered checkpoints: of an indexed session, of a session no index names, and of a topic transcript whose id is a UUID. */
const NUM = {
  fixture: "fixtures/migration/checkpoint-numbered",
  indexed: "s-num.checkpoint.3.jsonl",
  gone: "s-gone.checkpoint.1.jsonl",
  topic: `${TOPIC}-topic-7.checkpoint.2.jsonl`,
};

/**
 * The fixture's entry names its checkpoint as OpenClaw wrote it, by absolute path under the user's home; here it is
 * pointed at the copy's own state dir, so the entry really names the file beside it (the case where "no index entry
 * names it" would be false if OpenClaw counted checkpoint references).
 */
function copyTree(fixture: string, sandbox: Sandbox): void {
  cpSync(join(REPO_ROOT, fixture), sandbox.stateDir, { recursive: true });
  const index = join(sandbox.stateDir, SESSIONS, "sessions.json");
  writeFileSync(index, readFileSync(index, "utf8").split("/home/demo/.openclaw").join(sandbox.stateDir), { mode: 0o600 });
}

const original = (fixture: string, name: string): Buffer => readFileSync(join(REPO_ROOT, fixture, SESSIONS, name));

interface Theirs {
  sandbox: Sandbox;
  result: RunResult;
  /** Each `.jsonl` the doctor moved, by its name in sessions/: the manifest's kind/reason/session and the archive file's name. */
  moves: Map<string, { kind: string; reason: string; sessionKey?: string; archive: string; archivePath: string }>;
  /** The run's issues as `code: <file name>`. */
  issues: string[];
}

interface Move {
  kind: string;
  sessionKey?: string;
  sourcePath: string;
  archivePath: string;
  artifact: { reason: string };
}

async function theirDoctor(fixture: string): Promise<Theirs> {
  const sandbox = makeSandbox("checkpoint-theirs");
  copyTree(fixture, sandbox);
  return theirDoctorOn(sandbox);
}

/** 9.6's doctor on a state already in the sandbox (a legacy tree, or what our doctor left). */
async function theirDoctorOn(sandbox: Sandbox): Promise<Theirs> {
  const result = await runOpenClaw(install!, sandbox, ["doctor", "--fix", "--non-interactive", "--yes"], { timeoutMs: 400_000 });
  // 9.6's own record of the run (session-sqlite-migration-runs/<run>.json): every move with why, every issue.
  const runsDir = join(sandbox.stateDir, "session-sqlite-migration-runs");
  const manifests = existsSync(runsDir) ? readdirSync(runsDir).filter((n) => n.endsWith(".json")) : [];
  const moves: Theirs["moves"] = new Map();
  const issues: string[] = [];
  for (const name of manifests) {
    const manifest = JSON.parse(readFileSync(join(runsDir, name), "utf8")) as { targets: Array<{ completedMoves: Move[]; issues: Array<{ code: string; message: string }> }> };
    for (const target of manifest.targets) {
      for (const m of target.completedMoves.filter((m) => m.sourcePath.endsWith(".jsonl"))) {
        moves.set(basename(m.sourcePath), { kind: m.kind, reason: m.artifact.reason, sessionKey: m.sessionKey, archive: basename(m.archivePath), archivePath: m.archivePath });
      }
      for (const issue of target.issues) issues.push(`${issue.code}: ${basename(issue.message.split(":")[0]!)}`);
    }
  }
  return { sandbox, result, moves, issues: issues.sort() };
}

function ourDoctor(fixture: string): { sandbox: Sandbox; code: number | null; out: string } {
  const sandbox = makeSandbox("checkpoint-ours");
  copyTree(fixture, sandbox);
  // With its backup (beside the state dir, in the sandbox): stdout is then the JSON report alone.
  const run = runOurCli(node!, ["doctor", "--fix", "--yes", "--json"], { HOME: sandbox.home, OPENCLAW_STATE_DIR: sandbox.stateDir, TMPDIR: sandbox.tmp });
  return { sandbox, ...run };
}

/** session key → current session id, and each session's events by id, read with the sqlite3 CLI / node:sqlite. */
function sessions(stateDir: string): { nodes: string[]; events: string[] } {
  const db = join(stateDir, AGENT_DB);
  return {
    nodes: reader.query(db, "SELECT session_key || ' ' || current_session_id AS v FROM session_nodes ORDER BY session_key").map((r) => String(r.v)),
    events: reader.query(db, "SELECT session_id || ' ' || json_extract(event_json, '$.id') AS v FROM transcript_events ORDER BY session_id, seq").map((r) => String(r.v)),
  };
}

function preCompactionFile(stateDir: string): string {
  const rows = reader.query(join(stateDir, AGENT_DB), "SELECT json_extract(entry_json, '$.compactionCheckpoints[0].preCompaction.sessionFile') AS f FROM session_nodes WHERE session_key = 'agent:main:main'");
  return String(rows[0]!.f);
}

const archived = (name: string): RegExp => new RegExp(`^archive-tier\\.${name.replace(/[.]/g, "\\.")}\\.imported-\\d+$`);

describe.skipIf(!install || !node || !built)(`compaction checkpoints: openclaw@${current.version}'s doctor --fix and ours`, () => {
  const sandboxes: Sandbox[] = [];
  let theirs: { cp: Theirs; num: Theirs };

  beforeAll(async () => {
    // The two real doctors side by side: each is a minute of a heavy Node process.
    const [cp, num] = await Promise.all([theirDoctor(CP.fixture), theirDoctor(NUM.fixture)]);
    sandboxes.push(cp.sandbox, num.sandbox);
    theirs = { cp, num };
  }, 900_000);

  afterAll(() => {
    for (const sandbox of sandboxes) sandbox.cleanup();
  });

  it("9.6, UUID and numbered checkpoint of an indexed session: imports neither, warns only of the numbered one, archives both byte for byte as unreferenced history", () => {
    const { sandbox, result, moves, issues } = theirs.cp;
    expect(result.code, describeRun(result)).toBe(0);
    // The session comes from its transcript alone: five events, none from either checkpoint.
    expect(sessions(sandbox.stateDir)).toEqual({ nodes: ["agent:main:main s-cp"], events: ["s-cp s-cp", "s-cp e1", "s-cp e2", "s-cp c1", "s-cp e3"] });
    // A UUID id is a checkpoint to 9.6 (no warning); the numbered one it reads as a transcript and defers.
    expect(issues).toEqual([`historical_transcript_deferred: ${CP.numbered}`]);
    expect(result.stdout).toContain("Archived 2 unreferenced JSONL artifact(s)");
    expect(Object.fromEntries([...moves].map(([k, m]) => [k, [m.kind, m.reason, m.sessionKey ?? null]]))).toEqual({
      "s-cp.jsonl": ["transcript", "verified-import-original", "agent:main:main"],
      // Though the entry's compactionCheckpoints names it at this very path: only transcript paths count as referenced.
      [CP.uuid]: ["unreferenced-jsonl", "unreferenced-history", null],
      [CP.numbered]: ["unreferenced-jsonl", "unreferenced-history", null],
    });
    for (const name of [CP.uuid, CP.numbered]) {
      const move = moves.get(name)!;
      expect(move.archive).toMatch(archived(name));
      expect(move.archivePath).toBe(join(sandbox.stateDir, ARCHIVE, move.archive));
      expect(readFileSync(move.archivePath)).toEqual(original(CP.fixture, name));
      expect(existsSync(join(sandbox.stateDir, SESSIONS, name)), name).toBe(false);
    }
    // The entry keeps its checkpoint metadata, still naming the path the doctor just emptied.
    const named = preCompactionFile(sandbox.stateDir);
    expect(named).toBe(join(sandbox.stateDir, SESSIONS, CP.uuid));
    expect(existsSync(named)).toBe(false);
  });

  it("9.6, numbered checkpoints: the indexed session's and the gone session's deferred and archived, imported nowhere; the topic transcript's imported as a recovered session", () => {
    const { sandbox, result, moves, issues } = theirs.num;
    expect(result.code, describeRun(result)).toBe(0);
    expect(sessions(sandbox.stateDir)).toEqual({
      nodes: ["agent:main:main s-num", `agent:main:recovered:${TOPIC} ${TOPIC}`],
      events: [`${TOPIC} ${TOPIC}`, `${TOPIC} t1`, "s-num s-num", "s-num e1", "s-num e2"],
    });
    expect(issues).toEqual([`historical_transcript_deferred: ${NUM.gone}`, `historical_transcript_deferred: ${NUM.indexed}`]);
    expect(Object.fromEntries([...moves].map(([k, m]) => [k, [m.kind, m.reason, m.sessionKey ?? null]]))).toEqual({
      "s-num.jsonl": ["transcript", "verified-import-original", "agent:main:main"],
      // The one 9.6 imports: its file-name id is a topic transcript's UUID, which its header names, and no index claims it.
      [NUM.topic]: ["transcript", "indexed-historical-primary", `agent:main:recovered:${TOPIC}`],
      [NUM.indexed]: ["unreferenced-jsonl", "unreferenced-history", null],
      [NUM.gone]: ["unreferenced-jsonl", "unreferenced-history", null],
    });
    for (const name of [NUM.indexed, NUM.gone, NUM.topic]) {
      const move = moves.get(name)!;
      if (name !== NUM.topic) expect(move.archive).toMatch(archived(name));
      expect(readFileSync(move.archivePath)).toEqual(original(NUM.fixture, name));
      expect(existsSync(join(sandbox.stateDir, SESSIONS, name)), name).toBe(false);
    }
  });

  it("ours, the UUID and numbered checkpoint of an indexed session: no checkpoint imported, no warning, both files in place byte for byte, the entry's reference still resolves", () => {
    const ours = ourDoctor(CP.fixture);
    sandboxes.push(ours.sandbox);
    expect(ours.code, ours.out).toBe(0);
    const report = JSON.parse(ours.out) as { summary: { errors: number; warnings: number }; findings: Array<{ id: string; detail?: string }> };
    expect(report.summary).toMatchObject({ errors: 0, warnings: 0 });
    expect(sessions(ours.sandbox.stateDir)).toEqual(sessions(theirs.cp.sandbox.stateDir));
    for (const name of [CP.uuid, CP.numbered]) expect(readFileSync(join(ours.sandbox.stateDir, SESSIONS, name))).toEqual(original(CP.fixture, name));
    expect(existsSync(join(ours.sandbox.stateDir, ARCHIVE))).toBe(false);
    expect(existsSync(preCompactionFile(ours.sandbox.stateDir))).toBe(true);
    // Listed as OpenClaw's own files, kept as they are.
    const own = report.findings.find((f) => f.id === "legacy.openclaw-own")!;
    expect(own.detail!.split("\n").map((l) => l.split(" (file)")[0]).sort()).toEqual([CP.numbered, CP.uuid].map((n) => join(SESSIONS, n)).sort());
  }, 300_000);

  /** What our doctor left of checkpoint-numbered, for 9.6's doctor to run on next. */
  let oursNum: Sandbox | undefined;

  it("ours, numbered checkpoints: none imported (the topic one neither: 9.6's recovered session is not made), each file in place byte for byte, no warning", () => {
    const ours = ourDoctor(NUM.fixture);
    sandboxes.push(ours.sandbox);
    oursNum = ours.sandbox;
    expect(ours.code, ours.out).toBe(0);
    const report = JSON.parse(ours.out) as { summary: { errors: number; warnings: number } };
    expect(report.summary).toMatchObject({ errors: 0, warnings: 0 });
    expect(sessions(ours.sandbox.stateDir)).toEqual({ nodes: ["agent:main:main s-num"], events: ["s-num s-num", "s-num e1", "s-num e2"] });
    for (const name of [NUM.indexed, NUM.gone, NUM.topic]) expect(readFileSync(join(ours.sandbox.stateDir, SESSIONS, name))).toEqual(original(NUM.fixture, name));
    expect(existsSync(join(ours.sandbox.stateDir, ARCHIVE))).toBe(false);
  }, 300_000);

  it("9.6's doctor run after ours: finds each checkpoint where ours left it and does with it what it does on the legacy tree (nothing of 9.6's import is lost by leaving the files)", async () => {
    expect(oursNum, "the previous test ran our doctor").toBeDefined();
    const { sandbox, result, moves, issues } = await theirDoctorOn(oursNum!);
    expect(result.code, describeRun(result)).toBe(0);
    expect(sessions(sandbox.stateDir)).toEqual(sessions(theirs.num.sandbox.stateDir));
    expect(issues).toEqual(theirs.num.issues);
    expect(Object.fromEntries([...moves].map(([k, m]) => [k, [m.kind, m.reason, m.sessionKey ?? null]]))).toEqual({
      [NUM.topic]: ["transcript", "indexed-historical-primary", `agent:main:recovered:${TOPIC}`],
      [NUM.indexed]: ["unreferenced-jsonl", "unreferenced-history", null],
      [NUM.gone]: ["unreferenced-jsonl", "unreferenced-history", null],
    });
    for (const [name, move] of moves) expect(readFileSync(move.archivePath), name).toEqual(original(NUM.fixture, name));
  }, 600_000);
});
