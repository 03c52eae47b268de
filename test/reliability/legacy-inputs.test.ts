// Malformed legacy inputs (SPEC §11) and a seeded fuzz pass over JSON/JSONL: clear message, source kept, others imported, no crash.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { prng } from "../../bench/legacy-corpus.mjs";
import { resolveStatePaths } from "../../src/state/paths.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";
import { fixturesDir, makeTempState, runInProcess } from "../helpers/temp-state.js";

const STACK = /\n\s+at .+:\d+:\d+|Unexpected failure|internal_error/;
const header = (id: string, extra = ""): string => `{"type":"session","version":3,"id":"${id}"${extra}}`;
const msg = (id: string, text: string, parent: string | null = null): string =>
  JSON.stringify({ type: "message", id, parentId: parent, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: text } });
const good = (id: string, n = 3): string => [header(id), ...Array.from({ length: n }, (_, i) => msg(`${id}-${i}`, `hello ${i}`, i ? `${id}-${i - 1}` : null))].join("\n") + "\n";

type Expect = "kept" | "imported" | "either";
// [name, file name, content, expectation]: transcripts go to agents/main/sessions, indexes to their own agent.
const TRANSCRIPTS: Array<[string, string | Buffer, Expect]> = [
  ["empty file", "", "kept"],
  ["only blank lines", "\n\n  \n", "kept"],
  ["invalid JSON in a middle line", `${header("t-mid")}\n{not json}\n${msg("a", "x")}\n`, "kept"],
  ["invalid JSON in the first line", `{"type":"session",\n${msg("a", "x")}\n`, "kept"],
  // OpenClaw's readers take a header-less transcript as version 1 (issue 24): imported, a header added.
  ["missing header", `${msg("a", "x")}\n${msg("b", "y", "a")}\n`, "imported"],
  ["header is an array", `[1,2,3]\n${msg("a", "x")}\n`, "kept"],
  ["a line that is a JSON string", `${header("t-str")}\n"just a string"\n`, "kept"],
  ["a line that is a number", `${header("t-num")}\n42\n`, "kept"],
  ["truncated last line", `${header("t-trunc")}\n${msg("a", "x")}\n{"type":"message","id":"b","par`, "imported"],
  ["invalid UTF-8 in a middle line", Buffer.concat([Buffer.from(`${header("t-utf")}\n{"type":"message","id":"a","message":{"role":"user","content":"`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(`"}}\n${msg("b", "y")}\n`)]), "kept"],
  ["unknown (newer) version", `{"type":"session","version":99,"id":"t-v99"}\n${msg("a", "x")}\n`, "kept"],
  ["header id of the wrong type", `{"type":"session","version":3,"id":12345}\n${msg("a", "x")}\n`, "either"],
  ["JSON5 comments in a transcript", `${header("t-j5")}\n// a comment\n${msg("a", "x")}\n`, "either"],
  ["trailing comma in a line", `${header("t-comma")}\n{"type":"message","id":"a","message":{"role":"user","content":"x"},}\n`, "either"],
  ["huge line (4 MiB)", `${header("t-huge")}\n${msg("a", "x".repeat(4 * 1024 * 1024))}\n`, "either"],
  ["NUL bytes inside a line", `${header("t-nul")}\n${msg("a", "x")}\u0000\u0000\n`, "either"],
  ["byte-order mark", `\ufeff${good("t-bom")}`, "either"],
  ["CRLF line endings", good("t-crlf").replace(/\n/g, "\r\n"), "either"],
  ["duplicate event ids", `${header("t-dup")}\n${msg("a", "x")}\n${msg("a", "y")}\n`, "either"],
  ["wrong types in a message", `${header("t-types")}\n{"type":"message","id":7,"parentId":{},"message":"not an object"}\n`, "either"],
];
const INDEXES: Array<[string, string, Expect]> = [
  ["index: invalid JSON", `{"agent:idx:main": {"sessionId": "s1",`, "kept"],
  ["index: JSON5 comments and trailing commas", `{\n // comment\n "agent:idx:main": { "sessionId": "s1", "updatedAt": 5, },\n}\n`, "imported"],
  ["index: an array", `[{"sessionId": "s1"}]`, "kept"],
  ["index: null", `null`, "kept"],
  ["index: empty file", ``, "kept"],
  ["index: entry without sessionId", `{"agent:idx:main": {"updatedAt": 5}, "agent:idx:other": {"sessionId": "s2", "updatedAt": 6}}`, "either"],
  ["index: sessionId of the wrong type", `{"agent:idx:main": {"sessionId": 42, "updatedAt": 5}}`, "either"],
  ["index: duplicate keys after canonicalization", `{"agent:idx:Work": {"sessionId": "s1", "updatedAt": 5}, "agent:idx:work": {"sessionId": "s2", "updatedAt": 9}, "  agent:idx:work  ": {"sessionId": "s3", "updatedAt": 1}}`, "either"],
  ["index: updatedAt as a string", `{"agent:idx:main": {"sessionId": "s1", "updatedAt": "yesterday"}}`, "either"],
  ["index: entry is a string", `{"agent:idx:main": "s1"}`, "either"],
];

function eventsOf(stateFile: string, sessionId: string): number {
  return rows<{ n: number }>(stateFile, "SELECT count(*) AS n FROM transcript_events WHERE session_id = ?", sessionId)[0]!.n;
}

describe("malformed legacy inputs", () => {
  it(`${TRANSCRIPTS.length + INDEXES.length} malformed sources next to good ones: clear messages, bad sources kept, good ones imported, no crash`, async () => {
    const state = makeTempState();
    const sessions = path.join(state.stateDir, "agents", "main", "sessions");
    fs.mkdirSync(sessions, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(sessions, "good-main.jsonl"), good("good-main"), { mode: 0o600 });
    TRANSCRIPTS.forEach(([, content], i) => fs.writeFileSync(path.join(sessions, `bad-${i}.jsonl`), content, { mode: 0o600 }));
    INDEXES.forEach(([, content], i) => {
      const dir = path.join(state.stateDir, "agents", `idx${i}`, "sessions");
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(dir, "sessions.json"), content, { mode: 0o600 });
      fs.writeFileSync(path.join(dir, `good-idx${i}.jsonl`), good(`good-idx${i}`), { mode: 0o600 });
    });
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], state.env);
    expect(run.stdout + run.stderr).not.toMatch(STACK);
    expect([0, 1], run.stderr).toContain(run.code);
    const doc = JSON.parse(run.stdout) as { migration: { run: { sources: Array<{ relativePath: string; status: string; reason?: string }> } } };
    const byPath = new Map(doc.migration.run.sources.map((s) => [s.relativePath, s]));
    const paths = resolveStatePaths({ env: state.env });
    expect(eventsOf(agentDbFile(paths, "main"), "good-main")).toBe(4);
    const check = (name: string, rel: string, expectation: Expect): void => {
      const kept = fs.existsSync(path.join(state.stateDir, rel));
      const outcome = byPath.get(rel);
      if (expectation === "kept") expect(kept, `${name}: ${rel} must stay in place`).toBe(true);
      if (expectation === "imported") expect(kept, `${name}: ${rel} should import (${outcome?.reason})`).toBe(false);
      // A source left in place always says why, in one line naming the file's problem.
      if (kept && outcome) expect(outcome.reason ?? "", name).toMatch(/\S/);
      if (kept && outcome?.reason) expect(outcome.reason, name).not.toMatch(/\n/);
    };
    TRANSCRIPTS.forEach(([name, , expectation], i) => check(name, `agents/main/sessions/bad-${i}.jsonl`, expectation));
    INDEXES.forEach(([name, , expectation], i) => {
      check(name, `agents/idx${i}/sessions/sessions.json`, expectation);
      expect(eventsOf(agentDbFile(paths, `idx${i}`), `good-idx${i}`), `${name}: the other sources import`).toBe(4);
    });
  });

  it("every migration fixture goes through doctor --fix without a crash", async () => {
    for (const name of fs.readdirSync(path.join(fixturesDir, "migration"))) {
      const state = makeTempState(path.join("migration", name));
      const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], state.env);
      expect(run.stdout + run.stderr, name).not.toMatch(STACK);
      expect([0, 1], `${name}: ${run.stderr}`).toContain(run.code);
    }
  });
});

function mutate(input: Buffer, rand: () => number): Buffer {
  const bytes = Buffer.from(input);
  const at = Math.floor(rand() * bytes.length);
  switch (Math.floor(rand() * 5)) {
    case 0:
      bytes[at] = bytes[at]! ^ (1 + Math.floor(rand() * 255));
      return bytes;
    case 1:
      return bytes.subarray(0, at);
    case 2:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([Math.floor(rand() * 256)]), bytes.subarray(at)]);
    case 3:
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.min(bytes.length, at + 1 + Math.floor(rand() * 40)))]);
    default:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(["{", "}", "\"", ",", "\n", "[", ":"][Math.floor(rand() * 7)]!), bytes.subarray(at)]);
  }
}

describe("fuzzed legacy JSON/JSONL", () => {
  const ROUNDS = Number(process.env.RELIABILITY_LEGACY_FUZZ ?? 30);
  it(`${ROUNDS} rounds × 10 mutated transcripts + a mutated index: no crash, every good source imported`, async () => {
    const seed = Number(process.env.FUZZ_SEED ?? 4321);
    const rand = prng(seed);
    const transcript = Buffer.from(good("fz", 6));
    const index = Buffer.from(JSON.stringify({ "agent:main:main": { sessionId: "fz", updatedAt: 5, chatType: "direct", deliveryContext: { channel: "telegram", to: "+1" } }, "agent:main:work": { sessionId: "w1", updatedAt: 7 } }, null, 2));
    for (let round = 0; round < ROUNDS; round += 1) {
      const state = makeTempState();
      const dir = path.join(state.stateDir, "agents", "main", "sessions");
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(dir, "anchor.jsonl"), good("anchor"), { mode: 0o600 });
      for (let i = 0; i < 10; i += 1) fs.writeFileSync(path.join(dir, `m-${i}.jsonl`), mutate(transcript, rand), { mode: 0o600 });
      fs.writeFileSync(path.join(dir, "sessions.json"), mutate(index, rand), { mode: 0o600 });
      const context = `seed ${seed} round ${round}`;
      const { run } = await migrate(state.paths);
      expect(["completed", "warning"], `${context}: ${run.error}`).toContain(run.status);
      expect(eventsOf(agentDbFile(state.paths), "anchor"), context).toBe(4);
      for (const s of run.sources) {
        const kept = fs.existsSync(s.path);
        if (s.status === "failed") expect(kept, `${context}: ${s.relativePath} failed but was not kept`).toBe(true);
        if (s.status === "failed") expect(s.reason ?? "", context).toMatch(/\S/);
      }
    }
  }, 180_000);
});
