// Generates a file-era legacy state tree (sessions.json + JSONL transcripts v1/v2/v3) for benchmarks and crash tests.
import fs from "node:fs";
import path from "node:path";

const WORDS = "the agent replied with a summary of the deploy logs and asked whether to roll back staging or wait for the next build while the user checked grafana dashboards latency error budget".split(" ");

/** Small deterministic PRNG (mulberry32): the same seed gives the same corpus. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function text(rand, bytes) {
  const parts = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[Math.floor(rand() * WORDS.length)];
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(" ");
}

/** A line size drawn like real transcripts: mostly short chat turns, some long tool results. */
function lineSize(rand, mean) {
  const r = rand();
  if (r < 0.6) return Math.max(40, Math.floor(mean * 0.3 * (0.5 + rand())));
  if (r < 0.95) return Math.floor(mean * (0.5 + rand()));
  return Math.floor(mean * (4 + rand() * 8));
}

function transcriptLines(rand, sessionId, version, lines, meanLineBytes, t0) {
  const out = [];
  const header = { type: "session", id: sessionId, timestamp: new Date(t0).toISOString(), cwd: "/home/user/project" };
  if (version > 1) header.version = version;
  out.push(JSON.stringify(header));
  let prev = null;
  for (let i = 1; i < lines; i += 1) {
    const ts = new Date(t0 + i * 1000).toISOString();
    const id = version > 1 ? `${sessionId.slice(-6)}${i.toString(16).padStart(6, "0")}` : undefined;
    const ids = version > 1 ? { id, parentId: prev } : {};
    const size = lineSize(rand, meanLineBytes);
    let entry;
    const kind = i % 7;
    if (kind === 3) entry = { type: "message", ...ids, timestamp: ts, message: { role: "toolResult", toolCallId: `call_${i}`, toolName: "bash", content: [{ type: "text", text: text(rand, size) }], isError: false, timestamp: t0 + i * 1000 } };
    else if (kind === 5 && version < 3) entry = { type: "message", ...ids, timestamp: ts, message: { role: "hookMessage", content: text(rand, size), timestamp: t0 + i * 1000 } };
    else if (i % 2 === 0) entry = { type: "message", ...ids, timestamp: ts, message: { role: "assistant", content: [{ type: "text", text: text(rand, size) }], provider: "anthropic", model: "claude-sonnet-4", usage: { input: 1200, output: 300, cacheRead: 0, cacheWrite: 0, totalTokens: 1500 }, stopReason: "stop", timestamp: t0 + i * 1000 } };
    else entry = { type: "message", ...ids, timestamp: ts, message: { role: "user", content: text(rand, size), timestamp: t0 + i * 1000, ...(i % 11 === 1 ? { idempotencyKey: `${sessionId}-in-${i}` } : {}) } };
    out.push(JSON.stringify(entry));
    prev = id ?? null;
  }
  return out;
}

/**
 * Writes `<stateDir>/agents/<agent>/sessions/{sessions.json,<id>.jsonl}`. Options: agents (names), sessionsPerAgent,
 * linesPerSession, meanLineBytes, seed, orphanEvery (every Nth session is missing from the index), extras
 * ("truncated" | "corrupt" files for crash tests), mtime (epoch ms given to every file). Returns {files, bytes, lines}.
 */
export function generateLegacyCorpus(stateDir, options = {}) {
  const { agents = ["main"], sessionsPerAgent = 100, linesPerSession = 50, meanLineBytes = 600, seed = 1, orphanEvery = 10, extras = [] } = options;
  const rand = prng(seed);
  let files = 0;
  let bytes = 0;
  let lines = 0;
  for (const agent of agents) {
    const dir = path.join(stateDir, "agents", agent, "sessions");
    fs.mkdirSync(dir, { recursive: true });
    const index = {};
    for (let i = 0; i < sessionsPerAgent; i += 1) {
      const sessionId = `${agent}-${String(i).padStart(6, "0")}-${Math.floor(rand() * 1e9).toString(36)}`;
      const version = i % 10 === 0 ? 1 : i % 10 === 1 ? 2 : 3;
      const n = Math.max(2, Math.floor(linesPerSession * (0.5 + rand())));
      const t0 = Date.UTC(2026, 0, 1) + i * 3_600_000;
      const body = `${transcriptLines(rand, sessionId, version, n, meanLineBytes, t0).join("\n")}\n`;
      fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), body);
      files += 1;
      bytes += Buffer.byteLength(body);
      lines += n;
      if (orphanEvery > 0 && i % orphanEvery === orphanEvery - 1) continue;
      const key = i === 0 ? "main" : i % 5 === 0 ? `group:room-${i}` : i % 3 === 0 ? `+1555${String(i).padStart(6, "0")}` : `agent:${agent}:telegram:direct:${i}`;
      index[key] = {
        sessionId,
        updatedAt: t0 + n * 1000,
        chatType: key.startsWith("group:") ? "group" : "direct",
        model: "claude-sonnet-4",
        modelProvider: "anthropic",
        totalTokens: 1000 + i,
        sessionFile: `${sessionId}.jsonl`,
        ...(i % 2 === 0 ? { deliveryContext: { channel: "telegram", to: key.startsWith("group:") ? key : `+1555${i}`, accountId: "default" } } : { lastChannel: "discord", lastTo: `user-${i}` }),
      };
    }
    const indexText = JSON.stringify(index, null, 2);
    fs.writeFileSync(path.join(dir, "sessions.json"), indexText);
    files += 1;
    bytes += Buffer.byteLength(indexText);
    if (extras.includes("truncated")) {
      fs.writeFileSync(path.join(dir, `${agent}-truncated.jsonl`), `{"type":"session","version":3,"id":"${agent}-truncated"}\n{"type":"message","id":"t1","parentId":null,"message":{"role":"user","content":"ok"}}\n{"type":"message","id":"t2","par`);
      files += 1;
    }
    if (extras.includes("corrupt")) {
      fs.writeFileSync(path.join(dir, `${agent}-corrupt.jsonl`), `{"type":"session","version":3,"id":"${agent}-corrupt"}\n{not json}\n{"type":"message","id":"c2","parentId":null,"message":{"role":"user","content":"x"}}\n`);
      files += 1;
    }
  }
  if (options.mtime !== undefined) setMtimes(path.join(stateDir, "agents"), options.mtime);
  return { files, bytes, lines };
}

/** Same content and same mtimes: two generated corpora are then indistinguishable to the importer. */
function setMtimes(dir, ms) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) setMtimes(p, ms);
    else fs.utimesSync(p, ms / 1000, ms / 1000);
  }
}
