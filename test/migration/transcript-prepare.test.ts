// Transcripts parsed ahead (inline or on the worker thread) import exactly like streamed ones: rows, outcomes, errors.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { preparedEvent, prepareTranscript, type PreparedTranscript } from "../../src/migration/importers/transcript-parse.js";
import { PREPARE_MAX_FILE_BYTES, TranscriptPrepareAhead, TranscriptPreparer, type TranscriptPrepareMode } from "../../src/migration/importers/transcript-prepare.js";
import type { MigrationRunResult, PlannedSource } from "../../src/migration/types.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { legacyCorpusState } from "../helpers/crash.js";
import { agentDbFile, dumpState, migrate, rows } from "../helpers/migration.js";
import { makeTempDir, makeTempState, repoRoot, runBin } from "../helpers/temp-state.js";

const FIXTURES_WITH_TRANSCRIPTS = ["simple", "transcript-versions", "corrupt-middle-line", "truncated-last-line", "missing-header", "orphan-transcript", "index-header-mismatch", "old-layout"];

/** What a run says about each source, minus what differs between two runs (ids, times, the temp root wherever TMPDIR is). */
function outcomes(run: MigrationRunResult, root: string): unknown[] {
  const untemp = (text: string): string => text.replaceAll(root, "<tmp>");
  return run.sources
    .map((o) => ({ kind: o.kind, path: o.relativePath, status: o.status, reason: typeof o.reason === "string" ? untemp(o.reason) : o.reason, rows: o.rows, warnings: o.warnings.map(untemp), retired: o.retired }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** A fresh state dir with an empty sessions dir for agent main. */
function emptySessionsDir(): { root: string; stateDir: string; dir: string } {
  const root = makeTempDir();
  const stateDir = path.join(root, ".openclaw");
  const dir = path.join(stateDir, "agents", "main", "sessions");
  fs.mkdirSync(dir, { recursive: true });
  return { root, stateDir, dir };
}

async function runWith(mode: TranscriptPrepareMode, setup: () => { stateDir: string }): Promise<{ dump: unknown; outcomes: unknown[]; status: string }> {
  const { stateDir } = setup();
  const paths = resolveStatePaths({ env: { HOME: path.dirname(stateDir), OPENCLAW_STATE_DIR: stateDir } });
  const { run } = await migrate(paths, { prepareTranscripts: mode });
  // The agent DBs and the ledger: what transcripts write (control-plane rows carry temp paths and move times).
  const raw = Object.entries(dumpState(paths)).map(([db, tables]) => [db, db.startsWith("agents/") ? tables : { migration_sources: tables.migration_sources }]);
  // v1 ids hash the file's absolute path (as OpenClaw's do): each run's temp dir gives its own 16-hex prefix.
  const dump = JSON.parse(JSON.stringify(raw).replace(/\b[0-9a-f]{16}-(?=[0-9a-z]+\b)/g, "<v1>-")) as unknown;
  return { dump, outcomes: outcomes(run, path.dirname(stateDir)), status: run.status };
}

/** A fixture copy whose files all carry one mtime: a recovered (unindexed) transcript's session is dated by it. */
function pinnedState(fixture: string): { stateDir: string } {
  const state = makeTempState(fixture);
  const at = new Date(Date.UTC(2026, 0, 5));
  for (const entry of fs.readdirSync(state.stateDir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) fs.utimesSync(path.join(entry.parentPath, entry.name), at, at);
  }
  return state;
}

describe("transcripts parsed ahead vs streamed", () => {
  for (const fixture of FIXTURES_WITH_TRANSCRIPTS) {
    it(`${fixture}: same rows, outcomes, warnings and errors`, async () => {
      const streamed = await runWith("off", () => pinnedState(`migration/${fixture}`));
      const prepared = await runWith("inline", () => pinnedState(`migration/${fixture}`));
      expect(prepared).toEqual(streamed);
    });
  }

  it("a generated corpus with truncated and corrupt transcripts: same result", async () => {
    const corpus = { agents: ["main", "ops"], sessionsPerAgent: 25, linesPerSession: 12, meanLineBytes: 300, seed: 7, extras: ["truncated", "corrupt"] as Array<"truncated" | "corrupt">, mtime: Date.UTC(2026, 0, 5) };
    const streamed = await runWith("off", () => legacyCorpusState(corpus, "ocs-prep-"));
    const prepared = await runWith("inline", () => legacyCorpusState(corpus, "ocs-prep-"));
    expect(streamed.outcomes.some((o) => (o as { status: string }).status === "failed")).toBe(true);
    expect(prepared).toEqual(streamed);
  });

  it("a last line without a newline, CRLF endings and blank lines: same rows", async () => {
    const make = (): { stateDir: string } => {
      const { stateDir, dir } = emptySessionsDir();
      const header = JSON.stringify({ type: "session", version: 3, id: "crlf", timestamp: "2026-05-06T00:00:00.000Z" });
      const m = (id: string, parentId: string | null): string => JSON.stringify({ type: "message", id, parentId, message: { role: "user", content: `é ${id}` } });
      fs.writeFileSync(path.join(dir, "crlf.jsonl"), `${header}\r\n${m("a", null)}\r\n\r\n  \n${m("b", "a")}\n${m("c", "b")}`);
      const v1 = [JSON.stringify({ type: "session", id: "old" }), JSON.stringify({ type: "message", message: { role: "hookMessage" } })];
      fs.writeFileSync(path.join(dir, "old.jsonl"), v1.join("\n"));
      // created_at falls back to the file's mtime: the same in both runs.
      for (const name of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, name), new Date(Date.UTC(2026, 0, 5)), new Date(Date.UTC(2026, 0, 5)));
      return { stateDir };
    };
    const streamed = await runWith("off", make);
    const prepared = await runWith("inline", make);
    expect(JSON.stringify(streamed.dump)).toContain("é c");
    expect(prepared).toEqual(streamed);
    // Prepared lines are bound as bytes: they must still be stored as TEXT (json_valid and readers expect it).
    const { stateDir } = make();
    const paths = resolveStatePaths({ env: { HOME: path.dirname(stateDir), OPENCLAW_STATE_DIR: stateDir } });
    await migrate(paths, { prepareTranscripts: "inline" });
    expect(rows(agentDbFile(paths), "SELECT typeof(event_json) AS t, count(*) AS n FROM transcript_events GROUP BY 1")).toEqual([{ t: "text", n: 6 }]);
  });

  it("duplicate event ids and a re-used idempotency key warn the same way", async () => {
    const make = (): { stateDir: string } => {
      const { stateDir, dir } = emptySessionsDir();
      const lines = [
        { type: "session", version: 3, id: "dup", timestamp: "2026-05-06T00:00:00.000Z" },
        { type: "message", id: "a", parentId: null, message: { role: "user", idempotencyKey: "k1" } },
        { type: "message", id: "a", parentId: "a", message: { role: "user" } },
        { type: "message", id: "b", parentId: "a", message: { role: "user", idempotencyKey: "k1" } },
      ];
      fs.writeFileSync(path.join(dir, "dup.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
      // Unindexed: its recovered session is dated by the file's mtime, the same in both runs.
      fs.utimesSync(path.join(dir, "dup.jsonl"), new Date(Date.UTC(2026, 0, 5)), new Date(Date.UTC(2026, 0, 5)));
      return { stateDir };
    };
    const streamed = await runWith("off", make);
    const prepared = await runWith("inline", make);
    expect(JSON.stringify(streamed.outcomes)).toMatch(/dup\.jsonl:3: duplicate event id/);
    expect(JSON.stringify(streamed.outcomes)).toMatch(/dup\.jsonl:4: idempotencyKey already used/);
    expect(prepared).toEqual(streamed);
  });
});

describe("prepareTranscript", () => {
  it("reports a missing file as read_failed (the import then streams it and reports the real error)", () => {
    const result = prepareTranscript(path.join(makeTempDir(), "gone.jsonl"));
    expect(result.error?.code).toBe("read_failed");
  });

  it("carries the first bad line's error, after the header", () => {
    const { stateDir } = makeTempState("migration/corrupt-middle-line");
    const dir = path.join(stateDir, "agents", "main", "sessions");
    const results = fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl")).map((n) => prepareTranscript(path.join(dir, n)));
    const bad = results.find((r) => r.error !== null)!;
    expect(bad.error).toMatchObject({ code: "invalid_transcript", message: expect.stringMatching(/:\d+: invalid JSON/) });
    expect(bad.header).not.toBeNull();
  });

  it("the real worker thread returns what the inline parse returns", async () => {
    const compiled = path.join(repoRoot, "dist", "migration", "importers", "transcript-prepare.js");
    expect(fs.existsSync(compiled), "needs `npm run build`").toBe(true);
    const mod = (await import(pathToFileURL(compiled).href)) as typeof import("../../src/migration/importers/transcript-prepare.js");
    const { stateDir } = makeTempState("migration/transcript-versions");
    const dir = path.join(stateDir, "agents", "main", "sessions");
    const files = fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl")).sort().map((n) => path.join(dir, n));
    const preparer = new mod.TranscriptPreparer("worker");
    try {
      preparer.warm();
      // Up to 20 s: a loaded CI box can be slow to start a thread.
      for (let i = 0; i < 2000 && !preparer.offThread; i += 1) await new Promise((r) => setTimeout(r, 10));
      expect(preparer.offThread).toBe(true);
      const fromWorker = await Promise.all(files.map((f) => preparer.prepare(f)));
      const inline = files.map((f) => prepareTranscript(f));
      expect(fromWorker).toEqual(inline);
      // The bytes arrived (transferred, not lost): every unchanged line decodes to what the inline pass read.
      const lines = (p: PreparedTranscript | null): string[] =>
        p!.events.lineNo.map((_, i) => {
          const json = preparedEvent(p!.events, Buffer.from(p!.bytes!), i).json;
          return typeof json === "string" ? json : Buffer.from(json).toString("utf8");
        });
      expect(fromWorker.map(lines)).toEqual(inline.map(lines));
      expect(fromWorker.flatMap(lines).length).toBeGreaterThan(5);
    } finally {
      await preparer.close();
    }
  });
});

describe("TranscriptPrepareAhead", () => {
  const planned = (file: string, sizeBytes: number, extra: Partial<PlannedSource> = {}): PlannedSource =>
    ({ kind: "transcript", action: "import", path: file, sizeBytes, ...extra }) as PlannedSource;

  it("prepares small transcripts to import; large ones, other kinds and already-imported sources stream", async () => {
    const { stateDir } = makeTempState("migration/simple");
    const file = fs.readdirSync(path.join(stateDir, "agents", "main", "sessions")).find((n) => n.endsWith(".jsonl"))!;
    const small = path.join(stateDir, "agents", "main", "sessions", file);
    const sources = [
      planned(small, 100),
      planned(small, PREPARE_MAX_FILE_BYTES + 1),
      planned(small, 100, { kind: "sessions-index" }),
      planned(small, 100, { action: "already-imported" }),
      planned(small, 100, { action: "changed-since-import" }),
    ];
    const preparer = new TranscriptPreparer("inline");
    const ahead = new TranscriptPrepareAhead(sources, preparer);
    const taken: Array<PreparedTranscript | null> = [];
    for (let i = 0; i < sources.length; i += 1) taken.push(await ahead.take(i));
    expect(taken.map((t) => t !== null)).toEqual([true, false, false, false, true]);
    const off = new TranscriptPrepareAhead(sources, new TranscriptPreparer("off"));
    expect(await off.take(0)).toBeNull();
    await preparer.close();
  });
});

describe("first import (batched rows) vs re-import (row by row)", () => {
  it("a 100-line transcript with duplicate ids and re-used keys: same events, identities and warnings", async () => {
    const lines = [JSON.stringify({ type: "session", version: 3, id: "big", timestamp: "2026-05-06T00:00:00.000Z" })];
    for (let i = 1; i <= 100; i += 1) {
      const id = i % 17 === 0 ? `e${i - 1}` : `e${i}`; // every 17th line repeats the previous id
      const key = i % 5 === 0 ? `k${i % 15}` : null; // keys k0, k5, k10 come back
      lines.push(JSON.stringify({ type: "message", id, parentId: i === 1 ? null : `e${i - 1}`, timestamp: new Date(Date.UTC(2026, 4, 6, 0, 0, i)).toISOString(), message: { role: "user", content: `line ${i}`, ...(key ? { idempotencyKey: key } : {}) } }));
    }
    const content = `${lines.join("\n")}\n`;
    const setup = (): { paths: ReturnType<typeof resolveStatePaths>; file: string } => {
      const { root, stateDir, dir } = emptySessionsDir();
      return { paths: resolveStatePaths({ env: { HOME: root, OPENCLAW_STATE_DIR: stateDir } }), file: path.join(dir, "big.jsonl") };
    };
    const snapshot = (paths: ReturnType<typeof resolveStatePaths>): unknown => {
      const dump = dumpState(paths)["agents/main"]!;
      return { events: dump.transcript_events, identities: dump.transcript_event_identities };
    };

    const fresh = setup();
    fs.writeFileSync(fresh.file, content);
    const first = await migrate(fresh.paths);
    const firstWarnings = first.run.sources[0]!.warnings.map((w) => w.replace(fresh.file, "<file>"));

    // The same content as a changed source: the session already has events, so rows are upserted one at a time.
    const again = setup();
    fs.writeFileSync(again.file, `${lines.slice(0, 3).join("\n")}\n`);
    await migrate(again.paths);
    fs.mkdirSync(path.dirname(again.file), { recursive: true }); // the run removed the emptied sessions dir
    fs.writeFileSync(again.file, content);
    const second = await migrate(again.paths);
    expect(second.run.sources[0]).toMatchObject({ action: "changed-since-import" });
    const secondWarnings = second.run.sources[0]!.warnings.map((w) => w.replace(again.file, "<file>"));

    expect(firstWarnings.some((w) => /duplicate event id/.test(w))).toBe(true);
    expect(firstWarnings.some((w) => /idempotencyKey already used/.test(w))).toBe(true);
    expect(secondWarnings).toEqual(firstWarnings);
    expect(snapshot(again.paths)).toEqual(snapshot(fresh.paths));
    expect((snapshot(fresh.paths) as { events: unknown[] }).events).toHaveLength(101);
  });
});

describe("worker threads under a host started with heap flags", () => {
  // Node refuses --max-old-space-size in a worker's execArgv (the constructor throws): the workers start without it.
  it("doctor --fix (backup worker and transcript worker) completes under node --max-old-space-size", async () => {
    const state = makeTempState("migration/simple");
    const run = await runBin(["doctor", "--fix", "--yes", "--json"], state.env, { nodeFlags: ["--max-old-space-size=512"] });
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { migration?: { run?: { status: string; backupPath: string | null; totals: { imported: number } } } };
    expect(result.migration?.run).toMatchObject({ status: "completed", backupPath: expect.any(String) });
    expect(result.migration?.run?.totals.imported).toBeGreaterThan(0);
  });
});
