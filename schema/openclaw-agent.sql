-- Per-agent data-plane database (<stateDir>/agents/<agentId>/agent/openclaw-agent.sqlite), schema v1.
-- Single source of truth: the Kysely DB types and DDL constants in src/ are generated
-- from this file by `npm run db:gen`; edit here, never the generated output.

-- ---------------------------------------------------------------------------
-- Database identity
-- ---------------------------------------------------------------------------

-- One row (meta_key = 'primary', role 'agent', agent_id set) so a copied or restored
-- file still says which agent it belongs to.
CREATE TABLE schema_meta (
  meta_key TEXT NOT NULL PRIMARY KEY,
  role TEXT NOT NULL CHECK (role IN ('global', 'agent')),
  schema_version INTEGER NOT NULL,
  agent_id TEXT,
  app_version TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- ---------------------------------------------------------------------------
-- Sessions and conversations
-- ---------------------------------------------------------------------------

-- parent_conversation_id and thread_id are channel-native ids, not references to
-- this table, so they carry no foreign key.
CREATE TABLE conversations (
  conversation_id TEXT NOT NULL PRIMARY KEY,
  channel TEXT NOT NULL,
  account_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('direct', 'group', 'channel')),
  peer_id TEXT,
  parent_conversation_id TEXT,
  thread_id TEXT,
  native_channel_id TEXT,
  native_direct_user_id TEXT,
  label TEXT,
  metadata_json TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- NULLs are folded to '' because SQLite treats NULLs as distinct in UNIQUE, which
-- would let re-imports duplicate a conversation.
CREATE UNIQUE INDEX conversations_identity_uq ON conversations (
  channel,
  ifnull(account_id, ''),
  kind,
  ifnull(peer_id, ''),
  ifnull(parent_conversation_id, ''),
  ifnull(thread_id, '')
);

-- A session_key can point at several session ids over time (resets); session_routes
-- says which one is current.
CREATE TABLE sessions (
  session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  session_scope TEXT NOT NULL CHECK (session_scope IN ('conversation', 'shared-main', 'group', 'channel')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  status TEXT CHECK (status IS NULL OR status IN ('running', 'done', 'failed', 'killed', 'timeout')),
  chat_type TEXT CHECK (chat_type IS NULL OR chat_type IN ('direct', 'group', 'channel')),
  channel TEXT,
  account_id TEXT,
  primary_conversation_id TEXT REFERENCES conversations (conversation_id) ON DELETE SET NULL,
  model_provider TEXT,
  model TEXT,
  agent_harness_id TEXT,
  parent_session_key TEXT,
  spawned_by TEXT,
  display_name TEXT
);
CREATE INDEX sessions_updated_at_idx ON sessions (updated_at DESC);
CREATE INDEX sessions_session_key_idx ON sessions (session_key);
-- Keeps ON DELETE SET NULL from scanning every session when a conversation goes.
CREATE INDEX sessions_primary_conversation_id_idx ON sessions (primary_conversation_id);

CREATE TABLE session_conversations (
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  conversation_id TEXT NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('primary', 'participant', 'related')),
  first_seen_at INTEGER,
  last_seen_at INTEGER,
  PRIMARY KEY (session_id, conversation_id, role)
);
-- At most one primary conversation per session.
CREATE UNIQUE INDEX session_conversations_primary_uq ON session_conversations (session_id) WHERE role = 'primary';
CREATE INDEX session_conversations_conversation_id_idx ON session_conversations (conversation_id);

CREATE TABLE session_routes (
  session_key TEXT NOT NULL PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  updated_at INTEGER NOT NULL
);
CREATE INDEX session_routes_session_id_idx ON session_routes (session_id);

-- entry_json is the compatibility-shaped SessionEntry from the legacy sessions.json.
CREATE TABLE session_entries (
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  session_key TEXT NOT NULL PRIMARY KEY,
  entry_json TEXT NOT NULL CHECK (json_valid(entry_json)),
  updated_at INTEGER NOT NULL
);
CREATE INDEX session_entries_session_id_idx ON session_entries (session_id);

-- ---------------------------------------------------------------------------
-- Transcripts
-- ---------------------------------------------------------------------------

-- One row per transcript line; seq is the line order within the session.
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  event_json TEXT NOT NULL CHECK (json_valid(event_json)),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq)
);

-- Identities hang off the event row they describe, so deleting events (or the
-- session) cannot leave dangling ids behind.
CREATE TABLE transcript_event_identities (
  session_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_type TEXT,
  has_parent INTEGER NOT NULL CHECK (has_parent IN (0, 1)),
  parent_id TEXT,
  message_idempotency_key TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, event_id),
  FOREIGN KEY (session_id, seq) REFERENCES transcript_events (session_id, seq) ON DELETE CASCADE
);
-- Re-delivered messages must not be appended twice to one session.
CREATE UNIQUE INDEX transcript_event_identities_idempotency_uq ON transcript_event_identities (session_id, message_idempotency_key) WHERE message_idempotency_key IS NOT NULL;
CREATE INDEX transcript_event_identities_session_id_seq_idx ON transcript_event_identities (session_id, seq);

CREATE TABLE transcript_snapshots (
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  snapshot_id TEXT NOT NULL,
  reason TEXT,
  event_count INTEGER,
  created_at INTEGER NOT NULL,
  metadata_json TEXT,
  PRIMARY KEY (session_id, snapshot_id)
);

CREATE TABLE trajectory_runtime_events (
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_json TEXT NOT NULL CHECK (json_valid(event_json)),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, run_id, seq)
);
CREATE INDEX trajectory_runtime_events_run_id_idx ON trajectory_runtime_events (run_id);

-- ---------------------------------------------------------------------------
-- Files, artifacts and caches
-- ---------------------------------------------------------------------------

CREATE TABLE vfs_entries (
  namespace TEXT NOT NULL,
  path TEXT NOT NULL,
  kind TEXT,
  content_blob BLOB,
  metadata_json TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (namespace, path)
);

CREATE TABLE tool_artifacts (
  run_id TEXT NOT NULL,
  artifact_id TEXT NOT NULL,
  kind TEXT,
  metadata_json TEXT,
  blob BLOB,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, artifact_id)
);
CREATE INDEX tool_artifacts_created_at_idx ON tool_artifacts (created_at);

CREATE TABLE run_artifacts (
  run_id TEXT NOT NULL,
  path TEXT NOT NULL,
  kind TEXT,
  metadata_json TEXT,
  blob BLOB,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, path)
);
CREATE INDEX run_artifacts_created_at_idx ON run_artifacts (created_at);

-- Small structured values stay inspectable in value_json; large ones go in blob.
CREATE TABLE cache_entries (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  value_json TEXT,
  blob BLOB,
  expires_at INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX cache_entries_expires_at_idx ON cache_entries (expires_at);

-- ---------------------------------------------------------------------------
-- Memory index (derived cache: safe to drop and rebuild from the memory workspace)
-- ---------------------------------------------------------------------------

CREATE TABLE memory_index_meta (
  key TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL
);

-- Row shape matches the memory-core files table so existing indexes migrate as-is.
CREATE TABLE memory_index_sources (
  path TEXT NOT NULL PRIMARY KEY,
  source TEXT NOT NULL DEFAULT 'memory',
  hash TEXT NOT NULL,
  mtime INTEGER NOT NULL,
  size INTEGER NOT NULL
);

-- BLOB affinity stores what it is given unchanged, so embeddings serialized by
-- older indexes (JSON text) keep working alongside binary ones.
CREATE TABLE memory_index_chunks (
  id TEXT NOT NULL PRIMARY KEY,
  path TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'memory',
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  hash TEXT NOT NULL,
  model TEXT NOT NULL,
  text TEXT NOT NULL,
  embedding BLOB NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX memory_index_chunks_path_idx ON memory_index_chunks (path);
CREATE INDEX memory_index_chunks_source_idx ON memory_index_chunks (source);

CREATE TABLE memory_embedding_cache (
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  provider_key TEXT NOT NULL,
  hash TEXT NOT NULL,
  embedding BLOB NOT NULL,
  dims INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (provider, model, provider_key, hash)
);
CREATE INDEX memory_embedding_cache_updated_at_idx ON memory_embedding_cache (updated_at);

-- Bumped on every index change so readers can detect a stale view cheaply.
CREATE TABLE memory_index_state (
  id INTEGER NOT NULL PRIMARY KEY,
  revision INTEGER NOT NULL DEFAULT 0
);

-- ---------------------------------------------------------------------------
-- @additive: objects added to schema v1 after its first release. Everything below
-- uses IF NOT EXISTS: a write open of an existing v1 database creates what is
-- missing (readers never do; they fall back to what the file has).
-- ---------------------------------------------------------------------------

-- Transcript generation: bumped by the triggers below whenever a stored transcript
-- row or identity is changed or removed (a replacement, an in-place rewrite), never
-- by an append. Cursors carry it, so "same generation" means "only appended since".
-- No foreign key: the row is removed with its session by a trigger instead.
CREATE TABLE IF NOT EXISTS transcript_generations (
  session_id TEXT NOT NULL PRIMARY KEY,
  generation INTEGER NOT NULL
);

-- The EXISTS guard skips rows removed by a session delete's cascade (the session row
-- is already gone then), so deleting a session leaves no generation row behind.
CREATE TRIGGER IF NOT EXISTS transcript_events_generation_delete AFTER DELETE ON transcript_events
WHEN EXISTS (SELECT 1 FROM sessions WHERE session_id = OLD.session_id)
BEGIN
  INSERT INTO transcript_generations (session_id, generation) VALUES (OLD.session_id, 1)
    ON CONFLICT (session_id) DO UPDATE SET generation = generation + 1;
END;

-- An upsert that rewrites a row with identical content is not a change.
CREATE TRIGGER IF NOT EXISTS transcript_events_generation_update AFTER UPDATE ON transcript_events
WHEN OLD.event_json IS NOT NEW.event_json OR OLD.seq IS NOT NEW.seq OR OLD.session_id IS NOT NEW.session_id
BEGIN
  INSERT INTO transcript_generations (session_id, generation) VALUES (OLD.session_id, 1)
    ON CONFLICT (session_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER IF NOT EXISTS transcript_event_identities_generation_delete AFTER DELETE ON transcript_event_identities
WHEN EXISTS (SELECT 1 FROM sessions WHERE session_id = OLD.session_id)
BEGIN
  INSERT INTO transcript_generations (session_id, generation) VALUES (OLD.session_id, 1)
    ON CONFLICT (session_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER IF NOT EXISTS transcript_event_identities_generation_update AFTER UPDATE ON transcript_event_identities
BEGIN
  INSERT INTO transcript_generations (session_id, generation) VALUES (OLD.session_id, 1)
    ON CONFLICT (session_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER IF NOT EXISTS sessions_generation_cleanup AFTER DELETE ON sessions
BEGIN
  DELETE FROM transcript_generations WHERE session_id = OLD.session_id;
END;
