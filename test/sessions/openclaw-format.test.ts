// sessions list|show|tail and the runtime reads on OpenClaw 2026.9.6's own migration of legacy-state; other formats say what to run.
import crypto from "node:crypto";
import fs from "node:fs";
import zlib from "node:zlib";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { OpenclawStateError } from "../../src/core/errors.js";
import { readSessionTranscriptCatalogPage } from "../../src/runtime/catalog.js";
import { deleteSessionEntrySync } from "../../src/runtime/delete-session.js";
import { getSessionEntryAsync, listSessionEntries } from "../../src/runtime/session-entries.js";
import { readSessionTranscriptEvents, readVisibleSessionTranscriptMessageEntries } from "../../src/runtime/transcript-reads.js";
import { listSessions } from "../../src/sessions/list-sessions.js";
import { showSession } from "../../src/sessions/show-session.js";
import { tailSession, type TailEvent } from "../../src/sessions/tail-session.js";
import { agentDbPath } from "../../src/state/paths.js";
import { makeTempState, type TempState } from "../helpers/temp-state.js";

const FIXTURE = "openclaw-2026.9.6/legacy-state-migrated";
const HAS_ZSTD = typeof (zlib as unknown as { zstdDecompressSync?: unknown }).zstdDecompressSync === "function";

/** What `openclaw sessions --all-agents --json` of openclaw@2026.9.6 printed on this very state (key, id, updatedAt). */
const REAL_OPENCLAW_LISTING = [
  { key: "agent:main:recovered:s-lost", sessionId: "s-lost", updatedAt: 1796400470576 },
  { key: "agent:main:unknown:group:ops", sessionId: "s-ops", updatedAt: 1767229200000 },
  { key: "agent:main:main", sessionId: "s-main", updatedAt: 1767225600000 },
  { key: "agent:main:+15550002", sessionId: "s-root-dm", updatedAt: 1764547200000 },
];

/** `{"type":"message","id":"z1",…"compressed reply"…}` (168 bytes) compressed by Node 24's zlib.zstdCompressSync. */
const ZSTD_EVENT_HEX =
  "28b52ffd20a8ed030052081a1b80b939e8809758d95eb3d0641bd09809d3680712195420cac0ae024d8368bc24ee0f805cf5cf31e5702abe87f4b66f530e1f6f53ab4b5539fd447966f2d8808801412216101a088d41c2e4b4636af56cad8fd309dbfe94f3315a388d2c1f3fa154cf9cbe5bd64c06002a027ac2c08fe539b8f8ba709c603e01";
const NAVIGATION = JSON.stringify({ version: 1, report: { kind: "canonical" }, navigation: {}, reset: {}, model: {}, modelBytes: 0, modelWithoutCheckpointBytes: 0, withoutCustomDataBytes: 0 });

function sha(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

function params(state: TempState, extra: Record<string, unknown> = {}) {
  return { stateDir: state.stateDir, agentId: "main", sessionKey: "agent:main:main", sessionId: "s-main", ...extra };
}

/** Appends one zstd-stored event (seq 3) to s-main, as OpenClaw stores a large one. */
function addCompressedEvent(state: TempState): void {
  const db = new Database(agentDbPath(state.paths, "main"));
  try {
    const body = Buffer.from(ZSTD_EVENT_HEX, "hex");
    db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES ('s-main', 3, NULL, 1767225603000, ?, 168, ?)").run(body, NAVIGATION);
    db.prepare("INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at) VALUES ('s-main', 'z1', 3, 'message', 'e2', 1767225603000)").run();
  } finally {
    db.close();
  }
}

/** A stand-in agent DB of another format: only user_version and the marker tables matter to detection. */
function replaceAgentDb(state: TempState, userVersion: number, tables: string[]): string {
  const file = agentDbPath(state.paths, "main");
  fs.rmSync(file);
  const db = new Database(file);
  for (const t of tables) db.exec(`CREATE TABLE ${t} (id TEXT)`);
  db.pragma(`user_version = ${userVersion}`);
  db.close();
  return file;
}

async function collect(gen: AsyncGenerator<TailEvent>): Promise<TailEvent[]> {
  const out: TailEvent[] = [];
  for await (const e of gen) out.push(e);
  return out;
}

describe("sessions on OpenClaw 2026.9.6's current format", () => {
  it("lists the same sessions, keys, ids and updatedAt as the real `openclaw sessions --all-agents --json`, and touches no file", () => {
    const state = makeTempState(FIXTURE);
    const before = sha(agentDbPath(state.paths, "main"));
    const r = listSessions({ paths: state.paths, allAgents: true });
    expect(r.warnings).toEqual([]);
    expect(r.sessions.map((s) => ({ key: s.key, sessionId: s.sessionId, updatedAt: s.updatedAt }))).toEqual(REAL_OPENCLAW_LISTING);
    expect(r.sessions.find((s) => s.key === "agent:main:main")).toMatchObject({ kind: "direct", model: "claude-sonnet-4", totalTokens: 1200, contextTokens: 200000, channel: "telegram", route: "current" });
    expect(r.sessions.find((s) => s.sessionId === "s-ops")).toMatchObject({ kind: "group", displayName: "Ops room" });
    expect(sha(agentDbPath(state.paths, "main"))).toBe(before);
    expect(fs.existsSync(`${agentDbPath(state.paths, "main")}-wal`)).toBe(false);
  });

  it("shows a session with its entry, conversations, transcript stats and events", () => {
    const state = makeTempState(FIXTURE);
    const r = showSession({ paths: state.paths, ref: "main", events: 5 });
    expect(r).toMatchObject({ matchedBy: "agent-relative-key", session: { sessionId: "s-main", scope: "shared-main" }, entry: { sessionId: "s-main", totalTokens: 1200 } });
    expect(r.routes).toEqual([{ key: "agent:main:main", updatedAt: 1767225600000 }]);
    expect(r.conversations).toEqual([expect.objectContaining({ role: "participant", channel: "telegram", peerId: "+15550001" })]);
    expect(r.transcript).toMatchObject({ eventCount: 3, firstSeq: 0, lastSeq: 2 });
    expect(r.events.items.map((e) => (e.event as { id: string }).id)).toEqual(["s-main", "e1", "e2"]);
    expect(showSession({ paths: state.paths, ref: "s-ops", events: 0 })).toMatchObject({ matchedBy: "session-id", session: { key: "agent:main:unknown:group:ops" } });
  });

  it("tails the visible messages of a session", async () => {
    const state = makeTempState(FIXTURE);
    const events = await collect(tailSession({ paths: state.paths, ref: "agent:main:unknown:group:ops", lines: 10, follow: false, intervalMs: 10 }));
    expect(events[0]).toMatchObject({ kind: "session", sessionId: "s-ops" });
    expect(events.filter((e) => e.kind === "message").map((e) => (e.kind === "message" ? e.entry.message : null))).toEqual([
      expect.objectContaining({ role: "user", content: "deploy status?" }),
      expect.objectContaining({ role: "custom", content: "deploy finished" }),
    ]);
  });

  it("serves the runtime library's reads: entries, events, visible messages, catalog", async () => {
    const state = makeTempState(FIXTURE);
    expect(await getSessionEntryAsync(params(state))).toMatchObject({ sessionId: "s-main", totalTokens: 1200 });
    expect([...listSessionEntries({ stateDir: state.stateDir, agentId: "main" })].map((e) => e.sessionKey).sort()).toEqual(REAL_OPENCLAW_LISTING.map((s) => s.key).sort());
    expect((await readSessionTranscriptEvents(params(state)))?.events.map((e) => e.seq)).toEqual([0, 1, 2]);
    const visible = await readVisibleSessionTranscriptMessageEntries(params(state));
    expect(visible?.map((e) => (e.message as { role: string }).role)).toEqual(["user", "assistant"]);
    const page = await readSessionTranscriptCatalogPage({ stateDir: state.stateDir, agentId: "main", sessionKey: "agent:main:main" });
    expect(page.items.map((i) => [i.role, i.text])).toEqual([
      ["assistant", "Hi! How can I help?"],
      ["user", "hello"],
    ]);
  });

  it.runIf(HAS_ZSTD)("decodes events OpenClaw stored zstd-compressed (Node >= 22.15)", async () => {
    const state = makeTempState(FIXTURE);
    addCompressedEvent(state);
    const events = await readSessionTranscriptEvents(params(state, { last: 2 }));
    expect(events?.events.map((e) => [e.seq, (e.event as { id: string }).id])).toEqual([
      [2, "e2"],
      [3, "z1"],
    ]);
    const page = await readSessionTranscriptCatalogPage({ stateDir: state.stateDir, agentId: "main", sessionKey: "agent:main:main" });
    expect(page.items[0]).toMatchObject({ role: "assistant", text: "compressed reply" });
    expect(showSession({ paths: state.paths, ref: "main", events: 1 }).transcript).toMatchObject({ eventCount: 4, lastSeq: 3 });
  });

  it.runIf(!HAS_ZSTD)("names the compressed event it cannot decode without zstd (Node < 22.15), never shows wrong data", async () => {
    const state = makeTempState(FIXTURE);
    addCompressedEvent(state);
    await expect(readSessionTranscriptEvents(params(state, { last: 2 }))).rejects.toMatchObject({
      code: "event_undecodable",
      message: expect.stringMatching(/seq 3 of session s-main .*zstd.*Node\.js 22\.15/),
    });
    expect(() => showSession({ paths: state.paths, ref: "main", events: 1 })).toThrow(/seq 3 of session s-main/);
    // Reads that stop before the compressed event still work.
    expect(listSessions({ paths: state.paths }).sessions).toHaveLength(4);
  });

  it("refuses `sessions delete` before touching anything", () => {
    const state = makeTempState(FIXTURE);
    const files = [agentDbPath(state.paths, "main"), state.paths.globalDbPath];
    const before = files.map(sha);
    for (const dryRun of [true, false]) {
      expect(() => deleteSessionEntrySync({ stateDir: state.stateDir, agentId: "main", sessionKey: "agent:main:main", dryRun })).toThrow(
        expect.objectContaining({ code: "schema_format", message: expect.stringMatching(/nothing was deleted.*openclaw sessions delete/) }),
      );
    }
    expect(files.map(sha)).toEqual(before);
    expect(fs.readdirSync(`${state.stateDir}/agents/main/agent`)).toEqual(["openclaw-agent.sqlite"]);
  });
});

describe("sessions on a format they cannot read say what to run", () => {
  const cases = [
    { name: "OpenClaw 2026.6.x (v1, sessions still in files)", version: 1, tables: ["auth_profile_store"], code: "schema_format", text: /agents\/main\/sessions\/.*`openclaw doctor --fix` of OpenClaw 2026\.9\.6 or newer.*cannot yet write/ },
    { name: "an older OpenClaw format", version: 20, tables: ["session_entries"], code: "schema_format", text: /format v20.*`openclaw doctor --fix` of OpenClaw 2026\.9\.6 to upgrade it/ },
    { name: "a newer OpenClaw", version: 24, tables: ["session_nodes"], code: "schema_too_new", text: /newer OpenClaw.*upgrade openclaw-state/ },
  ];
  for (const c of cases) {
    it(`${c.name}: list, show, tail and the runtime reads refuse with the advice`, async () => {
      const state = makeTempState(FIXTURE);
      const file = replaceAgentDb(state, c.version, c.tables);
      const before = sha(file);
      const expected = expect.objectContaining({ code: c.code, message: expect.stringMatching(c.text) });
      expect(() => listSessions({ paths: state.paths })).toThrow(expected);
      // --all-agents: no store could be read, so the refusal is the answer rather than an empty list.
      expect(() => listSessions({ paths: state.paths, allAgents: true })).toThrow(expected);
      expect(() => showSession({ paths: state.paths, ref: "main" })).toThrow(expected);
      await expect(collect(tailSession({ paths: state.paths, ref: "main", lines: 5, follow: false, intervalMs: 10 }))).rejects.toThrow(expected);
      await expect(getSessionEntryAsync(params(state))).rejects.toThrow(expected);
      await expect(readSessionTranscriptEvents(params(state))).rejects.toBeInstanceOf(OpenclawStateError);
      expect(() => deleteSessionEntrySync({ stateDir: state.stateDir, agentId: "main", sessionKey: "main", dryRun: false })).toThrow(expect.objectContaining({ code: c.code }));
      expect(sha(file)).toBe(before);
    });
  }
});
