// Design-v1 transcripts, trajectory events, memory index and caches -> OpenClaw 2026.9.6's tables; what has no home is counted.
import crypto from "node:crypto";
import type { AgentUpgradeContext } from "./upgrade-agent-context.js";

interface V1Event { session_id: string; seq: number; event_json: string; created_at: number }
interface V1Identity { session_id: string; event_id: string; seq: number; event_type: string | null; parent_id: string | null; message_idempotency_key: string | null; created_at: number }

/** Transcript rows as plain rows (event_json set; no zstd/navigation, which 9.6 reads as valid), identities, watermarks. */
export function upgradeTranscripts(ctx: AgentUpgradeContext, windows: Set<string>): void {
  const withEvents = new Set<string>();
  // Only the session header's identity is kept from the events: the lines themselves stream through.
  const headers = new Map<string, { eventId: string; createdAt: number }>();
  for (const e of ctx.iterate<V1Event>("transcript_events", "session_id, seq")) {
    if (!windows.has(e.session_id)) {
      ctx.skip("transcript_events", "agent.transcript.no-window", `transcript row ${e.session_id}#${e.seq}: its session has no window; kept in the design-v1 file.`);
      continue;
    }
    ctx.insert("transcript_events", {
      session_id: e.session_id, seq: e.seq, event_json: e.event_json, created_at: e.created_at,
      event_zstd: null, event_utf8_bytes: Buffer.byteLength(e.event_json, "utf8"), navigation_json: null,
    });
    withEvents.add(e.session_id);
    ctx.handled(e.event_json.length);
    if (e.seq !== 0) continue;
    const event = safeParse(e.event_json);
    if (event?.type === "session" && typeof event.id === "string" && event.id.trim() !== "") headers.set(e.session_id, { eventId: event.id.trim(), createdAt: e.created_at });
  }
  for (const i of ctx.iterate<V1Identity>("transcript_event_identities", "session_id, seq")) {
    if (!withEvents.has(i.session_id)) {
      ctx.skip("transcript_event_identities", "agent.transcript.no-window", `identity ${i.session_id}/${i.event_id}: its transcript row was not written; kept in the design-v1 file.`);
      continue;
    }
    // has_parent is dropped: 9.6 keeps only parent_id, which says the same thing.
    ctx.insert("transcript_event_identities", {
      session_id: i.session_id, event_id: i.event_id, seq: i.seq, event_type: i.event_type, parent_id: i.parent_id,
      message_idempotency_key: i.message_idempotency_key, created_at: i.created_at,
    });
  }
  // 9.6 also gives the session header an identity (event id = the session id); ours never did.
  for (const [sessionId, header] of headers) {
    ctx.insert("transcript_event_identities", {
      session_id: sessionId, event_id: header.eventId, seq: 0, event_type: "session", parent_id: null, message_idempotency_key: null, created_at: header.createdAt,
    }, "ignore");
  }
  // A fresh rewrite generation per transcript, as 9.6's first append creates one; ours (an integer counter) means
  // nothing to it, so the design-v1 generations are counted unmapped below.
  for (const sessionId of withEvents) {
    ctx.insert("transcript_rewrite_watermarks", { session_id: sessionId, generation: crypto.randomUUID().replaceAll("-", ""), updated_at: ctx.now });
  }
  const generations = ctx.countRows("transcript_generations");
  if (generations > 0) ctx.skip("transcript_generations", "agent.transcript.generation-reset", `${generations} design-v1 transcript generation counter(s) replaced by a fresh OpenClaw rewrite watermark per transcript (readers holding an old cursor re-read from the start).`, generations);
}

interface V1Trajectory { session_id: string; run_id: string; seq: number; event_json: string; created_at: number }

/** 9.6 numbers trajectory rows per session (run_id a column); ours per (session, run). Written only when seqs do not collide. */
export function upgradeTrajectory(ctx: AgentUpgradeContext, windows: Set<string>): void {
  // Rows arrive grouped by session: one session's rows are held at a time.
  let list: V1Trajectory[] = [];
  for (const r of ctx.iterate<V1Trajectory>("trajectory_runtime_events", "session_id, seq, run_id")) {
    if (list.length > 0 && list[0]!.session_id !== r.session_id) {
      writeTrajectorySession(ctx, windows, list);
      list = [];
    }
    list.push(r);
  }
  if (list.length > 0) writeTrajectorySession(ctx, windows, list);
}

function writeTrajectorySession(ctx: AgentUpgradeContext, windows: Set<string>, list: V1Trajectory[]): void {
  const sessionId = list[0]!.session_id;
  const seqs = new Set(list.map((r) => r.seq));
  if (!windows.has(sessionId) || seqs.size !== list.length) {
    ctx.skip("trajectory_runtime_events", "agent.trajectory.seq-collision", `${list.length} trajectory row(s) of session ${sessionId}: ${windows.has(sessionId) ? "several runs reuse the same seq, and OpenClaw numbers them per session; renumbering would be a guess" : "the session has no window"}; kept in the design-v1 file.`, list.length);
    return;
  }
  for (const r of list) ctx.insert("trajectory_runtime_events", { session_id: r.session_id, seq: r.seq, run_id: r.run_id, event_json: r.event_json, created_at: r.created_at });
}

/** Memory index and cache tables whose columns match 9.6's (its memory triggers bump memory_index_state themselves). */
export function upgradeMemoryAndCache(ctx: AgentUpgradeContext): void {
  for (const r of ctx.rows<{ key: string; value: string }>("memory_index_meta", "key")) ctx.insert("memory_index_meta", r);
  for (const r of ctx.rows<{ path: string; source: string; hash: string; mtime: number; size: number }>("memory_index_sources", "path")) {
    ctx.insert("memory_index_sources", { path: r.path, source: r.source, hash: r.hash, mtime: r.mtime, size: r.size });
  }
  type Chunk = { id: string; path: string; source: string; start_line: number; end_line: number; hash: string; model: string; text: string; embedding: unknown; updated_at: number };
  for (const r of ctx.iterate<Chunk>("memory_index_chunks", "id")) {
    // STRICT BLOB column: embeddings older indexes stored as JSON text become their UTF-8 bytes.
    const embedding = Buffer.isBuffer(r.embedding) ? r.embedding : Buffer.from(String(r.embedding), "utf8");
    if (!Buffer.isBuffer(r.embedding)) ctx.note("agent.memory.embedding-text", `memory chunk ${r.id}: its text embedding is stored as UTF-8 bytes (OpenClaw's column is a STRICT BLOB).`);
    ctx.insert("memory_index_chunks", { id: r.id, path: r.path, source: r.source, start_line: r.start_line, end_line: r.end_line, hash: r.hash, model: r.model, text: r.text, embedding, updated_at: r.updated_at });
  }
  type Cached = { provider: string; model: string; provider_key: string; hash: string; embedding: Buffer; dims: number | null; updated_at: number };
  for (const r of ctx.iterate<Cached>("memory_embedding_cache", "provider, model, provider_key, hash")) ctx.insert("memory_embedding_cache", r);
  const states = ctx.countRows("memory_index_state");
  if (states > 0) ctx.skip("memory_index_state", "agent.memory.revision-recounted", "memory_index_state: OpenClaw's triggers recount the revision from the copied rows; the design-v1 counter is not carried over.", states);
  type Cache = { scope: string; key: string; value_json: string | null; blob: Buffer | null; expires_at: number | null; updated_at: number };
  for (const r of ctx.iterate<Cache>("cache_entries", "scope, key")) ctx.insert("cache_entries", r);
}

/** Design-v1 tables OpenClaw's agent format has no table for. */
const NO_HOME: Record<string, string> = {
  transcript_snapshots: "OpenClaw's agent format has no transcript snapshot table",
  vfs_entries: "OpenClaw 2026.9.6's agent format has no vfs_entries table",
  tool_artifacts: "OpenClaw 2026.9.6's agent format has no tool_artifacts table",
  run_artifacts: "OpenClaw 2026.9.6's agent format has no run_artifacts table",
};

/** Counts rows of tables with no home, and of any table this upgrade does not know (a later design-v1 addition). */
export function countUnmapped(ctx: AgentUpgradeContext, handled: ReadonlySet<string>): void {
  const tables = (ctx.source.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((t) => t.name);
  for (const table of tables) {
    if (handled.has(table) || table === "schema_meta") continue;
    const n = (ctx.source.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    ctx.read[table] = n;
    if (n > 0) ctx.skip(table, "agent.kept-unmapped", `${n} row(s) of ${table}: ${NO_HOME[table] ?? "no mapping to OpenClaw's agent format is known"}; kept in the design-v1 file.`, n);
  }
}

function safeParse(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
